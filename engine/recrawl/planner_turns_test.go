package recrawl

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// A site's gap that changes gives its pages their turns again, a gap from
// the turn last released, the retries of the visits in flight too: the
// site's requests stay a gap apart across the change.
func TestPlannerRebookKeepsTakenTurns(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour})
	p.SetSiteGap("a", 10*time.Minute)
	t0 := plannerEpoch
	for id := range uint64(3) {
		p.Add(PageInfo{ID: id, Channel: "c", Site: "a"}, t0) // all due at t0+1h
	}
	now := t0.Add(time.Hour)
	if due := p.Due(now, 0); !slices.Equal(due, []uint64{0}) {
		t.Fatalf("due %v at the first turn, want page 0", due)
	}
	p.SetSiteGap("a", 20*time.Minute) // page 0 in flight, its turn taken at now
	next, ok := p.NextDue()
	if !ok || next.Before(now.Add(20*time.Minute)) {
		t.Errorf("next turn %v after the gap doubled, want a 20-minute gap after the turn taken at %v", next, now)
	}
	// Page 0's retry (an hour after its release) holds a turn too, and
	// no two turns are within a gap.
	turns := p.turns[p.sites["a"]]
	for i := 1; i < len(turns); i++ {
		if d := turns[i].at.Sub(turns[i-1].at); d < 20*time.Minute {
			t.Errorf("turns %v and %v are %v apart, want 20m at least", turns[i-1], turns[i], d)
		}
	}
	if pg := p.pages[0]; pg.turn.IsZero() || !slices.ContainsFunc(turns, func(tu turn) bool { return tu.id == 0 && tu.at.Equal(pg.turn) }) {
		t.Errorf("page 0 in flight holds turn %v, not in the site's turns %v", pg.turn, turns)
	}
}

// A page whose visit is in flight that moves to another site stays due
// at its retry, not at the time it was planned for (past, so released
// again at once while its visit runs).
func TestPlannerInFlightPageMovesSite(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour})
	t0 := plannerEpoch
	p.Add(PageInfo{ID: 1, Channel: "c", Site: "a"}, t0)
	now := t0.Add(time.Hour)
	if due := p.Due(now, 0); !slices.Equal(due, []uint64{1}) {
		t.Fatalf("due %v, want page 1", due)
	}
	p.Add(PageInfo{ID: 1, Channel: "c", Site: "b"}, time.Time{}) // a redirect moved it, say
	if due := p.Due(now.Add(time.Minute), 0); len(due) != 0 {
		t.Errorf("due %v a minute after its release, its visit in flight: want none until its retry", due)
	}
	if next, _ := p.NextDue(); !next.Equal(now.Add(time.Hour)) {
		t.Errorf("due again at %v, want its retry an interval after its release, %v", next, now.Add(time.Hour))
	}
}

// The queue holds each page once, however often it is planned again: a
// page planned again used to leave its old entry behind, to be dropped
// only when its time came, so a crawl replanned every few minutes grew
// its queue by its pages at each replan.
func TestPlannerQueueHoldsEachPageOnce(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinVisits: 1, Resolve: time.Minute})
	p.SetSiteGap("a", time.Minute)
	for id := range uint64(20) {
		p.Add(PageInfo{ID: id, Channel: "c", Site: "a"}, plannerEpoch)
	}
	now := plannerEpoch
	for i := range 200 {
		now = now.Add(7 * time.Minute)
		p.SetBudget(float64(1+i%3) / 3600) // a new budget: every interval moves
		visitAll(p, now, func(id uint64) bool { return (id+uint64(i))%3 == 0 })
		p.SetSiteGap("a", time.Duration(1+i%2*2)*time.Minute) // rebooks
	}
	if n := p.queue.Len(); n != 20 {
		t.Errorf("%d entries in the queue of 20 pages", n)
	}
}

