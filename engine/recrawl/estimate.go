package recrawl

import (
	"errors"
	"math"
	"time"
)

// ErrNoVisits reports an estimate asked of an empty history.
var ErrNoVisits = errors.New("recrawl: no visits to estimate from")

// Rate is a change rate λ in changes per second. The zero Rate means "never
// seen to change".
type Rate float64

// Interval is the mean time between changes, 1/λ; the longest Duration for
// a zero rate.
func (r Rate) Interval() time.Duration {
	if r <= 0 || float64(r)*float64(time.Second) < 1e-9 {
		return math.MaxInt64
	}
	return time.Duration(float64(time.Second) / float64(r))
}

// RateOf returns the rate of one change every d.
func RateOf(d time.Duration) Rate {
	if d <= 0 {
		return 0
	}
	return Rate(1 / d.Seconds())
}

// Observation is one visit of a page or channel: the time since the
// previous visit and whether a change was detected since it.
type Observation struct {
	Interval time.Duration
	Changed  bool
}

// EstimateRegular is Cho and Garcia-Molina's improved estimator for n
// visits at a regular interval, of which unchanged saw no change:
// r̂ = −log((X̄+0.5)/(n+0.5)), λ̂ = r̂/I. Unlike the naive X/n it stays
// finite when every visit saw a change and is nearly unbiased.
func EstimateRegular(n, unchanged int, interval time.Duration) (Rate, error) {
	if n <= 0 || interval <= 0 {
		return 0, ErrNoVisits
	}
	unchanged = min(max(unchanged, 0), n)
	r := -math.Log((float64(unchanged) + 0.5) / (float64(n) + 0.5))
	return Rate(r / interval.Seconds()), nil
}

// EstimateIrregular is Cho and Garcia-Molina's maximum-likelihood estimator
// for visits at irregular intervals: the λ solving
//
//	Σ_changed t_i/(e^(λ·t_i) − 1) = Σ_unchanged t_j.
//
// With no change seen it returns 0. With every visit changed the likelihood
// has no maximum (λ → ∞); it then falls back to EstimateRegular at the mean
// interval, which is finite.
func EstimateIrregular(obs []Observation) (Rate, error) {
	var changed, unchangedSum, total float64
	var tmax float64
	n := 0
	for _, o := range obs {
		if o.Interval <= 0 {
			continue
		}
		t := o.Interval.Seconds()
		n++
		total += t
		tmax = max(tmax, t)
		if o.Changed {
			changed++
		} else {
			unchangedSum += t
		}
	}
	switch {
	case n == 0:
		return 0, ErrNoVisits
	case changed == 0:
		return 0, nil
	case unchangedSum == 0:
		return EstimateRegular(n, 0, time.Duration(total/float64(n)*float64(time.Second)))
	}
	// f is strictly decreasing in λ, from +∞ at 0 to −Σ unchanged at ∞.
	f := func(lambda float64) float64 {
		s := -unchangedSum
		for _, o := range obs {
			if o.Changed && o.Interval > 0 {
				t := o.Interval.Seconds()
				s += t / math.Expm1(lambda*t)
			}
		}
		return s
	}
	return Rate(decreasingRoot(f, 1e-6/tmax, 1/tmax, 1e-12)), nil
}

// decreasingRoot returns the root of f, decreasing from positive to
// negative, by bisection in log scale from the bracket [lo, hi] (widened
// until it holds the root) to a relative precision tol.
func decreasingRoot(f func(float64) float64, lo, hi, tol float64) float64 {
	for f(lo) < 0 {
		lo /= 1e3
	}
	for f(hi) > 0 {
		hi *= 4
	}
	for range 200 {
		mid := math.Sqrt(lo * hi)
		if f(mid) > 0 {
			lo = mid
		} else {
			hi = mid
		}
		if hi/lo < 1+tol {
			break
		}
	}
	return math.Sqrt(lo * hi)
}

// Estimate picks the estimator the history calls for: EstimateRegular when
// every interval is the same (within 1%), EstimateIrregular otherwise.
func Estimate(obs []Observation) (Rate, error) {
	if len(obs) == 0 {
		return 0, ErrNoVisits
	}
	lo, hi := obs[0].Interval, obs[0].Interval
	unchanged := 0
	for _, o := range obs {
		lo, hi = min(lo, o.Interval), max(hi, o.Interval)
		if !o.Changed {
			unchanged++
		}
	}
	if lo > 0 && float64(hi-lo) <= 0.01*float64(lo) {
		return EstimateRegular(len(obs), unchanged, (lo+hi)/2)
	}
	return EstimateIrregular(obs)
}
