package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/internal/testkit"
	"lidi/storage"
)

// flakyResolver fails the look-ups of some hosts: the first fails[host]
// of them, or all when it is negative.
//
// With holdUntil set, the first look-up of a host not in fails waits until
// holdUntil reports true of the look-ups asked so far (or a bound passes).
// A crawl does not end while a look-up is under way, so the crawl lasts
// until then however small its web.
type flakyResolver struct {
	*dns.Cache
	mu        sync.Mutex
	fails     map[string]int
	asked     map[string]int
	holdUntil func(asked map[string]int) bool
	holding   bool          // a look-up has been held
	released  chan struct{} // closed once holdUntil held
}

var errNoHost = errors.New("no such host (test)")

func (r *flakyResolver) Lookup(ctx context.Context, host string) (netip.Addr, error) {
	r.mu.Lock()
	r.asked[host]++
	if r.holdUntil != nil && r.released == nil {
		r.released = make(chan struct{})
	}
	if r.holdUntil != nil && r.holdUntil(r.asked) {
		select {
		case <-r.released:
		default:
			close(r.released)
		}
	}
	n, ok := r.fails[host]
	hold := r.holdUntil != nil && !ok && !r.holding
	r.holding = r.holding || hold
	released := r.released
	if ok && n != 0 {
		r.fails[host] = n - 1
		r.mu.Unlock()
		return netip.Addr{}, errNoHost
	}
	r.mu.Unlock()
	if hold {
		select {
		case <-released:
		case <-time.After(2 * time.Minute): // the test fails on the counts
		}
	}
	return r.Cache.Lookup(ctx, host)
}

// storedEvents returns the kinds and texts of the events table.
func storedEvents(t *testing.T, path string) (kinds []record.EventKind, texts []string) {
	t.Helper()
	eachRow(t, path, "SELECT kind, text FROM events ORDER BY id", func(rows *sql.Rows) error {
		var k, text string
		err := rows.Scan(&k, &text)
		kinds, texts = append(kinds, record.EventKind(k)), append(texts, text)
		return err
	})
	return kinds, texts
}

// runWith crawls with resolver until Run returns, bounded in time.
func runWith(t *testing.T, cfg engine.Config, resolver engine.Resolver, path string, ctx context.Context) (engine.Stats, error) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	eng, err := engine.New(cfg, db, resolver, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	err = eng.Run(ctx)
	return eng.Stats(), err
}