// A page removed from the Planner is not kept by its queue: the slot a
// removal leaves past the heap's end held the page, and with it its
// evidence, until a later push overwrote it.
func TestPlannerQueueForgetsRemovedPages(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour})
	for id := range uint64(5) {
		p.Add(PageInfo{ID: id, Channel: "c", Site: "a"}, plannerEpoch)
	}
	for id := range uint64(5) {
		p.Remove(id)
		n := p.queue.Len()
		for i, e := range p.queue.entries[n:cap(p.queue.entries)] {
			if e.pg != nil {
				t.Fatalf("after page %d removed, slot %d past the queue's %d entries holds page %d", id, n+i, n, e.pg.info.ID)
			}
		}
	}
}

// Random operations on a Planner of a few sites against a model of what
// its turns promise: every page known is queued once and only it; a page
// holding a turn is in its site's turns, which are in order; a site's
// pages are released a gap apart at least (the smallest gap it had since
// the one before, a gap of 0 binding nothing); a page in flight is not
// released again before MinInterval has passed; Due returns no page
// twice and NextDue says when the next one is.
func TestPlannerTurnsRandomized(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		opt := PlannerOptions{InitialInterval: 30 * time.Minute, MinInterval: 5 * time.Minute, MinVisits: 1, Resolve: 10 * time.Minute}
		p := NewPlanner(opt)
		sites := []string{"a", "b", "c"}
		gaps := []time.Duration{0, time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute}
		// The model: per site its gap and the smallest since its last
		// release, with that release's turn; per page in flight its
		// release time.
		gap := map[string]time.Duration{}
		minGap := map[string]time.Duration{}
		lastKey := map[string]time.Time{}
		released := map[uint64]time.Time{}
		known := map[uint64]string{}
		now := plannerEpoch
		p.SetBudget(1.0 / 120)
		for step := range 600 {
			switch op := r.IntN(10); {
			case op < 2: // a page found, or moved
				id := uint64(r.IntN(30))
				site := sites[r.IntN(len(sites))]
				p.Add(PageInfo{ID: id, Channel: ChannelID(site), Site: site}, now)
				known[id] = site
			case op < 3 && len(known) > 0: // a page gone
				id := uint64(r.IntN(30))
				p.Remove(id)
				delete(known, id)
				delete(released, id)
			case op < 4: // a gap changes
				site := sites[r.IntN(len(sites))]
				g := gaps[r.IntN(len(gaps))]
				p.SetSiteGap(site, g)
				gap[site] = g
				if m, ok := minGap[site]; !ok || g < m {
					minGap[site] = g
				}
			case op < 5:
				p.SetBudget(float64(1+r.IntN(5)) / 600)
			case op < 8: // time passes: what is due is released
				now = now.Add(time.Duration(r.IntN(int(10 * time.Minute))))
				p.tell(now)
				p.Solve(now) // Due's own, first: its plan is the one released
				next, hasNext := p.NextDue()
				keys := map[uint64]time.Time{}
				for _, e := range p.queue.entries {
					keys[e.pg.info.ID] = e.key
				}
				due := p.Due(now, 0)
				if hasNext && !next.After(now) && len(due) == 0 {
					t.Fatalf("seed %d step %d: NextDue %v, none due at %v", seed, step, next, now)
				}
				seen := map[uint64]bool{}
				for _, id := range due {
					site, ok := known[id]
					if !ok || seen[id] {
						t.Fatalf("seed %d step %d: released %d (known %v, twice %v)", seed, step, id, ok, seen[id])
					}
					seen[id] = true
					if at, in := released[id]; in && now.Sub(at) < opt.MinInterval {
						t.Fatalf("seed %d step %d: page %d in flight since %v released again at %v", seed, step, id, at, now)
					}
					if _, in := released[id]; !in {
						released[id] = now
					}
					key := keys[id]
					if last, ok := lastKey[site]; ok && gap[site] > 0 && minGap[site] > 0 && key.Sub(last) < minGap[site] {
						t.Fatalf("seed %d step %d: site %s released turns %v and %v, under its gap %v", seed, step, site, last, key, minGap[site])
					}
					lastKey[site] = key
					minGap[site] = gap[site]
				}
			default: // the pages in flight are fetched
				for id := range released {
					if r.IntN(3) > 0 {
						p.Visit(id, Visit{At: now, Changed: r.IntN(2) == 0}, r.IntN(2))
						delete(released, id)
					}
				}
			}
			checkTurns(t, p, known, seed, step)
		}
	}
}

