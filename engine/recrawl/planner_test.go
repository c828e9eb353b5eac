package recrawl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"lidi/internal/race"
)

var plannerEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// visitAll visits every page due at now with the given outcome per page.
func visitAll(p *Planner, now time.Time, changed func(id uint64) bool) []uint64 {
	due := p.Due(now, 0)
	for _, id := range due {
		p.Visit(id, Visit{At: now, Changed: changed(id)}, 0)
	}
	return due
}

func TestPlannerWarmupPerChannel(t *testing.T) {
	opt := PlannerOptions{InitialInterval: time.Hour, MinChanges: 4, MinVisits: 3, Resolve: time.Minute}
	p := NewPlanner(opt)
	p.SetBudget(1.0 / 60)
	// "busy" changes at every visit, "still" never; "big" has 20 pages
	// that never change and is visited only every other hour.
	for i := range 3 {
		p.Add(PageInfo{ID: uint64(i), Channel: "busy", Site: "a"}, plannerEpoch)
		p.Add(PageInfo{ID: uint64(10 + i), Channel: "still", Site: "b"}, plannerEpoch)
	}
	changed := func(id uint64) bool { return id < 10 }
	now := plannerEpoch
	ready := func(ch ChannelID) bool {
		for _, c := range p.Channels() {
			if c.Channel == ch {
				return c.Ready
			}
		}
		t.Fatalf("no channel %s", ch)
		return false
	}
	for h := 1; h <= 3; h++ {
		now = plannerEpoch.Add(time.Duration(h) * time.Hour)
		visitAll(p, now, changed)
		p.Solve(now.Add(time.Minute))
		// busy has seen 3 changes after one hour, 6 after two: ready at
		// two; still needs three visits of each page.
		if got, want := ready("busy"), h >= 2; got != want {
			t.Errorf("hour %d: busy ready %v, want %v", h, got, want)
		}
		if got, want := ready("still"), h >= 3; got != want {
			t.Errorf("hour %d: still ready %v, want %v", h, got, want)
		}
	}
}

func TestPlannerPacesSites(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour})
	p.SetBudget(1)
	p.SetSiteGap("slow", 10*time.Minute)
	for i := range 6 {
		p.Add(PageInfo{ID: uint64(i), Channel: "c", Site: "slow"}, plannerEpoch)
	}
	p.Add(PageInfo{ID: 100, Channel: "d", Site: "fast"}, plannerEpoch)
	now := plannerEpoch.Add(time.Hour)
	got := p.Due(now, 0)
	// The fast site's page, and one page of the slow site: the others
	// hold its next turns.
	if len(got) != 2 || !slices.Contains(got, 100) {
		t.Fatalf("due at the hour: %v, want 100 and one of the slow site", got)
	}
	if more := p.Due(now.Add(time.Minute), 0); len(more) != 0 {
		t.Errorf("a minute later: %v, want none before the gap", more)
	}
	if more := p.Due(now.Add(10*time.Minute), 0); len(more) != 1 {
		t.Errorf("a gap later: %v, want one", more)
	}
}

// With enough evidence, the allocation follows Wolf and Cho: the page
// changing every two hours is visited more often than the one changing
// every two days, and the page changing every minute, far too fast for the
// budget, least; a page whose changes bring new links more often than an
// identical one without.
func TestPlannerAllocates(t *testing.T) {
	opt := PlannerOptions{InitialInterval: 30 * time.Minute, Resolve: time.Minute, MaxInterval: 7 * 24 * time.Hour}
	p := NewPlanner(opt)
	p.SetBudget(4.0 / 3600) // four visits an hour for five pages
	mean := map[uint64]time.Duration{1: 2 * time.Hour, 2: 48 * time.Hour, 3: time.Minute, 4: 2 * time.Hour, 5: 2 * time.Hour}
	for id := range mean {
		p.Add(PageInfo{ID: id, Channel: ChannelID(fmt.Sprint("c", id)), Site: fmt.Sprint("s", id)}, plannerEpoch)
	}
	// Feed each page 40 dated visits at its own mean interval's half, so
	// that its evidence, not the schedule, decides.
	for id, m := range mean {
		at := plannerEpoch
		for k := range 40 {
			at = at.Add(m / 2)
			links := 0
			if id == 5 {
				links = 3
			}
			// Every other visit sees a change, half a mean after it.
			v := Visit{At: at, Interval: m / 2, Changed: k%2 == 1}
			if v.Changed {
				v.LastModified = at.Add(-m / 4)
			}
			p.Visit(id, v, links)
		}
	}
	p.Solve(plannerEpoch.Add(30 * 24 * time.Hour))
	iv := map[uint64]time.Duration{}
	for id := range mean {
		pp, ok := p.Page(id)
		if !ok || !pp.Ready {
			t.Fatalf("page %d: %+v, %v", id, pp, ok)
		}
		iv[id] = pp.Interval
	}
	t.Logf("intervals: %v", iv)
	if !(iv[1] < iv[2]) {
		t.Errorf("2-hour page every %v, 2-day page every %v: want the first more often", iv[1], iv[2])
	}
	if !(iv[3] > iv[1] && iv[3] > iv[2]) {
		t.Errorf("1-minute page every %v: want it visited least (2-hour %v, 2-day %v)", iv[3], iv[1], iv[2])
	}
	if !(iv[5] < iv[4]) {
		t.Errorf("page bringing new links every %v, the same page without every %v: want the first more often", iv[5], iv[4])
	}
	var spend float64
	for _, d := range iv {
		spend += 1 / d.Seconds()
	}
	if spend > 4.0/3600*1.001 {
		t.Errorf("spends %.2f visits an hour of 4", spend*3600)
	}
}

