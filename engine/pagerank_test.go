package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/storage"
)

// recordingStore is a storage.DB that keeps what the engine applies, in
// order, so a test can replay the crawl.
type recordingStore struct {
	*storage.DB
	mu      sync.Mutex
	batches []record.Batch
}

func (r *recordingStore) Apply(ctx context.Context, b *record.Batch) error {
	if err := r.Write(ctx, b); err != nil {
		return err
	}
	return r.DB.Commit(ctx)
}

// Write is where the committer's batches come in.
func (r *recordingStore) Write(ctx context.Context, b *record.Batch) error {
	r.mu.Lock()
	r.batches = append(r.batches, record.Batch{
		URLs:  slices.Clone(b.URLs),
		Pages: slices.Clone(b.Pages),
		Links: slices.Clone(b.Links),
		Skips: slices.Clone(b.Skips),
	})
	r.mu.Unlock()
	return r.DB.Write(ctx, b)
}

// crawlWith crawls srv's web to its end with cfg into a new SQLite file
// and returns the engine's final Stats, the file and what was applied.
func crawlWith(t *testing.T, srv *simweb.Server, cfg engine.Config) (engine.Stats, string, *recordingStore) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "crawl.db")
	st, rec := crawlAt(t, srv, cfg, path)
	return st, path, rec
}

// crawlAt is crawlWith on the SQLite file at path, new or not.
func crawlAt(t *testing.T, srv *simweb.Server, cfg engine.Config, path string) (engine.Stats, *recordingStore) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rec := &recordingStore{DB: db}
	resolver, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer resolver.Close()
	eng, err := engine.New(cfg, rec, resolver, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	st := eng.Stats()
	if st.State != engine.StateDone {
		t.Fatalf("state %s, want done", st.State)
	}
	return st, rec
}

