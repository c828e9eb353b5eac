package recrawl

import (
	"fmt"
	"math"
	"net/http"
	"slices"
	"testing"
	"time"
)

func TestSchedulerBudgetAndPace(t *testing.T) {
	s := NewScheduler(SchedulerOptions{Planner: PlannerOptions{InitialInterval: time.Hour}})
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rstart := start.Add(1000 * time.Hour) // the recrawl clock: another epoch, 600 times as fast
	at := func(d time.Duration) (time.Time, time.Time) { return start.Add(d), rstart.Add(600 * d) }
	s.Due(at(0))
	s.Due(at(10 * time.Second))
	s.SetRobots(4)
	s.Cost(100 * time.Millisecond)
	// Half of 4 robots each fetching a page per 100 ms of the loop's
	// clock, 60 s of the recrawl clock.
	if got, want := s.Budget(), 0.5*4/60.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("budget %g visits/s, want %g", got, want)
	}
	s.SetSiteGap("slow", 5*time.Second) // 50 minutes of the recrawl clock
	if got := s.Planner().gaps[s.Planner().sites["slow"]]; got != 50*time.Minute {
		t.Errorf("the slow site's gap is %v on the recrawl clock, want 50m", got)
	}
}

func TestSchedulerWeightsAndDates(t *testing.T) {
	s := NewScheduler(SchedulerOptions{})
	r0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for id := range uint64(4) {
		s.Copied(id, "c", "site", r0)
	}
	s.Links(0, []uint64{1, 2})
	s.Links(3, []uint64{1})
	weight := func(id uint64) float64 { p, _ := s.Planner().Page(id); return p.Weight }
	if weight(1) != 2 || weight(2) != 1 || weight(0) != 1 {
		t.Errorf("weights %v %v %v, want 1 (none), 2 (two in-links) and 1", weight(0), weight(1), weight(2))
	}
	s.Links(0, []uint64{2, 2, 0}) // page 0's new copy no longer links to 1; to 2 twice, and to itself
	if weight(1) != 1 || weight(2) != 1 || weight(0) != 1 {
		t.Errorf("weights %v %v %v after page 0 lost its link to 1, want 1 (none), 1 (one) and 1 (one, twice)", weight(0), weight(1), weight(2))
	}
	s.Links(3, []uint64{1, 2})
	if weight(2) != 2 {
		t.Errorf("page 2 weighs %v with in-links from two pages, want 2", weight(2))
	}
	lm := r0.Add(90 * time.Minute)
	s.Fetched(1, r0.Add(2*time.Hour), true, lm.Format(http.TimeFormat), 0)
	s.Cost(time.Second)
	v := s.Planner().pages[1].visits
	if len(v) != 1 || !v[0].LastModified.Equal(lm) || v[0].Interval != 2*time.Hour {
		t.Errorf("visit %+v, want a 2-hour interval dated %v", v, lm)
	}
	s.Fetched(2, r0.Add(2*time.Hour), true, "yesterday", 0)
	s.Cost(time.Second)
	if v := s.Planner().pages[2].visits; len(v) != 1 || !v[0].LastModified.IsZero() {
		t.Errorf("an unreadable Last-Modified gave %+v", v)
	}
	s.Gone(0)
	if weight(2) != 1 {
		t.Errorf("page 2 weighs %v once the page linking it is gone, want 1", weight(2))
	}
}

