package cluster

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/engine/visit"
)

// A pause recalls the slaves' leases: the master tells them (lidi.control),
// a lease in flight ends with the URLs it did not reach returned, and a
// resumption lets them go on.
func TestPauseRecallsTheSlavesLeases(t *testing.T) {
	c := newTestCluster(t)
	if err := c.m.PublishSettings(context.Background(), []byte("settings")); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	s, _ := c.runSlave(SlaveOptions{ID: "a", Robots: 1,
		NewWork: func(_ []byte, halt func() bool) (Work, error) {
			// A robot whose pages never end by themselves: only a halt
			// ends its lease, as engine.Robot's Halt does.
			return func(ctx context.Context, payload []byte, _ func([]byte) error) (Outcome, error) {
				l, err := DecodeLease(payload)
				if err != nil {
					return Outcome{}, err
				}
				started <- struct{}{}
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for !halt() {
					select {
					case <-tick.C:
					case <-ctx.Done():
						return Outcome{}, ctx.Err()
					}
				}
				parts, err := EncodeResults([]visit.Result{{Lease: l.ID, Seq: 1, End: &visit.LeaseEnd{Next: time.Now(), Returned: urlIDs(l.URLs)}}})
				return Outcome{Parts: parts}, err
			}, nil
		}})
	d := NewDispatcher(c.m, DispatcherOptions{})
	defer d.Close()
	d.Resume(nil, nil) // no earlier run
	var r reports
	d.Dispatch(context.Background(), testEngineLease(9, "nine.test", time.Now().Add(time.Hour)), r.report)
	<-started
	d.Recall(true)
	waitFor(t, "the recalled lease's end", ended(&r, 9))
	end := r.of(9)[0].End
	if !slices.Equal(end.Returned, []uint64{91, 92}) || end.Fetched != 0 {
		t.Errorf("recalled lease's end: %+v, want its two URLs returned", end)
	}
	if !s.Stats().Halted {
		t.Error("the slave does not say it is halted")
	}
	d.Recall(false)
	waitFor(t, "the slave going on", func() bool { return !s.Halted() })
}

// A halt the master stops repeating lapses: a slave that missed the "go"
// is not held for ever.
func TestARecallLapses(t *testing.T) {
	c := newTestCluster(t)
	s, _ := c.slave("a", nil, echo)
	waitFor(t, "the slave connected", func() bool { return len(c.m.Slaves()) == 1 })
	c.m.control(true, "paused") // once, as if the master died right after
	waitFor(t, "the slave halted", s.Halted)
	waitFor(t, "the halt lapsed", func() bool { return !s.Halted() })
}

// RobotWork gives a slave's halt to the robot: a lease taken while the
// master recalls them ends at once, every URL returned, nothing fetched.
func TestRobotWorkHalts(t *testing.T) {
	cfg := engine.Defaults()
	cfg.Seeds = []string{"http://nine.test/"}
	r, err := visit.NewRobot(cfg.Robot(), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := testEngineLease(9, "nine.test", time.Now().Add(time.Hour))
	l.Robots = &visit.RobotsFile{Status: 404, Fetched: time.Now()}
	payload, err := EncodeLease(l)
	if err != nil {
		t.Fatal(err)
	}
	out, err := RobotWork(r, func() bool { return true })(context.Background(), payload, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := DecodeResults(out.Parts)
	if err != nil {
		t.Fatal(err)
	}
	if out.Pages != 0 || len(rs) != 1 || rs[0].End == nil || !slices.Equal(rs[0].End.Returned, []uint64{91, 92}) {
		t.Errorf("a halted robot's lease: %d pages, results %+v", out.Pages, rs)
	}
}

func urlIDs(urls []record.QueuedURL) []uint64 {
	ids := make([]uint64, len(urls))
	for i, q := range urls {
		ids[i] = q.ID
	}
	return ids
}

// A master's crawl paused while a slave's robot waits out a site's delay
// of ten minutes gets its lease back at once: the site's URL is queued
// again and nothing was fetched. Resumed, the slave goes on (the site
// waits its delay from the robots.txt request).
func TestAPausedCrawlGetsItsRemoteLeasesBack(t *testing.T) {
	srv := simwebtest.Start(t, simweb.Options{Seed: 3, Sites: 1, Pages: 5})
	cfg := testCrawlConfig(srv, 1, 10*time.Minute)
	c := newTestCluster(t)
	s := c.robotSlave(cfg)
	eng, d, release := c.masterCrawl(cfg, srv, filepath.Join(c.dir, "crawl.db"), nil)
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	// The slave's robot has fetched robots.txt and waits ten minutes
	// before the seed.
	waitFor(t, "robots.txt fetched", func() bool {
		for _, h := range srv.Witness().Hosts {
			if h.RobotsFetches > 0 {
				return true
			}
		}
		return false
	})
	eng.Pause()
	waitFor(t, "the lease back and its URL queued", func() bool {
		return d.Stats().Remote == 0 && eng.Stats().QueueDepth > 0 && s.Stats().Leases == 0
	})
	if st := eng.Stats(); st.Pages != 0 {
		t.Errorf("%d pages fetched during the delay", st.Pages)
	}
	eng.Resume()
	waitFor(t, "the slave going on", func() bool { return !s.Halted() && eng.Stats().State == engine.StateRunning })
	cancel()
	waitFor(t, "the crawl stopped", func() bool {
		select {
		case err := <-done:
			if err != engine.ErrStopped {
				t.Errorf("run: %v, want ErrStopped", err)
			}
			return true
		default:
			return false
		}
	})
	if w := srv.Witness(); w.Totals.Requests != w.Hosts[hostOf(cfg.Seeds[0])].RobotsFetches {
		t.Errorf("page requests were made: %+v", w.Totals)
	}
}

// hostOf is a URL's host name.
func hostOf(u string) string {
	h := strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")
	if i := strings.IndexAny(h, ":/"); i >= 0 {
		h = h[:i]
	}
	return h
}
