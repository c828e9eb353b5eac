package recrawl

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// changingPages are pages that change as Poisson processes, all with the
// same mean interval between changes, for tests that recrawl them
// through a Scheduler. Seeded, so a test sees the same changes each run.
type changingPages struct {
	rng  *rand.Rand
	mean time.Duration
	next map[uint64]time.Time // each page's next change
}

func newChangingPages(mean time.Duration) *changingPages {
	return &changingPages{rng: rand.New(rand.NewPCG(1, 2)), mean: mean, next: map[uint64]time.Time{}}
}

// add starts page id changing from t.
func (c *changingPages) add(id uint64, t time.Time) { c.next[id] = c.after(t) }

func (c *changingPages) after(t time.Time) time.Time {
	return t.Add(time.Duration(c.rng.ExpFloat64() * float64(c.mean)))
}

// fetch fetches page id at now for s: tells s whether the page changed
// since its last fetch, and hands it back.
func (c *changingPages) fetch(s *Scheduler, id uint64, now time.Time) {
	changed := false
	for !c.next[id].After(now) {
		changed = true
		c.next[id] = c.after(c.next[id])
	}
	s.Fetched(id, now, changed, "", 0)
	s.Back(id)
}

// oneSite returns a Scheduler (Ahead 1, eight robots, each fetch holding
// one cost) with one site, "a", a request a gap apart, whose pages, in
// four channels, were copied at t0 and change as web's, every half hour
// on average.
func oneSite(pages int, gap, cost time.Duration) (s *Scheduler, web *changingPages, t0 time.Time) {
	s = NewScheduler(SchedulerOptions{Ahead: 1, Planner: PlannerOptions{InitialInterval: 30 * time.Minute, MinVisits: 2,
		MinInterval: time.Minute, Resolve: time.Minute}})
	t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.Due(t0, t0)
	s.SetRobots(8)
	s.SetSiteGap("a", gap)
	s.Cost(cost)
	web = newChangingPages(30 * time.Minute)
	for i := range pages {
		s.Copied(uint64(i), ChannelID(fmt.Sprint("c", i%4)), "a", t0)
		web.add(uint64(i), t0)
	}
	return s, web, t0
}
