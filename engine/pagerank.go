package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/rank"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// Oracle knows the true PageRank of the web being crawled, as a simulated
// web does (simweb). The engine uses it for oracle coverage (the measure of
// Castillo's chapter 6) and for the "optimal" strategy. It must be safe for
// concurrent use.
type Oracle interface {
	// PageRank returns the true PageRank of the page at url (a normalised
	// URL), and false when the oracle does not know the page.
	PageRank(url string) (float64, bool)
}

// maxCoveragePoints bounds Stats.Coverage: past it, every other point is
// dropped (the first and the newest are kept), so a long crawl's curve keeps
// its shape in bounded memory.
const maxCoveragePoints = 512

// rankPace spaces recomputations on a big graph: a run does not start
// before rankPace times the last run's duration has passed since that one
// started, whatever pagerank.every_pages and pagerank.every say.
const rankPace = 10

// rankTolerance is the L1 residual at which a recomputation stops: the
// ranks are an estimate over a graph that changes while they are computed,
// and a warm start makes each run short anyway.
const rankTolerance = 1e-7

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

// pagerank computes the PageRank of the view (damping 0.85), warm-started
// from last (the scores of an earlier, smaller view; nodes added since start
// at the uniform share), and the share of it held by fetched pages. It runs
// on the calling goroutine, pushing along the link lists as they are: 20
// bytes a node beyond the graph, nothing a link.
func (v graphView) pagerank(last []float64) (rank.Result, float64, error) {
	n := len(v.ids)
	opt := rank.Options{Damping: 0.85, Tolerance: rankTolerance, MaxIter: 200}
	if len(last) > 0 && len(last) <= n {
		opt.Start = last // rank starts the nodes added since at 1/n
	}
	res, err := rank.PageRankLists(n, v.lists, opt)
	if err != nil && !errors.Is(err, rank.ErrNotConverged) {
		return res, 0, err
	}
	// A page is fetched once; the mark guards the share against a page
	// recorded twice all the same.
	counted := make([]bool, n)
	share := 0.0
	for _, p := range v.pages {
		if !counted[p] {
			counted[p] = true
			share += res.Scores[p]
		}
	}
	return res, min(share, 1), nil
}

// ranker runs the crawl's PageRank recomputations: at most one at a time,
// in the background, every cfg.RankEveryPages pages or cfg.RankEvery. Its
// fields are the loop goroutine's, but for the channel and the group.
type ranker struct {
	busy      bool
	pages     int64     // pages fetched when the last run started
	started   time.Time // when the last run started (or the crawl)
	last      []float64 // the last run's scores, for the warm start
	lastTime  time.Time // the last run's key
	storedAt  time.Time // when ranks were last written
	out       chan rankResult
	wg        sync.WaitGroup // runs in flight and ranks being written
	storeMu   sync.Mutex     // one run writes its ranks at a time
	cancel    context.CancelFunc
	ctx       context.Context
	took      time.Duration // how long the last run took
	lastErr   string
	oracleSum float64 // oracle PageRank of the pages fetched so far
}

type rankJob struct {
	view   graphView
	last   []float64
	prev   time.Time // the previous run's key: keys are strictly increasing
	pages  int64
	oracle float64
	store  bool
}

type rankResult struct {
	took   time.Duration // wall time of the computation
	run    record.RankRun
	scores []float64
	stored bool // its ranks and record are being written by storeRanks
	err    error
}

// computeRank runs one recomputation.
func (e *Engine) computeRank(j rankJob) rankResult {
	start := time.Now()
	res, share, err := j.view.pagerank(j.last)
	took := time.Since(start)
	t := e.clock.Now().Truncate(time.Millisecond)
	if !t.After(j.prev) {
		t = j.prev.Add(time.Millisecond)
	}
	run := record.RankRun{Time: t, Pages: j.pages, Nodes: len(j.view.ids), Edges: j.view.links,
		Iterations: res.Iterations, Coverage: share, Oracle: j.oracle}
	return rankResult{took: took, run: run, scores: res.Scores, stored: j.store && err == nil, err: err}
}