// A slow site's warm-up probes of newly found pages are spread to half
// what the plan fills of its politeness, so that they do not pile up
// ahead of its planned pages: 30 new pages on a site taking 6 requests an
// hour, of which 4.8 are planned (SiteLoad), share 2.4 an hour: each is
// probed every 12.5 hours, and the site's planned page gets the other
// 2.4.
func TestPlannerWarmupWithinSiteCap(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, Resolve: time.Minute, MinVisits: 1})
	p.SetBudget(1)
	p.SetSiteGap("slow", 10*time.Minute)
	p.Add(PageInfo{ID: 100, Channel: "ready", Site: "slow"}, plannerEpoch)
	p.Visit(100, Visit{At: plannerEpoch.Add(time.Hour), Changed: true}, 0)
	for i := range 30 {
		p.Add(PageInfo{ID: uint64(i), Channel: "new", Site: "slow"}, plannerEpoch)
	}
	p.Solve(plannerEpoch.Add(time.Hour + time.Minute))
	if pp, _ := p.Page(100); !pp.Ready {
		t.Fatalf("the visited channel is not ready: %+v", pp)
	}
	pp, _ := p.Page(0)
	if want := 12*time.Hour + 30*time.Minute; pp.Interval < want-time.Second || pp.Interval > want+time.Second {
		t.Errorf("warm-up interval %v on a site taking a page every 10m, want %v for its 30 new pages", pp.Interval, want)
	}
	// The planned page takes the rest: 2.4 an hour, every 25 minutes.
	if pp, _ := p.Page(100); pp.Interval < 25*time.Minute-time.Second || pp.Interval > 25*time.Minute+time.Second {
		t.Errorf("the planned page every %v, want 25m, the rest of the site's 4.8 an hour", pp.Interval)
	}
}

// A page whose fetches come late (its site's turn, a robot's wait) keeps
// the frequency it was planned at: each visit is planned an interval after
// the last was planned, not after it was fetched, but never less than half
// an interval after it was fetched. Planned hourly and fetched 20 minutes
// after each release, it is visited 47 or 48 times in 48 hours, not 35;
// fetched 40 minutes late, every 70 minutes (41 times), not every 100 (28).
func TestPlannerKeepsPlannedFrequencyWhenLate(t *testing.T) {
	for _, tc := range []struct {
		late time.Duration
		min  int
	}{{0, 46}, {20 * time.Minute, 46}, {40 * time.Minute, 40}} {
		late := tc.late
		t.Run(late.String(), func(t *testing.T) {
			// Always in warm-up: visited every InitialInterval.
			p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinChanges: 1 << 20, MinVisits: 1 << 20})
			p.SetBudget(1)
			p.Add(PageInfo{ID: 1, Channel: "c", Site: "s"}, plannerEpoch)
			var fetchAt []time.Time // released, to be fetched then
			visits := 0
			var last time.Time
			for now := plannerEpoch; now.Before(plannerEpoch.Add(48 * time.Hour)); now = now.Add(time.Minute) {
				if len(fetchAt) > 0 && !now.Before(fetchAt[0]) {
					fetchAt = fetchAt[1:]
					if !last.IsZero() && now.Sub(last) < 30*time.Minute {
						t.Fatalf("visits at %v and %v: less than half an interval apart", last, now)
					}
					p.Visit(1, Visit{At: now}, 0)
					visits++
					last = now
				}
				for range p.Due(now, 0) {
					if len(fetchAt) == 0 {
						fetchAt = append(fetchAt, now.Add(late))
					}
				}
			}
			if visits < tc.min {
				t.Errorf("late by %v: %d visits in 48 hours, want %d or more", late, visits, tc.min)
			}
		})
	}
}

