package bench

import (
	"math"
	"runtime/metrics"
	"testing"
	"time"
)

// schedWaits's p99 bounds 99% of the waits from above (the end of its
// bucket) and its longest bounds the longest from below (the start of its
// bucket): printed as "99% ran within P, the longest waited L or more".
// It gave the p99 bucket's start, under every wait (found in review).
func TestSchedWaitsBounds(t *testing.T) {
	ms := func(f float64) float64 { return f / 1e3 }
	buckets := []float64{math.Inf(-1), 0, ms(1), ms(2), ms(4), math.Inf(1)}
	for _, tc := range []struct {
		name      string
		counts    []uint64 // after; before is all zero but for "earlier"
		earlier   []uint64
		p99, most time.Duration
	}{
		{"all in one bucket", []uint64{0, 0, 1000, 0, 0}, nil, 2 * time.Millisecond, time.Millisecond},
		{"one slow wait in a hundred and one", []uint64{0, 100, 0, 0, 1}, nil, time.Millisecond, 4 * time.Millisecond},
		{"the tail past 1%", []uint64{0, 90, 0, 10, 0}, nil, 4 * time.Millisecond, 2 * time.Millisecond},
		{"only what came between the readings", []uint64{0, 10, 0, 0, 5}, []uint64{0, 0, 0, 0, 5}, time.Millisecond, 0},
		{"none", []uint64{0, 0, 0, 0, 0}, nil, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := &metrics.Float64Histogram{Counts: make([]uint64, len(tc.counts)), Buckets: buckets}
			if tc.earlier != nil {
				before.Counts = tc.earlier
			}
			after := &metrics.Float64Histogram{Counts: tc.counts, Buckets: buckets}
			p99, most := schedWaits(before, after)
			if p99 != tc.p99 || most != tc.most {
				t.Errorf("p99 %v, longest %v; want %v, %v", p99, most, tc.p99, tc.most)
			}
		})
	}
}
