package recrawl

import (
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
