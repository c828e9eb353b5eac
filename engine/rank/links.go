package rank

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
)

// ErrFull reports a Links that already holds math.MaxInt32 nodes.
var ErrFull = errors.New("rank: link graph full")

// Links is a crawl's link graph as it grows: every URL known is a node (an
// int32, given in the order the URLs were added) and every fetched page
// appends its links as nodes. It costs 8 bytes a node (the URL's ID), 12 a
// fetched page and 4 a link, and is never copied as it grows: its arrays are
// kept in fixed-size chunks, where a growing slice would be copied at every
// doubling and hold up to half again its size in spare capacity (which on a
// 1,000,000-URL crawl cost more peak memory than the links themselves).
//
// The node IDs are read only when ranks are stored, in node order: after
// SpillIDs each full chunk of them goes to a file, and the graph keeps
// under 1 byte a node of them in memory.
//
// The zero Links is empty and ready to use, all in memory. One goroutine
// may call its methods; a View taken by that goroutine may be read by any
// other goroutine while Links grows, since appends never touch what a view
// sees.
type Links struct {
	ids   chunks[uint64] // node -> URL ID; a nil chunk is in spill
	spill *idFile        // nil: every chunk of IDs in memory
	pages chunks[int32]  // the nodes of fetched pages, in fetch order
	// ends[i] is where pages[i]'s links end: chunk<<32 | offset. A page's
	// links lie in one chunk of links, from the previous page's end when
	// that is in the same chunk, else from offset 0.
	ends  chunks[int64]
	links [][]int32
	n     int // links in all chunks
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

// idFile holds the node IDs of the full chunks a Links has spilled, chunk k
// at offset k*chunkLen*8, little-endian. It is written by the Links'
// goroutine and read by its views' (ReadAt on distinct ranges).
type idFile struct {
	f       *os.File
	removed bool   // unlinked while open: the system frees it when closed
	err     error  // the first write error: later chunks stay in memory
	buf     []byte // scratch for one chunk
}

// SpillIDs makes the graph write each full chunk of node IDs (512 KiB, the
// IDs of 65,536 nodes) to a temporary file in dir (empty: os.TempDir())
// and free it. The file is unlinked at once where the system allows, so a
// crawl killed leaves nothing behind; Close closes it. A chunk that cannot
// be written stays in memory, so nothing is lost; SpillErr says why.
func (g *Links) SpillIDs(dir string) error {
	if g.spill != nil {
		return nil
	}
	f, err := os.CreateTemp(dir, "lidi-graph-*.ids")
	if err != nil {
		return fmt.Errorf("rank: spilling node IDs: %w", err)
	}
	g.spill = &idFile{f: f, removed: os.Remove(f.Name()) == nil}
	for k := range g.ids.len / chunkLen {
		g.spillChunk(k)
	}
	return nil
}

// SpillErr returns the error that stopped IDs going to disk, if any.
func (g *Links) SpillErr() error {
	if g.spill == nil {
		return nil
	}
	return g.spill.err
}

// Close closes and removes the file of spilled IDs, if any; views taken
// before can no longer read them. The graph's links stay usable.
func (g *Links) Close() error {
	s := g.spill
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

// Fetched records that the page at node page was fetched, linking to the
// nodes links (copied). Recording a page twice keeps both lists.
func (g *Links) Fetched(page int32, links []int32) {
	last := len(g.links) - 1
	if last < 0 || len(g.links[last])+len(links) > cap(g.links[last]) {
		// A page with more links than a chunk holds gets a chunk of its own.
		g.links = append(g.links, make([]int32, 0, max(linkChunk, len(links))))
		last++
	}
	g.links[last] = append(g.links[last], links...)
	g.n += len(links)
	g.pages.append(page)
	g.ends.append(int64(last)<<32 | int64(len(g.links[last])))
}

// Nodes returns the number of nodes.
func (g *Links) Nodes() int { return g.ids.len }

// Pages returns the number of fetched pages recorded.
func (g *Links) Pages() int { return g.pages.len }

// NumLinks returns the number of links recorded.
func (g *Links) NumLinks() int { return g.n }

// Bytes returns the memory the graph holds, spare capacity included.
func (g *Links) Bytes() int64 {
	b := g.ids.bytes(8) + g.pages.bytes(4) + g.ends.bytes(8)
	if g.spill != nil && g.spill.buf != nil {
		b += int64(len(g.spill.buf))
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
	v := LinksView{ids: g.ids.view(), pages: g.pages.view(), ends: g.ends.view(),
		links: append([][]int32(nil), g.links...), n: g.n}
	if g.spill != nil {
		v.spill = g.spill.f
	}
	return v
}

// LinksView is a prefix of a Links, immutable and safe for concurrent use.
// The zero LinksView is an empty graph.
type LinksView struct {
	ids   chunks[uint64]
	spill *os.File // the chunks of ids that are nil
	pages chunks[int32]
	ends  chunks[int64]
	links [][]int32
	n     int
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

// Lists yields each fetched page's node and links, in fetch order, for
// PageRankLists. The slices alias the graph and must not be modified.
func (v LinksView) Lists(yield func(int32, []int32) bool) {
	prev := int64(-1)
	for i := range v.pages.len {
		e := v.ends.at(i)
		chunk, end := e>>32, e&(1<<32-1)
		start := int64(0)
		if prev>>32 == chunk {
			start = prev & (1<<32 - 1)
		}
		prev = e
		if !yield(v.pages.at(i), v.links[chunk][start:end:end]) {
			return
		}
	}
}

// PageRank computes the view's PageRank with PageRankLists, on the calling
// goroutine, and the share of it held by the fetched pages (the crawl's
// coverage). Beyond the graph (and opt's warm start) it needs 24 bytes a
// node, and 8 of them for the result.
func (v LinksView) PageRank(opt Options) (Result, float64, error) {
	n := v.ids.len
	res, err := PageRankLists(n, v.Lists, opt)
	if err != nil && !errors.Is(err, ErrNotConverged) {
		return res, 0, err
	}
	// A page is fetched once; the mark guards the share against a page
	// recorded twice all the same.
	counted := make([]uint64, (n+63)/64)
	share := 0.0
	for i := range v.pages.len {
		p := v.pages.at(i)
		if w, bit := &counted[p/64], uint64(1)<<(p%64); *w&bit == 0 {
			*w |= bit
			share += res.Scores[p]
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
