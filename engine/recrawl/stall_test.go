package recrawl

import (
	"testing"
	"time"
)

// heavyRun is what heavySite saw in its window: the recrawls, those of the
// heavy pages and of the others, the longest a heavy page went unvisited,
// the discoveries, and the site's floor at the end.
type heavyRun struct {
	visits, heavyVisits, otherVisits, discoveries int
	longest                                       time.Duration
	floor                                         float64
}

// heavySite is site "a" (oneSite, a turn a gap) with pages pages, of which
// the last 10 (the heavy ones, linked from the first 10) change every 30
// min and, when static, the others never; discovery weighed with a
// backlog that never shrinks (each page found links the next). Its run
// sees the window [from, to). The knobs, nil for always: ticks (false:
// the process is suspended, no Due), serves (false: the site is not
// leased, its turns pass unused), finds (false: a turn of its discovery
// is served and finds nothing, Passed: its pending URLs are not fetched).
// sample, if set, is called every 10 min of the run. resolve, if set, is
// how often the plan is solved again (oneSite's: a minute).
type heavySite struct {
	pages                int
	static               bool
	backlog              int
	gap, resolve         time.Duration
	ticks, serves, finds func(d time.Duration) bool
	from, to             time.Duration
	sample               func(d time.Duration, s *Scheduler)
}

func (o heavySite) run() (r heavyRun) {
	s, web, t0 := oneSite(o.pages, o.gap, time.Second)
	if o.resolve > 0 {
		s.pl.opt.Resolve = o.resolve
	}
	var heavy []uint64
	for i := range uint64(10) {
		heavy = append(heavy, uint64(o.pages)-10+i)
	}
	for i := range uint64(10) {
		s.Links(i, heavy)
	}
	if o.static {
		for i := range uint64(o.pages - 10) {
			web.next[i] = t0.Add(100000 * time.Hour)
		}
	}
	if o.backlog > 0 {
		s.SetDiscovering("a", true)
		s.ToDiscover("a", o.backlog)
	}
	last := map[uint64]time.Time{}
	for _, id := range heavy {
		last[id] = t0
	}
	ticks := o.ticks
	if o.sample != nil {
		ticks = func(d time.Duration) bool {
			if d%(10*time.Minute) == 0 {
				o.sample(d, s)
			}
			return o.ticks == nil || o.ticks(d)
		}
	}
	newID := uint64(1 << 20)
	siteTurnsWhen(s, web, t0, o.gap, o.to, ticks, o.serves, func(d time.Duration, id uint64) {
		now := t0.Add(d)
		if d >= o.from {
			r.visits++
		}
		if _, ok := last[id]; ok {
			if d >= o.from {
				r.longest = max(r.longest, now.Sub(last[id]))
				r.heavyVisits++
			}
			last[id] = now
		} else if d >= o.from {
			r.otherVisits++
		}
	}, func(d time.Duration) {
		if o.backlog == 0 {
			return
		}
		if o.finds != nil && !o.finds(d) {
			s.Passed("a") // the site's new URLs are not fetched
			return
		}
		newID++
		s.Links(newID-1, []uint64{newID})
		s.Discovered("a", newID, true)
		if d >= o.from {
			r.discoveries++
		}
	})
	for _, id := range heavy {
		r.longest = max(r.longest, t0.Add(o.to).Sub(last[id]))
	}
	r.floor = s.Planner().DiscoveryFloor("a")
	return r
}

// TestSchedulerStalledDiscoveryKeepsRecrawls: a site whose discovery
// stalls (its pending URLs are not fetched: the turns it is served find
// nothing, Passed, no Discovered comes) keeps its recrawls: the floor's age
// counted the time since the last discovery, without a bound, while a
// visit's price is bounded, so every recrawl of the site was held (review
// s38's R2: 1 visit of the hubs in 10 h on 8ff19f8, floor 7.0e4 at 15 h;
// 255 before the branch). The turns since the last discovery that found
// nothing lower what the next is worth (Discovery.yield). Capping the age instead
// starved discovery where the recrawls took its turns (one spacing:
// TestSchedulerBacklogKeepsRecrawls fails) or left a hub 12 h unvisited
// (four spacings). The set-up is TestSchedulerBacklogKeepsRecrawls' at a
// backlog of 1,000, its discovery stalled from 3 h.
func TestSchedulerStalledDiscoveryKeepsRecrawls(t *testing.T) {
	stall := func(d time.Duration) bool { return d < 3*time.Hour }
	r := heavySite{pages: 40, backlog: 1000, gap: time.Minute, finds: stall, from: 5 * time.Hour, to: 15 * time.Hour}.run()
	t.Logf("discovery stalled at 3 h: floor %.4g at 15 h; from 5 h to 15 h: %d heavy visits, longest unvisited %v", r.floor, r.heavyVisits, r.longest)
	if r.longest > 2*time.Hour || r.heavyVisits < 100 {
		t.Errorf("discovery stalled: the hubs (10 in-links, changing every 30 min) got %d visits in 10 h, one unvisited for %v", r.heavyVisits, r.longest)
	}
}
