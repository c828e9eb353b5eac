package recrawl

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// A full site whose releases come back unfetched (its site parked or
// given up: the engine hands them back with Refused) takes a page a turn
// at most: its free turns are not offered early until a page of it is
// fetched again. Offered, each early release came straight back and was
// offered again at the next look: 26 pages in 10 turns, each pushing its
// page's retry out.
func TestEarlyNotOfferedToARefusingSite(t *testing.T) {
	const gap, pages = time.Minute, 40
	s, web, t0 := oneSite(pages, gap, time.Second)
	var queue []uint64
	var served time.Time
	const parkAt, parkEnd, end = 5 * time.Hour, 5*time.Hour + 10*time.Minute, 6*time.Hour + 10*time.Minute
	released, after := 0, 0
	for d := time.Duration(0); d < end; d += 5 * time.Second {
		now := t0.Add(d)
		due := s.Due(now, now)
		if d >= parkAt && d < parkEnd {
			for _, id := range queue {
				s.Back(id)
			}
			queue = nil
			// Parked: the engine gives every release back unfetched.
			released += len(due)
			for _, id := range due {
				s.Refused(id)
			}
			continue
		}
		queue = append(queue, due...)
		if now.Sub(served) < gap || len(queue) == 0 {
			continue
		}
		served = now
		web.fetch(s, queue[0], now)
		queue = queue[1:]
		if d >= parkEnd {
			after++
		}
	}
	t.Logf("after the park: %d recrawls in 60 turns", after)
	if !s.Planner().IsFull("a") {
		t.Fatal("site a not full: the test's premise fails")
	}
	t.Logf("released %d, early %d", released, s.Planner().Lateness().Early)
	if turns := int((parkEnd - parkAt) / gap); released > turns+2 {
		t.Errorf("%d pages released in %d turns of a parked site (early: %d in all)", released, turns, s.Planner().Lateness().Early)
	}
}

// When the recrawls' share of the robots cannot take a request every gap
// of every full site, the free turns go round the full sites: offered in
// the order of their names, the last ones had fewer (10 sites of the same
// pages: the last two 0.84 and 0.82 of the others' releases).
func TestEarlyTurnsGoRound(t *testing.T) {
	const gap, sites, pages = time.Minute, 10, 40
	s := NewScheduler(SchedulerOptions{Planner: PlannerOptions{InitialInterval: 30 * time.Minute, MinVisits: 2,
		MinInterval: time.Minute, Resolve: time.Minute}})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Due(t0, t0)
	// One robot, a fetch holding it 3.5 s: the recrawls' half of it is a
	// request every 7 s, enough to fill the sites to their load (a share
	// of their turns) but room for every turn of 8 of the 10 sites only.
	s.SetRobots(1)
	s.Cost(3500 * time.Millisecond)
	web := newChangingPages(30 * time.Minute)
	for site := range sites {
		name := fmt.Sprint("site", site)
		s.SetSiteGap(name, gap)
		for i := range pages {
			id := uint64(site*pages + i)
			s.Copied(id, ChannelID(fmt.Sprint("c", site, i%4)), name, t0)
			web.add(id, t0)
		}
	}
	released := map[string]int{} // after the first hour
	served := map[string]time.Time{}
	var queue []uint64
	for d := time.Duration(0); d < 6*time.Hour; d += 5 * time.Second {
		now := t0.Add(d)
		due := s.Due(now, now)
		if d > time.Hour {
			for _, id := range due {
				released[fmt.Sprint("site", id/pages)]++
			}
		}
		queue = append(queue, due...)
		rest := queue[:0]
		for _, id := range queue {
			site := fmt.Sprint("site", id/pages)
			if now.Sub(served[site]) < gap {
				rest = append(rest, id)
				continue
			}
			served[site] = now
			web.fetch(s, id, now)
		}
		queue = rest
	}
	full := s.Planner().Full()
	t.Logf("full %v, pages released by site %v", full, released)
	if len(full) < 8 {
		t.Fatalf("%d of %d sites full: the test's premise fails", len(full), sites)
	}
	least, most := math.MaxInt, 0
	for _, name := range full {
		least, most = min(least, released[name]), max(most, released[name])
	}
	if float64(least) < 0.9*float64(most) {
		t.Errorf("the full sites' turns did not go round: %d to %d pages released a site (%v)", least, most, released)
	}
}