func TestSchedulerGroups(t *testing.T) {
	s := NewScheduler(SchedulerOptions{Planner: PlannerOptions{InitialInterval: time.Hour, MinVisits: 1, Resolve: time.Minute}})
	r0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if g, _ := s.Groups(3); g != nil {
		t.Fatalf("groups before any page: %v", g)
	}
	// Four channels of two pages, changing at every visit of channel 0,
	// every other of channel 1, and never for 2 and 3.
	for id := range uint64(8) {
		s.Copied(id, ChannelID(fmt.Sprint("c", id/2)), "site", r0)
	}
	s.SetRobots(2)
	s.Cost(time.Second)
	for k := range 4 {
		at := r0.Add(time.Duration(k+1) * time.Hour)
		for id := range uint64(8) {
			s.Fetched(id, at, id/2 == 0 || id/2 == 1 && k%2 == 0, "", 0)
			s.Cost(time.Second)
		}
	}
	s.Due(r0.Add(5*time.Hour), r0.Add(5*time.Hour))
	g, warming := s.Groups(2)
	if warming != 0 {
		t.Errorf("%d channels warming up, want none", warming)
	}
	if len(g) != 2 || g[0].Channels != 2 || g[1].Channels != 2 {
		t.Fatalf("groups %+v, want two of two channels", g)
	}
	if !(g[0].Change > 0 && (g[1].Change == 0 || g[0].Change < g[1].Change)) {
		t.Errorf("group 0 changes every %v, group 1 every %v: want the fastest first", g[0].Change, g[1].Change)
	}
}

