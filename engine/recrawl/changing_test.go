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

// siteTurns runs site "a" of s from t0 for span, a turn a gap (looked at
// every 5 s): a turn goes to the first page due and not yet served,
// fetched from web and told to visit, or, with none, to discover; each is
// told the turn's time since t0.
func siteTurns(s *Scheduler, web *changingPages, t0 time.Time, gap, span time.Duration, visit func(d time.Duration, id uint64), discover func(d time.Duration)) {
	siteTurnsWhen(s, web, t0, gap, span, nil, nil, visit, discover)
}

// siteTurnsWhen is siteTurns where ticks, if not nil, tells whether the
// loop runs at d (false: suspended, no Due), and serves whether the site
// is served a turn at d (false: not leased, the turn passes unused by
// both).
func siteTurnsWhen(s *Scheduler, web *changingPages, t0 time.Time, gap, span time.Duration, ticks, serves func(d time.Duration) bool, visit func(d time.Duration, id uint64), discover func(d time.Duration)) {
	var queue []uint64
	var served time.Time
	for d := time.Duration(0); d < span; d += 5 * time.Second {
		if ticks != nil && !ticks(d) {
			continue
		}
		now := t0.Add(d)
		queue = append(queue, s.Due(now, now)...)
		if now.Sub(served) < gap || serves != nil && !serves(d) {
			continue
		}
		served = now
		if len(queue) == 0 {
			discover(d)
			continue
		}
		web.fetch(s, queue[0], now)
		visit(d, queue[0])
		queue = queue[1:]
	}
}
