package recrawl

import (
	"testing"
	"time"

	"lidi/internal/race"
)

// manyWaiting sets up review s38's R3: one site of 50,000 pages, a turn a
// second, whose discovery is weighed (16 pages found in its first 16 s,
// each linked from 100 of its pages, 100,000 left to find) and whose due
// pages, worth less than a turn of it, wait (Ahead 4). It returns the
// Scheduler and the time, 3 h in, from which to call Due.
func manyWaiting() (*Scheduler, time.Time) {
	const pages = 50000
	s, _, t0 := oneSite(pages, time.Second, time.Second)
	s.ahead = 4
	s.SetDiscovering("a", true)
	s.ToDiscover("a", 100000)
	var ids []uint64
	for i := range uint64(16) {
		ids = append(ids, 1<<30+i)
	}
	for i := range uint64(100) {
		s.Links(i, ids)
	}
	for i, id := range ids {
		now := t0.Add(time.Duration(i) * time.Second)
		s.Due(now, now)
		s.Discovered("a", id, true)
	}
	now := t0.Add(3 * time.Hour)
	s.Due(now, now)
	s.Due(now.Add(tick), now.Add(tick))
	return s, now.Add(2 * tick)
}

// tick is how often the engine calls Due (its tickEvery).
const tick = 50 * time.Millisecond

// BenchmarkSchedulerDueManyWaiting: one Due of a site with thousands of
// due pages waiting for a turn their worth does not win (manyWaiting), as
// the engine calls it at every tick.
func BenchmarkSchedulerDueManyWaiting(b *testing.B) {
	s, now := manyWaiting()
	b.Logf("%d pages waiting", len(s.sites["a"].waiting))
	k := 0
	for b.Loop() {
		at := now.Add(time.Duration(k) * tick)
		s.Due(at, at)
		k++
	}
}

// TestSchedulerWaitingPricedOnce: the due pages of a weighed site that
// wait for a turn their worth does not win are priced once a solve, not
// at every Due (waitingByWorth): a Price only rises until the next solve,
// so none is worth a turn before the first reaches the floor. Priced at
// every Due, the engine's tick every 50 ms, a site of 50,000 pages with
// 9,065 waiting cost 3.1 to 3.4 ms a Due, about 4.5 Prices each a page
// waiting (review s38's R3; BenchmarkSchedulerDueManyWaiting).
func TestSchedulerWaitingPricedOnce(t *testing.T) {
	race.SkipSingleGoroutine(t)
	s, now := manyWaiting()
	waiting := len(s.sites["a"].waiting)
	before := s.pl.priced
	const calls = 20 // a second of the engine's ticks
	for k := range calls {
		at := now.Add(time.Duration(k) * tick)
		s.Due(at, at)
	}
	per := float64(s.pl.priced-before) / calls
	t.Logf("%d pages waiting: %.1f Prices a Due", waiting, per)
	if waiting < 1000 {
		t.Fatalf("%d pages waiting; the set-up wants thousands", waiting)
	}
	if per > float64(waiting)/calls {
		t.Errorf("%d pages waiting: %.0f Prices a Due, want each page priced once in %d Dues at most", waiting, per, calls)
	}
}
