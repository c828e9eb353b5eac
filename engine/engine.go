// Package engine crawls the web politely and fast, keeps everything it learns
// in a Store, and can stop at any moment and continue later.
//
// The shape of a crawl: one loop goroutine owns the scheduler (a
// frontier.Frontier of sites, Castillo's two-level scheduler) and the set of
// URLs seen. For each site it visits, it reads the head of the site's queue
// from the store through the committer, drops what duplicate detection has
// pruned since, and hands the rest as a Lease — one site, its address, its
// robots.txt, up to c pages over one keep-alive connection — to a
// Dispatcher, at most r at a time. The local robots (goroutines) and remote
// slaves run leases alike (Robot): robots.txt if needed, then the pages, w
// apart, each reported back as a Result. The loop turns the links found into
// new URLs and sites and passes everything to the committer, the one
// goroutine that writes to the Store (package record is its contract;
// package visit is the robots'). docs/architecture.md draws the path.
//
// With recrawl.enabled, a recrawl is a visit too: the loop puts the fetched
// URLs of due channels back in their sites' queues, each with the copy it
// is compared with (recrawl_loop.go).
package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"lidi/engine/clock"
	clk "lidi/engine/clock"
	"lidi/engine/dedup"
	"lidi/engine/dns"
	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// Resolver turns host names into addresses. *dns.Cache is lidi's.
type Resolver interface {
	Lookup(ctx context.Context, host string) (netip.Addr, error)
	Stats() dns.Stats
}

// ErrStopped is returned by Run when the crawl was stopped before its end.
var ErrStopped = errors.New("engine: stopped")

// Engine is one crawl. Its methods are safe for concurrent use: the console
// calls Stats, Pause, Resume and SetRobots while Run works.
type Engine struct {
	cfg      Config
	store    record.Store
	resolver Resolver
	clock    clock.Clock
	strategy frontier.Strategy
	robot    *visit.Robot     // the local robots'
	dispatch visit.Dispatcher // runs leases; the local robots unless SetDispatcher

	// det is duplicate detection (nil when off); only the loop uses it.
	det    *dedup.Detector
	commit *committer
	// pending is storage.max_pending_mb split among the places results
	// wait; results bounds the bytes of the robots' results queued for a
	// crawl's loop (its share).
	pending pendingShares
	results pendingBytes

	// SnapshotDir is where Snapshot writes its files; "" means the
	// directory of the working directory.
	SnapshotDir string

	robots   atomic.Int64 // r, changed live
	paused   atomic.Bool
	stopping atomic.Bool // Run's context ended: visits end after their current page
	control  chan func()

	mu sync.Mutex // guards st, unsaved and visits
	st Stats
	// unsaved are events the loop has yet to pass to the store.
	unsaved []record.Event
	// visits in flight, by site ID
	visits map[int64]*visitTracker
	rates  rateWindow
}

// New prepares a crawl; Run starts it. resolver may be nil to use a dns.Cache
// with the system's servers. It reads (and for a new file records) the
// word hash of the store's fingerprints (crawlWordHash) and the function
// of its content digests (crawlDigest).
func New(cfg Config, store record.Store, resolver Resolver, clock clock.Clock) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	strategy, err := newStrategy(cfg)
	if err != nil {
		return nil, &ConfigError{Key: "strategy", Err: err}
	}
	// The file's stored fingerprints and digests decide how new ones are
	// made: its functions replace those cfg names for a new file.
	if cfg.WordHash, err = crawlWordHash(context.Background(), store, cfg.WordHash); err != nil {
		return nil, err
	}
	if cfg.Digest, err = crawlDigest(context.Background(), store, cfg.Digest); err != nil {
		return nil, err
	}
	robot, err := visit.NewRobot(cfg.Robot(), clock)
	if err != nil {
		return nil, err
	}
	if resolver == nil {
		c, err := dns.NewCache(dns.Config{})
		if err != nil {
			return nil, err
		}
		resolver = c
	}
	clock = clk.Or(clock)
	pending := splitPending(int64(cfg.MaxPendingMB) << 20)
	e := &Engine{
		cfg:      cfg,
		store:    store,
		resolver: resolver,
		clock:    clock,
		strategy: strategy,
		robot:    robot,
		commit:   newCommitter(store, cfg.FlushEvery, cfg.FlushRecords, pending.committer),
		pending:  pending,
		results:  newPendingBytes(pending.results),
		control:  make(chan func(), 16),
		visits:   make(map[int64]*visitTracker),
	}
	robot.Halt = func() bool { return e.paused.Load() || e.stopping.Load() }
	e.dispatch = visit.LocalDispatcher{Robot: robot}
	if cfg.Detect {
		e.det = dedup.New(dedup.Config{MaxHamming: cfg.MaxHamming, MirrorEvidence: cfg.MirrorEvidence})
	}
	e.robots.Store(int64(cfg.Robots))
	e.st.State = StateStarting
	e.st.Strategy = strategy.Name()
	return e, nil
}

// SetDispatcher makes d run the crawl's leases instead of the local robots
// (LocalDispatcher{Robot: e.Robot()}). Call it before Run.
func (e *Engine) SetDispatcher(d visit.Dispatcher) { e.dispatch = d }

// Robot returns the Robot of the crawl's local robots; its Halt is the
// crawl's pause and stop.
func (e *Engine) Robot() *visit.Robot { return e.robot }

// WordHash returns the word hash of the crawl file's fingerprints, which
// every robot of the crawl, a cluster's slaves included, must make them
// with.
func (e *Engine) WordHash() dedup.WordHash { return e.cfg.WordHash }

// Digest returns the function of the crawl file's content digests, which
// a cluster's slaves must use too.
func (e *Engine) Digest() record.DigestKind { return e.cfg.Digest }

