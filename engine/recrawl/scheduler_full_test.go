package recrawl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"lidi/internal/race"
)

// A site whose politeness binds the plan takes a request every gap when
// its pages are worth more visits than that: the plan fills SiteLoad of
// its turns, and the turns it leaves free go to its next pages early. A
// site the plan does not fill gets no early visit. While a site has URLs
// to discover, each turn goes to whichever is worth more: a recrawl (its
// Price) or a turn of discovery (DiscoveryFloor: what it has still to
// find, by the importance of the pages it found lately, brought a turn
// sooner).
func TestSchedulerFullSiteTurnsByWorth(t *testing.T) {
	const gap = time.Minute
	cases := []struct {
		name string
		cost time.Duration // of a fetch: the budget
		// discover is whether the site has URLs to discover, and found
		// the in-links of each page its discovery finds (0: it keeps none)
		discover bool
		found    int
		// the share of the site's turns its recrawls took in the last ten
		// hours, at least and at most, and whether any page went early
		min, max float64
		early    bool
	}{
		// Robots to spare: the site's politeness binds.
		{name: "full", cost: time.Second, min: 0.95, max: 1, early: true},
		// A budget of 24 visits an hour binds first: 0.40 of the turns,
		// a little more as the intervals solved again move some pages'
		// visits earlier (0.43, 0.45 since the turns near their times
		// go to the pages that lose most when moved).
		{name: "not full", cost: 10 * time.Minute, min: 0.3, max: 0.47},
		// Discovery finds pages of 40 in-links, the recrawls' pages have
		// none, and it has toFind URLs to go: a turn of it brings each a
		// turn sooner, worth far more than any recrawl, and it takes the
		// turns. (The credit rule, while a turn of discovery was weighed
		// against one visit, gave the recrawls Share of them: 0.3 to 0.5.)
		{name: "discovery worth more", cost: time.Second, discover: true, found: 40, min: 0, max: 0.05},
		// Discovery finds nothing worth keeping: the recrawls take the
		// turns.
		{name: "recrawls worth more", cost: time.Second, discover: true, found: 0, min: 0.95, max: 1, early: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const pages = 40
			s, web, t0 := oneSite(pages, gap, tc.cost)
			s.SetDiscovering("a", tc.discover)
			if tc.discover {
				s.ToDiscover("a", toFind)
			}
			// The site serves what was released in order, a request a gap
			// apart, as the crawl's politeness does; a turn with nothing
			// released goes to discovery, if it has URLs to discover.
			var queue []uint64
			var served time.Time
			recrawls, newID := 0, uint64(1000)
			const from, to = 3 * time.Hour, 13 * time.Hour
			for d := time.Duration(0); d < to; d += 5 * time.Second {
				now := t0.Add(d)
				queue = append(queue, s.Due(now, now)...)
				if now.Sub(served) < gap || len(queue) == 0 && !tc.discover {
					continue
				}
				served = now
				if len(queue) == 0 {
					newID++
					for i := range tc.found {
						s.Links(uint64(i), []uint64{newID})
					}
					s.Discovered("a", newID, tc.found > 0)
					continue
				}
				web.fetch(s, queue[0], now)
				queue = queue[1:]
				if d >= from {
					recrawls++
				}
			}
			share := float64(recrawls) / float64((to-from)/gap)
			if share < tc.min || share > tc.max {
				t.Errorf("recrawls took %.3f of the site's turns, want %.2f to %.2f", share, tc.min, tc.max)
			}
			if early := s.Planner().Lateness().Early; (early > 0) != tc.early {
				t.Errorf("%d pages went early, want some: %v", early, tc.early)
			}
		})
	}
}

// A visit's price is what its page's copy's age is worth at the
// allocation's margin, (w/λ)·(1 − e^(−λa)(1 + λa)): the price at which a
// page visited every a is optimal. A page never seen to change, one just
// fetched and one the Planner does not know are worth nothing; of two
// pages alike but for their weight, the heavier is worth more, and one as
// heavy never seen to change less.
func TestPlannerPrice(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinVisits: 2, Resolve: time.Minute})
	p.SetBudget(1)
	p.Add(PageInfo{ID: 1, Channel: "c", Site: "a", Weight: 3}, plannerEpoch)
	p.Add(PageInfo{ID: 2, Channel: "c", Site: "a", Weight: 5}, plannerEpoch)
	p.Add(PageInfo{ID: 3, Channel: "still", Site: "a", Weight: 5}, plannerEpoch)
	var now time.Time
	for h := 1; h <= 3; h++ {
		now = plannerEpoch.Add(time.Duration(h) * time.Hour)
		for id := range uint64(3) {
			p.Visit(id+1, Visit{At: now, Changed: id < 2}, 0)
		}
	}
	p.Solve(now.Add(time.Minute))
	later := now.Add(90 * time.Minute)
	price := func(w float64, r Rate, age float64) float64 {
		x := float64(r) * age
		return w / float64(r) * (1 - math.Exp(-x)*(1+x))
	}
	cases := []struct {
		id   uint64
		at   time.Time
		want func(PagePlan) float64
	}{
		{1, later, func(pp PagePlan) float64 { return price(3, pp.Rate, 5400) }},
		{2, later, func(pp PagePlan) float64 { return price(5, pp.Rate, 5400) }},
		{2, now, func(PagePlan) float64 { return 0 }}, // just fetched
		{3, later, func(pp PagePlan) float64 { return price(5, pp.Rate, 5400) }},
		{9, later, func(PagePlan) float64 { return 0 }}, // unknown
	}
	for _, tc := range cases {
		pp, _ := p.Page(tc.id)
		got, want := p.Price(tc.id, tc.at), tc.want(pp)
		if math.Abs(got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("page %d at %v: price %g, want %g", tc.id, tc.at.Sub(plannerEpoch), got, want)
		}
	}
	if w1, w2, w3 := p.Price(1, later), p.Price(2, later), p.Price(3, later); !(w1 > 0 && w2 > w1 && w3 < w2) {
		t.Errorf("prices %g, %g and %g: want the heavier page worth more than the lighter, and the one never seen to change less", w1, w2, w3)
	}
}

