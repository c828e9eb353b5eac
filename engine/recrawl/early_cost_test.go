package recrawl

import (
	"fmt"
	"testing"
	"time"
)

// weighedIdle sets up review s39's N3: one site of pages pages, a turn a
// minute, its discovery weighed (16 pages found in its first 16 s, 10,000
// left to find), not full, with nothing out and nothing worth a free
// turn (Planner.Early). It returns the Scheduler and the time, 10 min
// in, at which its next turn is a gap away: a free turn, which a Due
// then offers (as on a site still warming up, whose turns lie hours
// apart).
func weighedIdle(pages int) (*Scheduler, time.Time) {
	s, _, t0 := oneSite(pages, time.Minute, time.Second)
	s.SetDiscovering("a", true)
	s.ToDiscover("a", 10000)
	for i := range uint64(16) {
		now := t0.Add(time.Duration(i) * time.Second)
		for _, id := range s.Due(now, now) {
			s.Back(id)
		}
		s.Discovered("a", 1<<30+i, true)
	}
	now := t0.Add(10 * time.Minute)
	for _, id := range s.Due(now, now) {
		s.Fetched(id, now, false, "", 0)
		s.Back(id)
	}
	return s, now
}

// within is the k-th of the times a test calls Due at within a
// millisecond of now: the engine's ticks while the site's turn is free.
func within(now time.Time, k int) time.Time {
	return now.Add(time.Duration(k%2) * time.Millisecond)
}

// BenchmarkSchedulerDueWeighedIdle: one Due of a weighed site, not full,
// with nothing to give a free turn (weighedIdle), as the engine calls it
// at every tick.
func BenchmarkSchedulerDueWeighedIdle(b *testing.B) {
	for _, pages := range []int{500, 4000} {
		b.Run(fmt.Sprint(pages), func(b *testing.B) {
			s, now := weighedIdle(pages)
			k := 0
			for b.Loop() {
				at := within(now, k)
				for _, id := range s.Due(at, at) {
					s.Back(id)
				}
				k++
			}
		})
	}
}

// TestSchedulerEarlyPricedOnce: a weighed site, not full, with nothing
// out and no page worth a free turn has its pages priced for one once
// until the first can be (Planner.bestEarly's earlyCheck), not at every
// Due. Scanned at every tick, the engine's 50 ms, a site of 4,000 pages
// cost 332 to 372 µs a Due (review s39's N3). weighedIdle's site, 1,000
// Dues.
func TestSchedulerEarlyPricedOnce(t *testing.T) {
	for _, pages := range []int{500, 4000} {
		s, now := weighedIdle(pages)
		if _, w := s.sites["a"].weighed(); !w || s.pl.IsFull("a") || s.sites["a"].out > 0 {
			t.Fatalf("%d pages: weighed %v, full %v, %d out: the set-up wants a weighed site, not full, nothing out", pages, w, s.pl.IsFull("a"), s.sites["a"].out)
		}
		early, before := s.pl.late.Early, s.pl.priced
		const calls = 1000
		for k := range calls {
			at := within(now, k)
			for _, id := range s.Due(at, at) {
				s.Back(id)
			}
		}
		per := float64(s.pl.priced-before) / calls
		t.Logf("%d pages: %.1f Prices a Due over %d Dues, %d early", pages, per, calls, s.pl.late.Early-early)
		if per > float64(pages)/20 {
			t.Errorf("%d pages: %.0f Prices a Due, want each page priced once in 20 Dues at most", pages, per)
		}
	}
}
