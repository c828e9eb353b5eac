package engine

import (
	"fmt"
	"testing"
	"time"

	"lidi/engine/recrawl"
)

// A visit of a site with URLs to discover that fetched none of them, with
// room for more pages (robots.txt only, a failure, its URLs not leased),
// is a turn its discovery was served that found nothing
// (Scheduler.Passed): the pages a visit fetched are told one by one
// (Discovered, Fetched), but that a visit found nothing was told nowhere,
// and a discovery whose visits find nothing kept its floor, what its next
// turn is worth, as if no turn had passed. Twenty visits of one page (a
// copy) and room for 100 lower it; twenty that each found a page (told
// here without the Discovered, to see the visit's end alone), or of one
// copy where a visit takes one page, leave it.
func TestRecrawlVisitOfNothingPassesATurn(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	floor := func(visits, perVisit int, found bool) float64 {
		sched := recrawl.NewScheduler(recrawl.SchedulerOptions{Ahead: 1, Planner: recrawl.PlannerOptions{InitialInterval: 30 * time.Minute, Resolve: time.Minute}})
		sched.Due(t0, t0)
		sched.SetRobots(8)
		sched.SetSiteGap("1", time.Minute)
		sched.Cost(time.Second)
		for i := range uint64(10) {
			sched.Copied(i, recrawl.ChannelID(fmt.Sprint("c", i%2)), "1", t0)
		}
		sched.SetDiscovering("1", true)
		sched.ToDiscover("1", 100)
		for i := range uint64(10) {
			sched.Links(i, []uint64{100 + i})
			sched.Discovered("1", 100+i, true)
		}
		c := &crawl{rc: &recrawler{sched: sched, schedSites: map[int64]string{1: "1"}, visitFound: map[int64]bool{}, perVisit: perVisit}}
		s := &site{}
		s.ID = 1
		for range visits {
			c.rc.visitFound[1] = found
			c.recrawlVisitEnd(s, t0, 1, t0.Add(time.Second))
		}
		at := t0.Add(2 * time.Minute)
		sched.Due(at, at) // solves
		return sched.Planner().DiscoveryFloor("1")
	}
	none, nothing, found, full := floor(0, 100, false), floor(20, 100, false), floor(20, 100, true), floor(20, 1, false)
	t.Logf("a turn of discovery worth %.4g with no visit ended; after 20 visits of a page: %.4g that found nothing, %.4g that found it, %.4g of a copy where a visit takes one page",
		none, nothing, found, full)
	if none <= 0 || nothing >= none || found != none || full != none {
		t.Errorf("a turn of discovery worth %.4g with no visit, after 20: %.4g that found nothing, %.4g that found a page, %.4g full of copies: want the first lower, the others the same",
			none, nothing, found, full)
	}
}