// A full site's free turns go to the pages most overdue at the site's
// price (Planner.bestEarly), and the holder of a turn served ahead keeps
// its time line (Planner.Early), so the site's requests come near Wolf's
// allocation of as many: a site of 300 pages (weights 300/i^0.9, Poisson
// changes once every 2 to 10 hours) taking a request a minute, robots to
// spare, scored over a day. Given to the page a visit adds most freshness
// to until its own turn, the free turns reached 0.979 to 0.983 of the
// optimal freshness of the same requests, 0.986 to 0.988 now (0.970 to
// 0.972 given to the page holding the next turn). While the site also
// discovers 350 lighter pages (weights 60/i^0.6, from six hours before
// the day, one in each turn its recrawls leave), the heaviest quarter of
// the 300 took nearly every turn and the pages found almost none: 0.40 to
// 0.44 of the optimal with the early holders' time lines moved to their
// visits, 0.90 to 0.93 with them kept and the free turns by the visit's
// gain, 0.982 to 0.987 now.
//
// Those figures space each page's visits evenly; scored from the visits'
// real times (timed), the discovering site lost 0.02 to 0.06 of the
// optimal to their timing (0.920 to 0.964 on seeds 1 to 8), its heaviest
// page once unvisited for 1 h 58 min on a plan of 36 min: Early booked a
// free turn at the site's next free time by the plan's gap (twice the
// politeness gap while discovering) where the site took it at once, so
// the book ran ahead of the clock and the holder of its "next" turn went
// hours before its time, planned again an interval after that time. Booked
// when taken, and only while the book has a turn free: 0.969 to 0.978
// timed, every page found.
func TestSchedulerFreeTurnsByIndex(t *testing.T) {
	race.SkipSingleGoroutine(t)
	cases := []struct {
		name string
		// found is the pages the site's discovery has to find, from 14 h:
		// all but 1% must be found by 44 h. Discovery weighed against the
		// recrawls (DiscoveryFloor) finds the last, lightest pages late,
		// as their worth falls below the recrawls'; one that stopped
		// discovering found 117 to 125 (session 36, worth alone).
		found int
		// min is the least share of the optimal freshness, with the
		// visits evenly spaced and at their real times.
		min, minTimed float64
	}{
		{name: "full", min: 0.983, minTimed: 0.983},
		{name: "discovered", found: 350, min: 0.97, minTimed: 0.965},
	}
	for _, tc := range cases {
		for _, seed := range []uint64{1, 2, 3} {
			day := fullSiteDay(seed, tc.found)
			t.Logf("%s, seed %d: %d requests, %.3f of the optimal evenly spaced, %.3f timed, the heaviest page %v unvisited at most, %d found (half by %v, all by %v)", tc.name, seed, day.requests, day.ofOptimal, day.timed, day.longest, day.found, day.half, day.done)
			if day.requests < 700 || day.ofOptimal < tc.min || day.timed < tc.minTimed || day.found < tc.found-tc.found/100 {
				t.Errorf("%s, seed %d: %d requests to the first 300 pages in a day of 1,440 turns, %.3f of the optimal freshness of as many, %.3f at their real times (the heaviest page %v unvisited at most), %d of %d pages found; want 700 or more, %.3f, %.3f, and all found but 1%%",
					tc.name, seed, day.requests, day.ofOptimal, day.timed, day.longest, day.found, tc.found, tc.min, tc.minTimed)
			}
		}
	}
}

// siteDay is what fullSiteDay measured: the first 300 pages' freshness
// against the optimal allocation of as many requests, their visits
// evenly spaced (ofOptimal) and at their real times (timed), the
// heaviest page's longest time unvisited in the day, the requests, and
// the pages discovery found.
type siteDay struct {
	ofOptimal, timed float64
	longest          time.Duration
	requests, found  int
	// half and done are when discovery had found half its pages, and
	// all (0 if it did not).
	half, done time.Duration
}

