package engine

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"lidi/engine/clock"
	"lidi/engine/recrawl"
)

// A site given up for the rest of the run gives its queued copies back to
// the Scheduler: they will not be fetched, and a copy counted queued was
// held released for good, so its page was never planned again.
func TestRecrawlSiteGivenUpTakesCopiesBack(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(t0)
	cfg := RecrawlConfig{Options: recrawl.Defaults(), InitialInterval: time.Minute, Clock: clk}
	cfg.Options.Policy = recrawl.Pages
	r, err := newRecrawler(cfg, clk, 1)
	if err != nil {
		t.Fatal(err)
	}
	const site = 7
	r.schedSites[site] = schedSite(site)
	for id := range uint64(3) {
		it := r.copied(id, fmt.Sprintf("http://a.test/p%d", id), site, t0)
		r.sched.Copied(id, it.ch.id, schedSite(site), t0)
	}
	now := clk.Advance(2 * time.Minute)
	due := r.sched.Due(now, now)
	if len(due) != 3 {
		t.Fatalf("due %v two initial intervals on, want the 3 pages", due)
	}
	for _, id := range due {
		r.setQueued(r.items[id], true) // as queueCopy does
	}
	const other = 8 // a copy queued on another site stays queued
	r.schedSites[other] = schedSite(other)
	kept := r.copied(10, "http://b.test/p", other, t0)
	r.setQueued(kept, true)
	r.siteGivenUp(other + 1) // nothing queued there: nothing changes
	r.siteGivenUp(site)
	if n := r.queuedOn[site]; n != 0 {
		t.Errorf("%d copies still counted queued on the site given up", n)
	}
	if n := r.queuedOn[other]; n != 1 || !kept.queued {
		t.Errorf("the other site's copy: %d counted queued, queued %v; want 1, true", n, kept.queued)
	}
	now = clk.Advance(time.Hour)
	if again := r.sched.Due(now, now); !slices.Equal(slices.Sorted(slices.Values(again)), due) {
		t.Errorf("due %v an hour later, want the 3 pages again (not held out)", again)
	}
}
