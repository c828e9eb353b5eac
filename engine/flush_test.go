package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/internal/testkit"
)

// A long visit (one site, w > 0, c larger than the site) writes its pages to
// the SQLite file as it goes: a page the console counted reaches the store
// while the visit that fetched it is still in flight, paused or not.
func TestPagesStoredDuringLongVisit(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 21, Sites: 1, Pages: 1500, ExternalLinks: -1, PageSizeMedian: smallPages})
	cfg := crawlConfig(srv.SeedURLs(1))
	cfg.Scope.SeedHosts = true
	cfg.Robots = 1
	cfg.Delay, cfg.MaxDelay = 25*time.Millisecond, 25*time.Millisecond
	cfg.PagesPerVisit = 100000
	cfg.FlushEvery = 50 * time.Millisecond
	path := filepath.Join(t.TempDir(), "crawl.db")
	eng, release := openEngine(t, cfg, srv.DNSAddr(), path)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil && err != engine.ErrStopped {
			t.Errorf("crawl: %v", err)
		}
	}()

	// visit returns the visit in flight (the crawl has one site).
	visit := func() (engine.VisitStats, int64) {
		st := eng.Stats()
		if len(st.Visits) != 1 {
			return engine.VisitStats{}, st.Pages
		}
		return st.Visits[0], st.Pages
	}
	// long checks that a visit's pages reach the store while it runs.
	long := func(phase string) {
		var v engine.VisitStats
		var counted int64
		testkit.WaitFor(t, 2*time.Minute, phase+": a visit fetching 40 pages", func() bool {
			v, counted = visit()
			return v.Pages >= 40
		})
		testkit.WaitFor(t, 2*time.Minute, phase+": the pages counted in the store", func() bool {
			return int64(countFetched(path)) >= counted
		})
		if now, _ := visit(); !now.Started.Equal(v.Started) {
			t.Fatalf("%s: the visit started at %s ended before its pages were stored", phase, v.Started)
		}
		t.Logf("%s: %d pages counted and stored while the visit was at page %d", phase, counted, v.Pages)
	}
	long("running")
	eng.Pause()
	testkit.WaitFor(t, 2*time.Minute, "paused: every page counted in the store", func() bool {
		st := eng.Stats()
		return st.RobotsBusy == 0 && int64(countFetched(path)) == st.Pages
	})
	eng.Resume()
	long("resumed")
}
