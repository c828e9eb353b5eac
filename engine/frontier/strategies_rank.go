package frontier

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"lidi/engine/rank"
)

// The PageRank-based strategies of Castillo's section 6.3: Optimal (an
// oracle's PageRank), Batch and Partial (PageRank of the graph known so far,
// recomputed every K pages). All three order sites by their best queued
// page, as Depth does, so that the page to fetch next is the best one on
// top of both heaps of Figure 6.4.

// DefaultK is the number of fetched pages between two PageRank
// recomputations of the "batch" and "partial" strategies when
// StrategyOptions.K is not set: the smallest K of the chapter (1/350 of its 3.5 M pages).
const DefaultK = 10_000

// DefaultRankTolerance is the L1 residual at which Batch and Partial stop
// their PageRank iterations when Options.Tolerance is zero: an ordering
// needs far less precision than simweb's oracle (1e-9).
const DefaultRankTolerance = 1e-6

// siteByHead orders sites by their best queued page, ties by discovery.
func siteByHead(a, b *Site) bool {
	if a.HeadPriority != b.HeadPriority {
		return a.HeadPriority < b.HeadPriority
	}
	return a.Seq < b.Seq
}

// Optimal is Castillo's Optimal strategy: pages in the order of their final
// PageRank, which an oracle knows (on simweb, Web.PageRank). Sites go by
// their best queued page. Oracle must be set; Optimal keeps no state, so it
// is safe for concurrent use if Oracle is.
type Optimal struct {
	// Oracle returns the final PageRank of a page.
	Oracle func(PageInfo) float64
}

// NewOptimal returns the Optimal strategy asking oracle for PageRank.
func NewOptimal(oracle func(PageInfo) float64) Optimal { return Optimal{Oracle: oracle} }

// Name returns "optimal".
func (Optimal) Name() string { return "optimal" }

// PagePriority is minus the oracle's PageRank: the best page first.
func (o Optimal) PagePriority(p PageInfo) float64 { return -o.Oracle(p) }

// SiteLess puts first the site whose best queued page has the most PageRank.
func (Optimal) SiteLess(a, b *Site) bool { return siteByHead(a, b) }

// RankStats describes the PageRank computations of Batch or Partial.
type RankStats struct {
	Recomputations int           // PageRank runs so far
	Iterations     int           // power iterations over all runs
	Nodes, Edges   int           // size of the known graph at the last run
	Time           time.Duration // wall time spent in PageRank (not deterministic)
}

// knownGraph is the link graph a crawl has discovered: every page seen
// (fetched or queued) is a node, every link of a fetched page an edge.
type knownGraph struct {
	opt     rank.Options
	index   map[uint64]int32
	ids     []uint64
	fetched []bool
	from    []int32
	to      []int32
	last    []float64 // scores of the last PageRank, for the warm start
	stats   RankStats
}

func newKnownGraph(opt rank.Options) knownGraph {
	if opt.Tolerance == 0 {
		opt.Tolerance = DefaultRankTolerance
	}
	if opt.MaxIter == 0 {
		opt.MaxIter = 200
	}
	return knownGraph{opt: opt, index: make(map[uint64]int32)}
}

// node returns the node of id, adding it if new.
func (g *knownGraph) node(id uint64) int32 {
	if n, ok := g.index[id]; ok {
		return n
	}
	n := int32(len(g.ids))
	g.index[id] = n
	g.ids = append(g.ids, id)
	g.fetched = append(g.fetched, false)
	return n
}

// learn marks id fetched with its links and returns its node and the nodes
// of the links (in links' order, into buf).
func (g *knownGraph) learn(id uint64, links []uint64, buf []int32) (int32, []int32) {
	n := g.node(id)
	g.fetched[n] = true
	buf = buf[:0]
	for _, l := range links {
		t := g.node(l)
		g.from = append(g.from, n)
		g.to = append(g.to, t)
		buf = append(buf, t)
	}
	return n, buf
}