func openRO(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryFloat(t *testing.T, db *sql.DB, q string, args ...any) float64 {
	t.Helper()
	var f sql.NullFloat64
	if err := db.QueryRow(q, args...).Scan(&f); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return f.Float64
}

// The coverage curve of a finished crawl: points every K pages, the
// oracle's curve rising to the true PageRank of what was fetched, the
// engine's own estimate ending at the share of the pages it could fetch,
// and the ranks of every URL in SQLite.
func TestCoverageOfAFinishedCrawl(t *testing.T) {
	t.Parallel()
	srv, cfg := coverageWeb(t)
	web := srv.Web()
	cfg.RankEveryPages = 25
	cfg.RankEvery = 0
	cfg.RankStoreEvery = 0
	st, path, _ := crawlWith(t, srv, cfg)
	cov := st.Coverage
	if len(cov) < int(st.Pages)/25/2 {
		t.Fatalf("%d coverage points for %d pages every 25", len(cov), st.Pages)
	}
	decreases := 0
	for i := 1; i < len(cov); i++ {
		if cov[i].Pages < cov[i-1].Pages {
			t.Errorf("point %d: pages go back from %d to %d", i, cov[i-1].Pages, cov[i].Pages)
		}
		if cov[i].Oracle < cov[i-1].Oracle {
			t.Errorf("point %d: oracle coverage falls from %v to %v", i, cov[i-1].Oracle, cov[i].Oracle)
		}
		if cov[i].Coverage < cov[i-1].Coverage {
			decreases++
		}
	}
	// The estimate is over the graph known at each point: a page that
	// brings many new URLs can lower the fetched share. Logged, not
	// asserted.
	t.Logf("%d points; estimate fell at %d of them; last %+v", len(cov), decreases, cov[len(cov)-1])
	last := cov[len(cov)-1]
	// The last run's scores, 4 bytes a node, are kept.
	if st.Memory.Rank < 4*int64(st.Discovered)/2 {
		t.Errorf("PageRank holds %d bytes for %d URLs", st.Memory.Rank, st.Discovered)
	}
	if last.Pages != st.Pages {
		t.Errorf("last point at %d pages, crawl fetched %d", last.Pages, st.Pages)
	}

	db := openRO(t, path)
	// Every URL known has a rank from the final run, summing to 1.
	nURLs := queryFloat(t, db, "SELECT count(*) FROM urls")
	if n := queryFloat(t, db, "SELECT count(*) FROM pagerank"); n != nURLs {
		t.Errorf("%v ranks for %v URLs", n, nURLs)
	}
	final := queryFloat(t, db, "SELECT max(computed_at) FROM rank_runs WHERE ranks = 1")
	if n := queryFloat(t, db, "SELECT count(*) FROM pagerank WHERE computed_at = ?", final); n != nURLs {
		t.Errorf("%v ranks from the final run, want %v", n, nURLs)
	}
	if s := queryFloat(t, db, "SELECT sum(rank) FROM pagerank"); math.Abs(s-1) > 1e-9 {
		t.Errorf("ranks sum to %v", s)
	}
	if n := queryFloat(t, db, "SELECT count(*) FROM rank_runs"); int(n) != len(cov) {
		t.Errorf("%v runs stored, %d points in Stats", n, len(cov))
	}
	// The estimate is the share of the fetched pages; the rest is held by
	// pages never fetched, which here can only be pages robots.txt
	// forbids: nothing is left queued. So coverage is exactly 1 on a web
	// whose every page may be fetched, and 1 minus the disallowed share
	// here.
	checkFinalCoverage(t, db, web, last)
	if n := queryFloat(t, db, "SELECT count(*) FROM urls WHERE state = 0"); n != 0 {
		t.Errorf("%v URLs left queued", n)
	}
	skipped := queryFloat(t, db, "SELECT count(*) FROM urls WHERE state = 2")
	if other := queryFloat(t, db, "SELECT count(*) FROM urls WHERE state = 2 AND skip_reason != 'robots'"); other != 0 {
		t.Errorf("%v URLs skipped for another reason than robots.txt", other)
	}
	if skipped == 0 && math.Abs(last.Coverage-1) > 1e-9 {
		t.Errorf("nothing skipped but coverage ends at %v", last.Coverage)
	}
	if skipped > 0 && !(last.Coverage < 1) {
		t.Errorf("%v pages never fetched but coverage is %v", skipped, last.Coverage)
	}
	t.Logf("%v URLs, %v skipped by robots.txt; coverage %.4f, oracle %.4f", nURLs, skipped, last.Coverage, last.Oracle)
}

// coverageWeb is a small web for coverage tests and a configuration that
// crawls it fast with its oracle.
func coverageWeb(t *testing.T) (*simweb.Server, engine.Config) {
	srv := simwebtest.Start(t, simweb.Options{Seed: 11, Sites: 12, Pages: 500, PageSizeMedian: smallPages})
	cfg := crawlConfig(srv.SeedURLs(2))
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.Oracle = srv.Web().Oracle()
	return srv, cfg
}

// checkFinalCoverage checks the last point of a finished crawl's curve
// against its store: the estimate is the share of the final stored ranks
// held by fetched pages, the oracle's the true PageRank of those pages.
func checkFinalCoverage(t *testing.T, db *sql.DB, web *simweb.Web, last record.CoveragePoint) {
	t.Helper()
	fetchedShare := queryFloat(t, db, "SELECT sum(r.rank) FROM pagerank r JOIN urls u ON u.id = r.url_id WHERE u.state = 1")
	if math.Abs(last.Coverage-fetchedShare) > 1e-9 {
		t.Errorf("final coverage %v, fetched pages hold %v of the stored ranks", last.Coverage, fetchedShare)
	}
	if truth := trueCoverage(t, db, web); math.Abs(last.Oracle-truth) > 1e-9 {
		t.Errorf("final oracle coverage %v, true PageRank of the fetched pages %v", last.Oracle, truth)
	}
}

// trueCoverage sums the true PageRank of the pages the crawl at db fetched.
func trueCoverage(t *testing.T, db *sql.DB, web *simweb.Web) float64 {
	t.Helper()
	rows, err := db.Query("SELECT url FROM urls WHERE state = 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	truth := 0.0
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		if pr, ok := web.Oracle().PageRank(u); ok {
			truth += pr
		}
	}
	return truth
}

// A crawl resumed from its store computes PageRank over the pages of its
// earlier runs too.
func TestCoverageAfterResume(t *testing.T) {
	t.Parallel()
	srv, cfg := coverageWeb(t)
	web := srv.Web()
	cfg.RankEveryPages = 50
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg.MaxPages = 150
	first, _ := crawlAt(t, srv, cfg, path)
	cfg.MaxPages = 0
	st, _ := crawlAt(t, srv, cfg, path)
	if first.Pages < 150 || st.Pages <= first.Pages {
		t.Fatalf("pages %d then %d", first.Pages, st.Pages)
	}
	last := st.Coverage[len(st.Coverage)-1]
	db := openRO(t, path)
	checkFinalCoverage(t, db, web, last)
	if n, urls := queryFloat(t, db, "SELECT nodes FROM rank_runs ORDER BY computed_at DESC LIMIT 1"), queryFloat(t, db, "SELECT count(*) FROM urls"); n != urls {
		t.Errorf("final run over %v nodes, %v URLs known", n, urls)
	}
	t.Logf("%d then %d pages; coverage %.4f, oracle %.4f", first.Pages, st.Pages, last.Coverage, last.Oracle)
}

func TestPageRankOff(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 2, Sites: 3, Pages: 60})
	cfg := crawlConfig(srv.SeedURLs(1))
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.Rank = false
	st, path, _ := crawlWith(t, srv, cfg)
	if st.Coverage != nil {
		t.Errorf("coverage %v with PageRank off", st.Coverage)
	}
	if st.Memory.Rank != 0 {
		t.Errorf("PageRank holds %d bytes, off", st.Memory.Rank)
	}
	if n := queryFloat(t, openRO(t, path), "SELECT count(*) FROM rank_runs"); n != 0 {
		t.Errorf("%v runs stored with PageRank off", n)
	}
}

