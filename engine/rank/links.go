package rank

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"unsafe"
)

// ErrFull reports a Links that already holds math.MaxInt32 nodes.
var ErrFull = errors.New("rank: link graph full")

// Links is a crawl's link graph as it grows: every URL known is a node (an
// int32, given in the order the URLs were added) and every fetched page
// appends its links as nodes. It costs 8 bytes a node (the URL's ID), 8 a
// fetched page and 4 a link, and is never copied as it grows: its arrays are
// kept in fixed-size chunks, where a growing slice would be copied at every
// doubling and hold up to half again its size in spare capacity (which on a
// 1,000,000-URL crawl cost more peak memory than the links themselves).
//
// After Spill, each full chunk of node IDs, of fetched pages and of links
// goes to a file and leaves memory: the graph then keeps the chunks being
// filled (5 MiB) and under 1 byte a node. The IDs are read only when
// ranks are stored, the pages and the links once per PageRank iteration,
// in order, from the system's page cache.
//
// The zero Links is empty and ready to use, all in memory. One goroutine
// may call its methods; a View taken by that goroutine may be read by any
// other goroutine while Links grows, since appends never touch what a view
// sees.
type Links struct {
	ids   chunks[uint64] // node -> URL ID; a nil chunk is in spill
	spill *spillFile     // the IDs' (at fixed places); nil: every chunk of IDs in memory
	pages chunks[int32]  // the nodes of fetched pages, in fetch order; a nil chunk is in pageSpill
	// pageSpill holds the full chunks of pages and of ends, chunk k at
	// offset k*chunkLen*8, its pages then its ends, in the machine's
	// byte order; nil: every chunk in memory.
	pageSpill *spillFile
	// ends[i] is where pages[i]'s links end in their chunk of links. A
	// page's links lie in one chunk, from the previous page's end when
	// that is in the same chunk, else from offset 0; firsts[k] is the
	// first page whose links are in chunk k.
	ends   chunks[uint32]
	firsts []int
	links  [][]int32 // a nil chunk is in linkSpill, at spans[k]
	spans  []span
	// linkSpill holds the full chunks of links, one after the other, in
	// the machine's byte order (the file lives and dies with the
	// process); nil: every chunk in memory.
	linkSpill *spillFile
	n         int // links in all chunks
}

// span is where a chunk of links lies in the links' spill file.
type span struct {
	off int64
	n   int
}

// linkChunk is the size of a chunk of links: 4 MiB.
const linkChunk = 1 << 20

// Add makes a node for the URL id and returns it. It fails with ErrFull
// past math.MaxInt32 nodes.
func (g *Links) Add(id uint64) (int32, error) {
	if g.ids.len >= math.MaxInt32 {
		return 0, fmt.Errorf("%w: %d nodes", ErrFull, g.ids.len)
	}
	g.ids.append(id)
	if g.ids.len%chunkLen == 0 {
		g.spillChunk(len(g.ids.c) - 1)
	}
	return int32(g.ids.len - 1), nil
}

// spillFile holds the full chunks a Links has spilled: node IDs, chunk k
// at offset k*chunkLen*8, little-endian, or links, appended. It is written
// by the Links' goroutine and read by its views' (ReadAt on distinct
// ranges).
type spillFile struct {
	f       *os.File
	removed bool   // unlinked while open: the system frees it when closed
	err     error  // the first write error: later chunks stay in memory
	buf     []byte // scratch for one chunk of IDs
	size    int64  // bytes appended (links)
}

// createSpill creates an unlinked temporary file in dir for what.
func createSpill(dir, pattern, what string) (*spillFile, error) {
	f, err := os.CreateTemp(dir, pattern)
	if err != nil {
		return nil, fmt.Errorf("rank: spilling %s: %w", what, err)
	}
	return &spillFile{f: f, removed: os.Remove(f.Name()) == nil}, nil
}

// close closes and, when it was not unlinked, removes the file.
func (s *spillFile) close() error {
	if s == nil || s.f == nil {
		return nil
	}
	err := s.f.Close()
	if !s.removed {
		err = errors.Join(err, os.Remove(s.f.Name()))
	}
	s.f = nil
	return err
}

