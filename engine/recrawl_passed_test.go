package engine

import (
	"fmt"
	"testing"
	"time"

	"lidi/engine/recrawl"
)

// A visit of a site with URLs to discover that fetched none of them
// (robots.txt only, a failure, its URLs not leased) is a turn its
// discovery was served that found nothing (Scheduler.Passed): the pages a
// visit fetched are told one by one (Discovered, Fetched), but that a
// visit found nothing was told nowhere, and a discovery whose visits find
// nothing kept its floor, what its next turn is worth, as if no turn had
// passed. Twenty such visits lower it; twenty that each found a page (told
// here without the Discovered, to see the visit's end alone) leave it.
func TestRecrawlVisitOfNothingPassesATurn(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	floor := func(visits int, found bool) float64 {
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
		c := &crawl{rc: &recrawler{sched: sched, schedSites: map[int64]string{1: "1"}, visitFound: map[int64]bool{}}}
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
	none, nothing, found := floor(0, false), floor(20, false), floor(20, true)
	t.Logf("a turn of discovery worth %.4g with no visit ended, %.4g after 20 visits that found nothing, %.4g after 20 that found a page each", none, nothing, found)
	if none <= 0 || nothing >= none || found != none {
		t.Errorf("a turn of discovery worth %.4g after 20 visits that found nothing, %.4g after 20 that found a page, %.4g with none: want the first lower, the second the same", nothing, found, none)
	}
}
