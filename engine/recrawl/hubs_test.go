package recrawl

import (
	"testing"
	"time"

	"lidi/internal/race"
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
	race.SkipSingleGoroutine(t)
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

// TestSchedulerStaticSiteHubsAnyBacklog: TestSchedulerMostlyStaticSiteVisitsHubs
// at big sites and small backlogs. A page of a channel still warming up
// was weighed for a free turn at its channel's pooled rate, so that a
// static page never visited (13 h old, 1 in-link) outranked a hub (10
// in-links) visited less than about 4 h ago: 2,000 pages and a backlog
// of 10 left a hub unvisited 4 h 44, 159 of 211 free turns to pages that
// never change; and a site of more than maxEarlyScan pages (4,096) got no
// free turn scanned for, a hub unvisited 12 h 16 to 12 h 19 at 5,000
// pages (review s39's N2, on e2286d3). Left out: 5,000 pages and a
// backlog of 10, where the channels are ready and the plan's own price
// for the site, politeness binding, is above what the hubs' visits are
// worth (w/λ), so the allocation itself gives them few visits (a hub
// unvisited 5 h 18).
func TestSchedulerStaticSiteHubsAnyBacklog(t *testing.T) {
	race.SkipSingleGoroutine(t)
	// Each set-up's plan is solved every turn (oneSite's, resolve 0) or as
	// often as the engine solves (5 min). Solved every turn, the five
	// set-ups of before took 33 s of one core, and engine/recrawl 300 s
	// under CI's -race; a backlog of 10,000 gave what 100 gives at both
	// sizes (a turn's reach is bounded by the horizon, not the backlog).
	// At 2,000 pages a warming page priced at its channel's rate, not its
	// own evidence, shows only when solved every turn (a hub 4 h 44
	// unvisited at a backlog of 10; 1 h 35 at 5 min); at 5,000 the scan
	// bound shows at 5 min (12 h 06).
	for _, c := range []struct {
		pages, backlog int
		resolve        time.Duration
	}{
		{2000, 10, 0},
		{2000, 100, 0},
		{5000, 100, DefaultPlanner().Resolve},
		{5000, 10000, DefaultPlanner().Resolve},
	} {
		r := heavySite{pages: c.pages, static: true, backlog: c.backlog, gap: time.Minute, resolve: c.resolve,
			from: 3 * time.Hour, to: 13 * time.Hour}.run()
		t.Logf("%d pages, backlog %5d: last 10 h (600 turns): %d hub visits, %d of static pages, a hub unvisited up to %v, %d discoveries",
			c.pages, c.backlog, r.heavyVisits, r.otherVisits, r.longest, r.discoveries)
		if r.longest > 2*time.Hour {
			t.Errorf("%d pages, backlog %d: a hub of 10 in-links changing every 30 min went %v unvisited", c.pages, c.backlog, r.longest)
		}
		if r.discoveries < 100 {
			t.Errorf("%d pages, backlog %d: %d discoveries in 600 turns", c.pages, c.backlog, r.discoveries)
		}
	}
}
