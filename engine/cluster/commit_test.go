package cluster

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/simweb"
	"lidi/storage"
)

// failingStore fails its writes once pages have been stored: the master's
// database stops taking what the slaves send.
type failingStore struct {
	*storage.DB
	mu     sync.Mutex
	pages  int
	failAt int
}

var errDiskGone = errors.New("disk gone")

func (s *failingStore) Apply(ctx context.Context, b *engine.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pages >= s.failAt && len(b.Pages) > 0 {
		return errDiskGone
	}
	s.pages += len(b.Pages)
	return s.DB.Apply(ctx, b)
}

// A master whose commit fails after it took slaves' results (as one killed
// between taking and storing them) has not acknowledged them: started
// again, it takes its leases over and stores those results. The crawl ends
// with every page, and simweb served each page once: nothing was lost and
// fetched again.
func TestResultsNotStoredComeAgainToTheNextMaster(t *testing.T) {
	web, err := simweb.Generate(simweb.Options{Seed: 3, Sites: 4, Pages: 120})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := simweb.Start(context.Background(), web, simweb.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg := engine.Defaults()
	cfg.Seeds = srv.SeedURLs(2)
	cfg.Robots, cfg.PagesPerVisit = 4, 10
	cfg.Delay, cfg.MaxDelay = 10*time.Millisecond, 10*time.Millisecond
	cfg.RobotsRetry, cfg.BackoffBase, cfg.ParkFor = 50*time.Millisecond, 20*time.Millisecond, 50*time.Millisecond
	cfg.FlushEvery = 20 * time.Millisecond
	cfg.Rank = false

	c := newTestCluster(t)
	robot, err := engine.NewRobot(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.runSlave(SlaveOptions{ID: "a", Robots: 4, NewWork: func(_ []byte, halt func() bool) (Work, error) { return RobotWork(robot, halt), nil }})
	if err := c.m.PublishSettings(context.Background(), []byte("settings")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(c.dir, "crawl.db")
	crawl := func(failAt int) (engine.Stats, error) {
		t.Helper()
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
		var store engine.Store = db
		if failAt > 0 {
			store = &failingStore{DB: db, failAt: failAt}
		}
		eng, err := engine.New(cfg, store, resolver, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := NewDispatcher(c.m, DispatcherOptions{SetRobots: eng.SetRobots})
		defer d.Close()
		eng.SetDispatcher(d)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		err = eng.Run(ctx)
		return eng.Stats(), err
	}
	if _, err := crawl(30); !errors.Is(err, errDiskGone) {
		t.Fatalf("first master: %v, want the store's failure", err)
	}
	if len(c.m.Book()) == 0 {
		t.Fatal("no lease left in the book by the master whose store failed")
	}
	c.stopMaster()
	c.dispatcherOnly = true // as main starts it: results wait for the Dispatcher
	c.startMaster()
	st, err := crawl(0)
	if err != nil {
		t.Fatalf("second master: %v", err)
	}
	if st.Pages < 100 {
		t.Fatalf("%d pages stored", st.Pages)
	}
	w := srv.Witness()
	requests := w.Totals.Requests
	for _, h := range w.Hosts {
		requests -= h.RobotsFetches
	}
	if requests != st.Pages {
		t.Errorf("simweb served %d page requests for %d pages stored: results were lost and fetched again", requests, st.Pages)
	}
}
