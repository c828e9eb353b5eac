package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/clock"
	"lidi/engine/dns"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/storage"
)

// smallPages is the median page size of the test webs whose page sizes
// matter to nothing the test checks. simweb's default (12 KiB) is that of
// real pages; under the race detector every byte parsed, compressed and
// stored costs, and CI runs every package's tests at once on two cores.
const smallPages = 2 << 10

// crawlConfig is a polite configuration scaled down for tests.
func crawlConfig(seeds []string) engine.Config {
	cfg := engine.Defaults()
	cfg.Seeds = seeds
	cfg.Robots = 8
	cfg.Delay = 20 * time.Millisecond
	cfg.MaxDelay = 50 * time.Millisecond
	cfg.PagesPerVisit = 10
	cfg.RobotsRetry = 50 * time.Millisecond
	cfg.ParkAfter = 2
	cfg.BackoffBase = 20 * time.Millisecond
	cfg.ParkFor = 50 * time.Millisecond
	cfg.FlushEvery = 20 * time.Millisecond
	return cfg
}

// openEngine opens the SQLite file at path and an engine on it, resolving
// through the DNS server at dnsAddr. release closes both (and the file's
// lock, so that the crawl can be opened again).
func openEngine(t *testing.T, cfg engine.Config, dnsAddr, path string) (eng *engine.Engine, release func()) {
	t.Helper()
	return openEngineClock(t, cfg, dnsAddr, path, nil)
}

// openEngineClock is openEngine with the engine's clock (nil: the
// system's).
func openEngineClock(t *testing.T, cfg engine.Config, dnsAddr, path string, clock clock.Clock) (eng *engine.Engine, release func()) {
	t.Helper()
	return openEngineDNS(t, cfg, dns.Config{Servers: []string{dnsAddr}}, path, clock)
}

// openEngineDNS is openEngineClock resolving as dc says.
func openEngineDNS(t *testing.T, cfg engine.Config, dc dns.Config, path string, clock clock.Clock) (eng *engine.Engine, release func()) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	resolver, err := dns.NewCache(dc)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	release = func() { resolver.Close(); db.Close() }
	eng, err = engine.New(cfg, db, resolver, clock)
	if err != nil {
		release()
		t.Fatal(err)
	}
	return eng, release
}

// runCrawl crawls to the end (bounded in time) into the SQLite file at path.
func runCrawl(t *testing.T, cfg engine.Config, dnsAddr, path string) engine.Stats {
	t.Helper()
	return runCrawlClock(t, cfg, dnsAddr, path, nil)
}

// runCrawlClock is runCrawl with the engine's clock (nil: the system's).
func runCrawlClock(t *testing.T, cfg engine.Config, dnsAddr, path string, clock clock.Clock) engine.Stats {
	t.Helper()
	eng, release := openEngineClock(t, cfg, dnsAddr, path, clock)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatalf("crawl: %v (stats %+v)", err, eng.Stats())
	}
	st := eng.Stats()
	if st.State != engine.StateDone {
		t.Fatalf("state = %s, want done", st.State)
	}
	return st
}

// eachRow calls scan for every row of query on the crawl file at path,
// opened read-only.
func eachRow(t *testing.T, path, query string, scan func(*sql.Rows) error) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			t.Fatal(err)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// fetchedURLs returns the URLs the crawl at path has fetched.
func fetchedURLs(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	eachRow(t, path, "SELECT url FROM urls WHERE state = 1", func(rows *sql.Rows) error {
		var u string
		if err := rows.Scan(&u); err != nil {
			return err
		}
		if out[u] {
			t.Errorf("%s stored twice", u)
		}
		out[u] = true
		return nil
	})
	return out
}

// Politeness, proven by the synthetic web's witness rather than by the
// crawler's own account.
func TestPolitenessWitnessed(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 7, Sites: 25, Pages: 600, PageSizeMedian: smallPages})
	cfg := crawlConfig(srv.SeedURLs(3))
	st := runCrawl(t, cfg, srv.DNSAddr(), filepath.Join(t.TempDir(), "crawl.db"))
	w := srv.Witness()
	if st.Pages < 300 {
		t.Fatalf("only %d pages fetched", st.Pages)
	}
	if w.Totals.Disallowed != 0 {
		t.Errorf("%d requests for paths robots.txt disallows", w.Totals.Disallowed)
	}
	for host, h := range w.Hosts {
		if h.MaxOpenConns > 1 {
			t.Errorf("%s: %d connections open at once", host, h.MaxOpenConns)
		}
		if h.MaxInFlight > 1 {
			t.Errorf("%s: %d requests in flight at once", host, h.MaxInFlight)
		}
		if h.Requests > 1 && h.MinGap < cfg.Delay {
			t.Errorf("%s: two requests %s apart, w = %s", host, h.MinGap, cfg.Delay)
		}
		// One visit is robots.txt and at most c pages over one connection.
		if h.MaxRequestsPerConn > int64(cfg.PagesPerVisit)+1 {
			t.Errorf("%s: %d requests on one connection, c = %d", host, h.MaxRequestsPerConn, cfg.PagesPerVisit)
		}
		// A site with many pages is visited with full connections: c
		// pages each, but for the last visit and robots.txt.
		if h.Requests >= 4*int64(cfg.PagesPerVisit) && h.MeanRequestsPerConn < 0.7*float64(cfg.PagesPerVisit) {
			t.Errorf("%s: %.1f requests per connection, c = %d", host, h.MeanRequestsPerConn, cfg.PagesPerVisit)
		}
		if h.RobotsFetches > 1 && h.Errors == 0 {
			t.Errorf("%s: robots.txt fetched %d times", host, h.RobotsFetches)
		}
	}
	for addr, a := range w.Addresses {
		if a.MaxOpenConns > 1 {
			t.Errorf("address %s: %d connections at once with one_per_address on", addr, a.MaxOpenConns)
		}
	}
	// DNS: one query per host the crawl met, no more.
	if int(w.DNS.Queries) != st.Sites {
		t.Errorf("DNS queries = %d, hosts = %d", w.DNS.Queries, st.Sites)
	}
	for name, n := range w.DNS.ByName {
		if n != 1 {
			t.Errorf("DNS: %s asked %d times", name, n)
		}
	}
	if st.DNS.Queries != w.DNS.Queries {
		t.Errorf("engine counted %d DNS queries, the server %d", st.DNS.Queries, w.DNS.Queries)
	}
	t.Logf("%d pages, %d sites, %d connections, %d requests, %d DNS queries", st.Pages, st.Sites, w.Totals.Connections, w.Totals.Requests, w.DNS.Queries)
}