// storeRanks writes every node's rank of run to the store through the
// committer, a chunk of cfg.FlushRecords at a time, so the loop's own
// batches and the robots' queue requests pass between chunks. The run's
// record goes with the first chunk and again, saying its ranks are
// complete, with the last.
func (e *Engine) storeRanks(ctx context.Context, mu *sync.Mutex, ids []uint64, scores []float64, run record.RankRun) {
	mu.Lock()
	defer mu.Unlock()
	chunk := max(e.cfg.FlushRecords, 1000)
	for i := 0; i < len(scores); i += chunk {
		b := e.commit.batch()
		if i == 0 {
			b.RankRuns = append(b.RankRuns, run)
		}
		for j := i; j < min(i+chunk, len(scores)); j++ {
			b.Ranks = append(b.Ranks, record.RankRecord{URL: ids[j], Rank: scores[j], Time: run.Time})
		}
		if i+chunk >= len(scores) {
			run.Ranks = true
			b.RankRuns = append(b.RankRuns, run)
		}
		select {
		case e.commit.in <- b:
		case <-ctx.Done():
			return
		}
	}
}

// startRanker prepares the crawl's recomputations; stopRanker (deferred by
// Run before the committer closes) ends them.
func (c *crawl) startRanker(now time.Time) {
	c.rank.out = make(chan rankResult, 1)
	c.rank.ctx, c.rank.cancel = context.WithCancel(context.Background())
	c.rank.started = now
	c.rank.pages = c.pages
}

func (c *crawl) stopRanker() {
	if c.rank.cancel == nil {
		return
	}
	c.rank.cancel()
	c.rank.wg.Wait()
}

// rankDue starts a recomputation when one is due and none is running.
func (c *crawl) rankDue(now time.Time) {
	cfg := &c.e.cfg
	r := &c.rank
	if !cfg.Rank || r.busy || c.pages == r.pages || len(c.graph.pages) == 0 {
		return
	}
	if c.pages-r.pages < int64(cfg.RankEveryPages) && (cfg.RankEvery <= 0 || now.Sub(r.started) < cfg.RankEvery) {
		return
	}
	if now.Sub(r.started) < rankPace*r.took {
		return // a big graph: runs are spaced so they take a tenth of a core at most
	}
	j := c.rankJob(now)
	r.busy = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		res := c.e.computeRank(j)
		r.out <- res // never blocks: one run at a time, and the loop takes it
		if j.store && res.err == nil {
			c.e.storeRanks(r.ctx, &r.storeMu, j.view.ids, res.scores, res.run)
		}
	}()
}

// rankJob snapshots what a run needs and decides whether it writes ranks.
func (c *crawl) rankJob(now time.Time) rankJob {
	r := &c.rank
	r.pages, r.started = c.pages, now
	j := rankJob{view: c.graph.view(), last: r.last, prev: r.lastTime, pages: c.pages, oracle: -1}
	if c.e.cfg.Oracle != nil {
		j.oracle = min(r.oracleSum, 1)
	}
	if r.storedAt.IsZero() || now.Sub(r.storedAt) >= c.e.cfg.RankStoreEvery {
		j.store = true
		r.storedAt = now
	}
	return j
}

// onRank takes a finished run: its scores warm-start the next, its point
// goes on the coverage curve and its record to the store.
func (c *crawl) onRank(res rankResult) {
	r := &c.rank
	r.busy = false
	r.took = res.took
	if res.err != nil {
		if msg := res.err.Error(); msg != r.lastErr {
			r.lastErr = msg
			c.e.event(record.Event{Kind: record.EventPageRank, Text: "PageRank failed: " + msg})
		}
		return
	}
	r.last, r.lastTime = res.scores, res.run.Time
	if !res.stored {
		// Its record; storeRanks writes that of a run whose ranks it writes.
		c.batch.RankRuns = append(c.batch.RankRuns, res.run)
	}
	e := c.e
	e.mu.Lock()
	cov := append(e.st.Coverage, record.CoveragePoint{Pages: res.run.Pages, Coverage: res.run.Coverage, Oracle: res.run.Oracle})
	if len(cov) > maxCoveragePoints {
		cov = thin(cov)
	}
	e.st.Coverage = cov
	e.mu.Unlock()
}

// thin drops every other point of a curve, keeping the first and the last.
func thin(cov []record.CoveragePoint) []record.CoveragePoint {
	out := cov[:1]
	for i := 2; i < len(cov)-1; i += 2 {
		out = append(out, cov[i])
	}
	return append(out, cov[len(cov)-1])
}

