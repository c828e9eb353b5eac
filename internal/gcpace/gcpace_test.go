package gcpace

import (
	"context"
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

// TestKeep drives keep with a live heap that grows and shrinks and checks
// the percents it sets: only moves of 5 points or more, and the bounds.
func TestKeep(t *testing.T) {
	const mib = 1 << 20
	lives := []uint64{100 * mib, 300 * mib, 310 * mib, 512 * mib, 520 * mib, 4096 * mib, 100 * mib}
	want := []int{85, 50, 10, 100} // 100 MiB: none; 310 (82) and 520 (49) within 5 points
	tick := make(chan time.Time)
	sets := make(chan int, len(lives))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	i := 0
	go func() {
		defer close(done)
		keep(ctx, 256*mib, tick, func() uint64 { v := lives[i]; i++; return v }, func(p int) { sets <- p })
	}()
	for range lives {
		tick <- time.Time{}
	}
	cancel()
	<-done
	close(sets)
	var got []int
	for p := range sets {
		got = append(got, p)
	}
	if len(got) != len(want) {
		t.Fatalf("set %v, want %v", got, want)
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("set %v, want %v", got, want)
		}
	}
}

// ExampleKeep keeps the collector's headroom at 256 MiB while a crawl runs.
// (It is compiled, not run: Keep changes the process's GOGC.)
func ExampleKeep() {
	ctx, cancel := context.WithCancel(context.Background())
	go Keep(ctx, 256)
	// ... the crawl ...
	cancel()
}
