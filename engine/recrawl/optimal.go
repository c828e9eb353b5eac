package recrawl

import (
	"container/heap"
	"errors"
	"math"
	"time"
)

// ErrInfeasible reports an allocation whose minimum crawls exceed the
// budget.
var ErrInfeasible = errors.New("recrawl: the minimum crawls exceed the budget")

// Staleness is Wolf et al.'s time-average staleness of a Poisson page of
// rate λ crawled x times in a scheduling interval T at the optimal,
// equally spaced times T/(x+1):
//
//	A(x) = 1 − (x+1)/(λT) · (1 − e^(−λT/(x+1)))
//
// the probability that the copy is stale at a random time. It is convex and
// decreasing in x.
func Staleness(rate Rate, horizon time.Duration, crawls int) float64 {
	u := float64(rate) * horizon.Seconds() / float64(crawls+1)
	if u <= 0 {
		return 0
	}
	return 1 + math.Expm1(-u)/u
}

// Item is one page or channel of an allocation.
type Item struct {
	Rate     Rate
	Weight   float64 // 0 means 1
	Cost     float64 // budget one crawl uses; 0 means 1
	Min, Max int     // bounds on the crawls; Max 0 means no bound
}

// Allocate solves Wolf et al.'s discrete, convex, separable resource
// allocation problem: the number of crawls x_i of each item in a scheduling
// interval T minimising Σ w_i·Staleness(λ_i, T, x_i) subject to
// Σ cost_i·x_i ≤ budget and Min_i ≤ x_i ≤ Max_i. It is Fox's greedy
// algorithm, O(N + R log N): start every item at its minimum, then give the
// next crawl to the item whose staleness drops most per unit of cost, until
// the budget is spent or no crawl helps. With equal costs this is exactly
// optimal (the first differences are monotone); with unequal costs it is
// the usual ratio heuristic of a knapsack.
func Allocate(items []Item, budget float64, horizon time.Duration) ([]int, error) {
	x := make([]int, len(items))
	h := gainHeap{}
	for i, it := range items {
		x[i] = it.Min
		budget -= float64(it.Min) * cost(it)
		h.push(i, items, x, horizon)
	}
	if budget < 0 {
		return nil, ErrInfeasible
	}
	heap.Init(&h)
	for h.Len() > 0 {
		top := h.gains[0]
		if top.gain <= 0 {
			break
		}
		c := cost(items[top.item])
		if c > budget {
			heap.Pop(&h)
			continue
		}
		budget -= c
		x[top.item]++
		heap.Pop(&h)
		if h.push(top.item, items, x, horizon) {
			heap.Fix(&h, h.Len()-1)
		}
	}
	return x, nil
}

func cost(it Item) float64 {
	if it.Cost <= 0 {
		return 1
	}
	return it.Cost
}

func weight(it Item) float64 {
	if it.Weight == 0 {
		return 1
	}
	return it.Weight
}

// WeightedStaleness is the objective Allocate minimises.
func WeightedStaleness(items []Item, x []int, horizon time.Duration) float64 {
	var sum float64
	for i, it := range items {
		sum += weight(it) * Staleness(it.Rate, horizon, x[i])
	}
	return sum
}

type gain struct {
	item int
	gain float64
}

type gainHeap struct{ gains []gain }

// push adds item's next marginal gain unless it is at its maximum; it
// reports whether it added one (appended, not yet in heap order).
func (h *gainHeap) push(i int, items []Item, x []int, horizon time.Duration) bool {
	it := items[i]
	if it.Max > 0 && x[i] >= it.Max {
		return false
	}
	g := weight(it) * (Staleness(it.Rate, horizon, x[i]) - Staleness(it.Rate, horizon, x[i]+1)) / cost(it)
	h.gains = append(h.gains, gain{i, g})
	return true
}

func (h gainHeap) Len() int           { return len(h.gains) }
func (h gainHeap) Less(i, j int) bool { return h.gains[i].gain > h.gains[j].gain }
func (h gainHeap) Swap(i, j int)      { h.gains[i], h.gains[j] = h.gains[j], h.gains[i] }
func (h *gainHeap) Push(x any)        { h.gains = append(h.gains, x.(gain)) }
func (h *gainHeap) Pop() any {
	g := h.gains[len(h.gains)-1]
	h.gains = h.gains[:len(h.gains)-1]
	return g
}

// optimalPolicy gives each channel Wolf's optimal number of crawls per
// scheduling interval T for the budget of robots (SetCapacity's, else the
// capacity measured as ICR measures it), each crawl costing the channel's
// mean recrawl time, equally spaced: interval T/(x+1). The rate cap and the
// interval bounds become Wolf's maximum and minimum crawls. Until it has a
// budget it recrawls at 1/λ̂, as fixed does; it solves again every Period.
type optimalPolicy struct {
	solved bool
	last   time.Time
}

func (*optimalPolicy) Name() PolicyName { return Optimal }

func (*optimalPolicy) Start(b *Book) { fixedPolicy{}.Start(b) }

func (*optimalPolicy) Observe(*Book, *Channel, Outcome) {}

func (p *optimalPolicy) Reassign(b *Book) *Reassignment {
	if p.solved && b.Now.Sub(p.last) < b.Opt.Period {
		return nil
	}
	budget := b.Capacity
	if budget <= 0 {
		budget = b.CapacityHistory()
	}
	if budget <= 0 {
		return nil
	}
	T := b.Opt.Horizon
	fallback := b.meanCost().Seconds()
	items := make([]Item, len(b.Channels))
	for i, c := range b.Channels {
		it := Item{Rate: c.Rate, Weight: c.weight(), Cost: c.MeanDuration().Seconds(),
			Min: max(0, int(math.Ceil(float64(T)/float64(b.Opt.MaxInterval)))-1),
			Max: max(1, int(float64(T)/float64(b.Opt.MinInterval))-1)}
		if it.Cost <= 0 {
			it.Cost = fallback
		}
		if b.Opt.RateCap > 0 && c.Rate > 0 {
			it.Max = max(it.Min, min(it.Max, int(b.Opt.RateCap*float64(c.Rate)*T.Seconds())-1))
		}
		items[i] = it
	}
	x, err := Allocate(items, budget*T.Seconds(), T)
	if err != nil {
		// The bounds alone exceed the budget: keep the minimums.
		x = make([]int, len(items))
		for i, it := range items {
			x[i] = it.Min
		}
	}
	for i, c := range b.Channels {
		c.Interval = T / time.Duration(x[i]+1)
	}
	p.solved, p.last = true, b.Now
	return &Reassignment{Budget: budget}
}