// finalRank runs at the end of a finished crawl: it waits for the run in
// flight and computes the final PageRank, whose ranks are always written,
// so a finished crawl's store holds the ranks of every page it knows.
func (c *crawl) finalRank() {
	r := &c.rank
	if !c.e.cfg.Rank {
		return
	}
	if r.busy {
		c.onRank(<-r.out)
	}
	if len(c.graph.pages) == 0 {
		return
	}
	j := c.rankJob(c.e.clock.Now())
	j.store = true
	res := c.e.computeRank(j)
	c.onRank(res)
	if res.err == nil {
		c.flush()
		c.e.storeRanks(r.ctx, &r.storeMu, j.view.ids, res.scores, res.run)
	}
}

// addNode makes the graph node of a newly seen URL of site (0: unknown).
// With PageRank off and a strategy that needs no nodes, no graph is kept:
// every URL is node 0.
func (c *crawl) addNode(id uint64, site int64) int32 {
	if !c.e.cfg.Rank && c.rp == nil {
		return 0
	}
	n := c.graph.add(id)
	if c.rp != nil {
		c.nodeSite = append(c.nodeSite, int32(site))
	}
	return n
}

// pageLinks records a fetched page in the graph, with the nodes of the
// links followed (all seen by now), and adds its true PageRank to the
// oracle's coverage.
func (c *crawl) pageLinks(id uint64, url string, follow []followed) {
	if !c.e.cfg.Rank {
		return
	}
	page, ok := c.seen[id]
	if !ok {
		page = c.addNode(id, 0)
		c.seen[id] = page
	}
	c.nodeBuf = c.nodeBuf[:0]
	for _, f := range follow {
		if n, ok := c.seen[f.ID]; ok {
			c.nodeBuf = append(c.nodeBuf, n)
		}
	}
	c.graph.fetched(page, c.nodeBuf)
	if o := c.e.cfg.Oracle; o != nil {
		if pr, ok := o.PageRank(url); ok {
			c.rank.oracleSum += pr
		}
	}
}

// followed is a link of a fetched page that the crawl follows.
type followed struct {
	visit.FoundLink
	depth int
}

// errNoOracle is the optimal strategy without an oracle.
var errNoOracle = errors.New(`"optimal" orders pages by their true PageRank and needs an oracle that knows it (lidi demo gives simweb's); none was given`)

// newStrategy makes the strategy cfg names; the PageRank-based ones take
// their K or their oracle from cfg.
func newStrategy(cfg Config) (frontier.Strategy, error) {
	opt := frontier.StrategyOptions{K: cfg.RankBatch}
	if o := cfg.Oracle; o != nil {
		opt.Oracle = func(p frontier.PageInfo) float64 {
			pr, _ := o.PageRank(p.URL)
			return pr
		}
	}
	return frontier.NewStrategy(cfg.Strategy, opt)
}

// strategyNames lists the strategies config.yaml may name.
func strategyNames() []string {
	return append(frontier.StrategyNames(), "optimal")
}

func knownStrategy(name string) bool {
	for _, n := range strategyNames() {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// loadCoverage puts the earlier runs' coverage curve in the Stats.
func (c *crawl) loadCoverage(ctx context.Context) error {
	cl, ok := c.e.store.(record.CoverageLoader)
	if !ok || !c.e.cfg.Rank {
		return nil
	}
	cov, err := cl.CoverageHistory(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading the coverage curve: %w", err)
	}
	for len(cov) > maxCoveragePoints {
		cov = thin(cov)
	}
	c.e.mu.Lock()
	c.e.st.Coverage = cov
	c.e.mu.Unlock()
	return nil
}

// loadGraph rebuilds the link graph of the pages fetched by earlier runs.
// The strategies' own state (batch, partial) is not rebuilt: they start
// afresh over what is left queued.
func (c *crawl) loadGraph(ctx context.Context) error {
	if err := c.loadCoverage(ctx); err != nil {
		return err
	}
	ll, ok := c.e.store.(record.LinkLoader)
	if !ok || !c.e.cfg.Rank {
		return nil
	}
	err := ll.FetchedLinks(ctx, func(page uint64, url string, links []uint64) {
		c.followBuf = c.followBuf[:0]
		for _, l := range links {
			c.followBuf = append(c.followBuf, followed{FoundLink: visit.FoundLink{ID: l}})
		}
		c.pageLinks(page, url, c.followBuf)
	})
	c.followBuf = c.followBuf[:0]
	if err != nil {
		return fmt.Errorf("engine: loading the link graph: %w", err)
	}
	return nil
}