// pagerank computes the PageRank of the known graph, warm-started from the
// last one (new nodes start at the uniform share).
func (g *knownGraph) pagerank() []float64 {
	start := time.Now()
	n := len(g.ids)
	gr, err := rank.NewGraph(n, func(yield func(int32, int32) bool) {
		for i := range g.from {
			if !yield(g.from[i], g.to[i]) {
				return
			}
		}
	})
	if err != nil {
		panic("frontier: known graph: " + err.Error()) // node ids are ours; cannot happen
	}
	opt := g.opt
	if len(g.last) > 0 {
		opt.Start = g.last // rank starts the pages learnt since at 1/n
	}
	res, err := rank.PageRank(gr, opt)
	if err != nil && !errors.Is(err, rank.ErrNotConverged) {
		panic("frontier: " + err.Error()) // options are checked by the constructors
	}
	g.last = res.Scores
	g.stats.Recomputations++
	g.stats.Iterations += res.Iterations
	g.stats.Nodes, g.stats.Edges = n, gr.NumEdges()
	g.stats.Time += time.Since(start)
	return res.Scores
}

// Batch is Castillo's Batch strategy: the crawler fetches a batch of K
// pages; once all of them are fetched it computes PageRank on the graph
// known so far and forms the next batch from the K queued pages with the
// most PageRank. Pages outside the current batch are Held. The first batch
// is the seeds (all equal), and a new batch opens the same way whenever a
// recomputation finds nothing queued.
//
// Batch implements Reprioritizer; see there for how a driver uses it. The
// zero value is not usable; call NewBatch. It is not safe for concurrent
// use: the goroutine that owns the Frontier calls it.
type Batch struct {
	k       int
	g       knownGraph
	inBatch []bool
	prio    []float64
	left    int  // batch pages not fetched yet
	open    bool // no batch formed yet: new pages join the first one
}

// NewBatch returns a Batch strategy with batches of k pages (k < 1 means
// DefaultK), computing PageRank with rank's defaults but a tolerance of
// DefaultRankTolerance.
func NewBatch(k int) *Batch { return NewBatchWith(k, rank.Options{}) }

// NewBatchWith is NewBatch with PageRank options (damping, tolerance,
// workers); zero fields take DefaultRankTolerance and at most 200
// iterations.
func NewBatchWith(k int, opt rank.Options) *Batch {
	if k < 1 {
		k = DefaultK
	}
	return &Batch{k: k, g: newKnownGraph(opt), open: true}
}

// Name returns "batch".
func (*Batch) Name() string { return "batch" }

// K returns the batch size.
func (b *Batch) K() int { return b.k }

// Stats returns a snapshot of the PageRank work done so far.
func (b *Batch) Stats() RankStats { return b.g.stats }

func (b *Batch) grow() {
	for len(b.inBatch) < len(b.g.ids) {
		b.inBatch = append(b.inBatch, false)
		b.prio = append(b.prio, Held)
	}
}

// PagePriority is minus the page's PageRank at the last recomputation if
// the page is in the current batch, Held otherwise.
func (b *Batch) PagePriority(p PageInfo) float64 {
	n := b.g.node(p.ID)
	b.grow()
	if !b.inBatch[n] && b.open && !b.g.fetched[n] && b.left < b.k {
		b.inBatch[n], b.prio[n] = true, -1
		b.left++
	}
	return b.prio[n]
}

// SiteLess puts first the site whose best queued page ranks highest, so
// sites with only Held pages come last.
func (*Batch) SiteLess(a, b *Site) bool { return siteByHead(a, b) }

// Fetched learns the page's links; when it was the last page of the batch,
// it computes PageRank and reports the next batch through update.
func (b *Batch) Fetched(id uint64, links []uint64, update func(uint64, float64)) {
	n, _ := b.g.learn(id, links, nil)
	b.grow()
	b.open = false
	if b.inBatch[n] {
		b.inBatch[n] = false
		b.left--
	}
	if b.left > 0 {
		return
	}
	b.nextBatch(update)
}

// Unhold gives up on the pages of the current batch not fetched yet (the
// driver reports them gone from its queue) and forms the next batch, as the
// end of a batch does. It reports whether the new batch has any page.
func (b *Batch) Unhold(update func(uint64, float64)) bool {
	b.grow()
	for v, in := range b.inBatch {
		if in {
			b.inBatch[v] = false
			b.g.fetched[v] = true // not fetched, but never a candidate again
		}
	}
	b.left = 0
	b.open = false
	return b.nextBatch(update) > 0
}

