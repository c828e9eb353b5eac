package recrawl

import (
	"testing"
	"time"
)

// TestSchedulerRarelyLeasedDiscovers: a site the crawl serves only now and
// then (many sites, few robots) keeps both its discovery and its
// recrawls: its floor ages, and its turns that found nothing lower it,
// by the turns it was served (Discovered, Fetched, Passed), not by the
// clock. Counted by the clock, every gap it was not leased was a turn of
// discovery that found nothing: the yield fell as 1/t (0.054 at 4 h,
// 0.0086 at 20 h), its recrawls took every turn, and no discovery came to
// reset it (review s39's N1: 0 discoveries and 200 hub visits in 200
// turns from 3 h to 23 h on e2286d3). heavySite's 40 pages and a backlog
// of 1,000, leased 10 min an hour.
func TestSchedulerRarelyLeasedDiscovers(t *testing.T) {
	lease := func(d time.Duration) bool { return d%time.Hour < 10*time.Minute }
	r := heavySite{pages: 40, backlog: 1000, gap: time.Minute, serves: lease, from: 3 * time.Hour, to: 23 * time.Hour}.run()
	t.Logf("leased 10 min an hour, 3 h to 23 h (200 turns): floor %.4g at the end; %d discoveries, %d recrawls (%d of the hubs)",
		r.floor, r.discoveries, r.visits, r.heavyVisits)
	if r.discoveries < 20 || r.heavyVisits < 20 {
		t.Errorf("leased 10 min an hour: %d discoveries and %d hub visits in 200 turns, want 20 or more of each", r.discoveries, r.heavyVisits)
	}
}

// TestSchedulerDiscoversAfterSuspend: a suspend (no Due, no turn, from 5 h
// to 13 h) is no turn of the site's discovery, neither one that waited
// nor one that found nothing. Counted by the clock, the 8 h were 480
// turns that found nothing, and from 13 h to 16 h discovery got none of
// the 180 turns (yield 0.0021 at 16 h; review s39's N1 on e2286d3). Then,
// with discovery stalling from 16 h (its turns served, finding nothing),
// the hubs keep their visits from 18 h to 28 h, as they do with the stall
// alone. heavySite's 40 pages and a backlog of 1,000.
func TestSchedulerDiscoversAfterSuspend(t *testing.T) {
	suspend := func(d time.Duration) bool { return d < 5*time.Hour || d >= 13*time.Hour }
	ctl := heavySite{pages: 40, backlog: 1000, gap: time.Minute, from: 13 * time.Hour, to: 16 * time.Hour}.run()
	r := heavySite{pages: 40, backlog: 1000, gap: time.Minute, ticks: suspend, from: 13 * time.Hour, to: 16 * time.Hour}.run()
	t.Logf("13 h to 16 h (180 turns): %d discoveries after a suspend from 5 h, %d without one", r.discoveries, ctl.discoveries)
	if r.discoveries < ctl.discoveries/2 {
		t.Errorf("after a suspend from 5 h to 13 h: %d discoveries in the next 3 h, %d without the suspend", r.discoveries, ctl.discoveries)
	}
	stall := func(d time.Duration) bool { return d < 16*time.Hour }
	ctl = heavySite{pages: 40, backlog: 1000, gap: time.Minute, finds: stall, from: 18 * time.Hour, to: 28 * time.Hour}.run()
	r = heavySite{pages: 40, backlog: 1000, gap: time.Minute, ticks: suspend, finds: stall, from: 18 * time.Hour, to: 28 * time.Hour}.run()
	t.Logf("discovery stalled from 16 h, 18 h to 28 h: %d hub visits, a hub unvisited up to %v, floor %.4g at the end; without the suspend %d, %v, %.4g",
		r.heavyVisits, r.longest, r.floor, ctl.heavyVisits, ctl.longest, ctl.floor)
	if r.longest > 2*time.Hour || r.heavyVisits < ctl.heavyVisits/2 {
		t.Errorf("a suspend, then a stall: %d hub visits (%d without the suspend), one unvisited for %v", r.heavyVisits, ctl.heavyVisits, r.longest)
	}
}
