// Package engine crawls the web politely and fast, keeps everything it learns
// in a Store, and can stop at any moment and continue later.
//
// The shape of a crawl: one loop goroutine owns the scheduler (a
// frontier.Frontier of sites, Castillo's two-level scheduler) and the set of
// URLs seen. It hands a visit — one site, up to c pages over one keep-alive
// connection — to a robot goroutine, at most r at a time. A robot asks the
// committer for the head of its site's queue, fetches robots.txt if needed and
// then the pages, w apart, and sends each page's outcome back to the loop,
// which turns the links found into new URLs and sites and passes everything to
// the committer, the one goroutine that writes to the Store.
//
// A visit is self-contained (site, address, robots rules, URLs, delay), so it
// can later be leased to a remote robot without reshaping the scheduler.
//
// With recrawl.enabled, a recrawl is a visit too: the loop puts the fetched
// URLs of due channels back in their sites' queues, each with the copy it
// is compared with (recrawl_loop.go).
package engine

import (
	"runtime"

	"context"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/dns"
	"lidi/engine/extract"
	"lidi/engine/fetch"
	"lidi/engine/frontier"
	"lidi/engine/robots"
	"lidi/engine/scope"
)

// Resolver turns host names into addresses. *dns.Cache is lidi's.
type Resolver interface {
	Lookup(ctx context.Context, host string) (netip.Addr, error)
	Stats() dns.Stats
}

// Snapshotter is a Store that can write a consistent copy of itself while the
// crawl goes on.
type Snapshotter interface {
	Snapshot(ctx context.Context, path string) error
}

// Clock tells the time. The zero Engine uses the system clock; tests and
// simulations replace it.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// ErrStopped is returned by Run when the crawl was stopped before its end.
var ErrStopped = errors.New("engine: stopped")

// Engine is one crawl. Its methods are safe for concurrent use: the console
// calls Stats, Pause, Resume and SetRobots while Run works.
type Engine struct {
	cfg      Config
	store    Store
	resolver Resolver
	clock    Clock
	strategy frontier.Strategy
	scope    *scope.Scope
	fetcher  *fetch.Fetcher
	links    *extract.Extractor
	zlib     chan *compressor // free compressors, nil until first used

	// det is duplicate detection (nil when off). The loop observes pages;
	// robots ask whether a queued URL has been pruned since; detMu orders
	// the two.
	det    *dedup.Detector
	detMu  sync.Mutex
	commit *committer

	// SnapshotDir is where Snapshot writes its files; "" means the
	// directory of the working directory.
	SnapshotDir string

	robots   atomic.Int64 // r, changed live
	paused   atomic.Bool
	stopping atomic.Bool // Run's context ended: visits end after their current page
	control  chan func()

	mu sync.Mutex // guards st and visits
	st Stats
	// visits in flight, by site ID
	visits map[int64]*visitTracker
	rates  rateWindow
}

// New prepares a crawl; Run starts it. resolver may be nil to use a dns.Cache
// with the system's servers.
func New(cfg Config, store Store, resolver Resolver, clock Clock) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	strategy, err := newStrategy(cfg)
	if err != nil {
		return nil, &ConfigError{Key: "strategy", Err: err}
	}
	cfg.Scope.Seeds = cfg.Seeds
	cfg.Scope.Normalizer = &cfg.Normalizer
	sc, err := scope.New(cfg.Scope)
	if err != nil {
		return nil, &ConfigError{Key: "scope", Err: err}
	}
	if resolver == nil {
		c, err := dns.NewCache(dns.Config{})
		if err != nil {
			return nil, err
		}
		resolver = c
	}
	if clock == nil {
		clock = systemClock{}
	}
	fc := cfg.Fetch
	fc.CheckType = cfg.Detect
	if fc.UserAgent == "" {
		fc.UserAgent = cfg.UserAgent
	}
	e := &Engine{
		cfg:      cfg,
		store:    store,
		resolver: resolver,
		clock:    clock,
		strategy: strategy,
		scope:    sc,
		fetcher:  fetch.New(fc),
		commit:   newCommitter(store, cfg.FlushEvery, cfg.FlushRecords),
		control:  make(chan func(), 16),
		visits:   make(map[int64]*visitTracker),
	}
	e.links = &extract.Extractor{Normalizer: &e.cfg.Normalizer}
	if cfg.Detect {
		e.det = dedup.New(dedup.Config{MaxHamming: cfg.MaxHamming, MirrorEvidence: cfg.MirrorEvidence})
	}
	e.zlib = make(chan *compressor, runtime.GOMAXPROCS(0))
	for range cap(e.zlib) {
		e.zlib <- nil // made on first use
	}
	e.robots.Store(int64(cfg.Robots))
	e.st.State = StateStarting
	e.st.Strategy = strategy.Name()
	return e, nil
}

// Pause stops new fetches: visits in flight end after their current page and
// everything is written to the store.
func (e *Engine) Pause() {
	e.paused.Store(true)
	e.send(func() {})
}

// Resume undoes Pause.
func (e *Engine) Resume() {
	e.paused.Store(false)
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
	sn, ok := e.store.(Snapshotter)
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
	e.event(Event{Kind: "snapshot", Text: "snapshot written to " + path})
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
	s.ErrorKind = cloneMap(e.st.ErrorKind)
	s.Skipped = cloneMap(e.st.Skipped)
	s.Events = append([]Event(nil), e.st.Events...)
	s.Waiting = append([]WaitingSite(nil), e.st.Waiting...)
	s.Coverage = append([]CoveragePoint(nil), e.st.Coverage...)
	s.Visits = make([]VisitStats, 0, len(e.visits))
	for _, v := range e.visits {
		s.Visits = append(s.Visits, v.stats())
	}
	sort.Slice(s.Visits, func(i, j int) bool { return s.Visits[i].Started.Before(s.Visits[j].Started) })
	s.RobotsBusy = len(s.Visits)
	s.PagesPerSec, s.BytesPerSec = e.rates.rate(now, s.Pages, s.Bytes)
	ds := e.resolver.Stats()
	s.DNS = DNSStats{Lookups: int64(ds.Lookups), Hits: int64(ds.Hits), Queries: int64(ds.Queries), Failures: int64(ds.Failures), Collapsed: int64(ds.Collapsed)}
	return s
}

func cloneMap(m map[string]int64) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// event records a notable happening for the console and the store.
func (e *Engine) event(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = e.clock.Now()
	}
	e.mu.Lock()
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

// prunedTo reports whether url is pruned by a label and, for a mirror or
// loop, the original URL it copies that is not itself pruned ("" if none).
func (e *Engine) prunedTo(url string) (bool, string) {
	if e.det == nil {
		return false, ""
	}
	e.detMu.Lock()
	defer e.detMu.Unlock()
	p, m := e.det.Pruned(url)
	if !p {
		return false, ""
	}
	orig := url
	for range 4 { // labels chain (a copy of a copy); they never cycle, but bound it
		var ok bool
		if orig, ok = dedup.Original(orig, m); !ok {
			return true, ""
		}
		if p, m = e.det.Pruned(orig); !p {
			return true, orig
		}
	}
	return true, ""
}

// robotsRules is what the engine knows of one site's robots.txt.
type robotsRules struct {
	rules   *robots.Rules
	status  int
	body    []byte
	fetched time.Time
	errKind string // why robots.txt was unreachable (status -1): a fetch error kind
}
