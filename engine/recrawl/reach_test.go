package recrawl

import (
	"fmt"
	"testing"
	"time"
)

// TestPlannerReachStaticPages: the pages a turn of discovery reaches are
// those its turns could find within the horizon of the recrawls it
// competes with (discoveryReach), the rate of the site's changes, each
// page's rate weighted by the worth that changes there, so a site's
// static pages do not change what a turn of its discovery reaches. With
// the site's mean rate, 1,990 static pages beside 10 hubs changing every
// hour made the rate ~0 and the reach the whole backlog (review s38's
// R4): the floor x270 what it is with the hubs alone; x2.6 with the rate
// of the changes (the rest is what the pages found are worth: on a mostly
// static site they stay fresh, F near 1). One site, a turn a minute,
// 10,000 URLs to find.
func TestPlannerReachStaticPages(t *testing.T) {
	floor := func(static int) float64 {
		p := NewPlanner(PlannerOptions{InitialInterval: 30 * time.Minute, Resolve: time.Minute})
		p.SetBudget(4)
		p.SetSiteGap("a", time.Minute)
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range 10 + static {
			ch := ChannelID("hubs")
			if i >= 10 {
				ch = ChannelID(fmt.Sprint("static", i%4))
			}
			p.Add(PageInfo{ID: uint64(i), Channel: ch, Site: "a", Weight: 10}, t0)
		}
		// Forty visits each: the hubs changed at every other one (30 min
		// apart), the static pages at none (a day apart).
		for k := 1; k <= 40; k++ {
			for i := range 10 + static {
				iv, changed := 30*time.Minute, k%2 == 0
				if i >= 10 {
					iv, changed = 6*time.Hour, false
				}
				p.Visit(uint64(i), Visit{At: t0.Add(time.Duration(k) * iv), Interval: iv, Changed: changed}, 0)
			}
		}
		now := t0.Add(11 * 24 * time.Hour) // after every visit
		p.SetDiscovery("a", Discovery{Weight: 1, N: 10000, Spacing: 2})
		p.Solve(now)
		p.dirty = true
		p.Solve(now.Add(time.Hour)) // at the plan's own intervals
		return p.DiscoveryFloor("a")
	}
	hubs, all := floor(0), floor(1990)
	t.Logf("a turn of discovery worth %.4g with the 10 hubs alone, %.4g with 1,990 static pages beside them", hubs, all)
	if all > 4*hubs {
		t.Errorf("1,990 static pages beside the hubs make a turn of discovery worth %.4g, x%.1f what it is worth with the hubs alone", all, all/hubs)
	}
}
