package recrawl

import (
	"fmt"
	"testing"
	"time"
)

// A free turn of a site being discovered goes to a recrawl only if its
// page is worth more than the turn brings otherwise (the floor, what the
// site's discovery brought lately), whichever page takes it: the page
// most overdue at the site's price (bestEarly) as well as the holder of
// the next turn. A page that changes seldom and was fetched long ago is
// the most overdue by price while its visit is worth little (its price
// grows with the square of its copy's age, its worth with the age).
func TestEarlyFreeTurnKeepsTheFloor(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinVisits: 2, MinInterval: time.Minute, Resolve: time.Minute})
	t0 := plannerEpoch
	p.SetBudget(1)
	p.SetSiteGap("a", 30*time.Minute)
	const fast, slow = 20, uint64(100)
	for i := range fast {
		p.Add(PageInfo{ID: uint64(i), Channel: ChannelID(fmt.Sprint("f", i%2)), Site: "a"}, t0)
	}
	// Its weight makes its visit worth far less than a fast page's.
	p.Add(PageInfo{ID: slow, Channel: "s", Site: "a", Weight: 0.3}, t0)
	for k := 1; k <= 3; k++ {
		at := t0.Add(time.Duration(k) * time.Hour)
		for i := range fast {
			p.Visit(uint64(i), Visit{At: at, Changed: true}, 0)
		}
		p.Visit(slow, Visit{At: at}, 0)
	}
	// The fast pages are visited again later; the slow one is not.
	now := t0.Add(5*time.Hour + 40*time.Minute)
	for i := range fast {
		p.Visit(uint64(i), Visit{At: now.Add(-time.Duration(5+i) * time.Minute), Changed: true}, 0)
	}
	p.Solve(now)
	if !p.IsFull("a") {
		t.Fatal("site a not full: the test's premise fails")
	}
	sp, _ := p.Page(slow)
	ws, wf := p.Worth(slow, now), 0.0
	for i := range fast {
		wf = max(wf, p.Worth(uint64(i), now))
	}
	s := p.sites["a"]
	if best := p.bestEarly(s, now, 0); best == nil || best.info.ID != slow {
		t.Fatalf("the slow page (rate %v, worth %.3f against the fast pages' %.3f at most) is not the most overdue: the test's premise fails", sp.Rate, ws, wf)
	}
	floor := (ws + wf) / 2
	id, ok := p.Early("a", now, floor)
	if !ok {
		t.Fatalf("no page went early at floor %.3f, want a fast page worth %.3f", floor, wf)
	}
	if got := p.Worth(id, now); got <= floor {
		t.Errorf("page %d went early, worth %.3f at a floor of %.3f; want one worth more", id, got, floor)
	}
}
