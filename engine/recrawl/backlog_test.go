package recrawl

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// TestSchedulerBacklogKeepsRecrawls: a turn of a discovering site's
// discovery is worth what it brings the pages still to find a turn
// sooner (SetDiscovery), but only those its horizon reaches count: a turn
// finds one page, and a backlog beyond what the site's turns of discovery
// reach within the horizon is not found sooner by any turn given now.
// Counted whole, a backlog of a thousand made the floor (5.9e4) outweigh
// every visit (a Price is at most w/λ), so a site mid-crawl, its backlog
// growing as it is found, recrawled nothing, the hubs whose changes link
// its new pages included (the review's F1: 0 visits of the heavy pages
// in 10 h at a backlog of 1,000 or 10,000). One site, a turn a minute,
// 40 pages changing every 30 min on average, 10 of them linked from 10
// others; each page found links the next (a backlog that does not
// shrink as it is found).
func TestSchedulerBacklogKeepsRecrawls(t *testing.T) {
	const gap = time.Minute
	for _, backlog := range []int{10, 100, 1000, 10000} {
		r := heavySite{pages: 40, backlog: backlog, gap: gap, from: 3 * time.Hour, to: 13 * time.Hour}.run()
		t.Logf("backlog %5d: floor %.4g; in the last 10 h (600 turns): %d recrawls (%d of the 10 heavy pages), %d discoveries; a heavy page unvisited up to %v",
			backlog, r.floor, r.visits, r.heavyVisits, r.discoveries, r.longest)
		// Every heavy page visited at least every 2 h (each changes every
		// 30 min), and discovery keeps a share of the turns: a sixth.
		if r.longest > 2*time.Hour {
			t.Errorf("backlog %d: a page of 10 in-links changing every 30 min went %v unvisited", backlog, r.longest)
		}
		if r.discoveries < 100 {
			t.Errorf("backlog %d: %d discoveries in 600 turns", backlog, r.discoveries)
		}
	}
}

// TestSchedulerSlowSiteBacklogSharesTurns: on a slow site (a turn every
// 20 min, as simweb's sites with a Crawl-delay) whose 11 heavy pages (50
// in-links each) change every 2 to 8 hours and whose 300 pages still to
// find would take 100 hours, neither side takes every turn of the last
// day: counted whole, the backlog took them all for discovery (0 heavy
// visits in 72 turns); with its reach counted at the pace discovery was
// given lately, a reach that fell as the recrawls took turns, the
// recrawls took 70 of 72 when the pages changed every 2 h (11 pages
// found in 36 h). The faster the heavy pages change, the more turns they
// take.
func TestSchedulerSlowSiteBacklogSharesTurns(t *testing.T) {
	const gap, backlog = 20 * time.Minute, 300
	const from, to = 12 * time.Hour, 36 * time.Hour
	var prev int
	for _, mean := range []time.Duration{8 * time.Hour, 4 * time.Hour, 2 * time.Hour} {
		s := NewScheduler(SchedulerOptions{Ahead: 1, Planner: PlannerOptions{InitialInterval: 30 * time.Minute, MinVisits: 2,
			MinInterval: time.Minute, Resolve: time.Minute}})
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		s.Due(t0, t0)
		s.SetRobots(8)
		s.SetSiteGap("a", gap)
		s.SetSiteGap("b", 1000*time.Hour) // the pages linking them: never due in the run
		s.Cost(time.Second)
		web := newChangingPages(mean)
		var heavy, srcs []uint64
		for i := range uint64(11) {
			s.Copied(i, ChannelID(fmt.Sprint("c", i%4)), "a", t0)
			web.add(i, t0)
			heavy = append(heavy, i)
		}
		outs := map[uint64][]uint64{}
		for i := range uint64(50) {
			s.Copied(100+i, "b", "b", t0)
			srcs = append(srcs, 100+i)
			outs[100+i] = slices.Clone(heavy)
			s.Links(100+i, heavy)
		}
		s.SetDiscovering("a", true)
		s.ToDiscover("a", backlog)
		var queue []uint64
		var served time.Time
		heavyVisits, discoveries, found := 0, 0, 0
		for d := time.Duration(0); d < to; d += 5 * time.Second {
			now := t0.Add(d)
			for _, id := range s.Due(now, now) {
				if slices.Contains(heavy, id) {
					queue = append(queue, id)
				} else {
					s.Back(id)
				}
			}
			if now.Sub(served) < gap {
				continue
			}
			served = now
			if len(queue) > 0 {
				web.fetch(s, queue[0], now)
				queue = queue[1:]
				if d >= from {
					heavyVisits++
				}
				continue
			}
			// A page found has 10 in-links from the pages with copies.
			id := uint64(1000 + found)
			for k := range 10 {
				src := srcs[(found+k)%len(srcs)]
				outs[src] = append(outs[src], id)
				s.Links(src, outs[src])
			}
			s.Discovered("a", id, true)
			found++
			s.ToDiscover("a", backlog-found)
			if d >= from {
				discoveries++
			}
		}
		t.Logf("heavy pages changing every %v: in the last 24 h (72 turns) %d heavy visits, %d discoveries; %d found in all", mean, heavyVisits, discoveries, found)
		if heavyVisits < 72/4 || discoveries < 72/8 || heavyVisits < prev {
			t.Errorf("heavy pages changing every %v: %d heavy visits (%d when they changed more slowly), %d discoveries in the last 72 turns; want a quarter or more, more the faster they change, and an eighth or more",
				mean, heavyVisits, prev, discoveries)
		}
		prev = heavyVisits
	}
}
