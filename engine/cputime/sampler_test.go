package cputime

import (
	"testing"
	"time"
)

// A Sampler times the first piece of work and every SampleEvery-th after
// it, each counted SampleEvery times, and the others not at all: over
// pieces that each spin the same CPU, its sum is SampleEvery times what
// the timed ones took.
func TestSamplerTimesOneInEvery(t *testing.T) {
	if _, ok := Thread(); !ok {
		t.Skip("no thread clock on this system")
	}
	const spin = time.Millisecond
	var s Sampler
	var sum time.Duration
	var timed []int
	for i := range 2*SampleEvery + 1 {
		tm := s.Start()
		start, _ := Thread()
		for {
			if now, _ := Thread(); now-start >= spin {
				break
			}
		}
		if d := tm.Elapsed(); d != 0 {
			timed = append(timed, i)
			if d < SampleEvery*spin {
				t.Errorf("piece %d counted %s, under %d × its %s spin", i, d, SampleEvery, spin)
			}
			sum += d
		}
	}
	if want := []int{0, SampleEvery, 2 * SampleEvery}; len(timed) != len(want) || timed[0] != want[0] || timed[1] != want[1] || timed[2] != want[2] {
		t.Errorf("timed pieces %v, want %v", timed, want)
	}
	if sum < 3*SampleEvery*spin {
		t.Errorf("sum %s under %s", sum, 3*SampleEvery*spin)
	}
	if d := (Timer{}).Elapsed(); d != 0 {
		t.Errorf("the zero Timer's Elapsed is %s, want 0", d)
	}
}