// With a delay of 0 a fetch's duration says little of what it costs: the
// budget and a site's gap come from the robot time the visits took, and a
// site with URLs to discover gives recrawls only Share of its capacity.
func TestSchedulerCapacityAtDelayZero(t *testing.T) {
	s := NewScheduler(SchedulerOptions{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Due(t0, t0)
	s.SetRobots(8)
	s.SetSiteGap("a", 0)
	s.Cost(time.Millisecond) // the fetch alone
	if got, want := s.Budget(), 0.5*8/0.001; math.Abs(got-want) > 1e-6*want {
		t.Errorf("budget %g visits/s before any visit ended, want %g", got, want)
	}
	s.Held("a", 200*time.Millisecond, 10) // 20 ms of robot time a page
	if got, want := s.Budget(), 0.5*8/0.020; math.Abs(got-want) > 1e-6*want {
		t.Errorf("budget %g visits/s, want %g", got, want)
	}
	gap := func() time.Duration { return s.Planner().gaps[s.Planner().sites["a"]] }
	if gap() != 20*time.Millisecond {
		t.Errorf("site gap %v, want the 20 ms a page held a robot", gap())
	}
	s.SetDiscovering("a", true)
	if gap() != 40*time.Millisecond {
		t.Errorf("site gap %v while it has URLs to discover, want 40 ms", gap())
	}
	s.SetDiscovering("a", false)
	s.SetSiteGap("a", time.Second) // politeness longer than the robot time
	if gap() != time.Second {
		t.Errorf("site gap %v, want its 1 s delay", gap())
	}
	s.Held("a", 0, 0) // nothing measured: ignored
	if got, want := s.Budget(), 0.5*8/0.020; math.Abs(got-want) > 1e-6*want {
		t.Errorf("budget %g visits/s after an empty visit, want %g", got, want)
	}
}

// The budget is what the robots fetch over the last several hundred
// fetches, not the last few dozen: a burst of slow fetches (the machine
// loaded for a moment) moves it a little, where it cut it by two thirds
// and every page's interval with it. The first fetches count as a mean.
func TestSchedulerBudgetIgnoresABurst(t *testing.T) {
	s := NewScheduler(SchedulerOptions{})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Due(t0, t0)
	s.SetRobots(8)
	s.Held("a", 100*time.Millisecond, 1)
	s.Held("a", 300*time.Millisecond, 1)
	if got, want := s.Budget(), 0.5*8/0.2; math.Abs(got-want) > 1e-6*want {
		t.Errorf("budget %g visits/s after two visits of 100 and 300 ms, want %g (their mean)", got, want)
	}
	for range 1000 {
		s.Held("a", 100*time.Millisecond, 1)
	}
	steady := s.Budget()
	for range 20 {
		s.Held("a", time.Second, 1)
	}
	if got := s.Budget(); got < steady*2/3 {
		t.Errorf("budget %g visits/s after 20 fetches ten times as slow, from %g: want it within a third", got, steady)
	}
}

// A sitemap's lastmod is its page's age at the first fetch only: a date
// after that fetch, or given once the page was visited again, is ignored.
func TestSchedulerListed(t *testing.T) {
	r0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	age := func(s *Scheduler, id uint64) time.Duration { return s.Planner().pages[id].age }
	s := NewScheduler(SchedulerOptions{})
	for id := range uint64(3) {
		s.Copied(id, "c", "site", r0)
	}
	s.Listed(0, r0, r0.Add(-5*time.Hour))
	s.Listed(1, r0, r0.Add(time.Minute)) // after the fetch: a clock skew
	s.Fetched(2, r0.Add(time.Hour), false, "", 0)
	s.Cost(time.Second)
	s.Listed(2, r0, r0.Add(-5*time.Hour))
	if age(s, 0) != 5*time.Hour || age(s, 1) != 0 || age(s, 2) != 0 {
		t.Errorf("ages %v %v %v, want 5h, none (a date after the fetch), none (visited since)", age(s, 0), age(s, 1), age(s, 2))
	}
	if w := s.Planner().pages[0].ageWeight; w != SitemapWeight {
		t.Errorf("a sitemap's date weighs %v, want SitemapWeight", w)
	}
}

// A loop that lags finds many turns due at once: a site with URLs to
// discover releases at most Ahead of them, the rest wait in the order
// they fell due, and each page back (fetched, or never queued) lets one
// more go as its discovery earns it; a page gone while it waits is never
// released, and another site's pages do not wait for this one's. A site
// with nothing to discover releases every page due: nothing of its own
// waits behind them, and holding them to Ahead out serialised a busy
// site's recrawls on the loop's round trip (release, queue, fetch, back),
// slower than its politeness.
func TestSchedulerAheadBoundsASiteReleases(t *testing.T) {
	s, t0 := sixPagesOnSiteA()
	s.SetDiscovering("a", true)
	s.Copied(10, "d", "b", t0)
	s.Copied(11, "d", "b", t0)
	s.Copied(12, "d", "b", t0)
	// A day late: every page is due.
	late := t0.Add(24 * time.Hour)
	due := s.Due(late, late)
	if !slices.Equal(due, []uint64{0, 10, 11, 12, 1}) {
		t.Fatalf("due %v a day late, want pages 0 and 1 of site a (discovering: at most 2 out) and all of site b (nothing to discover)", due)
	}
	if again := s.Due(late.Add(time.Hour), late.Add(time.Hour)); len(again) != 0 {
		t.Fatalf("due %v with site a's two pages out and b's out, want none", again)
	}
	s.Gone(3) // waiting: never released
	s.Back(0)
	s.Discovered("a", 0, false)
	if due := s.Due(late.Add(time.Hour), late.Add(time.Hour)); !slices.Equal(due, []uint64{2}) {
		t.Fatalf("due %v once page 0 came back, want page 2 (the first that waited)", due)
	}
	s.Back(1)
	s.Back(2)
	s.Back(2) // twice: counts once
	s.Discovered("a", 0, false)
	s.Discovered("a", 0, false)
	if due := s.Due(late.Add(time.Hour), late.Add(time.Hour)); !slices.Equal(due, []uint64{4, 5}) {
		t.Fatalf("due %v once pages 1 and 2 came back, want 4 and 5 (3 is gone)", due)
	}
	if ss := s.sites["a"]; ss.out != 2 || len(ss.waiting) != 0 || len(s.waitSites) != 0 {
		t.Errorf("site a: %d out, %d waiting, %d sites waiting; want 2, 0, 0", ss.out, len(ss.waiting), len(s.waitSites))
	}
	if ss := s.sites["b"]; ss.out != 3 {
		t.Errorf("site b: %d out, want 3 (Ahead binds only while a site has URLs to discover)", ss.out)
	}
}

// A site with URLs to discover releases its due pages only as its
// discovery earns them (Share/(1−Share) a URL fetched for the first time,
// at most Ahead banked), however late the loop: at a Share of a half, a
// recrawl a new URL. Once nothing is left to discover, neither binds.
func TestSchedulerDiscoveryEarnsRecrawls(t *testing.T) {
	s, t0 := sixPagesOnSiteA()
	s.SetDiscovering("a", true)
	late := t0.Add(24 * time.Hour)
	due := func() []uint64 { return s.Due(late, late) }
	if got := due(); !slices.Equal(got, []uint64{0, 1}) {
		t.Fatalf("due %v a day late, want the two the site may have out", got)
	}
	s.Back(0)
	s.Back(1)
	if got := due(); len(got) != 0 {
		t.Fatalf("due %v with both back but no URL discovered since, want none", got)
	}
	s.Discovered("a", 0, false)
	if got := due(); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("due %v after one URL discovered, want page 2", got)
	}
	for range 5 {
		s.Discovered("a", 0, false) // banks Ahead at most
	}
	s.Back(2)
	if got := due(); !slices.Equal(got, []uint64{3, 4}) {
		t.Fatalf("due %v after many URLs discovered, want 3 and 4 (Ahead banked)", got)
	}
	s.Back(3)
	s.SetDiscovering("a", false)
	if got := due(); !slices.Equal(got, []uint64{5}) {
		t.Fatalf("due %v once nothing is left to discover, want page 5", got)
	}
}

// A site that stops discovering and starts again (a feed adding one page
// at a time) does not bank its credit again at each switch: its recrawls
// stay Share of its fetches.
func TestSchedulerSwitchesKeepCredit(t *testing.T) {
	s, t0 := sixPagesOnSiteA()
	s.SetDiscovering("a", true)
	late := t0.Add(24 * time.Hour)
	if got := s.Due(late, late); !slices.Equal(got, []uint64{0, 1}) {
		t.Fatalf("due %v a day late, want the two the site may have out", got)
	}
	s.Back(0)
	s.Back(1)
	s.SetDiscovering("a", false)
	s.SetDiscovering("a", true)
	if got := s.Due(late, late); len(got) != 0 {
		t.Fatalf("due %v after the site stopped discovering and started again with nothing discovered, want none", got)
	}
	s.Discovered("a", 0, false)
	if got := s.Due(late, late); !slices.Equal(got, []uint64{2}) {
		t.Fatalf("due %v after one URL discovered, want page 2", got)
	}
}

// sixPagesOnSiteA returns a Scheduler that lets a site have 2 pages out,
// with pages 0 to 5 of site a copied a second apart from t0.
func sixPagesOnSiteA() (*Scheduler, time.Time) {
	s := NewScheduler(SchedulerOptions{Ahead: 2, Planner: PlannerOptions{InitialInterval: time.Minute}})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for id := range uint64(6) {
		s.Copied(id, "c", "a", t0.Add(time.Duration(id)*time.Second))
	}
	return s, t0
}

// A tick of a loop whose sites' due pages all wait (each has its pages
// out and no credit) costs no allocation: the sites waiting are kept in
// the order they began to wait, where they were a map whose names Due
// sorted at every tick, 20 times a second.
func TestSchedulerDueWaitingAllocatesNothing(t *testing.T) {
	s := NewScheduler(SchedulerOptions{Ahead: 1, Planner: PlannerOptions{InitialInterval: time.Minute}})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for site := range 50 {
		name := fmt.Sprintf("s%02d", site)
		s.SetDiscovering(name, true)
		for p := range 3 {
			s.Copied(uint64(site*3+p), ChannelID(name), name, t0)
		}
	}
	late := t0.Add(24 * time.Hour)
	if due := s.Due(late, late); len(due) != 50 {
		t.Fatalf("%d due a day late, want one a site (Ahead 1)", len(due))
	}
	if len(s.waitSites) != 50 {
		t.Fatalf("%d sites waiting, want 50", len(s.waitSites))
	}
	if n := testing.AllocsPerRun(20, func() { s.Due(late, late) }); n != 0 {
		t.Errorf("Due allocated %v times a tick with every site's pages waiting, want 0", n)
	}
	// Sites are served in the order they began to wait, each once.
	s.Back(3)
	s.Back(0)
	s.Discovered("s01", 0, false)
	s.Discovered("s00", 0, false)
	if due := s.Due(late, late); !slices.Equal(due, []uint64{1, 4}) {
		t.Errorf("due %v once s00 and s01 had a page back and a credit, want 1 and 4", due)
	}
}