// With politeness at its defaults but for w, the Length strategy and the
// Depth strategy reach the same pages.
func TestStrategiesReachTheSamePages(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 3, Sites: 12, Pages: 500, PageSizeMedian: smallPages})
	strategies := []string{"length", "depth"}
	sets := make([]map[string]bool, len(strategies))
	// Both crawls at once: each has its own file, and nothing here looks
	// at the server's witness.
	t.Run("crawls", func(t *testing.T) {
		for i, strategy := range strategies {
			t.Run(strategy, func(t *testing.T) {
				t.Parallel()
				cfg := crawlConfig(srv.SeedURLs(2))
				cfg.Delay, cfg.MaxDelay = 0, 0
				cfg.Strategy = strategy
				path := filepath.Join(t.TempDir(), strategy+".db")
				runCrawl(t, cfg, srv.DNSAddr(), path)
				sets[i] = fetchedURLs(t, path)
			})
		}
	})
	if t.Failed() {
		return
	}
	if len(sets[0]) != len(sets[1]) {
		t.Fatalf("length fetched %d pages, depth %d", len(sets[0]), len(sets[1]))
	}
	for u := range sets[0] {
		if !sets[1][u] {
			t.Errorf("%s fetched by length only", u)
		}
	}
}

func TestMaxPagesAndResumeAfterLimit(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 10, Pages: 400})
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := crawlConfig(srv.SeedURLs(2))
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.MaxPages = 50
	cfg.RankEveryPages = 20
	st := runCrawl(t, cfg, srv.DNSAddr(), path)
	if st.Pages != 50 {
		t.Fatalf("pages = %d, want 50", st.Pages)
	}
	resumeAtLimit(t, cfg, srv.DNSAddr(), path, st)
	cfg.MaxPages = 120 // a limit counts the whole crawl, across runs
	st = runCrawl(t, cfg, srv.DNSAddr(), path)
	if st.Pages != 120 || len(fetchedURLs(t, path)) != 120 {
		t.Fatalf("pages = %d (stored %d), want 120", st.Pages, len(fetchedURLs(t, path)))
	}
}

func TestBadConfigRejected(t *testing.T) {
	cfg := engine.Defaults()
	_, err := engine.New(cfg, nil, nil, nil)
	var ce *engine.ConfigError
	if !errors.As(err, &ce) || ce.Key != "seeds" {
		t.Fatalf("err = %v, want a ConfigError naming seeds", err)
	}
	cfg.Seeds = []string{"http://a.test/"}
	cfg.Strategy = "fastest"
	if _, err := engine.New(cfg, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "strategy") {
		t.Fatalf("err = %v, want one naming strategy", err)
	}
	cfg.Strategy = "length"
	cfg.Scope.Include = []string{"("}
	if _, err := engine.New(cfg, nil, nil, nil); err == nil || !strings.Contains(err.Error(), "scope") {
		t.Fatalf("err = %v, want one naming scope", err)
	}
}

// Stats is a snapshot of the crawl, safe to take from any goroutine while
// Run works (the console takes one several times a second); before Run it
// shows the crawl as configured, with the changes made live since.
func ExampleEngine_Stats() {
	cfg := engine.Defaults()
	cfg.Seeds = []string{"http://www.example.test/"}
	eng, err := engine.New(cfg, &record.MemStore{}, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	eng.SetRobots(8)
	s := eng.Stats()
	fmt.Println(s.State, s.Strategy, s.Robots, s.Pages)
	// Output: starting length 8 0
}

// resumeAtLimit resumes a crawl that reached its page limit: it fetches
// nothing, and its figures must not mislead: every snapshot's rate is zero
// (never the earlier runs' pages over a second), and its coverage curve
// goes on from the earlier runs' (rank_runs).
func resumeAtLimit(t *testing.T, cfg engine.Config, dnsAddr, path string, first engine.Stats) {
	t.Helper()
	if len(first.Coverage) == 0 || first.MaxPages != cfg.MaxPages {
		t.Fatalf("first run: %d coverage points, max pages %d", len(first.Coverage), first.MaxPages)
	}
	eng, release := openEngine(t, cfg, dnsAddr, path)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	snapshots := 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		s := eng.Stats()
		snapshots++
		if s.FetchesPerSec != 0 || s.BytesPerSec != 0 {
			t.Fatalf("snapshot %d (%s, %d pages): %.0f pages/s, %.0f bytes/s after a resume that fetches nothing", snapshots, s.State, s.Pages, s.FetchesPerSec, s.BytesPerSec)
		}
	}
	last := eng.Stats()
	if last.Pages != first.Pages || len(last.Coverage) < len(first.Coverage) || last.Coverage[0] != first.Coverage[0] {
		t.Errorf("resumed: %d pages, coverage %v; the first run's curve was %v", last.Pages, last.Coverage, first.Coverage)
	}
}
