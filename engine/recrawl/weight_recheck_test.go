package recrawl

import (
	"testing"
	"time"
)

// TestSchedulerWaitingGainsWeight: a waiting page of a weighed site whose
// in-links grow between solves (its site discovered, the crawl finding
// links to it) is worth a turn as soon as its Price passes the floor,
// not at the next solve: a page still warming up is worth its in-link
// weight at once (Planner.Add), but the site's recheck, when the first
// waiting page reaches the floor (waitingByWorth), was reckoned at the
// weight it had (review s39's N4). One site of 10 pages, a turn a
// minute, Ahead 1, discovery weighed; the first page waiting under the
// floor gains 1,000 in-links, and the Due a millisecond later (no solve)
// releases it.
func TestSchedulerWaitingGainsWeight(t *testing.T) {
	s, _, t0 := oneSite(10, time.Minute, time.Second)
	s.SetDiscovering("a", true)
	s.ToDiscover("a", 1000)
	findTen(s, t0)
	ss := s.sites["a"]
	for d := 10 * time.Second; d < 6*time.Hour; d += 5 * time.Second {
		now := t0.Add(d)
		for _, id := range s.Due(now, now) {
			s.Back(id) // not fetched: nothing solves again
		}
		if len(ss.waiting) == 0 || ss.out > 0 || ss.priced != s.pl.solves {
			continue
		}
		id := ss.waiting[0]
		floor := s.pl.DiscoveryFloor("a")
		before := s.pl.Price(id, now)
		if before >= floor {
			continue
		}
		solves := s.pl.solves
		for j := range uint64(1000) {
			s.Links(5000+j, []uint64{id})
		}
		at := now.Add(time.Millisecond)
		after, recheck := s.pl.Price(id, at), ss.recheck
		// recheck zero: none waiting worth a turn before the next solve.
		released := false
		for _, r := range s.Due(at, at) {
			released = released || r == id
		}
		t.Logf("at %v page %d waiting, Price %.4g under the floor %.4g, %.4g with 1,000 in-links more; the site rechecked at %v; released at once: %v",
			d, id, before, floor, after, recheck.Sub(t0), released)
		if s.pl.solves != solves {
			t.Fatal("the plan solved again: the set-up wants no solve between")
		}
		if after < floor {
			t.Fatalf("page %d with 1,000 in-links more is worth %.4g, under the floor %.4g: the set-up wants it over", id, after, floor)
		}
		if !released {
			t.Errorf("page %d, worth %.4g with its new in-links, over the floor %.4g, waits", id, after, floor)
		}
		return
	}
	t.Fatal("no page waited under the floor with nothing out: the set-up wants one")
}
