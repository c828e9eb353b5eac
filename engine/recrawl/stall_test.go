package recrawl

import (
	"testing"
	"time"
)

// heavyRun is what heavySite saw in its window: the recrawls, those of the
// heavy pages, the longest a heavy page went unvisited, the discoveries,
// and the site's floor at the end.
type heavyRun struct {
	visits, heavyVisits, discoveries int
	longest                          time.Duration
	floor                            float64
}

// heavySite runs site "a" (oneSite, a turn a gap) with `pages` pages, of
// which the last 10 (the heavy ones, linked from the first 10) change
// every 30 min and, when static, the others never; discovery weighed with
// a backlog that never shrinks (each page found links the next), its
// turns finding nothing from stallAt on (0 = never stalls). It returns
// what it saw in [from, to).
func heavySite(pages int, static bool, backlog int, gap, stallAt, from, to time.Duration) (r heavyRun) {
	s, web, t0 := oneSite(pages, gap, time.Second)
	var heavy []uint64
	for i := range uint64(10) {
		heavy = append(heavy, uint64(pages)-10+i)
	}
	for i := range uint64(10) {
		s.Links(i, heavy)
	}
	if static {
		for i := range uint64(pages - 10) {
			web.next[i] = t0.Add(100000 * time.Hour)
		}
	}
	if backlog > 0 {
		s.SetDiscovering("a", true)
		s.ToDiscover("a", backlog)
	}
	last := map[uint64]time.Time{}
	for _, id := range heavy {
		last[id] = t0
	}
	newID := uint64(1 << 20)
	siteTurns(s, web, t0, gap, to, func(d time.Duration, id uint64) {
		now := t0.Add(d)
		if d >= from {
			r.visits++
		}
		if _, ok := last[id]; ok {
			if d >= from {
				r.longest = max(r.longest, now.Sub(last[id]))
				r.heavyVisits++
			}
			last[id] = now
		}
	}, func(d time.Duration) {
		if backlog == 0 || stallAt > 0 && d >= stallAt {
			return // the site's new URLs are not fetched (its turn passes)
		}
		newID++
		s.Links(newID-1, []uint64{newID})
		s.Discovered("a", newID, true)
		if d >= from {
			r.discoveries++
		}
	})
	for _, id := range heavy {
		r.longest = max(r.longest, t0.Add(to).Sub(last[id]))
	}
	r.floor = s.Planner().DiscoveryFloor("a")
	return r
}

// TestSchedulerStalledDiscoveryKeepsRecrawls: a site whose discovery
// stalls (its pending URLs are not fetched: turns of discovery find
// nothing, no Discovered comes) keeps its recrawls: the floor's age
// counted the time since the last discovery, without a bound, while a
// visit's price is bounded, so every recrawl of the site was held (review
// s38's R2: 1 visit of the hubs in 10 h on 8ff19f8, floor 7.0e4 at 15 h;
// 255 before the branch). The turns since the last discovery that its
// recrawls did not take are turns of discovery that found nothing, and
// lower what the next is worth (Discovery.yield). Capping the age instead
// starved discovery where the recrawls took its turns (one spacing:
// TestSchedulerBacklogKeepsRecrawls fails) or left a hub 12 h unvisited
// (four spacings). The set-up is TestSchedulerBacklogKeepsRecrawls' at a
// backlog of 1,000, its discovery stalled from 3 h.
func TestSchedulerStalledDiscoveryKeepsRecrawls(t *testing.T) {
	r := heavySite(40, false, 1000, time.Minute, 3*time.Hour, 5*time.Hour, 15*time.Hour)
	t.Logf("discovery stalled at 3 h: floor %.4g at 15 h; from 5 h to 15 h: %d heavy visits, longest unvisited %v", r.floor, r.heavyVisits, r.longest)
	if r.longest > 2*time.Hour || r.heavyVisits < 100 {
		t.Errorf("discovery stalled: the hubs (10 in-links, changing every 30 min) got %d visits in 10 h, one unvisited for %v", r.heavyVisits, r.longest)
	}
}
