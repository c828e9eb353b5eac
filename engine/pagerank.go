package engine

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

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

// rankGrowth spaces recomputations as the crawl grows: a run does not
// start before the crawl has fetched a rankGrowth-th more pages than it
// had when the last run started. A run costs about as much as the graph
// is large, so its cost per page fetched stays flat. Due every 10,000
// pages (every_pages), the runs of the bench's crawl to 3,000,000 URLs
// took 40 to 45 iterations each (warm-started from the ranks of a graph
// with a tenth fewer URLs), over 6,000,000 links at 1,000,000 URLs, and
// only rankPace held them back, at a tenth of a core.
const rankGrowth = 10

// rankTolerance is the L1 residual at which a recomputation stops: the
// ranks are an estimate over a graph that changes while they are computed,
// and a warm start makes each run short anyway.
const rankTolerance = 1e-7

// ranker runs the crawl's PageRank recomputations: at most one at a time,
// in the background, every cfg.RankEveryPages pages or cfg.RankEvery. Its
// fields are the loop goroutine's, but for the channel and the group.
type ranker struct {
	busy      bool
	pages     int64     // pages fetched when the last run started (or the crawl)
	ran       bool      // a run started in this process
	started   time.Time // when the last run started (or the crawl)
	last      []float32 // the last run's scores, for the warm start (single precision: half the memory between runs); nil while a run is in flight (its job holds them)
	lastTime  time.Time // the last run's key
	storedAt  time.Time // when ranks were last written
	out       chan rankResult
	wg        sync.WaitGroup // runs in flight and ranks being written
	storeMu   sync.Mutex     // one run writes its ranks at a time
	cancel    context.CancelFunc
	ctx       context.Context
	took      time.Duration // how long the last run took
	runNodes  int           // the nodes of the run in flight
	lastErr   string
	oracleSum float64 // oracle PageRank of the pages fetched so far
}

type rankJob struct {
	view   rank.LinksView
	last   []float32
	prev   time.Time // the previous run's key: keys are strictly increasing
	pages  int64
	oracle float64
	store  bool
}

type rankResult struct {
	took time.Duration // wall time of the computation
	run  record.RankRun
	// scores are the ranks in single precision: the next run's warm
	// start, and what storeRanks writes during the crawl (they are never
	// modified, so the next run may start from them while they are being
	// written). Kept in full while they were written, they held 8 bytes
	// a node more for as long as that took (tens of seconds at millions
	// of URLs, while the next run needed its own 24), for precision a
	// rank does not have: each run stops at an L1 residual of
	// rankTolerance. The final run's ranks are written in full.
	scores []float32
	stored bool // its record went ahead (recordRun) and storeRanks writes its ranks
	err    error
}

// computeRank runs one recomputation. It returns the ranks in full too,
// for the caller to drop or to write.
//
// It takes the warm start out of j (j.last is nil after): once the run has
// started from them, the last scores are garbage unless a store of them is
// still being written, and a run holds 4 bytes a node less. A run whose
// ranks are to be stored sends its record ahead of them (recordRun)
// before it returns, so the record is on its way before the run's point
// is on the coverage curve; once ctx is done it is not stored, and the
// loop's batch takes its record.
func (e *Engine) computeRank(ctx context.Context, j *rankJob) (rankResult, []float64) {
	start := time.Now()
	last := j.last
	j.last = nil
	res, share, err := pagerank(j.view, last)
	took := time.Since(start)
	t := e.clock.Now().Truncate(time.Millisecond)
	if !t.After(j.prev) {
		t = j.prev.Add(time.Millisecond)
	}
	run := record.RankRun{Time: t, Pages: j.pages, Nodes: j.view.Nodes(), Edges: j.view.NumLinks(),
		Iterations: res.Iterations, Coverage: share, Oracle: j.oracle}
	scores := make([]float32, len(res.Scores))
	for v, x := range res.Scores {
		scores[v] = float32(x)
	}
	stored := j.store && err == nil && e.recordRun(ctx, run)
	return rankResult{took: took, run: run, scores: scores, stored: stored, err: err}, res.Scores
}

// recordRun sends run's record, which says its ranks are not all
// written yet, ahead of them: it is on its way to the store before the
// run's point is on the coverage curve, whatever then stops storeRanks
// (the same record saying the ranks are complete goes with their last
// chunk, after it in the committer's queue). It reports whether the
// record went; it does not once ctx is done.
func (e *Engine) recordRun(ctx context.Context, run record.RankRun) bool {
	b := e.commit.batch()
	b.RankRuns = append(b.RankRuns, run)
	return e.commit.sendBehind(ctx, b, b.Bytes(), rankChunksAhead)
}

