package recrawl

import (
	"testing"
	"time"
)

// TestSchedulerDiscoverySpacingSkipsIdleTime: a turn of discovery is
// worth what it brings the pages still to find a turn sooner
// (SetDiscovery), each turn's time a = the time between the site's
// discoveries, and how many it reaches within the horizon depends on it
// too. The hours a site had nothing to discover (SetDiscovering false,
// ToDiscover 0: a feed between its items, a site parked) are no time
// between its turns of discovery: counted as one spacing (the review's
// F3), the same discovery at the same pace was worth x5.4 after a 6 h
// pause, and the site's recrawls lost the turns by that much.
func TestSchedulerDiscoverySpacingSkipsIdleTime(t *testing.T) {
	const gap = time.Minute
	s, web, t0 := oneSite(40, gap, time.Second)
	var queue []uint64
	var served time.Time
	newID := uint64(1000)
	discovering := false
	set := func(on bool) {
		discovering = on
		s.SetDiscovering("a", on)
		if on {
			s.ToDiscover("a", 20)
		} else {
			s.ToDiscover("a", 0)
		}
	}
	// floors sampled right after a discovery, at the same URLs to find,
	// before the pause and after it.
	var before, after, spaceBefore, spaceAfter []float64
	const pauseFrom, pauseTo, end = 4 * time.Hour, 10 * time.Hour, 12 * time.Hour
	set(true)
	for d := time.Duration(0); d < end; d += 5 * time.Second {
		now := t0.Add(d)
		switch {
		case d == pauseFrom:
			set(false)
		case d == pauseTo:
			set(true)
		}
		queue = append(queue, s.Due(now, now)...)
		if now.Sub(served) < gap {
			continue
		}
		served = now
		if discovering && (len(queue) == 0 || d%(2*gap) == 0) {
			newID++
			s.Links(0, []uint64{newID})
			s.Discovered("a", newID, true)
			s.Due(now.Add(time.Second), now.Add(time.Second))
			s.Planner().Solve(now.Add(time.Second))
			f, sp := s.Planner().DiscoveryFloor("a"), s.sites["a"].spacing.avg
			switch {
			case d >= pauseFrom-time.Hour && d < pauseFrom:
				before, spaceBefore = append(before, f), append(spaceBefore, sp)
			case d >= pauseTo && d < pauseTo+time.Hour:
				after, spaceAfter = append(after, f), append(spaceAfter, sp)
			}
			continue
		}
		if len(queue) > 0 {
			web.fetch(s, queue[0], now)
			queue = queue[1:]
		}
	}
	mean := func(xs []float64) float64 {
		var m float64
		for _, x := range xs {
			m += x
		}
		return m / float64(max(len(xs), 1))
	}
	b, a := mean(before), mean(after)
	sb, sa := mean(spaceBefore), mean(spaceAfter)
	t.Logf("a turn of discovery worth %.4g in the hour before the pause (%d samples), %.4g in the hour after it (%d samples): x%.1f; its turns %.0f s apart before, %.0f s after",
		b, len(before), a, len(after), a/b, sb, sa)
	if len(before) == 0 || len(after) == 0 || a > 1.5*b || sa > 1.5*sb {
		t.Errorf("the same discovery at the same pace is worth x%.1f, its turns %.0f s apart where they were %.0f s, after %v with nothing to discover: the idle time counts as time between its turns",
			a/b, sa, sb, pauseTo-pauseFrom)
	}
}