// nextBatch computes PageRank and reports the next batch through update;
// it returns the batch's size.
func (b *Batch) nextBatch(update func(uint64, float64)) int {
	scores := b.g.pagerank()
	var cand []int32
	for v := range int32(len(scores)) {
		if !b.g.fetched[v] {
			cand = append(cand, v)
		}
	}
	if len(cand) == 0 {
		b.open = true
		return 0
	}
	slices.SortFunc(cand, func(x, y int32) int {
		if c := cmp.Compare(scores[y], scores[x]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	for _, v := range cand[:min(b.k, len(cand))] {
		b.inBatch[v], b.prio[v] = true, -scores[v]
		b.left++
		update(b.g.ids[v], b.prio[v])
	}
	return b.left
}

// Partial is Castillo's Partial strategy: PageRank of the graph known so
// far is recomputed every K fetched pages; in between, a page not ranked
// yet gets a temporary score, the sum over the fetched pages linking to it
// of their score divided by their number of links, and the page with the
// best score is always fetched next. Seeds start with equal scores.
//
// Partial implements Reprioritizer; see there for how a driver uses it. The
// zero value is not usable; call NewPartial. It is not safe for concurrent
// use: the goroutine that owns the Frontier calls it.
type Partial struct {
	k      int
	g      knownGraph
	score  []float64
	ranked []bool // has a score from the last PageRank
	queued []bool // given a priority and not fetched yet
	since  int    // pages fetched since the last PageRank
	links  []int32
}

// NewPartial returns a Partial strategy recomputing PageRank every k
// fetched pages (k < 1 means DefaultK).
func NewPartial(k int) *Partial { return NewPartialWith(k, rank.Options{}) }

// NewPartialWith is NewPartial with PageRank options; zero fields take
// DefaultRankTolerance and at most 200 iterations.
func NewPartialWith(k int, opt rank.Options) *Partial {
	if k < 1 {
		k = DefaultK
	}
	return &Partial{k: k, g: newKnownGraph(opt)}
}

// Name returns "partial".
func (*Partial) Name() string { return "partial" }

// K returns the number of pages between two PageRank computations.
func (p *Partial) K() int { return p.k }

// Stats returns a snapshot of the PageRank work done so far.
func (p *Partial) Stats() RankStats { return p.g.stats }

func (p *Partial) grow() {
	for len(p.score) < len(p.g.ids) {
		p.score = append(p.score, 0)
		p.ranked = append(p.ranked, false)
		p.queued = append(p.queued, false)
	}
}

// PagePriority is minus the page's score: its PageRank at the last
// recomputation, or its temporary score, or 1 for a seed.
func (p *Partial) PagePriority(pi PageInfo) float64 {
	n := p.g.node(pi.ID)
	p.grow()
	if !p.ranked[n] && p.score[n] == 0 && pi.Parent == 0 {
		p.score[n] = 1
	}
	p.queued[n] = !p.g.fetched[n]
	return -p.score[n]
}

// SiteLess puts first the site whose best queued page scores highest.
func (*Partial) SiteLess(a, b *Site) bool { return siteByHead(a, b) }

// Fetched learns the page's links and passes its score on to the pages it
// links to that are not ranked yet; every K pages it recomputes PageRank
// and reports every queued page's new priority through update.
func (p *Partial) Fetched(id uint64, links []uint64, update func(uint64, float64)) {
	var n int32
	n, p.links = p.g.learn(id, links, p.links)
	p.grow()
	p.queued[n] = false
	p.since++
	if p.since >= p.k {
		p.since = 0
		scores := p.g.pagerank()
		copy(p.score, scores)
		for v := range p.ranked {
			p.ranked[v] = true
		}
		for v, q := range p.queued {
			if q {
				update(p.g.ids[v], -p.score[v])
			}
		}
		return
	}
	if len(p.links) == 0 {
		return
	}
	share := p.score[n] / float64(len(p.links))
	for _, t := range p.links {
		if p.g.fetched[t] || p.ranked[t] {
			continue
		}
		p.score[t] += share
		if p.queued[t] {
			update(p.g.ids[t], -p.score[t])
		}
	}
}

var (
	_ Unholder      = (*Batch)(nil)
	_ Reprioritizer = (*Partial)(nil)
)
