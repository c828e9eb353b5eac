package engine

import (
	"fmt"
	"testing"
	"time"

	"lidi/engine/recrawl"
)

// A visit of a site that fetched nothing (robots.txt only, a failure) is a
// turn the site was served that found nothing (Scheduler.Passed): its
// pages fetched are told one by one (Discovered, Fetched), but a visit of
// none was told nowhere, and a discovery whose visits fetch nothing kept
// its floor, what its next turn is worth, as if no turn had passed. Twenty
// such visits lower it; twenty of a page each, told nowhere else, leave it.
func TestRecrawlVisitOfNothingPassesATurn(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	floor := func(pages int) float64 {
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
		c := &crawl{rc: &recrawler{sched: sched, schedSites: map[int64]string{1: "1"}}}
		s := &site{}
		s.ID = 1
		for range 20 {
			c.recrawlVisitEnd(s, t0, pages, t0.Add(time.Second))
		}
		at := t0.Add(2 * time.Minute)
		sched.Due(at, at) // solves
		return sched.Planner().DiscoveryFloor("1")
	}
	none, one := floor(0), floor(1)
	t.Logf("a turn of discovery worth %.4g after 20 visits that fetched nothing, %.4g after 20 of a page", none, one)
	if one <= 0 || none >= one {
		t.Errorf("20 visits that fetched nothing leave a turn of discovery worth %.4g, against %.4g after 20 of a page each", none, one)
	}
}
