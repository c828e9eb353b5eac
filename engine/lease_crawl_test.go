package engine_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/engine/visit"
	"lidi/internal/testkit"
	"lidi/storage"
)

// remoteDispatcher runs leases as a slave in another process would: the
// lease and every result cross as JSON, run by a Robot of its own, and
// each result is delivered twice, the pairs out of order, as a retrying
// transport may do. With drop set, the first lease is never run.
type remoteDispatcher struct {
	t     *testing.T
	robot *visit.Robot
	drop  bool

	mu      sync.Mutex
	dropped *visit.Lease
	leases  atomic.Int64
}

func (d *remoteDispatcher) Dispatch(ctx context.Context, l *visit.Lease, report func(visit.Result)) {
	d.leases.Add(1)
	wire, err := json.Marshal(l)
	if err != nil {
		d.t.Error(err)
		return
	}
	d.mu.Lock()
	if d.drop && d.dropped == nil {
		d.dropped = l
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	go func() {
		var lease visit.Lease
		if err := json.Unmarshal(wire, &lease); err != nil {
			d.t.Error(err)
			return
		}
		var held []byte
		// Each delivery is decoded apart, as a redelivered message is: a
		// result reported belongs to the loop, which changes its links.
		deliver := func(b []byte) {
			var got visit.Result
			if err := json.Unmarshal(b, &got); err != nil {
				d.t.Error(err)
				return
			}
			report(got)
		}
		d.robot.Run(ctx, &lease, func(r visit.Result) {
			b, err := json.Marshal(r)
			if err != nil {
				d.t.Error(err)
				return
			}
			if held == nil && r.End == nil {
				held = b // sent after the next one
				return
			}
			deliver(b)
			deliver(b)
			if held != nil {
				deliver(held)
				deliver(held)
				held = nil
			}
		})
	}()
}

// offsetClock is the system clock moved forward on demand.
type offsetClock struct{ offset atomic.Int64 }

func (c *offsetClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// The scheduler runs the same with leases crossing as JSON, results
// delivered twice and out of order, and a lease lost: the crawl stores the
// pages a local one stores, each once, and counts them once.
func TestLeasesThroughADispatcher(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 10, Pages: 400, PageSizeMedian: smallPages})
	cfg := crawlConfig(srv.SeedURLs(2))
	cfg.Delay, cfg.MaxDelay = 0, 0
	ref := filepath.Join(t.TempDir(), "local.db")
	runCrawl(t, cfg, srv.DNSAddr(), ref)
	want := fetchedURLs(t, ref)

	for _, drop := range []bool{false, true} {
		name := "duplicated"
		if drop {
			name = "lost-lease"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each its own file, robot and clock
			path := filepath.Join(t.TempDir(), "remote.db")
			db, err := storage.Open(path, storage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			resolver, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
			if err != nil {
				t.Fatal(err)
			}
			defer resolver.Close()
			clock := &offsetClock{}
			eng, err := engine.New(cfg, db, resolver, clock)
			if err != nil {
				t.Fatal(err)
			}
			robot, err := visit.NewRobot(cfg.Robot(), clock)
			if err != nil {
				t.Fatal(err)
			}
			d := &remoteDispatcher{t: t, robot: robot, drop: drop}
			eng.SetDispatcher(d)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- eng.Run(ctx) }()
			if drop {
				testkit.WaitFor(t, 2*time.Minute, "a lease lost", func() bool {
					d.mu.Lock()
					defer d.mu.Unlock()
					return d.dropped != nil
				})
				// Past the lost lease's deadline and grace, by the clock
				// the engine and the robots share.
				d.mu.Lock()
				clock.offset.Store(int64(time.Until(d.dropped.Deadline) + time.Hour))
				d.mu.Unlock()
			}
			if err := <-done; err != nil {
				t.Fatalf("crawl: %v", err)
			}
			st := eng.Stats()
			got := fetchedURLs(t, path)
			if st.Pages != int64(len(got)) {
				t.Errorf("stats count %d pages, the store holds %d", st.Pages, len(got))
			}
			if len(got) != len(want) {
				t.Errorf("%d pages stored, the local crawl stored %d", len(got), len(want))
			}
			for u := range want {
				if !got[u] {
					t.Errorf("%s: stored by the local crawl only", u)
				}
			}
			if drop && st.ErrorKind[visit.FailureExpired] != 1 {
				t.Errorf("expired leases = %d, want 1", st.ErrorKind[visit.FailureExpired])
			}
			t.Logf("%d leases, %d pages", d.leases.Load(), len(got))
		})
	}
}
