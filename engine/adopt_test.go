package engine_test

import (
	"context"
	"database/sql"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/engine/visit"
	"lidi/internal/testkit"
	"lidi/storage"
)

// resumer hands out one lease of an earlier run (engine.Resumer) and runs
// this run's leases on local robots, noting the sites leased while the
// earlier lease was still out.
type resumer struct {
	visit.LocalDispatcher
	earlier *visit.Lease // as the earlier run handed it out

	mu       sync.Mutex
	resumed  []*visit.Lease
	ended    bool
	overlaps []string // sites leased while the earlier lease was out
}

func (d *resumer) Outstanding() []*visit.Lease {
	l := *d.earlier
	return []*visit.Lease{&l}
}

func (d *resumer) Resume(leases []*visit.Lease, report func(visit.Result)) {
	d.mu.Lock()
	d.resumed = leases
	d.mu.Unlock()
	if len(leases) == 0 {
		return
	}
	// The slave that had the lease runs it (all of it: it knows nothing
	// of what the store holds) and delivers its results now.
	go d.Robot.Run(context.Background(), d.earlier, func(r visit.Result) {
		if r.End != nil {
			d.mu.Lock()
			d.ended = true
			d.mu.Unlock()
		}
		report(r)
	})
}

func (d *resumer) Dispatch(ctx context.Context, l *visit.Lease, report func(visit.Result)) {
	d.mu.Lock()
	if !d.ended && (l.Key == d.earlier.Key || l.Addr == d.earlier.Addr) {
		d.overlaps = append(d.overlaps, l.Key)
	}
	d.mu.Unlock()
	d.LocalDispatcher.Dispatch(ctx, l, report)
}

// A crawl started again takes over the lease its earlier run left out (a
// cluster master killed while a slave crawled): the site is not leased
// again while that lease is out, its results are applied, and a page of it
// the store held already (its result stored before the kill) is not
// counted again. The crawl ends with every page stored once.
func TestALeaseOfAnEarlierRunIsTakenOver(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 6, Pages: 200, PageSizeMedian: smallPages})
	cfg := crawlConfig(srv.SeedURLs(2))
	ref := filepath.Join(t.TempDir(), "local.db")
	runCrawl(t, cfg, srv.DNSAddr(), ref)
	want := fetchedURLs(t, ref)

	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg.MaxPages = 40
	runCrawl(t, cfg, srv.DNSAddr(), path)
	earlier := earlierLease(t, path, cfg)

	srv.ResetWitness()
	cfg.MaxPages = 0
	eng, release := openEngine(t, cfg, srv.DNSAddr(), path)
	defer release()
	d := &resumer{LocalDispatcher: visit.LocalDispatcher{Robot: eng.Robot()}, earlier: earlier}
	eng.SetDispatcher(d)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	if len(d.resumed) != 1 || len(d.resumed[0].URLs) != len(earlier.URLs)-1 {
		t.Fatalf("resumed %+v: want the lease without its URL stored already", d.resumed)
	}
	if len(d.overlaps) > 0 {
		t.Errorf("leased while the earlier lease was out: %v", d.overlaps)
	}
	got := fetchedURLs(t, path)
	if len(got) != len(want) {
		t.Errorf("%d pages stored, a crawl in one run stored %d", len(got), len(want))
	}
	if st := eng.Stats(); st.Pages != int64(len(got)) {
		t.Errorf("the crawl counts %d pages, the store holds %d", st.Pages, len(got))
	}
	// Every request of the second run was for a page not stored before,
	// but for the one the earlier lease's robot fetched again.
	w := srv.Witness()
	requests := w.Totals.Requests
	for _, h := range w.Hosts {
		requests -= h.RobotsFetches
	}
	if stored := int64(len(got) - 40); requests != stored+1 {
		t.Errorf("%d page requests for %d pages stored by the second run (+1 fetched again by the earlier lease)", requests, stored)
	}
}

// earlierLease is a lease of a site of the crawl at path with URLs it
// holds queued, and first one it fetched already, as an earlier run of the
// crawl would have handed it out.
func earlierLease(t *testing.T, path string, cfg engine.Config) *visit.Lease {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	sites, err := db.Sites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		if s.Pending < 3 || s.Fetched == 0 || s.Addr == "" {
			continue
		}
		urls, _, _, err := db.Head(ctx, s.ID, 3)
		if err != nil {
			t.Fatal(err)
		}
		var done record.QueuedURL
		eachRow(t, path, "SELECT id, url FROM urls WHERE state = 1 AND site = "+strconv.FormatInt(s.ID, 10)+" LIMIT 1", func(rows *sql.Rows) error {
			var id int64
			err := rows.Scan(&id, &done.URL)
			done.ID = uint64(id)
			return err
		})
		port := 80
		if i := strings.LastIndexByte(s.Key, ':'); i > len("http:") {
			if port, err = strconv.Atoi(s.Key[i+1:]); err != nil {
				t.Fatal(err)
			}
		}
		return &visit.Lease{ID: 7, Site: s.ID, Key: s.Key, Host: s.Host, Addr: netip.MustParseAddr(s.Addr), Port: port,
			Delay: cfg.Delay, NotBefore: time.Now(), Deadline: time.Now().Add(time.Minute), URLs: append([]record.QueuedURL{done}, urls...)}
	}
	t.Fatal("no site with pages fetched and queued")
	return nil
}

// recaller records what the engine tells a dispatcher whose robots its
// Halt does not reach.
type recaller struct {
	visit.LocalDispatcher
	mu    sync.Mutex
	calls []bool
}

func (r *recaller) Recall(halt bool) {
	r.mu.Lock()
	r.calls = append(r.calls, halt)
	r.mu.Unlock()
}

// A pause and a stop recall remote leases; a resumption lets them go on.
func TestPauseAndStopRecallRemoteLeases(t *testing.T) {
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 2, Pages: 20})
	eng, release := openEngine(t, crawlConfig(srv.SeedURLs(1)), srv.DNSAddr(), filepath.Join(t.TempDir(), "crawl.db"))
	defer release()
	d := &recaller{LocalDispatcher: visit.LocalDispatcher{Robot: eng.Robot()}}
	eng.SetDispatcher(d)
	eng.Pause()
	eng.Resume()
	eng.Pause() // the crawl runs paused until stopped
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	testkit.WaitFor(t, 2*time.Minute, "the crawl running", func() bool { return eng.Stats().State != engine.StateStarting })
	cancel()
	if err := <-done; err != engine.ErrStopped && err != nil {
		t.Fatalf("run: %v", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if want := []bool{true, false, true, true}; !slices.Equal(d.calls, want) {
		t.Errorf("recalls %v, want %v (pause, resume, stop)", d.calls, want)
	}
}
