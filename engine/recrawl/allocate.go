package recrawl

import (
	"math"
	"time"
)

// Freshness is the time-average freshness of a Poisson page of rate λ
// visited f times a second at equal intervals, (1 − e^(−λ/f))/(λ/f) (Cho
// and Garcia-Molina, TODS 2003): 1 for a page that never changes, 0 for a
// page never visited.
func Freshness(rate Rate, f float64) float64 {
	if f <= 0 {
		return 0
	}
	x := float64(rate) / f
	if x <= 0 {
		return 1
	}
	return -math.Expm1(-x) / x
}

// Demand is one page of a continuous allocation.
type Demand struct {
	Rate   Rate
	Weight float64 // importance; 0 means 1
	Site   int     // the politeness domain, an index into the caps
	// Min and Max bound the visit frequency, visits a second (Max 0: no
	// bound but the site's).
	Min, Max float64
}

// AllocateFrequencies is the continuous form of Wolf et al.'s and Cho and
// Garcia-Molina's optimal allocation: the visit frequencies f_i (visits a
// second) that maximise Σ w_i·Freshness(λ_i, f_i) subject to Σ f_i ≤ budget
// and, per site s, Σ_{i∈s} f_i ≤ caps[s] (its politeness; caps[s] ≤ 0
// means no cap). The optimum gives every page the frequency at which its
// marginal freshness per visit, w·∂F/∂f, equals a price common to all
// (plus its site's, where the site is full); since ∂F/∂f of a page is at
// most w/λ, a page whose change rate is too high for the price gets its
// minimum only: Wolf's "fewer visits, not more" for pages that change too
// fast to keep fresh. The price is found by bisection; O(N log) per call.
//
// The minima are honoured first, whatever the budget; if they exceed it
// every page gets its minimum.
func AllocateFrequencies(pages []Demand, caps []float64, budget float64) []float64 {
	f, _ := allocate(pages, caps, nil, budget)
	return f
}

// allocate is AllocateFrequencies with what a turn of each site brings
// otherwise (floors[s], nil or 0 for none): a turn of the site's
// discovery. A visit of the site's pages then costs its turn as well as
// its share of the budget: the pages are priced at the common price plus
// the floor, or at the site's own price where its cap binds above that.
// The turns they leave go to the site's discovery, not to the budget,
// which only recrawls spend. It returns the frequencies and, per site of
// caps, the price its pages are planned at: what a visit of one of them
// is worth at the margin.
func allocate(pages []Demand, caps, floors []float64, budget float64) (f, prices []float64) {
	f = make([]float64, len(pages))
	bySite := map[int][]int{}
	for i, p := range pages {
		bySite[p.Site] = append(bySite[p.Site], i)
	}
	// spent is, per site, the price its pages' frequencies were last
	// filled at and their sum: a site whose own price binds is filled at
	// that price at every step of the common price's bisection.
	type filled struct {
		mu, sum float64
		ok      bool
	}
	spent := map[int]*filled{}
	// kinds are, per site, its distinct demands, and kind each page's
	// index among its site's: pages alike (a static site's, of one
	// channel and weight) have one frequency at a price, reckoned once.
	kinds := map[int][]Demand{}
	kind := make([]int, len(pages))
	for s, idx := range bySite {
		spent[s] = &filled{}
		seen := map[Demand]int{}
		for _, i := range idx {
			k, ok := seen[pages[i]]
			if !ok {
				k = len(kinds[s])
				seen[pages[i]] = k
				kinds[s] = append(kinds[s], pages[i])
			}
			kind[i] = k
		}
	}
	var at []float64 // a site's kinds' frequencies at a price
	// spend fills the frequencies of site s's pages at price mu and
	// returns their sum.
	spend := func(s int, mu float64) float64 {
		m := spent[s]
		if m.ok && m.mu == mu {
			return m.sum
		}
		at = at[:0]
		for _, d := range kinds[s] {
			at = append(at, frequencyAt(d, mu))
		}
		var sum float64
		for _, i := range bySite[s] {
			f[i] = at[kind[i]]
			sum += f[i]
		}
		*m = filled{mu: mu, sum: sum, ok: true}
		return sum
	}
	// A full site's own price: the one at which it spends its cap. It does
	// not depend on the common price, so the site's price at a common
	// price mu is the larger of the two.
	floor := map[int]float64{}
	for s := range bySite {
		c := capOf(caps, s)
		if c <= 0 || spend(s, 0) <= c {
			continue
		}
		floor[s] = priceFor(func(mu float64) float64 { return spend(s, mu) }, c)
	}
	// A visit of a site whose turns discovery would take otherwise costs
	// both: its share of the budget (the common price) and the site's turn
	// (its floor, or more where its cap binds above that).
	price := func(mu float64, s int) float64 { return math.Max(mu+capOf(floors, s), floor[s]) }
	total := func(mu float64) float64 {
		var sum float64
		for s := range bySite {
			sum += spend(s, price(mu, s))
		}
		return sum
	}
	mu := priceFor(total, budget)
	total(mu)
	prices = make([]float64, len(caps))
	for s := range prices {
		prices[s] = price(mu, s)
	}
	return f, prices
}