// Look-ups that fail are tried again after dns.retry; a site failing for
// good is parked, tried again after errors.park_for and given up after
// errors.park_rounds; the crawl waits for the retries, then ends with the
// frontier empty, and every step is an event in the store.
func TestFailuresRetried(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 10, Pages: 200, PageSizeMedian: smallPages})
	seeds := srv.SeedURLs(3)
	hostOf := func(u string) string { return strings.Split(strings.Split(u, "://")[1], ":")[0] }
	flaky, dead := hostOf(seeds[1]), hostOf(seeds[2])
	cache, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	cfg := crawlConfig(seeds)
	cfg.ResolveFailed = 30 * time.Millisecond
	cfg.ParkAfter, cfg.ParkFor, cfg.ParkRounds = 3, 50*time.Millisecond, 2
	// The crawl must not end before the retries come due: the look-up of
	// the first site met that is not a seed is held until the dead host
	// had all its rounds and the flaky one answered, instead of a web
	// big enough to outlast them. A retry more than the rounds allow
	// would still be counted: the site held is crawled after.
	r := &flakyResolver{Cache: cache, fails: map[string]int{hostOf(seeds[0]): 0, flaky: 2, dead: -1}, asked: map[string]int{},
		holdUntil: func(asked map[string]int) bool {
			return asked[dead] >= cfg.ParkAfter*cfg.ParkRounds && asked[flaky] > 2
		}}
	path := filepath.Join(t.TempDir(), "crawl.db")
	st, err := runWith(t, cfg, r, path, context.Background())
	if err != nil {
		t.Fatalf("crawl: %v", err)
	}
	if st.End != engine.EndFrontierEmpty {
		t.Errorf("end = %q (%s), want %q", st.End, st.EndText, engine.EndFrontierEmpty)
	}
	fetched := fetchedURLs(t, path)
	var fromFlaky, fromDead int
	for u := range fetched {
		switch hostOf(u) {
		case flaky:
			fromFlaky++
		case dead:
			fromDead++
		}
	}
	if fromFlaky == 0 || fromDead != 0 {
		t.Errorf("pages from the host that resolved at the third try: %d (want some); from the dead one: %d", fromFlaky, fromDead)
	}
	// The dead host: park_after look-ups a round, park_rounds rounds.
	if got := r.asked[dead]; got != cfg.ParkAfter*cfg.ParkRounds {
		t.Errorf("the dead host was looked up %d times, want %d", got, cfg.ParkAfter*cfg.ParkRounds)
	}
	kinds, texts := storedEvents(t, path)
	count := func(k record.EventKind) int {
		n := 0
		for _, x := range kinds {
			if x == k {
				n++
			}
		}
		return n
	}
	if kinds[0] != record.EventStart || kinds[len(kinds)-1] != record.EventDone {
		t.Errorf("events %v: want start first and done last", kinds)
	}
	if !strings.Contains(texts[len(texts)-1], "frontier empty") {
		t.Errorf("done event %q does not say why", texts[len(texts)-1])
	}
	// dns-failed: 2 for the flaky host, 2 a round for the dead one (the
	// third failure of a round parks it).
	if n := count(record.EventDNSFailed); n != 2+2*cfg.ParkRounds {
		t.Errorf("%d dns-failed events, want %d: %v", n, 2+2*cfg.ParkRounds, kinds)
	}
	if count(record.EventParked) != cfg.ParkRounds || count(record.EventUnparked) != cfg.ParkRounds-1 {
		t.Errorf("parked %d times and unparked %d, want %d and %d: %v", count(record.EventParked), count(record.EventUnparked), cfg.ParkRounds, cfg.ParkRounds-1, kinds)
	}
	if i := slices.Index(kinds, record.EventParked); i < 0 || !strings.Contains(texts[slices.Index(kinds[i+1:], record.EventParked)+i+1], "given up") {
		t.Errorf("the last parking does not say the site is given up: %v", texts)
	}
	// Both seeds failed before anything answered; each is told once.
	if count(record.EventSeedFailed) != 2 {
		t.Errorf("%d seed-failed events, want 2: %v", count(record.EventSeedFailed), texts)
	}
}

// A crawl whose every seed fails ends at once with SeedsFailedError naming
// each, its seeds still queued for the next run; one with a seed that
// answers goes on.
func TestAllSeedsFailed(t *testing.T) {
	t.Parallel()
	// Small: the seed that answers needs a web, but its crawl proves
	// nothing more for being long.
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 3, Pages: 30})
	cache, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	r := &flakyResolver{Cache: cache, fails: map[string]int{"gone.test": -1}, asked: map[string]int{}}
	// 127.0.0.1:1 refuses connections; gone.test never resolves; the
	// scope excludes the third.
	seeds := []string{"http://gone.test/", "http://127.0.0.1:1/", "http://excluded.test/"}
	cfg := crawlConfig(seeds)
	cfg.Scope.Exclude = []string{"excluded"}
	cfg.ResolveFailed, cfg.ParkAfter = time.Hour, 5 // retries far away: the end must not wait for them
	path := filepath.Join(t.TempDir(), "crawl.db")
	for run := range 2 {
		st, err := runWith(t, cfg, r, path, context.Background())
		var sf *engine.SeedsFailedError
		if !errors.As(err, &sf) {
			t.Fatalf("run %d: err = %v, want a SeedsFailedError", run, err)
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "gone.test") || !strings.Contains(msg, "127.0.0.1:1") || !strings.Contains(msg, "excluded.test") {
			t.Errorf("run %d: %q does not name each seed on one line", run, msg)
		}
		if st.End != engine.EndSeedsFailed || st.State != engine.StateFailed {
			t.Errorf("run %d: end %q, state %s", run, st.End, st.State)
		}
		if st.Pages != 0 {
			t.Errorf("run %d: %d pages counted", run, st.Pages)
		}
	}
	kinds, _ := storedEvents(t, path)
	if !slices.Contains(kinds, record.EventSeedFailed) || kinds[len(kinds)-1] != record.EventDone {
		t.Errorf("events %v: want seed-failed and done last", kinds)
	}
	// The refused seed was not recorded fetched: it is tried again.
	if got := fetchedURLs(t, path); len(got) != 0 {
		t.Errorf("failed seeds stored as fetched: %v", got)
	}

	// One seed that answers is enough: the crawl goes on, and ends once
	// the bad seeds' sites are given up.
	cfg.Seeds = append(cfg.Seeds, srv.SeedURLs(1)...)
	cfg.ResolveFailed, cfg.ParkAfter, cfg.ParkFor, cfg.ParkRounds = 20*time.Millisecond, 1, 20*time.Millisecond, 1
	st, err := runWith(t, cfg, r, filepath.Join(t.TempDir(), "crawl.db"), context.Background())
	if err != nil || st.Pages == 0 || st.End != engine.EndFrontierEmpty {
		t.Errorf("with a good seed among bad ones: err %v, %d pages, end %q", err, st.Pages, st.End)
	}
}