// storeRanks writes every node's rank of run to the store through the
// committer, a chunk of cfg.FlushRecords at a time, so the loop's own
// batches and the robots' queue requests pass between chunks, and with
// the last the run's record saying its ranks are complete (recordRun
// sent it before, saying they were not).
//
// The ranks go in the order of their URL IDs, the key of the store's
// table (eachInRankOrder): in node order they replaced rows at random
// places of that table, each chunk dirtying nearly as many of its pages
// as it had ranks, which took a million ranks 22 s where in ID order they
// took 2.
func (e *Engine) storeRanks(ctx context.Context, mu *sync.Mutex, ids idSource, nodes int, rankOf func(n int32) float64, run record.RankRun) {
	mu.Lock()
	defer mu.Unlock()
	chunk := max(e.cfg.FlushRecords, 1000)
	var b *pending
	send := func() bool {
		// Two chunks ahead at most: with the committer's queue long
		// enough for the loop's dispatches, a run's chunks filled it
		// and took every byte its writes freed, and the loop's batch
		// waited for the whole run's ranks.
		if !e.commit.sendBehind(ctx, b, b.Bytes(), rankChunksAhead) {
			return false
		}
		b = nil
		return true
	}
	stopped := false
	err := eachInRankOrder(ctx, ids, nodes, rankSliceNodes, "", func(slice []nodeID) bool {
		for _, x := range slice {
			if b == nil {
				b = e.commit.batch()
			}
			b.Ranks = append(b.Ranks, record.RankRecord{URL: x.id, Rank: rankOf(x.n), Time: run.Time})
			if len(b.Ranks) >= chunk && !send() {
				stopped = true
				return false
			}
		}
		return true
	})
	if err != nil && ctx.Err() != nil {
		return // the crawl stops: its record says the ranks are incomplete
	}
	if err != nil {
		// The run's record says its ranks are incomplete: a later run
		// writes them all again.
		e.event(record.Event{Kind: record.EventPageRank, Text: "PageRank: ranks not stored: " + err.Error()})
		return
	}
	if stopped {
		return
	}
	if b == nil {
		b = e.commit.batch()
	}
	run.Ranks = true
	b.RankRuns = append(b.RankRuns, run)
	send()
}

// rankChunksAhead is how many batches or requests storeRanks lets wait in
// the committer's queue before it sends a chunk.
const rankChunksAhead = 2

// idSource is where storeRanks reads the nodes' URL IDs, in node order: a
// rank.LinksView, which holds most of them on disk.
type idSource interface {
	EachID(fn func(n int32, id uint64) bool) error
}

// nodeID is a node and its URL ID.
type nodeID struct {
	n  int32
	id uint64
}

// nodeIDSize is a nodeID's size in eachInRankOrder's file.
const nodeIDSize = 12

// rankSliceNodes bounds the nodes eachInRankOrder sorts at once (but for
// one 16-bit bucket of IDs larger than that): 2 MiB of nodeIDs, and as
// much again read from the file.
const rankSliceNodes = 1 << 17

// rankBufBytes bounds eachInRankOrder's write buffers, all slices
// together, but for rankBufMin bytes a slice.
const (
	rankBufBytes = 4 << 20
	rankBufMin   = 1 << 10
)

