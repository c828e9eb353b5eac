package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
)

// value is the weighted freshness of frequencies f.
func value(pages []Demand, f []float64) float64 {
	var v float64
	for i, p := range pages {
		v += weightOr1(p.Weight) * Freshness(p.Rate, f[i])
	}
	return v
}

// randomDemands returns n pages on sites with rates from one change a
// minute to one a day and power-law weights.
func randomDemands(r *rand.Rand, n, sites int) []Demand {
	pages := make([]Demand, n)
	for i := range pages {
		pages[i] = Demand{Rate: Rate(math.Exp(math.Log(1.0/60)+r.Float64()*math.Log(1.0/1440))) / 60,
			Weight: 1 / math.Pow(1-r.Float64(), 0.7), Site: r.IntN(sites)}
	}
	return pages
}

func TestAllocateFrequenciesOptimal(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		pages := randomDemands(r, 60, 5)
		caps := make([]float64, 5)
		for s := range caps {
			caps[s] = (0.5 + r.Float64()) / 600 // a visit every 5 to 20 minutes
		}
		budget := 60 * (0.2 + r.Float64()) / 3600 // 0.2 to 1.2 visits per page per hour
		f := AllocateFrequencies(pages, caps, budget)
		var sum float64
		perSite := make([]float64, len(caps))
		for i, x := range f {
			sum += x
			perSite[pages[i].Site] += x
		}
		if sum > budget*(1+1e-6) {
			t.Fatalf("trial %d: spent %g of %g", trial, sum, budget)
		}
		for s, c := range caps {
			if perSite[s] > c*(1+1e-6) {
				t.Fatalf("trial %d: site %d spent %g of its cap %g", trial, s, perSite[s], c)
			}
		}
		// No small move of frequency from one page to another (the same
		// site, or a site with room) does better: the optimum's condition.
		v := value(pages, f)
		for range 2000 {
			i, j := r.IntN(len(pages)), r.IntN(len(pages))
			d := math.Min(f[i], budget/1000)
			if i == j || d <= 0 {
				continue
			}
			g := append([]float64(nil), f...)
			g[i] -= d
			g[j] += d
			if pages[i].Site != pages[j].Site && perSite[pages[j].Site]+d > caps[pages[j].Site] {
				continue
			}
			if w := value(pages, g); w > v*(1+1e-6) {
				t.Fatalf("trial %d: moving %g from page %d to %d gains %g over %g", trial, d, i, j, w, v)
			}
		}
	}
}

func TestInvMarginal(t *testing.T) {
	// Beyond x ≈ 35, g(x) rounds to 1.
	for _, x := range []float64{1e-7, 1e-4, 0.01, 0.3, 1, 2.5, 10, 20, 30} {
		got, ok := invMarginal(marginal(x))
		if tol := 1e-6; !ok || math.Abs(got-x) > tol*x && x <= 20 || math.Abs(got-x) > 1e-2*x {
			t.Errorf("invMarginal(marginal(%g)) = %g, %v", x, got, ok)
		}
	}
	if _, ok := invMarginal(1); ok {
		t.Error("invMarginal(1) found an x")
	}
}

// A site whose turns its discovery would take otherwise, each worth its
// floor, gives its pages a visit only where the visit is worth more at
// the margin: the turns they leave are the floor's, and the budget, which
// only recrawls spend, goes to the other sites. No small move of
// frequency between a page and its site's discovery, or between two
// pages, gains.
func TestAllocateSiteFloors(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 20 {
		pages := randomDemands(r, 60, 5)
		caps, floors := make([]float64, 5), make([]float64, 5)
		for s := range caps {
			caps[s] = (0.5 + r.Float64()) / 600
		}
		// Two sites discover: a turn of it worth as much as a visit of a
		// page of weight 1 to 10 changing every 5 to 50 minutes.
		for _, s := range []int{0, 1} {
			floors[s] = (1 + 9*r.Float64()) * (300 + 2700*r.Float64()) * r.Float64()
		}
		budget := 60 * (0.2 + r.Float64()) / 3600
		f, _ := allocate(pages, caps, floors, budget)
		perSite := make([]float64, len(caps))
		var sum float64
		for i, x := range f {
			sum += x
			perSite[pages[i].Site] += x
		}
		if sum > budget*(1+1e-6) {
			t.Fatalf("trial %d: spent %g of %g", trial, sum, budget)
		}
		// The value counts each site's turns left to its discovery.
		total := func(g []float64) float64 {
			used := make([]float64, len(caps))
			for i, x := range g {
				used[pages[i].Site] += x
			}
			v := value(pages, g)
			for s := range caps {
				v += floors[s] * (caps[s] - used[s])
			}
			return v
		}
		v := total(f)
		floored := 0
		for range 4000 {
			i := r.IntN(len(pages))
			s := pages[i].Site
			g := append([]float64(nil), f...)
			if j := r.IntN(len(pages)); r.IntN(2) == 0 && i != j {
				// A page to another page, within the sites' caps.
				d := math.Min(f[i], budget/1000)
				if pages[j].Site != s && perSite[pages[j].Site]+d > caps[pages[j].Site] {
					continue
				}
				g[i] -= d
				g[j] += d
			} else if floors[s] > 0 {
				// A page to its site's discovery, or back within the
				// budget and the site's cap.
				d := math.Min(f[i], caps[s]/1000)
				if r.IntN(2) == 0 {
					// Back only where neither the budget nor the site's
					// cap binds: their prices are found to within what
					// the bisection leaves (fullSite).
					if budget-sum < budget/100 || caps[s]-perSite[s] < caps[s]/100 {
						continue
					}
					d = -math.Min(caps[s]/1000, math.Min(caps[s]-perSite[s], budget-sum))
				}
				if d == 0 {
					continue
				}
				g[i] -= d
				floored++
			} else {
				continue
			}
			if w := total(g); w > v+1e-6*math.Abs(v) {
				t.Fatalf("trial %d: moving %g of page %d's visits (site %d, floor %g, cap %g, spent %g; budget %g, spent %g) gains %g over %g", trial, g[i]-f[i], i, s, floors[s], caps[s], perSite[s], budget, sum, w, v)
			}
		}
		if floored == 0 {
			t.Fatalf("trial %d: no move tried to or from a site's discovery", trial)
		}
	}
}