// replay drives a fresh copy of the strategy with what the engine applied,
// in order, as the engine must have driven its own, and checks that every
// page that left the queue (fetched, or skipped by robots.txt) had the best
// priority of the queue at the time. It needs one site, one robot and one
// page per visit, so that the engine's choice is the queue's head.
func replay(t *testing.T, s frontier.Strategy, batches []record.Batch) (left int) {
	t.Helper()
	rp, _ := s.(frontier.Reprioritizer)
	queue := map[uint64]float64{}
	update := func(id uint64, p float64) {
		if _, ok := queue[id]; ok {
			queue[id] = p
		}
	}
	leave := func(id uint64, links []uint64) {
		p, ok := queue[id]
		if !ok {
			t.Fatalf("page %016x left the queue but was not in it", id)
		}
		if p == frontier.Held {
			t.Errorf("page %d left the queue while held", left)
		}
		for other, q := range queue {
			if q < p-1e-15 {
				t.Fatalf("page %d (priority %v) left before %016x (priority %v)", left, p, other, q)
			}
		}
		delete(queue, id)
		left++
		if rp != nil {
			rp.Fetched(id, links, update)
		}
	}
	discover := func(u record.URLRecord) {
		p := s.PagePriority(frontier.PageInfo{URL: u.URL, Depth: u.Depth, ID: u.ID, Parent: u.Parent})
		if p != u.Priority {
			t.Fatalf("%s: engine gave priority %v, the strategy %v", u.URL, u.Priority, p)
		}
		queue[u.ID] = p
	}
	for _, b := range batches {
		if len(b.Pages)+len(b.Skips) > 1 {
			t.Fatalf("a batch with %d pages and %d skips: cannot tell their order", len(b.Pages), len(b.Skips))
		}
		for _, u := range b.URLs {
			if u.Parent == 0 {
				discover(u)
			}
		}
		for _, p := range b.Pages {
			var links []uint64
			for _, l := range b.Links {
				if l.From == p.URL {
					links = append(links, l.To)
				}
			}
			leave(p.URL, links)
		}
		for _, sk := range b.Skips {
			leave(sk.URL, nil)
		}
		for _, u := range b.URLs {
			if u.Parent != 0 {
				discover(u)
			}
		}
	}
	if len(queue) != 0 {
		t.Errorf("%d pages left queued", len(queue))
	}
	return left
}

