package recrawl

import (
	"math"
	"testing"
	"time"
)

// TestAllocateMatchesBruteForce checks the greedy allocation against every
// allocation of a small case, with and without weights and bounds.
func TestAllocateMatchesBruteForce(t *testing.T) {
	T := 24 * time.Hour
	tests := []struct {
		name   string
		items  []Item
		budget float64
	}{
		{"poisson rates 1,4,16,64 per day", []Item{
			{Rate: perDay(1)}, {Rate: perDay(4)}, {Rate: perDay(16)}, {Rate: perDay(64)},
		}, 12},
		{"weighted", []Item{
			{Rate: perDay(2), Weight: 5}, {Rate: perDay(8), Weight: 1}, {Rate: perDay(30), Weight: 0.2}, {Rate: perDay(0.5), Weight: 3},
		}, 10},
		{"bounds", []Item{
			{Rate: perDay(1), Min: 2}, {Rate: perDay(10), Max: 3}, {Rate: perDay(40), Max: 2}, {Rate: perDay(5)},
		}, 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x, err := Allocate(tt.items, tt.budget, T)
			if err != nil {
				t.Fatal(err)
			}
			used := 0
			for i, xi := range x {
				used += xi
				it := tt.items[i]
				if xi < it.Min || (it.Max > 0 && xi > it.Max) {
					t.Errorf("item %d: %d crawls outside [%d,%d]", i, xi, it.Min, it.Max)
				}
			}
			if float64(used) > tt.budget {
				t.Errorf("%d crawls over a budget of %g", used, tt.budget)
			}
			got := WeightedStaleness(tt.items, x, T)
			best := bruteForce(tt.items, int(tt.budget), T)
			if got > best+1e-12 {
				t.Errorf("greedy %v has staleness %.6f, brute force finds %.6f", x, got, best)
			}
		})
	}
}

func perDay(n float64) Rate { return Rate(n / 86400) }

func bruteForce(items []Item, budget int, T time.Duration) float64 {
	best := math.Inf(1)
	x := make([]int, len(items))
	var walk func(i, left int)
	walk = func(i, left int) {
		if i == len(items) {
			best = min(best, WeightedStaleness(items, x, T))
			return
		}
		hi := left
		if items[i].Max > 0 {
			hi = min(hi, items[i].Max)
		}
		for xi := items[i].Min; xi <= hi; xi++ {
			x[i] = xi
			walk(i+1, left-xi)
		}
	}
	walk(0, budget)
	return best
}

func TestStaleness(t *testing.T) {
	T := 24 * time.Hour
	if s := Staleness(0, T, 0); s != 0 {
		t.Errorf("a page that never changes is stale %g of the time", s)
	}
	// Crawled once a day, a page changing once a day: 1 − (1−e^−1) = e^−1.
	if s, want := Staleness(perDay(1), T, 0), math.Exp(-1); math.Abs(s-want) > 1e-12 {
		t.Errorf("Staleness = %g, want %g", s, want)
	}
	prev := 1.0
	for x := range 20 {
		s := Staleness(perDay(5), T, x)
		if s >= prev {
			t.Fatalf("staleness does not fall with crawls at x=%d", x)
		}
		prev = s
	}
	if _, err := Allocate([]Item{{Rate: perDay(1), Min: 5}}, 3, T); err == nil {
		t.Error("minimums over the budget are accepted")
	}
}

// TestOptimalBeatsUniformAndProportional is Wolf's comparison on Poisson
// pages with Zipf-distributed rates: optimal < uniform < proportional.
func TestOptimalBeatsUniformAndProportional(t *testing.T) {
	T := 24 * time.Hour
	const n = 200
	items := make([]Item, n)
	var total float64
	for i := range items {
		items[i].Rate = perDay(30 / float64(i+1)) // Zipf, θ = 0
		total += 30 / float64(i+1)
	}
	budget := 2.0 * n
	opt, err := Allocate(items, budget, T)
	if err != nil {
		t.Fatal(err)
	}
	uniform := make([]int, n)
	prop := make([]int, n)
	for i := range items {
		uniform[i] = int(budget) / n
		prop[i] = int(budget * (30 / float64(i+1)) / total)
	}
	o, u, p := WeightedStaleness(items, opt, T)/n, WeightedStaleness(items, uniform, T)/n, WeightedStaleness(items, prop, T)/n
	if !(o < u && u < p) {
		t.Errorf("staleness optimal %.4f, uniform %.4f, proportional %.4f: want optimal < uniform < proportional", o, u, p)
	}
}
