package recrawl

import (
	"testing"
	"time"
)

// TestSchedulerWeighedOverAhead: a site with more pages out than Ahead
// (released while it had nothing to discover, without the bound, then
// discovering again) releases none of its waiting pages, whatever they
// are worth, until fewer than Ahead are out: waitingByWorth is not
// looked at meanwhile (it took Ahead less the pages out, a negative
// count, and panicked; review s39's N6 found the guard untested). One
// site of 40 pages, a turn a minute, Ahead 1.
func TestSchedulerWeighedOverAhead(t *testing.T) {
	s, _, t0 := oneSite(40, time.Minute, time.Second)
	s.SetDiscovering("a", true)
	s.ToDiscover("a", 1000)
	for k := range uint64(10) {
		now := t0.Add(time.Duration(k) * time.Second)
		for _, id := range s.Due(now, now) {
			s.Back(id)
		}
		s.Links(k, []uint64{1000 + k})
		s.Discovered("a", 1000+k, true)
	}
	// Nothing to discover for an hour: its due pages go, three stay out.
	s.SetDiscovering("a", false)
	s.ToDiscover("a", 0)
	ss := s.sites["a"]
	var released []uint64
	for d := time.Minute; d < time.Hour; d += 5 * time.Second {
		now := t0.Add(d)
		released = append(released, s.Due(now, now)...)
	}
	for _, id := range released[3:] {
		s.Back(id) // three stay out
	}
	out := ss.out
	s.SetDiscovering("a", true)
	s.ToDiscover("a", 1000)
	if _, w := ss.weighed(); !w || out <= s.ahead {
		t.Fatalf("weighed %v, %d out: the set-up wants a weighed site with more than Ahead (%d) out", w, out, s.ahead)
	}
	for d := time.Hour; d < 3*time.Hour; d += 5 * time.Second {
		now := t0.Add(d)
		if rel := s.Due(now, now); len(rel) > 0 {
			t.Fatalf("at %v, %d out (Ahead %d): %d released", d, ss.out, s.ahead, len(rel))
		}
	}
	t.Logf("%d out, %d waiting: none released in 2 h", ss.out, len(ss.waiting))
	if len(ss.waiting) == 0 {
		t.Fatal("no page waiting: the set-up wants some")
	}
}