// A site whose capacity binds the plan (20 pages that change every half
// hour, a request a minute) is not planned full: its fetches, each a little
// late (up to two minutes after its release, as a robot's wait), would
// queue for its turns without end. Planned within SiteLoad of it, each
// page given the turn nearest its time, its pages are fetched on average
// less than a tenth of an interval from their plan, early or late.
func TestPlannerLeavesSitesHeadroom(t *testing.T) {
	mean, n := headroomLateness(t, 2)
	if mean > 0.1 {
		t.Errorf("mean lateness %.3f of an interval over %d visits, want at most 0.1", mean, n)
	}
	t.Logf("mean lateness %.3f of an interval over %d visits", mean, n)
}

// headroomLateness runs TestPlannerLeavesSitesHeadroom's site for 48 hours,
// its pages fetched up to robotWait minutes after their release, and
// returns the mean |fetched − planned| over the interval after the warm-up
// and the visits counted.
func headroomLateness(t *testing.T, robotWait int64) (float64, int) {
	t.Helper()
	p := NewPlanner(PlannerOptions{InitialInterval: 10 * time.Minute, MinChanges: 1, MinVisits: 1, MinInterval: time.Minute, Resolve: time.Minute})
	p.SetBudget(1)
	p.SetSiteGap("s", time.Minute)
	for i := range 20 {
		p.Add(PageInfo{ID: uint64(i), Channel: "c", Site: "s"}, plannerEpoch)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	type flight struct {
		id uint64
		at time.Time
	}
	var inFlight []flight
	last := map[uint64]time.Time{}
	var before Lateness
	start := plannerEpoch.Add(6 * time.Hour) // after the warm-up
	for now := plannerEpoch; now.Before(plannerEpoch.Add(48 * time.Hour)); now = now.Add(10 * time.Second) {
		if now.Equal(start) {
			before = p.Lateness()
		}
		keep := inFlight[:0]
		for _, f := range inFlight {
			if now.Before(f.at) {
				keep = append(keep, f)
				continue
			}
			from, ok := last[f.id]
			if !ok {
				from = plannerEpoch
			}
			last[f.id] = now
			changed := rnd.Float64() < -math.Expm1(-now.Sub(from).Minutes()/30)
			p.Visit(f.id, Visit{At: now, Changed: changed}, 0)
		}
		inFlight = keep
		for _, id := range p.Due(now, 0) {
			if slices.ContainsFunc(inFlight, func(f flight) bool { return f.id == id }) {
				continue
			}
			inFlight = append(inFlight, flight{id: id, at: now.Add(time.Duration(rnd.Int64N(robotWait * int64(time.Minute))))})
		}
	}
	l := p.Lateness().Sub(before)
	if l.Fetched == 0 {
		t.Fatal("no visit after the warm-up")
	}
	return l.OfInterval / float64(l.Fetched), l.Fetched
}

// Pages due together on a site whose turns are scarce each hold the free
// turn nearest their time: three pages due at the sixth hour on a site
// taking a request an hour are fetched at 5h, 6h and 7h (released as they
// fall due, they would be fetched at 6h, 7h and 8h, and the turn at 5h
// would pass unused), and each is planned again from when it was due.
func TestPlannerGivesTurnsNearTheirTime(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: 6 * time.Hour, MinChanges: 1 << 20, MinVisits: 1 << 20})
	p.SetBudget(1)
	p.SetSiteGap("slow", time.Hour)
	for i := range 3 {
		p.Add(PageInfo{ID: uint64(i), Channel: "c", Site: "slow"}, plannerEpoch)
	}
	var at []time.Duration
	for now := plannerEpoch; now.Before(plannerEpoch.Add(9 * time.Hour)); now = now.Add(time.Minute) {
		for _, id := range p.Due(now, 0) {
			at = append(at, now.Sub(plannerEpoch))
			p.Visit(id, Visit{At: now}, 0)
		}
	}
	want := []time.Duration{5 * time.Hour, 6 * time.Hour, 7 * time.Hour}
	if !slices.Equal(at, want) {
		t.Errorf("fetched at %v, want %v", at, want)
	}
	for i := range 3 {
		if pp, _ := p.Page(uint64(i)); pp.Next != plannerEpoch.Add(12*time.Hour) {
			t.Errorf("page %d next due at %v, want 12h (6h after it was due)", i, pp.Next.Sub(plannerEpoch))
		}
	}
}

