package gcpace

import (
	"context"
	"runtime/debug"
	"slices"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, headroom uint64
		want           int
	}{
		{0, 256 * mib, MaxPercent},         // nothing measured yet
		{100 * mib, 256 * mib, MaxPercent}, // under the headroom: the runtime's default
		{256 * mib, 256 * mib, MaxPercent},
		{512 * mib, 256 * mib, 50},
		{1024 * mib, 256 * mib, 25},
		{100000 * mib, 256 * mib, MinPercent}, // bounded below
	} {
		if got := Percent(tc.live, tc.headroom); got != tc.want {
			t.Errorf("Percent(%d MiB, %d MiB) = %d, want %d", tc.live/mib, tc.headroom/mib, got, tc.want)
		}
	}
}

func TestLimit(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live           uint64
		percent        int
		other, ceiling uint64
		want           uint64
	}{
		{200 * mib, 50, 20 * mib, 0, 300*mib + 15*mib + 20*mib + SlackBytes}, // goal 300 MiB, a twentieth 15
		{200 * mib, 50, 20 * mib, 1024 * mib, 300*mib + 15*mib + 20*mib + SlackBytes},
		{200 * mib, 50, 20 * mib, 300 * mib, 300 * mib}, // never above the ceiling
		{10 * mib, 100, 0, 0, 20*mib + 1*mib + SlackBytes},
	} {
		if got := Limit(tc.live, tc.percent, tc.other, tc.ceiling); got != tc.want {
			t.Errorf("Limit(%d MiB, %d, %d MiB, %d MiB) = %d, want %d", tc.live/mib, tc.percent, tc.other/mib, tc.ceiling/mib, got, tc.want)
		}
	}
}

// TestKeep drives keep with a live heap that grows and shrinks and checks
// the percents and limits it sets: percents when they move, and within
// the bounds; limits only when they move by a MiB or more, and never above
// the ceiling.
func TestKeep(t *testing.T) {
	const mib = 1 << 20
	const other = 30 * mib
	lives := []uint64{0, 100 * mib, 300 * mib, 310 * mib, 512 * mib, 520 * mib, 4096 * mib, 100 * mib}
	wantPercents := []int{85, 82, 50, 49, 10, 100} // 100 MiB: none (MaxPercent already)
	// The percent in force at each tick, as keep sets it, gives each limit;
	// 0 (nothing measured yet) sets none.
	inForce := []int{100, 100, 85, 82, 50, 49, 10, 100}
	var wantLimits []uint64
	const ceiling = 2000 * mib
	last := uint64(0)
	for k, live := range lives {
		if live == 0 {
			continue
		}
		l := Limit(live, inForce[k], other, ceiling)
		if l != last {
			wantLimits = append(wantLimits, l)
			last = l
		}
	}
	if wantLimits[len(wantLimits)-2] != ceiling {
		t.Fatalf("the case does not reach the ceiling: %v", wantLimits)
	}
	tick := make(chan time.Time)
	percents := make(chan int, len(lives))
	limits := make(chan uint64, len(lives))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	i := 0
	go func() {
		defer close(done)
		keep(ctx, 256*mib, ceiling, tick, func() heap { v := lives[i]; i++; return heap{live: v, other: other} },
			func(p int) { percents <- p }, func(l uint64) { limits <- l })
	}()
	for range lives {
		tick <- time.Time{}
	}
	cancel()
	<-done
	close(percents)
	close(limits)
	if got := collect(percents); !slices.Equal(got, wantPercents) {
		t.Errorf("set percents %v, want %v", got, wantPercents)
	}
	if got := collect(limits); !slices.Equal(got, wantLimits) {
		t.Errorf("set limits %v, want %v", got, wantLimits)
	}
}

func collect[T any](c <-chan T) []T {
	var s []T
	for v := range c {
		s = append(s, v)
	}
	return s
}

// ExampleKeep keeps the collector's headroom at 256 MiB while a crawl runs.
// (It is compiled, not run: Keep changes the process's GOGC.)
func ExampleKeep() {
	ctx, cancel := context.WithCancel(context.Background())
	go Keep(ctx, 256)
	// ... the crawl ...
	cancel()
}

// TestStartPutsBack checks that Start sets the limit it is given, unless
// GOMEMLIMIT is set, and that its stop puts back the limit and the GOGC
// it found.
func TestStartPutsBack(t *testing.T) {
	t.Setenv("GOGC", "") // Keep runs only when GOGC is empty
	limit := debug.SetMemoryLimit(-1)
	gogc := debug.SetGCPercent(77)
	defer debug.SetGCPercent(gogc)
	for _, tc := range []struct {
		name      string
		env       string
		limitMB   int
		wantLimit int64
	}{
		{"sets the limit", "", 300, 300 << 20},
		{"no limit asked", "", 0, limit},
		{"GOMEMLIMIT wins", "1GiB", 300, limit},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("GOMEMLIMIT", tc.env)
			}
			stop := Start(tc.limitMB, 32)
			if got := debug.SetMemoryLimit(-1); got != tc.wantLimit {
				t.Errorf("limit while running = %d, want %d", got, tc.wantLimit)
			}
			stop()
			if got := debug.SetMemoryLimit(-1); got != limit {
				t.Errorf("limit after stop = %d, want %d (the one found)", got, limit)
			}
			if got := debug.SetGCPercent(77); got != 77 {
				t.Errorf("GOGC after stop = %d, want 77 (the one found)", got)
			}
		})
	}
}
