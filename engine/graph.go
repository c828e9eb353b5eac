package engine

// webGraph is the web a crawl has discovered: the URLs seen, each a node
// when a graph is kept, and the links of the pages fetched, for PageRank
// and for the strategies that re-order queued pages by it. Only the loop
// goroutine changes it; a PageRank recomputation reads a view of its links
// (linkGraph.view), which the loop's appends never touch.
type webGraph struct {
	seen map[uint64]int32 // URL ID -> node (0 for every URL when nodes are not kept)
	// nodes: a node for every URL (PageRank on, or a strategy that
	// re-orders queued pages); links: the links of fetched pages
	// (PageRank on); sites: the site of every node (a strategy that
	// re-orders queued pages).
	nodes, links, sites bool
	graph               linkGraph
	site                []int32 // site of each node, when sites; 0 unknown
	buf                 []int32 // scratch: a page's links as nodes
}

func newWebGraph(nodes, links, sites bool) webGraph {
	return webGraph{seen: make(map[uint64]int32), nodes: nodes, links: links, sites: sites}
}

// has reports whether URL id has been seen.
func (w *webGraph) has(id uint64) bool {
	_, ok := w.seen[id]
	return ok
}

// node returns the node of URL id, if seen.
func (w *webGraph) node(id uint64) (int32, bool) {
	n, ok := w.seen[id]
	return n, ok
}

// len is the number of URLs seen.
func (w *webGraph) len() int { return len(w.seen) }

// add records URL id, newly seen, of site (0: unknown).
func (w *webGraph) add(id uint64, site int64) {
	w.seen[id] = w.addNode(id, site)
}

func (w *webGraph) addNode(id uint64, site int64) int32 {
	if !w.nodes {
		return 0
	}
	n := w.graph.add(id)
	if w.sites {
		w.site = append(w.site, int32(site))
	}
	return n
}

// siteOf returns the site of node n (0: unknown).
func (w *webGraph) siteOf(n int32) int64 { return int64(w.site[n]) }

// fetched records page id, fetched, with the links followed (all seen by
// now).
func (w *webGraph) fetched(id uint64, follow []followed) {
	if !w.links {
		return
	}
	page, ok := w.seen[id]
	if !ok {
		page = w.addNode(id, 0)
		w.seen[id] = page
	}
	w.buf = w.buf[:0]
	for _, f := range follow {
		if n, ok := w.seen[f.ID]; ok {
			w.buf = append(w.buf, n)
		}
	}
	w.graph.fetched(page, w.buf)
}

// linkGraph is the web graph a crawl has discovered, kept compactly for
// PageRank: every URL seen is a node (an int32 index, the value of the
// loop's seen map) and every fetched page appends its in-scope links, as
// node indexes, to the current chunk of linkChunk links — 4 bytes a link
// and 12 a fetched page. Chunks are never reallocated: a growing slice of
// ten million links would be copied as it grows and hold half again its
// size in spare capacity, which on the 1,000,000-URL crawl cost more peak
// memory than the links themselves. Only the loop goroutine appends; a
// background recomputation reads a prefix (graphView), which appends never
// touch.
type linkGraph struct {
	ids   []uint64 // node -> URL ID
	pages []int32  // the nodes of fetched pages, in fetch order
	// ends[i] is where pages[i]'s links end: chunk<<32 | offset. A page's
	// links lie in one chunk, from the previous page's end when that is in
	// the same chunk, else from offset 0.
	ends   []int64
	chunks [][]int32
	links  int // links in all chunks

}

// linkChunk is the size of a chunk of links: 4 MiB.
const linkChunk = 1 << 20

// add makes a node for the URL id and returns it.
func (g *linkGraph) add(id uint64) int32 {
	g.ids = append(g.ids, id)
	return int32(len(g.ids) - 1)
}

// fetched records that page was fetched, linking to links.
func (g *linkGraph) fetched(page int32, links []int32) {
	last := len(g.chunks) - 1
	if last < 0 || len(g.chunks[last])+len(links) > cap(g.chunks[last]) {
		// A page with more links than a chunk holds gets a chunk of its own.
		g.chunks = append(g.chunks, make([]int32, 0, max(linkChunk, len(links))))
		last++
	}
	g.chunks[last] = append(g.chunks[last], links...)
	g.links += len(links)
	g.pages = append(g.pages, page)
	g.ends = append(g.ends, int64(last)<<32|int64(len(g.chunks[last])))
}

// fetchedPages is the number of pages whose links the graph holds.
func (g *linkGraph) fetchedPages() int { return len(g.pages) }

// view returns the graph as it is now, for another goroutine to read. The
// chunk headers are copied: the loop goes on appending to the last chunk,
// within its capacity, past what the view reads.
func (g *linkGraph) view() graphView {
	return graphView{ids: g.ids[:len(g.ids):len(g.ids)], pages: g.pages[:len(g.pages):len(g.pages)],
		ends: g.ends[:len(g.ends):len(g.ends)], chunks: append([][]int32(nil), g.chunks...), links: g.links}
}

// graphView is a prefix of a linkGraph, immutable.
type graphView linkGraph

// lists yields each fetched page's links, for rank.PageRankLists.
func (v graphView) lists(yield func(int32, []int32) bool) {
	prev := int64(-1)
	for i, p := range v.pages {
		chunk, end := v.ends[i]>>32, v.ends[i]&(1<<32-1)
		start := int64(0)
		if prev>>32 == chunk {
			start = prev & (1<<32 - 1)
		}
		prev = v.ends[i]
		if !yield(p, v.chunks[chunk][start:end:end]) {
			return
		}
	}
}