// Spill makes the graph write each full chunk of node IDs (512 KiB, the
// IDs of 65,536 nodes) and of links (4 MiB) to temporary files in dir
// (empty: os.TempDir()) and free it. The files are unlinked at once where
// the system allows, so a crawl killed leaves nothing behind; Close closes
// them. A chunk that cannot be written stays in memory, so nothing is
// lost; SpillErr says why.
func (g *Links) Spill(dir string) error {
	if g.spill != nil {
		return nil
	}
	ids, err := createSpill(dir, "lidi-graph-*.ids", "node IDs")
	if err != nil {
		return err
	}
	links, err := createSpill(dir, "lidi-graph-*.links", "links")
	if err != nil {
		ids.close()
		return err
	}
	pages, err := createSpill(dir, "lidi-graph-*.pages", "pages")
	if err != nil {
		ids.close()
		links.close()
		return err
	}
	g.spill, g.linkSpill, g.pageSpill = ids, links, pages
	for k := range g.ids.len / chunkLen {
		g.spillChunk(k)
	}
	for k := range g.pages.len / chunkLen {
		g.spillPages(k)
	}
	for k := range len(g.links) - 1 { // the last is being filled
		g.spillLinks(k)
	}
	return nil
}

// SpillErr returns the error that stopped chunks going to disk, if any.
func (g *Links) SpillErr() error {
	var errs []error
	for _, s := range []*spillFile{g.spill, g.linkSpill, g.pageSpill} {
		if s != nil && s.err != nil {
			errs = append(errs, s.err)
		}
	}
	return errors.Join(errs...)
}

// Close closes and removes the spill files, if any; views taken before
// can no longer read what was spilled. What the graph holds in memory
// stays usable.
func (g *Links) Close() error {
	return errors.Join(g.spill.close(), g.linkSpill.close(), g.pageSpill.close())
}

// spillChunk writes full chunk k of IDs to the spill file and frees it.
func (g *Links) spillChunk(k int) {
	s := g.spill
	if s == nil || s.f == nil || s.err != nil || g.ids.c[k] == nil {
		return
	}
	if s.buf == nil {
		s.buf = make([]byte, chunkLen*8)
	}
	for i, id := range g.ids.c[k] {
		binary.LittleEndian.PutUint64(s.buf[i*8:], id)
	}
	if _, err := s.f.WriteAt(s.buf, int64(k)*chunkLen*8); err != nil {
		s.err = fmt.Errorf("rank: spilling node IDs: %w", err)
		return
	}
	g.ids.c[k] = nil
}

// spillPages writes full chunk k of pages and of ends to the pages' spill
// file and frees them.
func (g *Links) spillPages(k int) {
	s := g.pageSpill
	if s == nil || s.f == nil || s.err != nil || g.pages.c[k] == nil {
		return
	}
	if s.buf == nil {
		s.buf = make([]byte, chunkLen*8)
	}
	copy(s.buf, int32Bytes(g.pages.c[k]))
	copy(s.buf[chunkLen*4:], uint32Bytes(g.ends.c[k]))
	if _, err := s.f.WriteAt(s.buf, int64(k)*chunkLen*8); err != nil {
		s.err = fmt.Errorf("rank: spilling pages: %w", err)
		return
	}
	g.pages.c[k], g.ends.c[k] = nil, nil
}

// spillLinks appends full chunk k of links to the links' spill file and
// frees it.
func (g *Links) spillLinks(k int) {
	s := g.linkSpill
	if s == nil || s.f == nil || s.err != nil || g.links[k] == nil {
		return
	}
	c := g.links[k]
	for len(g.spans) <= k {
		g.spans = append(g.spans, span{})
	}
	if len(c) > 0 {
		if _, err := s.f.WriteAt(int32Bytes(c), s.size); err != nil {
			s.err = fmt.Errorf("rank: spilling links: %w", err)
			return
		}
	}
	g.spans[k] = span{off: s.size, n: len(c)}
	s.size += int64(len(c)) * 4
	g.links[k] = nil
}

// uint32Bytes is the memory of s as bytes, in the machine's order.
func uint32Bytes(s []uint32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*4)
}

// int32Bytes is the memory of s as bytes, in the machine's order.
func int32Bytes(s []int32) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*4)
}

// Fetched records that the page at node page was fetched, linking to the
// nodes links (copied). Recording a page twice keeps both lists.
func (g *Links) Fetched(page int32, links []int32) {
	last := len(g.links) - 1
	if last < 0 || len(g.links[last])+len(links) > cap(g.links[last]) {
		// A page with more links than a chunk holds gets a chunk of its own.
		g.links = append(g.links, make([]int32, 0, max(linkChunk, len(links))))
		if last >= 0 {
			g.spillLinks(last) // full: no page adds to it again
		}
		last++
		g.firsts = append(g.firsts, g.pages.len)
	}
	g.links[last] = append(g.links[last], links...)
	g.n += len(links)
	g.pages.append(page)
	g.ends.append(uint32(len(g.links[last])))
	if g.pages.len%chunkLen == 0 {
		g.spillPages(len(g.pages.c) - 1)
	}
}

// Nodes returns the number of nodes.
func (g *Links) Nodes() int { return g.ids.len }