// fullSiteDay runs a site of 300 pages (weights 300/i^0.9, a change every
// 2 to 10 hours), a request a minute, robots to spare, through a
// Scheduler, its discovery finding found pages (weights 60/i^0.6) one a
// turn its recrawls leave from 14 h: it returns the first 300 pages'
// freshness over the day from 20 h against the optimal allocation of as
// many requests (siteDay).
func fullSiteDay(seed uint64, found int) (day siteDay) {
	rng := rand.New(rand.NewPCG(seed, 9))
	const (
		gap = time.Minute
		n   = 300
	)
	s := NewScheduler(SchedulerOptions{Ahead: 1, Planner: PlannerOptions{InitialInterval: time.Hour, MinVisits: 2,
		MinInterval: time.Minute, Resolve: 5 * time.Minute}})
	t0 := plannerEpoch
	s.Due(t0, t0)
	s.SetRobots(8)
	s.SetSiteGap("a", gap)
	s.Cost(time.Second)
	w := make([]float64, n+found)
	rate := make([]float64, n+found)
	next := make([]time.Time, n+found)
	for i := range n + found {
		w[i] = math.Max(1, math.Floor(300/math.Pow(float64(i+1), 0.9)))
		if i >= n {
			w[i] = math.Max(1, math.Floor(60/math.Pow(float64(i-n+1), 0.6)))
		}
		rate[i] = (0.1 + 0.4*rng.Float64()) / 3600
	}
	// copy gives page i a copy at now and its in-links, from linkers of
	// its own (its weight w[i]).
	copy := func(i int, now time.Time) {
		s.Copied(uint64(i), ChannelID(fmt.Sprint("c", i%4)), "a", now)
		next[i] = now.Add(time.Duration(rng.ExpFloat64() / rate[i] * float64(time.Second)))
		for j := range int(w[i]) - 1 {
			s.Links(uint64(100000+1000*i+j), []uint64{uint64(i)})
		}
	}
	for i := range n {
		copy(i, t0)
	}
	var queue []uint64
	var served time.Time
	visits := make([]int, n)
	// timed is each page's expected fresh time in the window from its
	// visits' real times, and last its last visit.
	timed := make([]float64, n)
	last := make([]time.Time, n)
	for i := range last {
		last[i] = t0
	}
	discovered, discovering := 0, false
	const start, from, to = 14 * time.Hour, 20 * time.Hour, 44 * time.Hour
	for d := time.Duration(0); d < to; d += 15 * time.Second {
		now := t0.Add(d)
		if on := d >= start && discovered < found; on != discovering {
			discovering = on
			s.SetDiscovering("a", on)
		}
		if discovering {
			s.ToDiscover("a", found-discovered)
		}
		queue = append(queue, s.Due(now, now)...)
		if now.Sub(served) < gap || len(queue) == 0 && !discovering {
			continue
		}
		served = now
		if len(queue) == 0 {
			copy(n+discovered, now)
			s.Discovered("a", uint64(n+discovered), true)
			discovered++
			if discovered == (found+1)/2 {
				day.half = d
			}
			if discovered == found {
				day.done = d
			}
			continue
		}
		id := queue[0]
		queue = queue[1:]
		changed := false
		for !next[id].After(now) {
			changed = true
			next[id] = next[id].Add(time.Duration(rng.ExpFloat64() / rate[id] * float64(time.Second)))
		}
		s.Fetched(id, now, changed, "", 0)
		s.Back(id)
		if d >= from && id < n {
			visits[id]++
			day.requests++
			timed[id] += freshFor(rate[id], last[id], maxTime(last[id], t0.Add(from)), now)
			if id == 0 {
				day.longest = max(day.longest, now.Sub(maxTime(last[id], t0.Add(from))))
			}
		}
		if id < n {
			last[id] = now
		}
	}
	win := (to - from).Seconds()
	dem := make([]Demand, n)
	for i := range n {
		dem[i] = Demand{Rate: Rate(rate[i]), Weight: w[i]}
	}
	f := AllocateFrequencies(dem, []float64{math.Inf(1)}, float64(day.requests)/win)
	var got, opt, real float64
	for i := range n {
		got += w[i] * Freshness(Rate(rate[i]), float64(visits[i])/win)
		opt += w[i] * Freshness(Rate(rate[i]), f[i])
		end := t0.Add(to)
		real += w[i] * (timed[i] + freshFor(rate[i], last[i], maxTime(last[i], t0.Add(from)), end)) / win
	}
	day.longest = max(day.longest, t0.Add(to).Sub(maxTime(last[0], t0.Add(from))))
	day.ofOptimal, day.timed, day.found = got/opt, real/opt, discovered
	return day
}

// freshFor is the expected time, in seconds, a copy fetched at fetched of
// a page changing at rate (a second, as a Poisson process) is fresh
// between from and to (both at or after fetched).
func freshFor(rate float64, fetched, from, to time.Time) float64 {
	if !to.After(from) {
		return 0
	}
	a, b := from.Sub(fetched).Seconds(), to.Sub(fetched).Seconds()
	return (math.Exp(-rate*a) - math.Exp(-rate*b)) / rate
}

// toFind is the URLs a test's site has to discover when it never runs out
// of them.
const toFind = 1000