// checkTurns checks the Planner's bookkeeping against the pages known.
func checkTurns(t *testing.T, p *Planner, known map[uint64]string, seed uint64, step int) {
	t.Helper()
	if len(p.pages) != len(known) || p.queue.Len() != len(known) {
		t.Fatalf("seed %d step %d: %d pages, %d queued, %d known", seed, step, len(p.pages), p.queue.Len(), len(known))
	}
	for i, e := range p.queue.entries {
		if e.pg.qi != i || p.pages[e.pg.info.ID] != e.pg {
			t.Fatalf("seed %d step %d: entry %d is page %d at index %d", seed, step, i, e.pg.info.ID, e.pg.qi)
		}
	}
	for s, ts := range p.turns {
		if !slices.IsSortedFunc(ts, func(a, b turn) int { return a.at.Compare(b.at) }) {
			t.Fatalf("seed %d step %d: site %d's turns out of order", seed, step, s)
		}
	}
	for id, pg := range p.pages {
		if pg.turn.IsZero() {
			continue
		}
		if !slices.Contains(p.turns[pg.site], turn{at: pg.turn, id: id}) {
			t.Fatalf("seed %d step %d: page %d holds turn %v, not in its site's", seed, step, id, pg.turn)
		}
		if e := p.queue.entries[pg.qi]; !e.key.Equal(pg.turn) {
			t.Fatalf("seed %d step %d: page %d holds turn %v, queued at %v", seed, step, id, pg.turn, e.key)
		}
	}
}

// Pages due together on a site whose turns are scarce: the turns nearest
// their time go to the pages whose freshness loses most when their visit
// moves (moveCost), whatever the order they were booked in. A page that
// matters a thousand times as much as the thirty others due with it, and
// booked last, is given the turn at its time, not the free one a quarter
// of an hour away: each of the others loses a thousandth as much for the
// same move. Every page still holds a turn, a gap from the others.
func TestPlannerTurnsNearTheirTimeByCost(t *testing.T) {
	const gap = time.Minute
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinChanges: 1 << 20, MinVisits: 1 << 20})
	p.SetBudget(1)
	p.SetSiteGap("a", gap)
	const light = 30
	for i := range light {
		p.Add(PageInfo{ID: uint64(i), Channel: "c", Site: "a", Weight: 1}, plannerEpoch)
	}
	heavy := uint64(light)
	p.Add(PageInfo{ID: heavy, Channel: "c", Site: "a", Weight: 1000}, plannerEpoch)
	p.Solve(plannerEpoch) // every page due at the first hour, booked in the order of its ID
	due := plannerEpoch.Add(time.Hour)
	if d := absDuration(p.pages[heavy].turn.Sub(due)); d > gap {
		t.Errorf("the heavy page's turn is %v from its time, want a gap at most", d)
	}
	turns := p.turns[p.sites["a"]]
	if len(turns) != light+1 {
		t.Fatalf("%d turns held, want %d", len(turns), light+1)
	}
	held := map[uint64]bool{}
	for i, tu := range turns {
		if i > 0 && tu.at.Sub(turns[i-1].at) < gap {
			t.Errorf("turns %v and %v are less than a gap apart", turns[i-1].at, tu.at)
		}
		if pg := p.pages[tu.id]; pg == nil || !pg.turn.Equal(tu.at) {
			t.Errorf("turn %v is held by page %d, whose turn is elsewhere", tu.at, tu.id)
		}
		held[tu.id] = true
	}
	if len(held) != light+1 {
		t.Errorf("%d pages hold the %d turns", len(held), len(turns))
	}
	// Released in turn, the heavy page goes within a gap of its time.
	for now := plannerEpoch; now.Before(plannerEpoch.Add(2 * time.Hour)); now = now.Add(10 * time.Second) {
		for _, id := range p.Due(now, 0) {
			if id == heavy && absDuration(now.Sub(due)) > gap+10*time.Second {
				t.Errorf("the heavy page released at %v, %v from its time", now.Sub(plannerEpoch), now.Sub(due))
			}
			p.Visit(id, Visit{At: now}, 0)
		}
	}
}