// Pages returns the number of fetched pages recorded.
func (g *Links) Pages() int { return g.pages.len }

// NumLinks returns the number of links recorded.
func (g *Links) NumLinks() int { return g.n }

// Bytes returns the memory the graph holds, spare capacity included.
func (g *Links) Bytes() int64 {
	b := g.ids.bytes(8) + g.pages.bytes(4) + g.ends.bytes(4) + int64(cap(g.firsts))*8
	for _, s := range []*spillFile{g.spill, g.pageSpill} {
		if s != nil && s.buf != nil {
			b += int64(len(s.buf))
		}
	}
	for _, c := range g.links {
		b += int64(cap(c)) * 4
	}
	return b
}

// View returns the graph as it is now. It copies only the chunk headers:
// Links goes on appending within the last chunks' capacity, past what the
// view reads.
func (g *Links) View() LinksView {
	v := LinksView{ids: g.ids.view(), pages: g.pages.view(), ends: g.ends.view(), firsts: slices.Clone(g.firsts),
		links: append([][]int32(nil), g.links...), spans: append([]span(nil), g.spans...), n: g.n}
	if g.spill != nil {
		v.spill, v.linkSpill, v.pageSpill = g.spill.f, g.linkSpill.f, g.pageSpill.f
	}
	return v
}

// LinksView is a prefix of a Links, immutable and safe for concurrent use.
// The zero LinksView is an empty graph.
type LinksView struct {
	ids       chunks[uint64]
	spill     *os.File // the chunks of ids that are nil
	pages     chunks[int32]
	ends      chunks[uint32]
	pageSpill *os.File // the chunks of pages and ends that are nil
	firsts    []int
	links     [][]int32
	spans     []span   // where the chunks of links that are nil lie
	linkSpill *os.File // in this file
	n         int
}

// Nodes returns the number of nodes.
func (v LinksView) Nodes() int { return v.ids.len }

// Pages returns the number of fetched pages recorded.
func (v LinksView) Pages() int { return v.pages.len }

// NumLinks returns the number of links.
func (v LinksView) NumLinks() int { return v.n }

