package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"lidi/engine"
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
			return func(ctx context.Context, payload []byte) (Outcome, error) {
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
				parts, err := EncodeResults([]engine.Result{{Lease: l.ID, Seq: 1, End: &engine.LeaseEnd{Next: time.Now(), Returned: urlIDs(l.URLs)}}})
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
	c.m.control(true) // once, as if the master died right after
	waitFor(t, "the slave halted", s.Halted)
	waitFor(t, "the halt lapsed", func() bool { return !s.Halted() })
}

// RobotWork gives a slave's halt to the robot: a lease taken while the
// master recalls them ends at once, every URL returned, nothing fetched.
func TestRobotWorkHalts(t *testing.T) {
	cfg := engine.Defaults()
	cfg.Seeds = []string{"http://nine.test/"}
	r, err := engine.NewRobot(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := testEngineLease(9, "nine.test", time.Now().Add(time.Hour))
	l.Robots = &engine.RobotsFile{Status: 404, Fetched: time.Now()}
	payload, err := EncodeLease(l)
	if err != nil {
		t.Fatal(err)
	}
	out, err := RobotWork(r, func() bool { return true })(context.Background(), payload)
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

func urlIDs(urls []engine.QueuedURL) []uint64 {
	ids := make([]uint64, len(urls))
	for i, q := range urls {
		ids[i] = q.ID
	}
	return ids
}