// Every run says why it ended, in Stats and in the events table, which
// holds start, pause, resume, stop and done.
func TestEndReasons(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 10, Pages: 400, PageSizeMedian: smallPages})
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := crawlConfig(srv.SeedURLs(2))
	eng, release := openEngine(t, cfg, srv.DNSAddr(), path)
	ctx, stop := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	testkit.WaitFor(t, 2*time.Minute, "20 pages", func() bool { return eng.Stats().Pages >= 20 })
	eng.Pause()
	testkit.WaitFor(t, 2*time.Minute, "paused", func() bool { return eng.Stats().State == engine.StatePaused && eng.Stats().RobotsBusy == 0 })
	eng.Resume()
	testkit.WaitFor(t, 2*time.Minute, "resumed", func() bool {
		return slices.ContainsFunc(eng.Stats().Events, func(e record.Event) bool { return e.Kind == record.EventResume })
	})
	stop(engine.Stopped(engine.EndKey, "q"))
	if err := <-done; !errors.Is(err, engine.ErrStopped) {
		t.Fatalf("err = %v, want ErrStopped", err)
	}
	if st := eng.Stats(); st.End != engine.EndKey || !strings.Contains(st.EndText, "console") {
		t.Errorf("end %q %q", st.End, st.EndText)
	}
	release()

	cfg.MaxPages = 60
	st := runCrawl(t, cfg, srv.DNSAddr(), path)
	if st.End != engine.EndMaxPages {
		t.Errorf("end %q, want %q", st.End, engine.EndMaxPages)
	}
	kinds, texts := storedEvents(t, path)
	for _, k := range []record.EventKind{record.EventStart, record.EventPause, record.EventResume, record.EventStop, record.EventDone} {
		if !slices.Contains(kinds, k) {
			t.Errorf("no %s event in %v", k, kinds)
		}
	}
	stopText := texts[slices.Index(kinds, record.EventStop)]
	if !strings.Contains(stopText, "stopped from the console") {
		t.Errorf("stop event %q does not say why", stopText)
	}
	if last := texts[len(texts)-1]; !strings.Contains(last, "max_pages") {
		t.Errorf("done event %q does not name the limit", last)
	}
}