// eachInRankOrder calls fn with the first nodes nodes of ids and their URL
// IDs in the store's order (rankKey), a slice of at most about most nodes
// at a time, each sorted and after the one before, until fn returns false.
// It stops with ctx's error within rankCheckEvery IDs of ctx ending: at a
// hundred million nodes its two reads of the IDs take some 30 s, which a
// crawl stopping would otherwise wait for.
//
// It reads ids twice whatever their number: once to count the IDs by
// their top 16 bits (rankSlices), once to write each node where its slice
// lies in an unlinked temporary file in dir (12 bytes a node; empty dir:
// os.TempDir()); then it reads the slices back from that file one at a
// time. Reading ids once per slice, as it did, cost the square of the
// nodes: nothing at a million, hours at a hundred million. Beyond a
// slice, it holds 256 KiB and rankBufBytes of buffers at most.
func eachInRankOrder(ctx context.Context, ids idSource, nodes, most int, dir string, fn func([]nodeID) bool) error {
	if nodes <= 0 {
		return nil
	}
	if nodes <= most {
		// One slice: no file.
		slice := make([]nodeID, 0, nodes)
		err := eachIDUntil(ctx, ids, func(n int32, id uint64) bool {
			if int(n) >= nodes {
				return false
			}
			slice = append(slice, nodeID{n, id})
			return true
		})
		if err != nil {
			return err
		}
		sortNodeIDs(slice)
		fn(slice)
		return nil
	}
	bounds, sizes, err := rankSlices(ctx, ids, nodes, most)
	if err != nil {
		return err
	}
	// sliceOf maps a 16-bit bucket to its slice; at, each slice's next
	// place in the file.
	sliceOf := make([]uint32, 1<<(64-rankKeyShift))
	for k := range sizes {
		for x := bounds[k]; x < bounds[k+1]; x++ {
			sliceOf[x] = uint32(k)
		}
	}
	at := make([]int64, len(sizes)+1)
	for k, n := range sizes {
		at[k+1] = at[k] + int64(n)*nodeIDSize
	}
	start := slices.Clone(at)
	f, err := os.CreateTemp(dir, "lidi-ranks-*")
	if err != nil {
		return fmt.Errorf("engine: storing ranks: %w", err)
	}
	removed := os.Remove(f.Name()) == nil
	defer func() {
		f.Close()
		if !removed {
			os.Remove(f.Name())
		}
	}()
	per := max(rankBufBytes/len(sizes), rankBufMin) / nodeIDSize * nodeIDSize
	bufs := make([][]byte, len(sizes))
	write := func(k int) error {
		if _, err := f.WriteAt(bufs[k], at[k]); err != nil {
			return fmt.Errorf("engine: storing ranks: %w", err)
		}
		at[k] += int64(len(bufs[k]))
		bufs[k] = bufs[k][:0]
		return nil
	}
	var werr error
	err = eachIDUntil(ctx, ids, func(n int32, id uint64) bool {
		if int(n) >= nodes {
			return false
		}
		k := sliceOf[rankKey(id)>>rankKeyShift]
		if bufs[k] == nil {
			bufs[k] = make([]byte, 0, per)
		}
		bufs[k] = binary.LittleEndian.AppendUint32(bufs[k], uint32(n))
		bufs[k] = binary.LittleEndian.AppendUint64(bufs[k], id)
		if len(bufs[k]) == cap(bufs[k]) {
			werr = write(int(k))
		}
		return werr == nil
	})
	if err == nil {
		err = werr
	}
	for k := range bufs {
		if err == nil && len(bufs[k]) > 0 {
			err = write(k)
		}
		bufs[k] = nil
	}
	if err != nil {
		return err
	}
	for k := range sizes {
		if at[k] != start[k+1] {
			return fmt.Errorf("engine: storing ranks: slice %d holds %d bytes of %d: %w", k, at[k]-start[k], start[k+1]-start[k], errIDsChanged)
		}
	}
	var raw []byte
	var slice []nodeID
	for k, n := range sizes {
		if n == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		raw = slices.Grow(raw[:0], n*nodeIDSize)[:n*nodeIDSize]
		if _, err := f.ReadAt(raw, start[k]); err != nil {
			return fmt.Errorf("engine: storing ranks: %w", err)
		}
		slice = slices.Grow(slice[:0], n)[:n]
		for i := range slice {
			r := raw[i*nodeIDSize:]
			slice[i] = nodeID{int32(binary.LittleEndian.Uint32(r)), binary.LittleEndian.Uint64(r[4:])}
		}
		sortNodeIDs(slice)
		if !fn(slice) {
			return nil
		}
	}
	return nil
}

// rankCheckEvery is how many IDs eachIDUntil reads between looks at its
// context: some 10 ms of reading.
const rankCheckEvery = 1 << 16

// eachIDUntil reads ids as ids.EachID does, and stops with ctx's error
// within rankCheckEvery IDs of ctx ending.
func eachIDUntil(ctx context.Context, ids idSource, fn func(n int32, id uint64) bool) error {
	var ended error
	k := 0
	err := ids.EachID(func(n int32, id uint64) bool {
		if k++; k == rankCheckEvery {
			k = 0
			if ended = ctx.Err(); ended != nil {
				return false
			}
		}
		return fn(n, id)
	})
	if ended != nil {
		return ended
	}
	return err
}

// errIDsChanged reports node IDs that differed between two reads.
var errIDsChanged = errors.New("engine: the nodes' IDs changed while read")

// rankKeyShift keeps the top 16 bits of a rankKey: the buckets rankSlices
// counts the IDs in.
const rankKeyShift = 48

// rankKey maps a URL ID to its place in the store's order: the store keys
// ranks by the ID as a signed integer.
func rankKey(id uint64) uint64 { return id ^ 1<<63 }

// sortNodeIDs sorts nodes in the store's order of their URL IDs.
func sortNodeIDs(s []nodeID) {
	slices.SortFunc(s, func(a, b nodeID) int { return cmp.Compare(rankKey(a.id), rankKey(b.id)) })
}

