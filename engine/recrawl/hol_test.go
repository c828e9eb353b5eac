package recrawl

import (
	"testing"
	"time"
)

// A discovering site whose discovery's worth is known releases a due page
// only if its Price beats a turn of discovery (mayRelease). Its due pages
// waited in order, and the first that did not beat it stopped the others
// (Due's waiting loop broke at the first refusal): a light page whose
// Price never reaches the floor held back the site's heavy pages for as
// long as the site had URLs to discover (found in review: 0 visits of
// the heavy pages in 10 h).
func TestSchedulerWaitingPageHoldsNoneBack(t *testing.T) {
	const gap = time.Minute
	const pages = 40
	s, web, t0 := oneSite(pages, gap, time.Second)
	// Pages 30-39 are heavy: ten in-links each (from pages 0-9).
	var heavy []uint64
	for i := range uint64(10) {
		heavy = append(heavy, 30+i)
	}
	for i := range uint64(10) {
		s.Links(i, heavy)
	}
	s.SetDiscovering("a", true)
	s.ToDiscover("a", 30)
	newID := uint64(1000)
	last := map[uint64]time.Time{}
	for _, id := range heavy {
		last[id] = t0
	}
	const from, to = 3 * time.Hour, 13 * time.Hour
	var longest time.Duration
	heavyVisits, lightVisits, discoveries := 0, 0, 0
	siteTurns(s, web, t0, gap, to, func(d time.Duration, id uint64) {
		if _, ok := last[id]; ok {
			if d >= from {
				longest = max(longest, t0.Add(d).Sub(last[id]))
				heavyVisits++
			}
			last[id] = t0.Add(d)
		} else if d >= from {
			lightVisits++
		}
	}, func(time.Duration) {
		newID++
		s.Links(0, append(heavy[:len(heavy):len(heavy)], newID))
		s.Discovered("a", newID, true)
		discoveries++
	})
	for _, id := range heavy {
		longest = max(longest, t0.Add(to).Sub(last[id]))
	}
	ss := s.sites["a"]
	t.Logf("from 3 h to 13 h: %d visits of the heavy pages, %d of the light, %d discoveries; a heavy page unvisited up to %v; %d pages waiting",
		heavyVisits, lightVisits, discoveries, longest, len(ss.waiting))
	var waitingHeavy int
	for _, id := range ss.waiting {
		if s.Planner().Price(id, t0.Add(to)) >= s.Planner().DiscoveryFloor("a") {
			waitingHeavy++
		}
	}
	if waitingHeavy > 0 && longest > 3*time.Hour {
		t.Errorf("%d waiting pages worth more than a turn of discovery are held back behind one worth less; a heavy page went %v unvisited", waitingHeavy, longest)
	}
}
