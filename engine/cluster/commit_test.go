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
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/engine/visit"
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

func (s *failingStore) Apply(ctx context.Context, b *record.Batch) error {
	if err := s.Write(ctx, b); err != nil {
		return err
	}
	return s.DB.Commit(ctx)
}

// Write is where the committer's batches come in.
func (s *failingStore) Write(ctx context.Context, b *record.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pages >= s.failAt && len(b.Pages) > 0 {
		return errDiskGone
	}
	s.pages += len(b.Pages)
	return s.DB.Write(ctx, b)
}

// testCrawlConfig is a polite crawl of srv scaled down for tests.
func testCrawlConfig(srv *simweb.Server, seeds int, delay time.Duration) engine.Config {
	cfg := engine.Defaults()
	cfg.Seeds = srv.SeedURLs(seeds)
	cfg.Robots, cfg.PagesPerVisit = 4, 10
	cfg.Delay, cfg.MaxDelay = delay, delay
	cfg.RobotsRetry, cfg.BackoffBase, cfg.ParkFor = 50*time.Millisecond, 20*time.Millisecond, 50*time.Millisecond
	cfg.FlushEvery = 20 * time.Millisecond
	cfg.Rank = false
	return cfg
}

// robotSlave starts a light slave running engine robots built from cfg,
// and gives slaves the master's settings.
func (c *testCluster) robotSlave(cfg engine.Config) *Slave {
	c.t.Helper()
	robot, err := visit.NewRobot(cfg.Robot(), nil)
	if err != nil {
		c.t.Fatal(err)
	}
	s, _ := c.runSlave(SlaveOptions{ID: "a", Robots: 4, NewWork: func(_ []byte, halt func() bool) (Work, error) { return RobotWork(robot, halt), nil }})
	if err := c.m.PublishSettings(context.Background(), []byte("settings")); err != nil {
		c.t.Fatal(err)
	}
	return s
}

// masterCrawl opens the crawl's database at path (wrapped by wrap when
// not nil) and an engine on it whose leases go through a Dispatcher on
// the cluster's master; release closes them.
func (c *testCluster) masterCrawl(cfg engine.Config, srv *simweb.Server, path string, wrap func(*storage.DB) record.Store) (eng *engine.Engine, d *Dispatcher, release func()) {
	t := c.t
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	resolver, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	var store record.Store = db
	if wrap != nil {
		store = wrap(db)
	}
	eng, err = engine.New(cfg, store, resolver, nil)
	if err != nil {
		resolver.Close()
		db.Close()
		t.Fatal(err)
	}
	d = NewDispatcher(c.m, DispatcherOptions{SetRobots: eng.SetRobots})
	eng.SetDispatcher(d)
	return eng, d, func() { d.Close(); resolver.Close(); db.Close() }
}

// A master whose commit fails after it took slaves' results (as one killed
// between taking and storing them) has not acknowledged them: started
// again, it takes its leases over and stores those results. The crawl ends
// with every page, and simweb served each page once, but for the pages in
// flight while no master answered: nothing was lost and fetched again.
func TestResultsNotStoredComeAgainToTheNextMaster(t *testing.T) {
	srv := simwebtest.Start(t, simweb.Options{Seed: 3, Sites: 4, Pages: 120})
	cfg := testCrawlConfig(srv, 2, 10*time.Millisecond)
	c := newTestCluster(t)
	c.robotSlave(cfg)
	path := filepath.Join(c.dir, "crawl.db")
	crawl := func(failAt int) (engine.Stats, error) {
		t.Helper()
		var wrap func(*storage.DB) record.Store
		if failAt > 0 {
			wrap = func(db *storage.DB) record.Store { return &failingStore{DB: db, failAt: failAt} }
		}
		eng, _, release := c.masterCrawl(cfg, srv, path, wrap)
		defer release()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		err := eng.Run(ctx)
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
	// While no master answers, the slave starts no request and cuts the
	// one in flight half a heartbeat after its liberty: the outage costs
	// at most a page per robot (4), the results not stored nothing.
	if requests < st.Pages || requests > st.Pages+4 {
		t.Errorf("simweb served %d page requests for %d pages stored: results were lost and fetched again", requests, st.Pages)
	}
}