// rankSlices cuts the ID space of the first nodes nodes into slices of at
// most most IDs each (but for an ID bucket larger than that), from a
// count of the IDs by their top 16 bits in the store's order: the bounds
// of slice k are [s[k], s[k+1]) in rankKey >> rankKeyShift, and sizes[k]
// its IDs.
func rankSlices(ctx context.Context, ids idSource, nodes, most int) (bounds []uint64, sizes []int, err error) {
	count := make([]int32, 1<<(64-rankKeyShift))
	err = eachIDUntil(ctx, ids, func(n int32, id uint64) bool {
		if int(n) >= nodes {
			return false
		}
		count[rankKey(id)>>rankKeyShift]++
		return true
	})
	if err != nil {
		return nil, nil, err
	}
	bounds = []uint64{0}
	in := 0
	for x, c := range count {
		if c > 0 && in > 0 && in+int(c) > most {
			bounds = append(bounds, uint64(x))
			sizes = append(sizes, in)
			in = 0
		}
		in += int(c)
	}
	return append(bounds, uint64(len(count))), append(sizes, in), nil
}

// startRanker prepares the crawl's recomputations; stopRanker (deferred by
// Run before the committer closes) ends them.
func (c *crawl) startRanker(now time.Time) {
	c.rank.out = make(chan rankResult, 1)
	c.rank.ctx, c.rank.cancel = context.WithCancel(context.Background())
	c.rank.started = now
	c.rank.pages = c.tally.fetches
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
	if !cfg.Rank || r.busy || c.tally.fetches == r.pages || c.web.fetchedPages() == 0 {
		return
	}
	if c.tally.fetches-r.pages < int64(cfg.RankEveryPages) && (cfg.RankEvery <= 0 || now.Sub(r.started) < cfg.RankEvery) {
		return
	}
	// The growth is counted from this process's first run: a crawl resumed
	// at a million pages runs at every_pages or every, as a new one does,
	// not after a hundred thousand more.
	if now.Sub(r.started) < rankPace*r.took || r.ran && c.tally.fetches-r.pages < r.pages/rankGrowth {
		return // a big graph: runs are spaced so they take a tenth of a core at most, and a flat cost per page
	}
	j := c.rankJob(now)
	r.busy = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		res, _ := c.e.computeRank(r.ctx, &j)
		r.out <- res // never blocks: one run at a time, and the loop takes it
		if res.stored {
			scores := res.scores
			c.e.storeRanks(r.ctx, &r.storeMu, j.view, len(scores), func(n int32) float64 { return float64(scores[n]) }, res.run)
		}
	}()
}

// rankRunBytes is what a run holds a node beyond the graph
// (rank.PageRankLists: two float64, a float32 and a few bits), and the
// last scores until it has started from them.
const rankRunBytes = 21

// bytes estimates the memory the ranker holds: the last scores, and what
// the run in flight holds.
func (r *ranker) bytes() int64 {
	b := int64(cap(r.last)) * 4
	if r.busy {
		b += int64(r.runNodes) * (rankRunBytes + 4)
	}
	return b
}

// rankJob snapshots what a run needs and decides whether it writes ranks.
func (c *crawl) rankJob(now time.Time) rankJob {
	r := &c.rank
	r.pages, r.started, r.ran = c.tally.fetches, now, true
	j := rankJob{view: c.web.view(), last: r.last, prev: r.lastTime, pages: c.tally.fetches - c.tally.recrawls, oracle: -1}
	r.runNodes = j.view.Nodes()
	// The job holds the last scores until the run has started from them
	// (computeRank); a run that fails leaves the next one to start cold.
	r.last = nil
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
		// Its record; recordRun sent that of a run whose ranks storeRanks writes.
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
	// The run in flight writes its ranks, and its record with them, after
	// handing its result over: left to race this run's for the writes, it
	// could come second and find the ranker stopped (stopRanker, as Run
	// ends), its record lost with its ranks.
	r.wg.Wait()
	if c.web.fetchedPages() == 0 {
		return
	}
	j := c.rankJob(c.e.clock.Now())
	j.store = true
	res, full := c.e.computeRank(r.ctx, &j)
	c.onRank(res)
	if res.stored {
		c.flush()
		c.e.storeRanks(r.ctx, &r.storeMu, j.view, len(full), func(n int32) float64 { return full[n] }, res.run)
	}
}

// pageLinks records a fetched page in the graph, with the links followed
// (all seen by now), and adds its true PageRank to the oracle's coverage.
func (c *crawl) pageLinks(id uint64, url string, follow []followed) {
	if !c.e.cfg.Rank {
		return
	}
	c.web.fetched(id, follow)
	if o := c.e.cfg.Oracle; o != nil {
		if pr, ok := o.PageRank(url); ok {
			c.rank.oracleSum += pr
		}
	}
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
