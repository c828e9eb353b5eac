package recrawl

import (
	"testing"
	"time"
)

// TestSchedulerAheadRefusedNotHeld: a due page of a site whose discovery
// is weighed, refused because the site's copies out fill Ahead, is not
// held (Planner.Hold: planned again from its visit, not from its time):
// only a page refused by its worth is. The first version of
// waitingByWorth's caller held such a page when its Price was under the
// floor, and on seed 2's quasi web the big site's recrawls came later
// (its timing loss 0.0062 of its weight, 0.0010 before). One site, a turn
// a minute, Ahead 1: page 0 (500 in-links) is out 10 min at each release;
// the others fall due behind it and below the floor.
func TestSchedulerAheadRefusedNotHeld(t *testing.T) {
	s, _, t0 := oneSite(10, time.Minute, time.Second)
	for j := range uint64(500) {
		s.Links(5000+j, []uint64{0})
	}
	s.SetDiscovering("a", true)
	s.ToDiscover("a", 5)
	findTen(s, t0)
	// Page 0 is back 10 min after each release (not fetched: nothing
	// solves again); the pages that fall due while it is out are refused
	// for it.
	var back time.Time
	checked := 0
	for d := 10 * time.Second; d < 6*time.Hour; d += 5 * time.Second {
		now := t0.Add(d)
		if !back.IsZero() && !now.Before(back) {
			s.Back(0)
			back = time.Time{}
		}
		ss := s.sites["a"]
		before := map[uint64]bool{}
		for _, id := range ss.waiting {
			before[id] = true
		}
		out := ss.out
		for _, id := range s.Due(now, now) {
			if id == 0 {
				back = now.Add(10 * time.Minute)
			}
		}
		if out == 0 {
			continue
		}
		for _, id := range ss.waiting {
			if before[id] || s.pl.Price(id, now) >= s.pl.DiscoveryFloor("a") {
				continue
			}
			checked++
			if s.pl.pages[id].held {
				t.Fatalf("page %d, refused for the copy out at %v, is held", id, d)
			}
		}
	}
	t.Logf("%d pages under the floor refused for the copy out", checked)
	if checked == 0 {
		t.Fatal("no page under the floor was refused for the copy out: the set-up wants some")
	}
}

// findTen has site "a" find ten pages a second apart from t0, each linked
// from 10 pages (100 to 109), so that its discovery is weighed.
func findTen(s *Scheduler, t0 time.Time) {
	for k := range uint64(10) {
		now := t0.Add(time.Duration(k) * time.Second)
		s.Due(now, now)
		for i := range uint64(10) {
			s.Links(100+i, []uint64{1000 + k})
		}
		s.Discovered("a", 1000+k, true)
	}
}
