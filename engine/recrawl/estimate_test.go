package recrawl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"lidi/engine/recrawl/change"
)

// simulate visits an item whose changes follow a Poisson process of mean gap
// mean, at the given visit intervals, and returns what each visit saw.
func simulate(seed, item uint64, mean time.Duration, intervals []time.Duration) []Observation {
	var total time.Duration
	for _, d := range intervals {
		total += d
	}
	h := change.Model{Kind: change.Poisson, Mean: mean}.Times(seed, item, total)
	obs := make([]Observation, len(intervals))
	var at time.Duration
	for i, d := range intervals {
		obs[i] = Observation{Interval: d, Changed: h.Changed(at, at+d)}
		at += d
	}
	return obs
}

// TestEstimatorsRecoverPoissonRates checks both estimators against
// simulated Poisson histories with known λ: the mean estimate over many
// items is within a few percent of λ, for visits slower and faster than
// the changes.
func TestEstimatorsRecoverPoissonRates(t *testing.T) {
	tests := []struct {
		name      string
		mean      time.Duration // true 1/λ
		visit     time.Duration // (mean) visit interval
		irregular bool
		tol       float64
	}{
		{"regular, visits twice per change", 2 * time.Hour, time.Hour, false, 0.05},
		{"regular, a visit per change", time.Hour, time.Hour, false, 0.06},
		{"regular, visits half as often", time.Hour, 2 * time.Hour, false, 0.12},
		{"irregular, visits twice per change", 2 * time.Hour, time.Hour, true, 0.05},
		{"irregular, a visit per change", time.Hour, time.Hour, true, 0.06},
		{"irregular, visits half as often", time.Hour, 2 * time.Hour, true, 0.12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const items, visits = 400, 100
			r := rand.New(rand.NewPCG(11, 12))
			var sum float64
			for item := range uint64(items) {
				intervals := make([]time.Duration, visits)
				for i := range intervals {
					intervals[i] = tt.visit
					if tt.irregular {
						// Uniform on [0.25, 1.75]·visit.
						intervals[i] = time.Duration((0.25 + 1.5*r.Float64()) * float64(tt.visit))
					}
				}
				obs := simulate(3, item, tt.mean, intervals)
				var est Rate
				var err error
				if tt.irregular {
					est, err = EstimateIrregular(obs)
				} else {
					est, err = Estimate(obs)
				}
				if err != nil {
					t.Fatal(err)
				}
				sum += float64(est)
			}
			want := 1 / tt.mean.Seconds()
			got := sum / items
			if rel := math.Abs(got/want - 1); rel > tt.tol {
				t.Errorf("mean estimate %.3g/s, want %.3g/s within %.0f%% (off by %.1f%%)", got, want, 100*tt.tol, 100*rel)
			}
		})
	}
}

// TestNaiveEstimatorIsWorse shows why the improved estimator exists: with
// visits as slow as the changes, X/n·1/I underestimates λ badly.
func TestNaiveEstimatorIsWorse(t *testing.T) {
	const items, visits = 300, 60
	var naive, improved float64
	intervals := make([]time.Duration, visits)
	for i := range intervals {
		intervals[i] = time.Hour
	}
	for item := range uint64(items) {
		obs := simulate(5, item, 30*time.Minute, intervals)
		changed := 0
		for _, o := range obs {
			if o.Changed {
				changed++
			}
		}
		naive += float64(changed) / visits / 3600
		est, err := EstimateRegular(visits, visits-changed, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		improved += float64(est)
	}
	want := 1 / 1800.0
	if errNaive, errImproved := math.Abs(naive/items/want-1), math.Abs(improved/items/want-1); errImproved >= errNaive || errImproved > 0.1 {
		t.Errorf("relative error: naive %.2f, improved %.2f", errNaive, errImproved)
	}
}

func TestEstimatorEdges(t *testing.T) {
	if _, err := Estimate(nil); !errors.Is(err, ErrNoVisits) {
		t.Errorf("Estimate(nil) error = %v, want ErrNoVisits", err)
	}
	if _, err := EstimateRegular(0, 0, time.Hour); !errors.Is(err, ErrNoVisits) {
		t.Errorf("EstimateRegular(0 visits) error = %v, want ErrNoVisits", err)
	}
	none := []Observation{{time.Hour, false}, {2 * time.Hour, false}}
	if r, err := EstimateIrregular(none); err != nil || r != 0 {
		t.Errorf("no change seen: %v, %v; want 0", r, err)
	}
	all := []Observation{{time.Hour, true}, {2 * time.Hour, true}}
	r, err := EstimateIrregular(all)
	if err != nil || math.IsInf(float64(r), 0) || r <= 0 {
		t.Errorf("every visit changed: %v, %v; want a finite positive rate", r, err)
	}
	// The MLE solves its equation.
	obs := []Observation{{time.Hour, true}, {3 * time.Hour, false}, {30 * time.Minute, true}, {2 * time.Hour, true}}
	r, err = EstimateIrregular(obs)
	if err != nil {
		t.Fatal(err)
	}
	var lhs, rhs float64
	for _, o := range obs {
		if o.Changed {
			lhs += o.Interval.Seconds() / math.Expm1(float64(r)*o.Interval.Seconds())
		} else {
			rhs += o.Interval.Seconds()
		}
	}
	if math.Abs(lhs-rhs) > 1e-6*rhs {
		t.Errorf("at λ̂ = %g the sides are %g and %g", float64(r), lhs, rhs)
	}
}

func ExampleEstimateRegular() {
	// 20 daily visits, 5 of which found the page unchanged.
	r, _ := EstimateRegular(20, 5, 24*time.Hour)
	fmt.Printf("about one change every %.1f hours\n", r.Interval().Hours())
	// Output: about one change every 18.2 hours
}
