package recrawl

import (
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
		s, web, t0 := oneSite(40, gap, time.Second)
		var heavy []uint64
		for i := range uint64(10) {
			heavy = append(heavy, 30+i)
		}
		for i := range uint64(10) {
			s.Links(i, heavy)
		}
		s.SetDiscovering("a", true)
		s.ToDiscover("a", backlog)
		var queue []uint64
		var served time.Time
		newID := uint64(1000)
		last := map[uint64]time.Time{}
		for _, id := range heavy {
			last[id] = t0
		}
		const from, to = 3 * time.Hour, 13 * time.Hour
		var longest time.Duration
		heavyVisits, visits, discoveries := 0, 0, 0
		for d := time.Duration(0); d < to; d += 5 * time.Second {
			now := t0.Add(d)
			queue = append(queue, s.Due(now, now)...)
			if now.Sub(served) < gap {
				continue
			}
			served = now
			if len(queue) == 0 {
				newID++
				s.Links(newID-1, []uint64{newID})
				s.Discovered("a", newID, true)
				if d >= from {
					discoveries++
				}
				continue
			}
			id := queue[0]
			queue = queue[1:]
			web.fetch(s, id, now)
			if d >= from {
				visits++
			}
			if _, ok := last[id]; ok {
				if d >= from {
					longest = max(longest, now.Sub(last[id]))
					heavyVisits++
				}
				last[id] = now
			}
		}
		for _, id := range heavy {
			longest = max(longest, t0.Add(to).Sub(last[id]))
		}
		t.Logf("backlog %5d: floor %.4g; in the last 10 h (600 turns): %d recrawls (%d of the 10 heavy pages), %d discoveries; a heavy page unvisited up to %v",
			backlog, s.Planner().DiscoveryFloor("a"), visits, heavyVisits, discoveries, longest)
		// Every heavy page visited at least every 2 h (each changes every
		// 30 min), and discovery keeps a share of the turns: a sixth.
		if longest > 2*time.Hour {
			t.Errorf("backlog %d: a page of 10 in-links changing every 30 min went %v unvisited", backlog, longest)
		}
		if discoveries < 100 {
			t.Errorf("backlog %d: %d discoveries in 600 turns", backlog, discoveries)
		}
	}
}