// Batch, Partial and Optimal crawl a real web to its end, and the engine
// fetches in the order each strategy asks for.
func TestRankStrategiesOrder(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 1, Pages: 150, PageSizeMedian: smallPages})
	web := srv.Web()
	tests := []struct {
		name string
		make func() frontier.Strategy
	}{
		{"batch", func() frontier.Strategy { return frontier.NewBatch(20) }},
		{"partial", func() frontier.Strategy { return frontier.NewPartial(20) }},
		{"optimal", func() frontier.Strategy {
			o := web.Oracle()
			return frontier.NewOptimal(func(p frontier.PageInfo) float64 { pr, _ := o.PageRank(p.URL); return pr })
		}},
		{"length", func() frontier.Strategy { return frontier.Length{} }},
	}
	var mu sync.Mutex
	fetched := map[string]int64{}
	// The strategies' crawls at once: one robot and one page a visit
	// each, they wait on the loop far more than they compute.
	t.Run("strategies", func(t *testing.T) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				cfg := crawlConfig(srv.SeedURLs(1))
				cfg.Strategy = tt.name
				cfg.Robots, cfg.PagesPerVisit = 1, 1
				cfg.Delay, cfg.MaxDelay = 0, 0
				cfg.RankBatch = 20
				cfg.Detect = false
				cfg.Oracle = web.Oracle()
				st, _, rec := crawlWith(t, srv, cfg)
				for _, ev := range st.Events {
					if ev.Kind == "strategy" {
						t.Errorf("event: %s", ev.Text)
					}
				}
				left := replay(t, tt.make(), rec.batches)
				t.Logf("%d pages fetched, %d left the queue in the strategy's order", st.Pages, left)
				mu.Lock()
				fetched[tt.name] = st.Pages
				mu.Unlock()
			})
		}
	})
	if len(fetched) != len(tests) {
		t.Fatalf("%d of %d strategies' crawls finished", len(fetched), len(tests))
	}
	for name, n := range fetched {
		if n != fetched["length"] {
			t.Errorf("%s fetched %d pages, length %d", name, n, fetched["length"])
		}
	}
}

func TestOptimalNeedsAnOracle(t *testing.T) {
	cfg := crawlConfig([]string{"http://a.test/"})
	cfg.Strategy = "optimal"
	_, err := engine.New(cfg, nil, nil, nil)
	var ce *engine.ConfigError
	if !errors.As(err, &ce) || ce.Key != "strategy" || !strings.Contains(err.Error(), "oracle") {
		t.Errorf("optimal without oracle: %v", err)
	}
}

// A crawl resumed from its store runs PageRank every every_pages as a new
// one does: the spacing that keeps runs to a flat cost per page (a tenth
// more pages than at the last run) counts from its own first run, not
// from the pages of its earlier runs.
func TestPageRankRunsSoonAfterResume(t *testing.T) {
	t.Parallel()
	srv, cfg := coverageWeb(t)
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg.RankEveryPages = 100000 // the first run: only its final PageRank
	cfg.MaxPages = 300
	first, _ := crawlAt(t, srv, cfg, path)
	cfg.RankEveryPages = 5
	cfg.MaxPages = 325 // fewer than a tenth more
	st, _ := crawlAt(t, srv, cfg, path)
	if first.Pages < 300 || st.Pages <= first.Pages {
		t.Fatalf("pages %d then %d", first.Pages, st.Pages)
	}
	db := openRO(t, path)
	runs := queryFloat(t, db, "SELECT count(*) FROM rank_runs WHERE pages > ?", first.Pages)
	if runs < 2 { // one during the resumed crawl at least, and its final one
		t.Errorf("%v PageRank runs after the resume at %d pages (every 5 pages, to %d), want a run during the crawl and the final one", runs, first.Pages, st.Pages)
	}
}
