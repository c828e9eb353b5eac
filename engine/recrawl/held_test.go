package recrawl

import (
	"testing"
	"time"

	"lidi/internal/race"
)

// TestSchedulerHeldPageKeepsItsInterval: a discovering site's pages whose
// visits are worth less than a turn of its discovery wait for hours; once
// its discovery ends, each is planned an interval after its visit, not
// after the time it was due (Planner.Hold). Caught up from the time they
// were due, the pages held came back half an interval after their visits
// (the time line's bound), asked for more turns than the site has, and
// every page of the site, the heavy ones included, came late for hours:
// on seed 2's sarss web the big site's recrawls were 58 to 76 virtual
// minutes behind their plan 2 to 8 hours after its discovery ended. One
// site, a turn a minute, 300 pages changing every 4 h on average, 10 of
// them linked from 20 others; 300 pages to find, each linked from 20, so
// that the light pages wait until discovery ends (5 h 34 min): from 4 h
// after it, 34 min behind their plan on average when caught up, 9 min
// planned from their visits.
func TestSchedulerHeldPageKeepsItsInterval(t *testing.T) {
	race.SkipSingleGoroutine(t)
	const gap, backlog = time.Minute, 300
	s, _, t0 := oneSite(300, gap, time.Second)
	web := newChangingPages(4 * time.Hour)
	for i := range uint64(300) {
		web.add(i, t0)
	}
	var heavy, srcs []uint64
	for i := range uint64(10) {
		heavy = append(heavy, 290+i)
	}
	for i := range uint64(20) {
		srcs = append(srcs, i)
		s.Links(i, heavy)
	}
	s.SetDiscovering("a", true)
	s.ToDiscover("a", backlog)
	found := 0
	var ended time.Duration
	var from Lateness
	measured := false
	siteTurns(s, web, t0, gap, 30*time.Hour, func(d time.Duration, _ uint64) {
		// The pages held are all due when it ends: give them 4 h (240
		// turns, 300 pages of 4 h mean interval) to be visited once.
		if found == backlog && !measured && d >= ended+4*time.Hour {
			from, measured = s.Planner().Lateness(), true
		}
	}, func(d time.Duration) {
		if found == backlog {
			return
		}
		id := uint64(1000 + found)
		for _, src := range srcs {
			s.Links(src, append(append([]uint64(nil), heavy...), id))
		}
		s.Discovered("a", id, true)
		found++
		s.ToDiscover("a", backlog-found)
		if found == backlog {
			s.SetDiscovering("a", false)
			ended = d
		}
	})
	if found < backlog {
		t.Fatalf("%d of %d pages found in 30 h", found, backlog)
	}
	after := s.Planner().Lateness().Sub(from)
	pace := after.Pace / time.Duration(max(after.Fetched, 1))
	t.Logf("discovery ended at %v; from 4 h after it: %d recrawls, %v behind their plan on average, %.3f of an interval from it, %.3f more than half an interval",
		ended, after.Fetched, pace, after.OfInterval/float64(max(after.Fetched, 1)), after.Over(3))
	// Caught up from when they were due: 34 min behind on average.
	if pace > 15*time.Minute {
		t.Errorf("from 4 h after discovery: recrawls %v behind their plan on average; want 15 min at most", pace)
	}
}
