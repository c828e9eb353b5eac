// Package gcpace keeps the Go collector's headroom to a fixed amount of
// memory rather than a share of the live heap.
//
// With GOGC at its default of 100 the runtime lets the heap grow to twice
// what is live before it collects. A crawl's live heap grows with every
// URL it knows, so that doubling made peak memory grow by about twice the
// live heap's growth: 570 MB of resident memory a million URLs where the
// live heap grew by 300. What the collector costs depends on how often it
// runs, that is on how many bytes may be allocated between collections,
// not on the size of what is live (most of a crawl's live heap is arrays
// without pointers, which marking does not scan). Keep sets GOGC so the
// heap may grow by a fixed headroom beyond what is live: collections are
// as frequent at ten million URLs as at one, and memory grows by what is
// live alone, between two bounds: while what is live is under the headroom GOGC
// stays at MaxPercent (twice what is live), and once it exceeds ten times
// the headroom the headroom is MinPercent (10%) of it.
package gcpace

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Bounds of the GOGC Keep sets: never more than the runtime's default,
// never so little that a huge heap is collected after every few MiB.
const (
	MaxPercent = 100
	MinPercent = 10
)

// Percent returns the GOGC under which the heap, with live bytes live,
// may grow by headroom bytes before the next collection, between
// MinPercent and MaxPercent. It is MaxPercent while live is under the
// headroom, or unknown (0).
func Percent(live, headroom uint64) int {
	if live == 0 || live <= headroom {
		return MaxPercent
	}
	return max(MinPercent, int(headroom*100/live))
}

// Keep sets GOGC every second to Percent(live heap, headroomMB MiB) until
// ctx is done, and then puts back the GOGC it found. It does nothing when
// headroomMB is not positive or the GOGC environment variable is set (the
// user's choice wins). It is meant to run on a goroutine of its own, once
// per process.
func Keep(ctx context.Context, headroomMB int) {
	if headroomMB <= 0 || os.Getenv("GOGC") != "" {
		return
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	first := debug.SetGCPercent(MaxPercent)
	defer debug.SetGCPercent(first)
	keep(ctx, uint64(headroomMB)<<20, tick.C, live, func(p int) { debug.SetGCPercent(p) })
}

// keep is Keep's loop: at each tick it reads the live heap and calls set
// when the percent it gives has moved by at least 5 points since the last
// call (setting GOGC makes the runtime recompute its pacing).
func keep(ctx context.Context, headroom uint64, tick <-chan time.Time, live func() uint64, set func(int)) {
	cur := MaxPercent
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		if p := Percent(live(), headroom); p <= cur-5 || p >= cur+5 || (p != cur && (p == MinPercent || p == MaxPercent)) {
			cur = p
			set(p)
		}
	}
}