// A page planned again by Solve, its interval changed (the budget is
// measured again all the time), keeps the plan's time line as a page
// planned again by its visit does: a page planned hourly, fetched 20
// minutes after each release, its interval a little different at each
// solve, is visited 46 times or more in 48 hours, not every 80 minutes
// (36), as it would be planned again from its fetches.
func TestPlannerKeepsTimeLineWhenSolved(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinChanges: 1, MinVisits: 1, Resolve: time.Minute})
	p.Add(PageInfo{ID: 1, Channel: "c", Site: "s"}, plannerEpoch)
	var fetchAt time.Time
	visits := 0
	for now := plannerEpoch; now.Before(plannerEpoch.Add(48 * time.Hour)); now = now.Add(time.Minute) {
		if !fetchAt.IsZero() && !now.Before(fetchAt) {
			fetchAt = time.Time{}
			p.Visit(1, Visit{At: now, Changed: true}, 0)
			visits++
			// One visit an hour, give or take a percent.
			p.SetBudget((1 + 0.01*float64(visits%3-1)) / 3600)
		}
		for range p.Due(now, 0) {
			if fetchAt.IsZero() {
				fetchAt = now.Add(20 * time.Minute)
			}
		}
	}
	if pp, _ := p.Page(1); !pp.Ready || pp.Interval < 59*time.Minute || pp.Interval > 61*time.Minute {
		t.Fatalf("plan %+v, want a ready page every hour", pp)
	}
	if visits < 46 {
		t.Errorf("%d visits in 48 hours, want 46 or more", visits)
	}
}

// A site's pages all asking for one time (a resume gives every copy the
// same fetch time) each take a turn in a few dozen steps, not a walk over
// every turn before it (which made 40,000 pages take seconds), and each
// holds its own turn, a gap after the one before; a site's new gap gives
// its pages their turns again from its own pages, not the crawl's.
func TestPlannerTurnsOfManyPagesAtOnce(t *testing.T) {
	race.SkipSingleGoroutine(t)
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinChanges: 1 << 20, MinVisits: 1 << 20})
	p.SetBudget(1000)
	p.SetSiteGap("big", time.Second)
	const pages = 100000
	for i := range pages {
		p.Add(PageInfo{ID: uint64(i), Channel: "c", Site: "big"}, plannerEpoch)
	}
	// Up to maxWalk (64) each way, and a step more.
	if per := p.walked / pages; per > 130 {
		t.Errorf("reserve stepped over %d turns a page, want at most 130", per)
	}
	checkTurns := func(when string, gap time.Duration) {
		ts := p.turns[p.sites["big"]]
		if len(ts) != pages {
			t.Fatalf("%s: %d turns held, want one for each of %d pages", when, len(ts), pages)
		}
		for i := 1; i < len(ts); i++ {
			if d := ts[i].at.Sub(ts[i-1].at); d < gap {
				t.Fatalf("%s: turns %d and %d %v apart, want at least the gap %v", when, i-1, i, d, gap)
			}
		}
	}
	checkTurns("added", time.Second)
	p.walked = 0
	p.SetSiteGap("big", 2*time.Second)
	checkTurns("gap doubled", 2*time.Second)
	if per := p.walked / pages; per > 130 {
		t.Errorf("booked again, reserve stepped over %d turns a page, want at most 130", per)
	}
}

// A page whose every change reveals two new pages weighs its importance
// plus two pages' worth however long the crawl: the new pages were summed
// over all its visits and divided by the changes of the last
// maxPageVisits, so its weight grew with the crawl's length (3.0 after 30
// visits, 19.75 after 300), and a long crawl's busiest pages took the
// turns of everything else.
func TestNewLinksWeightDoesNotGrowWithVisits(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinVisits: 2, Resolve: time.Minute})
	p.SetBudget(1)
	p.Add(PageInfo{ID: 1, Channel: "c", Site: "a", Weight: 1}, plannerEpoch)
	p.Add(PageInfo{ID: 2, Channel: "c", Site: "a", Weight: 1}, plannerEpoch)
	h := 0
	worthAfter := func(visits int) float64 {
		var now time.Time
		for ; h < visits; h++ {
			now = plannerEpoch.Add(time.Duration(h+1) * time.Hour)
			p.Visit(1, Visit{At: now, Changed: true}, 2)
			p.Visit(2, Visit{At: now, Changed: false}, 0)
		}
		p.Solve(now.Add(10 * time.Minute))
		return p.pages[1].worth() // its weight in the plan
	}
	w30, w300 := worthAfter(30), worthAfter(300)
	if w300 > 1.05*w30 || w30 <= 1 {
		t.Errorf("the same page, the same changes: weight %.2f after 300 visits against %.2f after 30", w300, w30)
	}
}
