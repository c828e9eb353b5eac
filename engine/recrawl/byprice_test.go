package recrawl

import (
	"testing"
	"time"
)

// TestSchedulerWaitingByPrice: on a site whose discovery is weighed and
// whose due pages wait for its copy out (Ahead), the page released next
// is the one whose visit is worth most (Scheduler.byPrice), not the one
// due first: in that order the heaviest page waited behind every lighter
// one due before it, a turn each, and came a share of its interval late
// at every visit. One site, a turn a minute, 60 pages changing every 30
// min on average, page 59 linked from 30 of the others; 5 URLs left to
// discover throughout, each found linked from none.
func TestSchedulerWaitingByPrice(t *testing.T) {
	const gap, heavy = time.Minute, uint64(59)
	s, web, t0 := oneSite(60, gap, time.Second)
	for i := range uint64(30) {
		s.Links(i, []uint64{heavy})
	}
	s.SetDiscovering("a", true)
	s.ToDiscover("a", 5)
	found := 0
	const from = 4 * time.Hour
	var late time.Duration
	var due time.Time // the heavy page's visit in flight was planned for
	n := 0
	turn := func(d time.Duration) {
		if pd := s.pl.pages[heavy].due; !pd.IsZero() {
			due = pd
		}
	}
	siteTurns(s, web, t0, gap, 14*time.Hour, func(d time.Duration, id uint64) {
		if id == heavy && d >= from && !due.IsZero() {
			late += max(t0.Add(d).Sub(due), 0)
			n++
		}
		if id == heavy {
			due = time.Time{}
		}
		turn(d)
	}, func(d time.Duration) {
		found++
		s.Discovered("a", uint64(1000+found), true)
		turn(d)
	})
	if n == 0 {
		t.Fatal("the heavy page was not visited in the last 10 h")
	}
	t.Logf("in the last 10 h: %d visits of the heavy page, fetched %v after the time planned on average; %d found", n, late/time.Duration(n), found)
	// A turn is a minute: released when due, it waits for the copy out.
	if late/time.Duration(n) > 2*gap {
		t.Errorf("the heavy page was fetched %v after the time planned on average; want two turns at most", late/time.Duration(n))
	}
}
