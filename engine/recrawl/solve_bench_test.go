package recrawl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// solvePlanner sets up a Planner as a crawl's after a day: one site of
// 5,000 pages in ten channels, a turn every 10 s (its politeness binds
// the plan), and 20 sites of 50 pages, a turn a minute; each page visited
// eight times an hour apart, its changes drawn at its channel's rate
// (seeded). It returns the Planner and the time of its last visits.
func solvePlanner() (*Planner, time.Time) {
	p := NewPlanner(PlannerOptions{Resolve: time.Minute})
	r := rand.New(rand.NewPCG(1, 2))
	t0 := plannerEpoch
	type page struct {
		id   uint64
		rate float64 // changes an hour
	}
	var pages []page
	add := func(site string, gap time.Duration, n, channels int) {
		p.SetSiteGap(site, gap)
		for i := range n {
			ch := i % channels
			id := uint64(len(pages))
			p.Add(PageInfo{ID: id, Channel: ChannelID(fmt.Sprint(site, "/", ch)), Site: site,
				Weight: float64(1 + r.IntN(50))}, t0)
			pages = append(pages, page{id, 4 / float64(1+ch)})
		}
	}
	add("big", 10*time.Second, 5000, 10)
	for s := range 20 {
		add(fmt.Sprint("s", s), time.Minute, 50, 2)
	}
	p.SetBudget(float64(len(pages)) / (4 * 3600))
	for k := 1; k <= 8; k++ {
		at := t0.Add(time.Duration(k) * time.Hour)
		for _, pg := range pages {
			p.Visit(pg.id, Visit{At: at, Changed: r.Float64() < -math.Expm1(-pg.rate)}, 0)
		}
	}
	return p, t0.Add(8 * time.Hour)
}

// BenchmarkPlannerSolve: a minute of solvePlanner's crawl, its solve
// included: 50 pages visited (changed at their channels' rates), which
// moves their channels' pooled rates, so that every page of those
// channels is planned and given a turn again, as in the engine.
func BenchmarkPlannerSolve(b *testing.B) {
	p, now := solvePlanner()
	r := rand.New(rand.NewPCG(3, 4))
	n := uint64(len(p.pages))
	k := uint64(0)
	for b.Loop() {
		now = now.Add(time.Minute)
		for range 50 {
			id := k % n
			k += 97 // coprime with n: every page in turn, the channels mixed
			p.Visit(id, Visit{At: now, Changed: r.IntN(4) == 0}, 0)
		}
		p.Solve(now)
	}
}
