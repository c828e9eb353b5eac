package recrawl

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"lidi/engine/recrawl/change"
)

// visits returns n visits of a Poisson page of mean interval mean at
// irregular intervals (uniform on [0.25, 1.75]·every), each knowing the
// page's last change when dated.
func visits(r *rand.Rand, item uint64, mean, every time.Duration, n int, dated bool) []Visit {
	epoch := time.Unix(0, 0)
	h := change.Model{Kind: change.Poisson, Mean: mean}.Times(7, item, time.Duration(n)*2*every)
	out := make([]Visit, n)
	var at time.Duration
	for i := range out {
		d := time.Duration((0.25 + 1.5*r.Float64()) * float64(every))
		v := Visit{At: epoch.Add(at + d), Interval: d, Changed: h.Changed(at, at+d)}
		if last, ok := h.LastAt(at + d); ok && dated && v.Changed {
			v.LastModified = epoch.Add(last)
		}
		out[i] = v
		at += d
	}
	return out
}

// Without a prior and without dates, the posterior is Cho and
// Garcia-Molina's irregular-interval estimator.
func TestPosteriorIsTheIrregularEstimator(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for item := range uint64(20) {
		vs := visits(r, item, time.Hour, 90*time.Minute, 30, false)
		var e Evidence
		obs := make([]Observation, len(vs))
		for i, v := range vs {
			e.Add(v)
			obs[i] = Observation{Interval: v.Interval, Changed: v.Changed}
		}
		want, err := EstimateIrregular(obs)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.Posterior(0, 0); math.Abs(float64(got-want)) > 1e-5*float64(want) {
			t.Errorf("item %d: posterior %v, irregular estimator %v", item, got, want)
		}
	}
}

// Both kinds of evidence recover λ on average; the dated one (the
// last-modified estimator) with a smaller spread, most of all when the
// visits are rarer than the changes.
func TestLastModifiedEstimatorSharper(t *testing.T) {
	for _, tc := range []struct {
		name  string
		every time.Duration
		tol   float64
	}{
		{"a visit per change", time.Hour, 0.06},
		{"a visit per three changes", 3 * time.Hour, 0.08},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const items, n = 300, 40
			var mean, sd [2]float64
			for k, dated := range []bool{false, true} {
				r := rand.New(rand.NewPCG(3, 4))
				var sum, sq float64
				for item := range uint64(items) {
					var e Evidence
					for _, v := range visits(r, item, time.Hour, tc.every, n, dated) {
						e.Add(v)
					}
					x := float64(e.Posterior(0, 0)) * 3600
					sum += x
					sq += x * x
				}
				mean[k] = sum / items
				sd[k] = math.Sqrt(sq/items - mean[k]*mean[k])
			}
			if math.Abs(mean[1]-1) > tc.tol {
				t.Errorf("dated: mean estimate %.3f/h, want 1 ± %.2f", mean[1], tc.tol)
			}
			if math.Abs(mean[0]-1) > 2*tc.tol {
				t.Errorf("undated: mean estimate %.3f/h, want 1 ± %.2f", mean[0], 2*tc.tol)
			}
			if sd[1] >= sd[0] {
				t.Errorf("dated estimates spread %.3f, undated %.3f: dates should sharpen them", sd[1], sd[0])
			}
			t.Logf("undated %.3f ± %.3f, dated %.3f ± %.3f", mean[0], sd[0], mean[1], sd[1])
		})
	}
}

// A page with little evidence takes its channel's rate; with much, its own.
func TestPosteriorShrinksToThePrior(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	prior := RateOf(time.Hour)
	few, many := visits(r, 1, 8*time.Hour, time.Hour, 2, false), visits(r, 1, 8*time.Hour, time.Hour, 400, false)
	var e Evidence
	for _, v := range few {
		e.Add(v)
	}
	// Two quiet hours against a prior of one change an hour: (1+0)/(1h+2h).
	if got := float64(e.Posterior(prior, PriorWeight)) * 3600; got < 2*0.125 || got > 1 {
		t.Errorf("after 2 visits: %.3f/h, want between the prior's 1/h and twice the page's 0.125/h", got)
	}
	e = Evidence{}
	for _, v := range many {
		e.Add(v)
	}
	if got := float64(e.Posterior(prior, PriorWeight)) * 3600; math.Abs(got-0.125) > 0.04 {
		t.Errorf("after 400 visits: %.3f/h, want the page's 0.125/h", got)
	}
	if got := (Evidence{}).Posterior(prior, PriorWeight); math.Abs(float64(got-prior)) > 1e-12 {
		t.Errorf("no evidence: %v, want the prior %v", got, prior)
	}
}

// A dated change from before the previous visit, or after the visit, is
// not taken as a date.
func TestVisitDatedOnlyWithinItsInterval(t *testing.T) {
	at := time.Unix(10000, 0)
	for _, tc := range []struct {
		lm    time.Time
		dated bool
	}{
		{at.Add(-30 * time.Minute), true},
		{at.Add(-2 * time.Hour), false}, // before the previous visit
		{at.Add(time.Minute), false},    // in the future
		{time.Time{}, false},
	} {
		v := Visit{At: at, Interval: time.Hour, Changed: true, LastModified: tc.lm}
		var e Evidence
		e.Add(v)
		if (e.Dated == 1) != tc.dated {
			t.Errorf("last modified %v: dated %v, want %v", tc.lm, e.Dated == 1, tc.dated)
		}
	}
}

// A page's age at its first fetch, from a sitemap's lastmod, is evidence
// of its rate: over many Poisson pages first fetched long after they
// started changing, the ages alone give their rate back, and a single age
// moves a page's estimate from its channel's prior by its weight.
func TestAgeIsEvidenceOfTheRate(t *testing.T) {
	const n = 400
	mean := 3 * time.Hour
	at := 200 * time.Hour // long after the start: the age is stationary
	var all Evidence
	for item := range uint64(n) {
		h := change.Model{Kind: change.Poisson, Mean: mean}.Times(11, item, at)
		last, ok := h.LastAt(at)
		if !ok {
			t.Fatalf("page %d never changed in %v", item, at)
		}
		all.AddAge(at-last, SitemapWeight)
	}
	got := float64(all.Posterior(0, 0))
	if want := 1 / mean.Seconds(); math.Abs(got-want) > 0.1*want {
		t.Errorf("rate from %d ages %.3g/s, want %.3g/s within 10%%", n, got, want)
	}

	prior := RateOf(time.Hour)
	tests := []struct {
		name   string
		tau    time.Duration
		weight float64
		want   float64
	}{
		{"none", 0, SitemapWeight, float64(prior)},
		{"quiet for ten hours, a sitemap's", 10 * time.Hour, SitemapWeight, 1.5 / (3600 + 0.5*36000)},
		{"quiet for ten hours, a header's", 10 * time.Hour, 1, 2 / (3600 + 36000.0)},
	}
	for _, tc := range tests {
		var e Evidence
		e.AddAge(tc.tau, tc.weight)
		if got := float64(e.Posterior(prior, PriorWeight)); math.Abs(got-tc.want) > 1e-9*tc.want {
			t.Errorf("%s: rate %.4g/s, want %.4g/s", tc.name, got, tc.want)
		}
		if e.Changes() != 0 {
			t.Errorf("%s: an age counts as %d changes seen, want none", tc.name, e.Changes())
		}
	}
}