// priceFor returns the lowest price at which spend, decreasing in the
// price, is at most budget (0 if it is at 0; a price so high that every
// page is at its minimum if no price gets there).
func priceFor(spend func(float64) float64, budget float64) float64 {
	if spend(0) <= budget {
		return 0
	}
	lo, hi := 0.0, 1.0
	for spend(hi) > budget {
		lo, hi = hi, hi*16
		if hi > 1e300 {
			return hi
		}
	}
	for range 40 {
		mid := (lo + hi) / 2
		if spend(mid) > budget {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

func capOf(caps []float64, s int) float64 {
	if s < 0 || s >= len(caps) {
		return 0
	}
	return caps[s]
}

// frequencyAt is the frequency at which page p's marginal freshness per
// visit, w·∂F/∂f = (w/λ)·(1 − e^(−x)(1+x)) with x = λ/f, equals mu, within
// its bounds.
func frequencyAt(p Demand, mu float64) float64 {
	w := p.Weight
	if w == 0 {
		w = 1
	}
	hi := p.Max
	if hi <= 0 {
		hi = math.Inf(1)
	}
	lam := float64(p.Rate)
	var f float64
	switch {
	case lam <= 0:
		f = 0 // never changes: a visit gains nothing
	case mu <= 0:
		f = hi
	default:
		x, ok := invMarginal(mu * float64(lam) / w)
		if !ok {
			f = 0
			break
		}
		f = lam / x
	}
	return min(max(f, p.Min), hi) // as math.Min and math.Max, NaN and ±0 too
}

// marginal is g(x) = 1 − e^(−x)(1+x), the marginal freshness of a visit
// (times λ/w) when visits are λ/x apart; it increases from 0 to 1.
func marginal(x float64) float64 { return -math.Expm1(-x) - x*math.Exp(-x) }

// The inverse of marginal by a table over log x and a few Newton steps
// (g'(x) = x·e^(−x)).
const (
	invLogMin, invLogMax = -12.0, 5.0 // x from e^-12 to e^5 ≈ 148
	invSteps             = 4096
)

// invX[i] is the table's x and invTable[i] its marginal.
var invX, invTable = func() (xs, ys [invSteps + 1]float64) {
	for i := range xs {
		xs[i] = math.Exp(invLogMin + (invLogMax-invLogMin)*float64(i)/invSteps)
		ys[i] = marginal(xs[i])
	}
	return xs, ys
}()

// invMarginal returns the x at which marginal(x) = y, and false when no x
// reaches y (y ≥ 1).
func invMarginal(y float64) (float64, bool) {
	switch {
	case y >= 1:
		return 0, false
	case y <= invTable[0]:
		return math.Sqrt(2 * y), true // g(x) ≈ x²/2 near 0
	}
	// sort.SearchFloat64s(invTable[:], y), without its closure: the
	// first entry at or above y.
	i, j := 0, len(invTable)
	for i < j {
		h := int(uint(i+j) >> 1)
		if !(invTable[h] >= y) {
			i = h + 1
		} else {
			j = h
		}
	}
	if i > invSteps {
		// Far out, 1 − g(x) = e^(−x)(1+x): x = −log(1−y) + log(1+x).
		x := -math.Log1p(-y)
		for range 8 {
			x = -math.Log1p(-y) + math.Log1p(x)
		}
		return x, true
	}
	// Linear between the table's points (0.4% apart), then one Newton
	// step, g'(x) = x·e^(−x).
	lo, hi := invTable[i-1], invTable[i]
	x := invX[i-1]
	if hi > lo {
		x += (invX[i] - invX[i-1]) * (y - lo) / (hi - lo)
	}
	e := math.Exp(-x)
	if d := x * e; d > 0 {
		x -= (1 - e*(1+x) - y) / d
	}
	return x, true
}

// Interval returns the time between visits at frequency f; the longest
// Duration for none.
func frequencyInterval(f float64) time.Duration {
	if f <= 0 || f*float64(time.Second) < 1e-9 {
		return math.MaxInt64
	}
	return time.Duration(float64(time.Second) / f)
}
