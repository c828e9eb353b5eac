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
	"math"
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

// Limit returns a memory limit under which the heap, with live bytes live,
// may still grow by percent of it (GOGC) before the collector runs,
// beside the runtime's other memory (stacks, metadata, the unused ends of
// the heap's spans: other bytes): the heap's goal and a twentieth of it,
// other, and SlackBytes, at most ceiling (0: none). The runtime keeps its
// own goal a little under a limit (3%) and its scavenger a little more
// (5%), so the collector still runs at the headroom, but the heap's free
// pages beyond its goal go back to the system as they appear; without the
// limit the runtime keeps a tenth more than the goal, and more while its
// scavenger, paced at 1% of a CPU, catches up.
func Limit(live uint64, percent int, other, ceiling uint64) uint64 {
	goal := live + live*uint64(percent)/100
	l := goal + goal/20 + other + SlackBytes
	if ceiling > 0 && l > ceiling {
		return ceiling
	}
	return l
}

// SlackBytes is the part of Limit's slack that does not grow with the heap,
// for the goal's moves between two ticks of Keep.
const SlackBytes = 8 << 20

// Keep sets GOGC every second to Percent(live heap, headroomMB MiB), and the
// memory limit to Limit's, under the limit in force when it started, until
// ctx is done, and then puts back the GOGC and the limit it found. It does
// nothing when headroomMB is not positive or the GOGC environment variable
// is set (the user's choice wins). It is meant to run on a goroutine of its
// own, once per process, after the process's limit (memory.heap_limit_mb,
// GOMEMLIMIT) is set.
func Keep(ctx context.Context, headroomMB int) {
	if headroomMB <= 0 || os.Getenv("GOGC") != "" {
		return
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	first := debug.SetGCPercent(MaxPercent)
	defer debug.SetGCPercent(first)
	ceiling := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(ceiling)
	if ceiling == math.MaxInt64 { // the runtime's "no limit"
		ceiling = 0
	}
	keep(ctx, uint64(headroomMB)<<20, uint64(ceiling), tick.C, readHeap,
		func(p int) { debug.SetGCPercent(p) },
		func(l uint64) { debug.SetMemoryLimit(int64(l)) })
}

// Start paces a process's collector as a crawl wants it: it sets the
// memory limit to limitMB MiB (memory.heap_limit_mb), unless limitMB is not
// positive or the GOMEMLIMIT environment variable is set (the user's
// choice wins), and runs Keep(headroomMB) on a goroutine of its own. The
// stop function it returns ends Keep, waits for it to put back the GOGC it
// found, and puts back the limit Start found; call it once, when the
// crawl (or a test that measures under a crawl's pacing) is over.
func Start(limitMB, headroomMB int) (stop func()) {
	limit := debug.SetMemoryLimit(-1)
	if limitMB > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(limitMB) << 20)
	}
	ctx, cancel := context.WithCancel(context.Background())
	kept := make(chan struct{})
	go func() {
		defer close(kept)
		Keep(ctx, headroomMB)
	}()
	return func() {
		cancel()
		<-kept
		debug.SetMemoryLimit(limit)
	}
}

// heap is what Keep reads at each tick: the live heap at the last
// collection, and the memory the runtime holds beyond the heap's pages
// (its free and its used ones): stacks, metadata, and the unused ends of
// the heap's spans.
type heap struct{ live, other uint64 }

var heapSamples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/heap/objects:bytes"},
}

// readHeap reads the runtime's metrics; only Keep's goroutine calls it.
func readHeap() heap {
	metrics.Read(heapSamples)
	var v [5]uint64
	for i, s := range heapSamples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	h := heap{live: v[0]}
	if held := v[2] + v[3] + v[4]; v[1] > held {
		h.other = v[1] - held
	}
	return h
}

// keep is Keep's loop: at each tick it reads the heap, calls setPercent
// when the percent it gives has moved since the last call, and setLimit
// when the limit has moved by at least 1 MiB. Setting GOGC only recomputes
// the runtime's pacing, under a lock, without stopping the world; holding
// a percent until it moved by 5 points let the heap grow by up to 5% of
// what is live more than the headroom (some 10 MB at 1,000,000 URLs).
func keep(ctx context.Context, headroom, ceiling uint64, tick <-chan time.Time, read func() heap, setPercent func(int), setLimit func(uint64)) {
	cur := MaxPercent
	var limit uint64
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick:
		}
		h := read()
		if p := Percent(h.live, headroom); p != cur {
			cur = p
			setPercent(p)
		}
		if h.live == 0 {
			continue // nothing measured yet
		}
		if l := Limit(h.live, cur, h.other, ceiling); l >= limit+1<<20 || l+1<<20 <= limit {
			limit = l
			setLimit(l)
		}
	}
}
