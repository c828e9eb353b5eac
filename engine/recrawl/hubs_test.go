package recrawl

import (
	"testing"
	"time"
)

// TestSchedulerMostlyStaticSiteVisitsHubs: a big site being discovered
// whose pages mostly never change (the real web) keeps visiting its hubs,
// the few pages that change (a front page, its sections): a page of a
// channel still warming up whose visit is worth more than the plan gives
// the site's pages at the margin takes a free turn (Planner.Early) on a
// site whose discovery is weighed, not only on a full site. The hubs'
// channels stayed in warm-up (their hundreds of static pages each to be
// visited twice, spread 62 h apart, the hubs' changes unseen), and their
// turns went to discovery: a hub unvisited for 3 h 00 at 400 pages and
// 12 h 07 at 2,000 on 8ff19f8, Prices 7 to 24 times the floor (review
// s38's R1; with nothing to discover, 1 h 07 and 1 h 56). One site, a
// turn a minute; 10 hubs, each linked from 10 pages, change every 30 min
// on average, the other pages never; a backlog of 10,000 that does not
// shrink as it is found (heavySite).
func TestSchedulerMostlyStaticSiteVisitsHubs(t *testing.T) {
	for _, pages := range []int{40, 400, 2000} {
		r := heavySite{pages: pages, static: true, backlog: 10000, gap: time.Minute, from: 3 * time.Hour, to: 13 * time.Hour}.run()
		t.Logf("%4d pages (%d static): floor %.4g; last 10 h (600 turns): %d hub visits, a hub unvisited up to %v, %d discoveries", pages, pages-10, r.floor, r.heavyVisits, r.longest, r.discoveries)
		if r.longest > 2*time.Hour {
			t.Errorf("%d pages, %d of them static: a hub of 10 in-links changing every 30 min went %v unvisited", pages, pages-10, r.longest)
		}
		if r.discoveries < 100 {
			t.Errorf("%d pages: %d discoveries in 600 turns", pages, r.discoveries)
		}
	}
}
