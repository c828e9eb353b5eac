package engine

import (
	"errors"
	"fmt"

	"lidi/engine/rank"
	"lidi/engine/seen"
)

// webGraph is the web a crawl has discovered: the URLs seen, each a node
// when a graph is kept, and the links of the pages fetched, for PageRank
// and for the strategies that re-order queued pages by it. Only the loop
// goroutine changes it; a PageRank recomputation reads a view of its links
// (view), which the loop's appends never touch.
//
// The URLs seen are a seen.Set: the newest in memory, the rest in sorted
// runs on disk, about 1.3 bytes a URL in memory beyond a fixed 4 MiB or
// so (a Go map took 38). The set is rebuilt from the store at every start,
// so a crawl killed leaves nothing to repair. The links are a rank.Links:
// the chunks being filled in memory (5 MiB); the links (4 bytes each) and
// the pages fetched (8 bytes each), read once per PageRank iteration, and
// the nodes' URL IDs (8 bytes a node), read only to store ranks, go to
// unlinked temporary files, a full chunk at a time.
type webGraph struct {
	seen *seen.Set // URL ID -> node (0 for every URL when nodes are not kept)
	// err is the first error of the set or the graph: it stops the crawl,
	// whose store holds everything the set did.
	err error
	// nodes: a node for every URL (PageRank on, or a strategy that
	// re-orders queued pages); links: the links of fetched pages
	// (PageRank on); sites: the site of every node (a strategy that
	// re-orders queued pages).
	nodes, links, sites bool
	graph               rank.Links
	site                []int32 // site of each node, when sites; 0 unknown
	buf                 []int32 // scratch: a page's links as nodes
}

// newWebGraph opens an empty graph whose seen set spills to a new
// temporary directory (under $TMPDIR), removed by close.
func newWebGraph(nodes, links, sites bool) (webGraph, error) {
	s, err := seen.Open(seen.Options{})
	if err != nil {
		return webGraph{}, fmt.Errorf("engine: %w", err)
	}
	w := webGraph{seen: s, nodes: nodes, links: links, sites: sites}
	if nodes {
		if err := w.graph.Spill(""); err != nil {
			s.Close()
			return webGraph{}, fmt.Errorf("engine: %w", err)
		}
	}
	return w, nil
}

// close removes the seen set's runs and the graph's file of node IDs.
func (w *webGraph) close() error {
	if w.seen == nil {
		return nil
	}
	return errors.Join(w.seen.Close(), w.graph.Close())
}

// fail keeps the first error.
func (w *webGraph) fail(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

// has reports whether URL id has been seen.
func (w *webGraph) has(id uint64) bool {
	_, ok := w.node(id)
	return ok
}

// node returns the node of URL id, if seen.
func (w *webGraph) node(id uint64) (int32, bool) {
	n, ok, err := w.seen.Get(id)
	w.fail(err)
	return n, ok
}

// len is the number of URLs seen.
func (w *webGraph) len() int { return w.seen.Len() }

// add records URL id, newly seen, of site (0: unknown).
func (w *webGraph) add(id uint64, site int64) {
	w.fail(w.seen.Add(id, w.addNode(id, site)))
}

func (w *webGraph) addNode(id uint64, site int64) int32 {
	if !w.nodes {
		return 0
	}
	n, err := w.graph.Add(id)
	if err != nil {
		w.fail(fmt.Errorf("engine: %w", err))
		return 0
	}
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
	page, ok := w.node(id)
	if !ok {
		page = w.addNode(id, 0)
		w.fail(w.seen.Add(id, page))
	}
	w.buf = w.buf[:0]
	for _, f := range follow {
		if n, ok := w.node(f.ID); ok {
			w.buf = append(w.buf, n)
		}
	}
	w.graph.Fetched(page, w.buf)
}

// bytes returns the memory the seen set and the graph hold.
func (w *webGraph) bytes() (seen, graph int64) {
	return w.seen.Stats().Bytes, w.graph.Bytes() + int64(cap(w.site))*4
}

// fetchedPages is the number of pages whose links the graph holds.
func (w *webGraph) fetchedPages() int { return w.graph.Pages() }

// view returns the links as they are now, for another goroutine to read.
func (w *webGraph) view() rank.LinksView { return w.graph.View() }

// pagerank computes the PageRank of the view (damping 0.85), warm-started
// from last (the scores of an earlier, smaller view; nodes added since start
// at the uniform share), and the share of it held by fetched pages. It runs
// on the calling goroutine, pushing along the link lists as they are: 21
// bytes a node beyond the graph and last (4), nothing a link.
func pagerank(v rank.LinksView, last []float32) (rank.Result, float64, error) {
	opt := rank.Options{Damping: 0.85, Tolerance: rankTolerance, MaxIter: 200}
	if len(last) > 0 && len(last) <= v.Nodes() {
		opt.Start32 = last // rank starts the nodes added since at 1/n
	}
	res, share, err := v.PageRank(opt)
	if errors.Is(err, rank.ErrNotConverged) {
		err = nil // the last iterate is kept: the next run starts from it
	}
	return res, share, err
}