// Pause stops new fetches: visits in flight end after their current page and
// everything is written to the store.
func (e *Engine) Pause() {
	e.paused.Store(true)
	e.recall(true)
	e.send(func() {})
}

// Resume undoes Pause.
func (e *Engine) Resume() {
	e.paused.Store(false)
	if !e.stopping.Load() {
		e.recall(false)
	}
	e.send(func() {})
}

// Paused reports whether the crawl is paused.
func (e *Engine) Paused() bool { return e.paused.Load() }

// SetRobots changes r, the number of sites visited at once, live. Values
// below 1 are taken as 1.
func (e *Engine) SetRobots(n int) {
	e.robots.Store(int64(max(1, n)))
	e.send(func() {})
}

// send wakes the loop; it never blocks the caller.
func (e *Engine) send(f func()) {
	select {
	case e.control <- f:
	default:
	}
}

// Snapshot writes a consistent copy of the crawl's store, while the crawl
// goes on, and returns its path.
func (e *Engine) Snapshot(ctx context.Context) (string, error) {
	sn, ok := e.store.(record.Snapshotter)
	if !ok {
		return "", errors.New("engine: the store cannot write snapshots")
	}
	dir := e.SnapshotDir
	if dir == "" {
		dir = "."
	}
	path := fmt.Sprintf("%s/snapshot-%s.db", dir, e.clock.Now().UTC().Format("20060102-150405.000"))
	if err := sn.Snapshot(ctx, path); err != nil {
		return "", err
	}
	e.event(record.Event{Kind: record.EventSnapshot, Text: "snapshot written to " + path})
	return path, nil
}

// Stats returns a snapshot of the crawl.
func (e *Engine) Stats() Stats {
	now := e.clock.Now()
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.st
	s.Time = now
	s.Robots = int(e.robots.Load())
	if e.paused.Load() && s.State == StateRunning {
		s.State = StatePaused
	}
	s.ErrorKind = maps.Clone(e.st.ErrorKind)
	s.Skipped = maps.Clone(e.st.Skipped)
	s.Events = append([]record.Event(nil), e.st.Events...)
	s.Waiting = append([]WaitingSite(nil), e.st.Waiting...)
	s.Coverage = append([]record.CoveragePoint(nil), e.st.Coverage...)
	s.Visits = make([]VisitStats, 0, len(e.visits))
	for _, v := range e.visits {
		s.Visits = append(s.Visits, v.stats())
	}
	sort.Slice(s.Visits, func(i, j int) bool { return s.Visits[i].Started.Before(s.Visits[j].Started) })
	s.RobotsBusy = len(s.Visits)
	if s.State != StateStarting {
		// Not before the earlier runs' totals are loaded: they are no
		// pages fetched in the last seconds.
		s.FetchesPerSec, s.BytesPerSec = e.rates.rate(now, s.Fetches, s.Bytes)
	}
	s.Conns = e.robot.ConnStats() // the local robots'; a cluster's slaves count their own
	s.MaxPages = e.cfg.MaxPages
	ds := e.resolver.Stats()
	s.DNS = DNSStats{Lookups: int64(ds.Lookups), Hits: int64(ds.Hits), Queries: int64(ds.Queries), Failures: int64(ds.Failures), Collapsed: int64(ds.Collapsed)}
	return s
}

// event records a notable happening for the console and, through the loop,
// the store's events table.
func (e *Engine) event(ev record.Event) {
	if ev.Time.IsZero() {
		ev.Time = e.clock.Now()
	}
	e.mu.Lock()
	e.unsaved = append(e.unsaved, ev)
	e.st.EventCount++
	e.st.Events = append(e.st.Events, ev)
	if len(e.st.Events) > 64 {
		e.st.Events = append(e.st.Events[:0], e.st.Events[len(e.st.Events)-64:]...)
	}
	e.mu.Unlock()
}

// rateWindow turns running totals into rates over the last few seconds.
type rateWindow struct {
	samples [8]rateSample
	n, head int
}

type rateSample struct {
	t            time.Time
	pages, bytes int64
}

// rate records a sample (at most one a second) and returns the rates since
// the oldest kept.
func (w *rateWindow) rate(now time.Time, pages, bytes int64) (float64, float64) {
	last := w.samples[(w.head+len(w.samples)-1)%len(w.samples)]
	if w.n == 0 || now.Sub(last.t) >= time.Second {
		w.samples[w.head] = rateSample{now, pages, bytes}
		w.head = (w.head + 1) % len(w.samples)
		w.n = min(w.n+1, len(w.samples))
	}
	oldest := w.samples[(w.head+len(w.samples)-w.n)%len(w.samples)]
	dt := now.Sub(oldest.t).Seconds()
	if dt <= 0 {
		return 0, 0
	}
	return float64(pages-oldest.pages) / dt, float64(bytes-oldest.bytes) / dt
}

// visitTracker is a visit in flight as the console sees it.
type visitTracker struct {
	site    string
	planned int
	started time.Time
	pages   atomic.Int64
	bytes   atomic.Int64
	url     atomic.Pointer[string]
}

func (v *visitTracker) stats() VisitStats {
	s := VisitStats{Site: v.site, Planned: v.planned, Started: v.started, Pages: int(v.pages.Load()), Bytes: v.bytes.Load()}
	if u := v.url.Load(); u != nil {
		s.URL = *u
	}
	return s
}

// Rules returns the URL rewrite rules duplicate detection has learned and
// withdrawn, with the URLs each covered; nil with detection off. Only the
// loop uses the detector: call Rules after Run has returned.
func (e *Engine) Rules() []dedup.Rule {
	if e.det == nil {
		return nil
	}
	return e.det.AllRules()
}
