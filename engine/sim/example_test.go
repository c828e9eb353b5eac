package sim_test

import (
	"context"
	"fmt"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/rank"
	"lidi/engine/sim"
)

// A crawl of a four-page web in virtual time: site 0 holds pages 0 and 1,
// site 1 pages 2 and 3. The robot waits w = 15 s between two requests to
// one site, so it fetches page 2 (another site) before page 1.
func ExampleRun() {
	edges := [][2]int32{{0, 1}, {0, 2}, {2, 3}}
	g, _ := rank.NewGraph(4, func(yield func(int32, int32) bool) {
		for _, e := range edges {
			if !yield(e[0], e[1]) {
				return
			}
		}
	})
	w := &sim.Web{
		Graph:    g,
		PageSite: []int32{0, 0, 1, 1},
		PageSize: []int32{10_000, 10_000, 10_000, 10_000},
		PageRank: []float64{0.4, 0.2, 0.3, 0.1},
		Sites:    []sim.Site{{Latency: 500 * time.Millisecond, Bandwidth: 20_000}, {Bandwidth: 10_000}},
		Seeds:    []int32{0},
	}
	res, err := sim.Run(context.Background(), w, frontier.Length{}, sim.Options{Robots: 1, Delay: 15 * time.Second})
	if err != nil {
		panic(err)
	}
	for _, f := range res.Fetches {
		fmt.Printf("page %d of site %d: %v to %v, coverage %.1f\n", f.Page, f.Site, f.Start, f.End, f.Coverage)
	}
	// Output:
	// page 0 of site 0: 0s to 1.5s, coverage 0.4
	// page 2 of site 1: 1.5s to 2.5s, coverage 0.7
	// page 1 of site 0: 16.5s to 18s, coverage 0.9
	// page 3 of site 1: 18s to 19s, coverage 1.0
}
