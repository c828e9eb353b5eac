package rank

import (
	"errors"
	"fmt"
	"math"
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
// The zero Links is empty and ready to use. One goroutine may call its
// methods; a View taken by that goroutine may be read by any other
// goroutine while Links grows, since appends never touch what a view sees.
type Links struct {
	ids   chunks[uint64] // node -> URL ID
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
	return int32(g.ids.len - 1), nil
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
	for _, c := range g.links {
		b += int64(cap(c)) * 4
	}
	return b
}

// View returns the graph as it is now. It copies only the chunk headers:
// Links goes on appending within the last chunks' capacity, past what the
// view reads.
func (g *Links) View() LinksView {
	return LinksView{ids: g.ids.view(), pages: g.pages.view(), ends: g.ends.view(),
		links: append([][]int32(nil), g.links...), n: g.n}
}

// LinksView is a prefix of a Links, immutable and safe for concurrent use.
// The zero LinksView is an empty graph.
type LinksView struct {
	ids   chunks[uint64]
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

// ID returns the URL ID of node n.
func (v LinksView) ID(n int32) uint64 { return v.ids.at(int(n)) }

// IDs yields every node's URL ID, in node order.
func (v LinksView) IDs(yield func(int32, uint64) bool) {
	for i := range v.ids.len {
		if !yield(int32(i), v.ids.at(i)) {
			return
		}
	}
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
// coverage). Beyond the graph it needs 29 bytes a node.
func (v LinksView) PageRank(opt Options) (Result, float64, error) {
	n := v.ids.len
	res, err := PageRankLists(n, v.Lists, opt)
	if err != nil && !errors.Is(err, ErrNotConverged) {
		return res, 0, err
	}
	// A page is fetched once; the mark guards the share against a page
	// recorded twice all the same.
	counted := make([]bool, n)
	share := 0.0
	for i := range v.pages.len {
		if p := v.pages.at(i); !counted[p] {
			counted[p] = true
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

func (a chunks[T]) bytes(size int64) int64 { return int64(len(a.c)) * chunkLen * size }