// ID returns the URL ID of node n, read from disk if it was spilled.
func (v LinksView) ID(n int32) (uint64, error) {
	c := v.ids.c[int(n)/chunkLen]
	if c != nil {
		return c[int(n)%chunkLen], nil
	}
	var b [8]byte
	if _, err := v.spill.ReadAt(b[:], int64(n)*8); err != nil {
		return 0, fmt.Errorf("rank: reading node %d's ID: %w", n, err)
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// EachID calls fn with every node's URL ID, in node order, until fn
// returns false, reading the spilled ones a chunk at a time. It fails when
// they cannot be read (the graph closed, a disk error).
func (v LinksView) EachID(fn func(n int32, id uint64) bool) error {
	var buf []byte
	for k, c := range v.ids.c {
		base := k * chunkLen
		count := min(chunkLen, v.ids.len-base)
		if count <= 0 {
			return nil
		}
		if c == nil {
			if buf == nil {
				buf = make([]byte, chunkLen*8)
			}
			if v.spill == nil {
				return fmt.Errorf("rank: node IDs from %d on were spilled and the view has no file", base)
			}
			if _, err := v.spill.ReadAt(buf[:count*8], int64(base)*8); err != nil {
				return fmt.Errorf("rank: reading the IDs of nodes %d to %d: %w", base, base+count-1, err)
			}
		}
		for i := range count {
			var id uint64
			if c != nil {
				id = c[i]
			} else {
				id = binary.LittleEndian.Uint64(buf[i*8:])
			}
			if !fn(int32(base+i), id) {
				return nil
			}
		}
	}
	return nil
}

// Lists returns an iterator over each fetched page's node and links, in
// fetch order, for PageRankLists. The slices alias the graph (or a buffer
// the iterator reuses) and must not be modified or kept past the next
// step. The iterator stops early when spilled links cannot be read, and
// sets *err; it may be ranged over many times, one at a time.
func (v LinksView) Lists(err *error) func(yield func(int32, []int32) bool) {
	var buf []int32 // a spilled chunk, read back
	var pb pageBuf
	return func(yield func(int32, []int32) bool) {
		c := -1 // the chunk of links of page i
		var chunk []int32
		start := uint32(0)
		var pages []int32
		var ends []uint32
		for i := range v.pages.len {
			if i%chunkLen == 0 {
				if pages, ends, *err = v.pageChunk(i/chunkLen, &pb); *err != nil {
					return
				}
			}
			if c+1 < len(v.firsts) && v.firsts[c+1] <= i {
				c, start = c+1, 0
				if chunk = v.links[c]; chunk == nil {
					if buf, *err = v.readLinks(c, buf); *err != nil {
						return
					}
					chunk = buf
				}
			}
			end := ends[i%chunkLen]
			if !yield(pages[i%chunkLen], chunk[start:end:end]) {
				return
			}
			start = end
		}
	}
}

// pageBuf holds a spilled chunk of pages and ends, read back.
type pageBuf struct {
	raw   []byte
	pages []int32
	ends  []uint32
}

// pageChunk returns chunk k of pages and of ends, read into buf when it
// was spilled.
func (v LinksView) pageChunk(k int, buf *pageBuf) ([]int32, []uint32, error) {
	if c := v.pages.c[k]; c != nil {
		return c, v.ends.c[k], nil
	}
	if v.pageSpill == nil {
		return nil, nil, fmt.Errorf("rank: the pages of chunk %d were spilled and the view has no file", k)
	}
	if buf.raw == nil {
		buf.pages, buf.ends = make([]int32, chunkLen), make([]uint32, chunkLen)
		buf.raw = make([]byte, chunkLen*8)
	}
	if _, err := v.pageSpill.ReadAt(buf.raw, int64(k)*chunkLen*8); err != nil {
		return nil, nil, fmt.Errorf("rank: reading the pages of chunk %d: %w", k, err)
	}
	copy(int32Bytes(buf.pages), buf.raw[:chunkLen*4])
	copy(uint32Bytes(buf.ends), buf.raw[chunkLen*4:])
	return buf.pages, buf.ends, nil
}

// readLinks reads spilled chunk k of links into buf, grown if need be.
func (v LinksView) readLinks(k int, buf []int32) ([]int32, error) {
	sp := v.spans[k]
	if cap(buf) < sp.n {
		buf = make([]int32, sp.n)
	}
	buf = buf[:sp.n]
	if sp.n == 0 {
		return buf, nil
	}
	if v.linkSpill == nil {
		return buf, fmt.Errorf("rank: the links of chunk %d were spilled and the view has no file", k)
	}
	if _, err := v.linkSpill.ReadAt(int32Bytes(buf), sp.off); err != nil {
		return buf, fmt.Errorf("rank: reading the links of chunk %d: %w", k, err)
	}
	return buf, nil
}

// PageRank computes the view's PageRank with PageRankLists, on the calling
// goroutine, and the share of it held by the fetched pages (the crawl's
// coverage). Beyond the graph (and opt's warm start) it needs about 21
// bytes a node, 8 of them for the result, and a chunk of links (4 MiB)
// when they were spilled.
func (v LinksView) PageRank(opt Options) (Result, float64, error) {
	n := v.ids.len
	var readErr error
	res, err := PageRankLists(n, v.Lists(&readErr), opt)
	if readErr != nil {
		return Result{}, 0, readErr
	}
	if err != nil && !errors.Is(err, ErrNotConverged) {
		return res, 0, err
	}
	// A page is fetched once; the mark guards the share against a page
	// recorded twice all the same.
	counted := make([]uint64, (n+63)/64)
	share := 0.0
	var pb pageBuf
	for k := range len(v.pages.c) {
		pages, _, rerr := v.pageChunk(k, &pb)
		if rerr != nil {
			return Result{}, 0, rerr
		}
		for _, p := range pages[:min(chunkLen, v.pages.len-k*chunkLen)] {
			if w, bit := &counted[p/64], uint64(1)<<(p%64); *w&bit == 0 {
				*w |= bit
				share += res.Scores[p]
			}
		}
	}
	return res, min(share, 1), err
}

// chunks is an append-only array kept in chunks of chunkLen elements, so
// that growing it never copies what it holds. The zero value is empty.
type chunks[T any] struct {
	c   [][]T
	len int
}

// chunkLen is the number of elements of a chunk (a power of two).
const chunkLen = 1 << 16

func (a *chunks[T]) append(x T) {
	if a.len%chunkLen == 0 {
		a.c = append(a.c, make([]T, 0, chunkLen))
	}
	last := len(a.c) - 1
	a.c[last] = append(a.c[last], x)
	a.len++
}

func (a chunks[T]) at(i int) T { return a.c[i/chunkLen][i%chunkLen] }

// view returns the array as it is now; later appends write past it.
func (a chunks[T]) view() chunks[T] {
	return chunks[T]{c: append([][]T(nil), a.c...), len: a.len}
}

// bytes is the memory the chunks in memory hold (a spilled one is nil).
func (a chunks[T]) bytes(size int64) int64 {
	n := int64(0)
	for _, c := range a.c {
		if c != nil {
			n += chunkLen * size
		}
	}
	return n
}
