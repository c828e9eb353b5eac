package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"lidi/engine/recrawl"
	"lidi/engine/recrawl/change"
)

// Allocation names one of Wolf et al.'s three ways to share crawls.
type Allocation string

// The allocations Wolf et al. compare.
const (
	Uniform      Allocation = "uniform"      // every page as often
	Proportional Allocation = "proportional" // crawls in proportion to the change rate
	OptimalAlloc Allocation = "optimal"      // recrawl.Allocate's minimum of total staleness
)

// Allocations lists them in the order reports print them.
func Allocations() []Allocation { return []Allocation{Uniform, Proportional, OptimalAlloc} }

// WolfRow is the average staleness of each allocation at one ratio R/N of
// crawls to pages per scheduling interval: Analytic by Wolf's formula for
// Poisson pages (recrawl.Staleness), Simulated against change streams of
// each kind with the crawls equally spaced.
//
// Weighted is the staleness weighted by each page's importance (a
// PageRank-like power law, independent of the change rates; the weights
// average 1), by the formula: what Wolf's weighted objective (their
// embarrassment metric's form) minimises. OptimalAlloc there is the
// weighted optimum and UnweightedOptimal the optimum that ignores the
// weights, scored with them, as Wolf's Figure 7 compares.
type WolfRow struct {
	Ratio     float64
	Analytic  map[Allocation]float64
	Simulated map[change.Kind]map[Allocation]float64
	Weighted  map[Allocation]float64
}

// UnweightedOptimal is the unweighted optimum scored with weights, only in
// WolfRow.Weighted.
const UnweightedOptimal Allocation = "optimal-unweighted"

// WeightedAllocations lists WolfRow.Weighted's allocations in the order
// reports print them.
func WeightedAllocations() []Allocation {
	return []Allocation{Uniform, Proportional, UnweightedOptimal, OptimalAlloc}
}

// WolfSetup is the comparison's web: Pages pages whose change rates follow
// a Zipf-like law of parameter Q (0: highly skewed, 1: uniform) with mean
// MeanRate changes per Horizon, as in Wolf et al.'s experiments, watched for
// Intervals scheduling intervals in the simulation.
type WolfSetup struct {
	Pages     int
	Q         float64
	MeanRate  float64
	Horizon   time.Duration
	Ratios    []float64
	Kinds     []change.Kind
	Intervals int
	Seed      uint64
}

// Wolf runs the comparison.
func Wolf(s WolfSetup) ([]WolfRow, error) {
	if s.Pages < 1 || s.Horizon <= 0 || s.MeanRate <= 0 || s.Intervals < 1 {
		return nil, fmt.Errorf("simulate: Wolf set-up %+v is incomplete", s)
	}
	rates := make([]float64, s.Pages) // changes per horizon
	var sum float64
	for i := range rates {
		rates[i] = 1 / math.Pow(float64(i+1), 1-s.Q)
		sum += rates[i]
	}
	items := make([]recrawl.Item, s.Pages)
	for i := range rates {
		rates[i] *= s.MeanRate * float64(s.Pages) / sum
		items[i].Rate = recrawl.Rate(rates[i] / s.Horizon.Seconds())
	}
	// Weights: a power law over a random order of the pages, so that
	// importance and change rate are independent; scaled to average 1.
	weighted := slices.Clone(items)
	order := rand.New(rand.NewPCG(s.Seed, 0x77656967687473)).Perm(s.Pages)
	var wsum float64
	for i, k := range order {
		weighted[i].Weight = 1 / math.Pow(float64(k+1), 0.8)
		wsum += weighted[i].Weight
	}
	for i := range weighted {
		weighted[i].Weight *= float64(s.Pages) / wsum
	}
	var rows []WolfRow
	for _, ratio := range s.Ratios {
		budget := ratio * float64(s.Pages)
		alloc := map[Allocation][]int{}
		alloc[Uniform] = spread(budget, func(int) float64 { return 1 }, s.Pages)
		alloc[Proportional] = spread(budget, func(i int) float64 { return rates[i] }, s.Pages)
		x, err := recrawl.Allocate(items, budget, s.Horizon)
		if err != nil {
			return nil, err
		}
		alloc[OptimalAlloc] = x
		row := WolfRow{Ratio: ratio, Analytic: map[Allocation]float64{}, Simulated: map[change.Kind]map[Allocation]float64{}}
		for _, a := range Allocations() {
			row.Analytic[a] = recrawl.WeightedStaleness(items, alloc[a], s.Horizon) / float64(s.Pages)
		}
		xw, err := recrawl.Allocate(weighted, budget, s.Horizon)
		if err != nil {
			return nil, err
		}
		row.Weighted = map[Allocation]float64{
			Uniform:           recrawl.WeightedStaleness(weighted, alloc[Uniform], s.Horizon) / float64(s.Pages),
			Proportional:      recrawl.WeightedStaleness(weighted, alloc[Proportional], s.Horizon) / float64(s.Pages),
			UnweightedOptimal: recrawl.WeightedStaleness(weighted, alloc[OptimalAlloc], s.Horizon) / float64(s.Pages),
			OptimalAlloc:      recrawl.WeightedStaleness(weighted, xw, s.Horizon) / float64(s.Pages),
		}
		for _, k := range s.Kinds {
			row.Simulated[k] = map[Allocation]float64{}
			for _, a := range Allocations() {
				row.Simulated[k][a] = simulatedStaleness(s, k, rates, alloc[a])
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// spread shares budget crawls among n items in proportion to share, by
// largest remainders.
func spread(budget float64, share func(int) float64, n int) []int {
	var total float64
	for i := range n {
		total += share(i)
	}
	x := make([]int, n)
	left := int(budget)
	rem := make([]float64, n)
	for i := range n {
		exact := budget * share(i) / total
		x[i] = int(exact)
		rem[i] = exact - float64(x[i])
		left -= x[i]
	}
	for ; left > 0; left-- {
		best := 0
		for i := range rem {
			if rem[i] > rem[best] {
				best = i
			}
		}
		x[best]++
		rem[best] = -1
	}
	return x
}

// simulatedStaleness crawls each page x_i times per horizon, equally
// spaced (period T/(x_i+1)), and measures the share of time its copy is
// stale against the page's change stream.
func simulatedStaleness(s WolfSetup, k change.Kind, rates []float64, x []int) float64 {
	end := time.Duration(s.Intervals) * s.Horizon
	var sum float64
	for i, r := range rates {
		m := change.Model{Kind: k, Mean: time.Duration(float64(s.Horizon) / r)}
		st := m.Stream(s.Seed, uint64(i))
		period := s.Horizon / time.Duration(x[i]+1)
		var stale time.Duration
		for at := time.Duration(0); at < end; at += period {
			next := min(at+period, end)
			for st.Peek() <= at {
				st.Next()
			}
			if c := st.Peek(); c < next {
				stale += next - c
			}
		}
		sum += float64(stale) / float64(end)
	}
	return sum / float64(len(rates))
}
