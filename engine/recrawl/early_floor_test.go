package recrawl

import (
	"fmt"
	"testing"
	"time"
)

// A free turn of a site being discovered goes to a recrawl only if its
// page's visit is worth more than the turn brings otherwise (the floor,
// what the site's discovery is worth: DiscoveryFloor), whichever page
// takes it: the page most overdue (bestEarly) as well as the holder of
// the next turn. Above every page's price no page goes; just below the
// highest, the page of that price goes.
func TestEarlyFreeTurnKeepsTheFloor(t *testing.T) {
	p := NewPlanner(PlannerOptions{InitialInterval: time.Hour, MinVisits: 2, MinInterval: time.Minute, Resolve: time.Minute})
	t0 := plannerEpoch
	p.SetBudget(1)
	p.SetSiteGap("a", 30*time.Minute)
	const fast, slow = 20, uint64(100)
	for i := range fast {
		p.Add(PageInfo{ID: uint64(i), Channel: ChannelID(fmt.Sprint("f", i%2)), Site: "a"}, t0)
	}
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
	top, topID := 0.0, uint64(0)
	for _, id := range append([]uint64{slow}, func() (ids []uint64) {
		for i := range fast {
			ids = append(ids, uint64(i))
		}
		return ids
	}()...) {
		if g := p.Price(id, now); g > top {
			top, topID = g, id
		}
	}
	if _, ok := p.Early("a", now, top*1.01); ok {
		t.Errorf("a page went early at a floor above every page's price (%.3g)", top)
	}
	id, ok := p.Early("a", now, top*0.99)
	if !ok || id != topID {
		t.Errorf("at a floor just under the highest price (%.3g, page %d), page %d went early (%v); want that page", top, topID, id, ok)
	}
}
