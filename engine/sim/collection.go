package sim

import (
	"errors"

	"lidi/engine/rank"
)

// Collection reports the pages a complete crawl of w fetches, whatever its
// order: those reachable from the seeds through fetched pages, on sites
// whose robots.txt answers, and not disallowed by it. It returns one mark
// per page and their number.
func (w *Web) Collection() (fetched []bool, n int) {
	fetched = make([]bool, w.NumPages())
	seen := make([]bool, w.NumPages())
	var stack []int32
	for _, p := range w.Seeds {
		if !seen[p] {
			seen[p] = true
			stack = append(stack, p)
		}
	}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if w.Sites[w.PageSite[p]].Robots == RobotsError || w.disallowed(p) {
			continue
		}
		fetched[p] = true
		n++
		for _, t := range w.Graph.Out(p) {
			if !seen[t] {
				seen[t] = true
				stack = append(stack, t)
			}
		}
	}
	return fetched, n
}

// CollectionRank returns the oracle of Castillo's chapter for w: the
// PageRank (damping 0.85) of the collection a complete crawl fetches (see
// Collection), over the links between its pages, and 0 for every other
// page. It sums to 1, so the coverage of a finished crawl is 1, as in the
// chapter, whose oracle was the PageRank of the pages its crawl got.
func (w *Web) CollectionRank() ([]float64, error) {
	in, n := w.Collection()
	if n == 0 {
		return nil, errors.New("sim: the seeds reach no page")
	}
	node := make([]int32, w.NumPages())
	var k int32
	for p, ok := range in {
		node[p] = -1
		if ok {
			node[p] = k
			k++
		}
	}
	g, err := rank.NewGraph(n, func(yield func(int32, int32) bool) {
		for p, ok := range in {
			if !ok {
				continue
			}
			for _, t := range w.Graph.Out(int32(p)) {
				if in[t] && !yield(node[p], node[t]) {
					return
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	res, err := rank.PageRank(g, rank.Options{})
	if err != nil {
		return nil, err
	}
	pr := make([]float64, w.NumPages())
	for p, v := range node {
		if v >= 0 {
			pr[p] = res.Scores[v]
		}
	}
	return pr, nil
}