// A stop never records a fetch error of its own: visits end after their
// page in flight (or during their politeness wait), the URLs they did not
// reach stay queued, and the next run fetches each page once.
func TestCleanStop(t *testing.T) {
	t.Parallel()
	// Each answer takes 100 ms, so pages are in flight when the stop
	// comes; w = 1 s, so most visits are waiting then. Few pages a site:
	// the run after the stop fetches the rest, 100 ms each.
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 10, Pages: 60, LatencyMedian: 100 * time.Millisecond, LatencySigma: -1, PageSizeMedian: smallPages})
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := crawlConfig(srv.SeedURLs(3))
	cfg.Delay, cfg.MaxDelay = time.Second, time.Second
	eng, release := openEngine(t, cfg, srv.DNSAddr(), path)
	ctx, stop := context.WithCancelCause(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	testkit.WaitFor(t, 2*time.Minute, "10 pages and visits in flight", func() bool {
		st := eng.Stats()
		return st.Pages >= 10 && st.RobotsBusy >= 2
	})
	stop(engine.Stopped(engine.EndSignal, "SIGTERM"))
	if err := <-done; !errors.Is(err, engine.ErrStopped) {
		t.Fatalf("err = %v, want ErrStopped", err)
	}
	st := eng.Stats()
	release()
	if st.End != engine.EndSignal || len(st.ErrorKind) != 0 {
		t.Errorf("end %q, errors %v: want a signal and no error", st.End, st.ErrorKind)
	}
	var failed, queued int
	eachRow(t, path, "SELECT count(*) FROM urls WHERE state = 1 AND error IS NOT NULL", func(r *sql.Rows) error { return r.Scan(&failed) })
	eachRow(t, path, "SELECT count(*) FROM urls WHERE state = 0", func(r *sql.Rows) error { return r.Scan(&queued) })
	if failed != 0 || queued == 0 {
		t.Errorf("%d pages stored with an error, %d queued: want none and some", failed, queued)
	}
	before := fetchedURLs(t, path)
	srv.ResetWitness()
	cfg.Delay, cfg.MaxDelay = 0, 0
	runCrawl(t, cfg, srv.DNSAddr(), path)
	after := fetchedURLs(t, path)
	w := srv.Witness()
	var robotsFetches int64
	for _, h := range w.Hosts {
		robotsFetches += h.RobotsFetches
	}
	if got := w.Totals.Requests - robotsFetches; got != int64(len(after)-len(before)) {
		t.Errorf("the next run made %d page requests for %d new pages", got, len(after)-len(before))
	}
}

// Near limits.max_pages the pages left are shared among the robots: r
// visits still run at once, and the limit is met exactly.
func TestMaxPagesKeepsRobotsBusy(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 10, Pages: 1500, PageSizeMedian: smallPages})
	path := filepath.Join(t.TempDir(), "crawl.db")
	// A first run fills the sites' queues far beyond c.
	cfg := crawlConfig(srv.SeedURLs(4))
	cfg.MaxPages = 200
	runCrawl(t, cfg, srv.DNSAddr(), path)
	cfg.Robots, cfg.PagesPerVisit, cfg.MaxPages = 4, 100, 260
	srv.ResetWitness()
	if st := runCrawl(t, cfg, srv.DNSAddr(), path); st.Pages != 260 || st.End != engine.EndMaxPages {
		t.Errorf("%d pages, end %q: want 260 and max-pages", st.Pages, st.End)
	}
	// The 60 pages left went to several sites' visits, not to the first
	// site whose address came back (one visit of c = 100 would take them
	// all). The witness counts them; sampling Stats.RobotsBusy missed
	// the moments on a loaded machine.
	sites := 0
	for _, h := range srv.Witness().Hosts {
		if h.Requests > h.RobotsFetches {
			sites++
		}
	}
	if sites < 3 {
		t.Errorf("the last 60 pages came from %d sites with r = 4: the robots were not kept busy", sites)
	}
}

// With one site to crawl, a page limit far from reached does not cut its
// visits to a share for robots that have no other site to visit: each
// visit keeps c pages over one connection.
func TestMaxPagesOneSiteKeepsVisitsLong(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 1, Pages: 300, PageSizeMedian: smallPages})
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := crawlConfig(srv.SeedURLs(1))
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.Robots, cfg.PagesPerVisit, cfg.MaxPages = 64, 100, 250
	st := runCrawl(t, cfg, srv.DNSAddr(), path)
	if st.Pages != 250 {
		t.Fatalf("%d pages, want 250", st.Pages)
	}
	if v := srv.Witness().Totals.Connections; v > 10 {
		t.Errorf("%d connections for 250 pages of one site with c = 100", v)
	}
}
