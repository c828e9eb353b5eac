package recrawl

import (
	"testing"
	"time"
)

// A full site being discovered gives its turns to its recrawls when they
// are worth more than what its discovery brings, however little that is
// but not nothing. TestSchedulerFullSiteTurnsByWorth's "recrawls worth
// more", but the site's first 8 discoveries are kept (1 in-link each)
// and none after: what a turn of discovery brings then decays towards 0
// without reaching it. A rule that kept the plan's share of the turns for
// discovery whenever it was worth anything at all gave the recrawls
// exactly half of them (found in review, session 36), where a discovery
// worth exactly nothing gave them 0.98.
func TestSchedulerFloorNearZero(t *testing.T) {
	const gap = time.Minute
	for _, keptFirst := range []int{0, 8} {
		const pages = 40
		s, web, t0 := oneSite(pages, gap, time.Second)
		s.SetDiscovering("a", true)
		s.ToDiscover("a", toFind)
		recrawls, newID, discoveries := 0, uint64(1000), 0
		const from, to = 3 * time.Hour, 13 * time.Hour
		siteTurns(s, web, t0, gap, to, func(d time.Duration, _ uint64) {
			if d >= from {
				recrawls++
			}
		}, func(time.Duration) {
			newID++
			kept := discoveries < keptFirst
			if kept {
				s.Links(0, []uint64{newID})
			}
			s.Discovered("a", newID, kept)
			discoveries++
		})
		floor, _ := s.sites["a"].discoveryWorth()
		share := float64(recrawls) / float64((to-from)/gap)
		t.Logf("first %d discoveries kept: %d discoveries, a turn of discovery worth %.3g at the end, recrawls took %.3f of the turns, %d early", keptFirst, discoveries, floor, share, s.Planner().Lateness().Early)
		if share < 0.95 {
			t.Errorf("first %d discoveries kept, then none (a turn of discovery worth %.3g at the end): recrawls took %.3f of the site's turns, want 0.95 or more", keptFirst, floor, share)
		}
	}
}
