package rank_test

import (
	"fmt"

	"lidi/engine/rank"
)

func ExamplePageRank() {
	// Page 0 links to 1 and 2, page 1 links to 2, page 2 links back to 0.
	edges := [][2]int32{{0, 1}, {0, 2}, {1, 2}, {2, 0}}
	g, err := rank.NewGraph(3, func(yield func(from, to int32) bool) {
		for _, e := range edges {
			if !yield(e[0], e[1]) {
				return
			}
		}
	})
	if err != nil {
		panic(err)
	}
	r, err := rank.PageRank(g, rank.Options{})
	if err != nil {
		panic(err)
	}
	for v, s := range r.Scores {
		fmt.Printf("page %d: %.4f\n", v, s)
	}
	// Output:
	// page 0: 0.3878
	// page 1: 0.2148
	// page 2: 0.3974
}
