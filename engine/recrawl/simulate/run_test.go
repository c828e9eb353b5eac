package simulate

import (
	"math"
	"testing"
	"time"

	"lidi/engine/recrawl"
	"lidi/engine/recrawl/change"
)

// TestSARSSShape checks what SARSS's argument rests on, on a week of a
// small set-up: FIXED submits the same tasks whatever the capacity; under
// REC, IIR and ICR submit fewer tasks than FIXED and lose fewer to full and
// timed-out queues; they reassign.
func TestSARSSShape(t *testing.T) {
	run := func(setup string, p recrawl.PolicyName) *Result {
		t.Helper()
		s, err := SARSS(setup, 400, 7, 1)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(s, p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	fixed := run("rec", recrawl.Fixed)
	if ruc := run("ruc", recrawl.Fixed); ruc.Tasks != fixed.Tasks {
		t.Errorf("FIXED submitted %d tasks under REC, %d under RUC", fixed.Tasks, ruc.Tasks)
	}
	for _, p := range []recrawl.PolicyName{recrawl.IIR, recrawl.ICR} {
		r := run("rec", p)
		if r.Tasks >= fixed.Tasks || r.Cancelled+r.Dropped >= fixed.Cancelled+fixed.Dropped {
			t.Errorf("REC: %s submitted %d tasks (%d cancelled or dropped), FIXED %d (%d)", p,
				r.Tasks, r.Cancelled+r.Dropped, fixed.Tasks, fixed.Cancelled+fixed.Dropped)
		}
		if r.Reassignments == 0 {
			t.Errorf("REC: %s never reassigned", p)
		}
	}
}

// TestEveryPolicyRuns runs every policy on both set-ups for a day: the
// measures are in range and a run is a function of its set-up.
func TestEveryPolicyRuns(t *testing.T) {
	for _, setup := range []string{"rec", "ruc"} {
		s, err := SARSS(setup, 200, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range recrawl.PolicyNames() {
			if p.PerPage() {
				continue // Pages simulates it
			}
			r, err := Run(s, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Freshness < 0 || r.Freshness > 1 || r.Age < 0 || r.SuccessRate > 1 || r.Tasks == 0 || r.Demand <= 0 {
				t.Errorf("%s/%s: %+v", setup, p, r)
			}
			if p == recrawl.IIR {
				again, err := Run(s, p)
				if err != nil {
					t.Fatal(err)
				}
				if again.Tasks != r.Tasks || again.Freshness != r.Freshness {
					t.Errorf("%s/%s: two runs of one set-up differ", setup, p)
				}
			}
		}
	}
	if _, err := SARSS("big", 10, 1, 1); err == nil {
		t.Error("an unknown set-up is accepted")
	}
}

// TestWolfOrder: for Poisson pages, optimal < uniform < proportional in
// staleness, analytically and against the ground truth; and the simulated
// staleness of the equally spaced crawls agrees with Wolf's formula.
func TestWolfOrder(t *testing.T) {
	rows, err := Wolf(WolfSetup{Pages: 300, Q: 0, MeanRate: 1.5, Horizon: 24 * time.Hour,
		Ratios: []float64{1.5, 3}, Kinds: []change.Kind{change.Poisson}, Intervals: 60, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		a := row.Analytic
		if !(a[OptimalAlloc] < a[Uniform] && a[Uniform] < a[Proportional]) {
			t.Errorf("R/N %g analytic: %v", row.Ratio, a)
		}
		sim := row.Simulated[change.Poisson]
		if !(sim[OptimalAlloc] < sim[Uniform] && sim[Uniform] < sim[Proportional]) {
			t.Errorf("R/N %g simulated: %v", row.Ratio, sim)
		}
		w := row.Weighted
		if !(w[OptimalAlloc] < w[UnweightedOptimal] && w[OptimalAlloc] < w[Uniform] && w[OptimalAlloc] < w[Proportional]) {
			t.Errorf("R/N %g weighted: %v; the weighted optimum should beat them all", row.Ratio, w)
		}
		for _, al := range Allocations() {
			if d := sim[al] - a[al]; d > 0.01 || d < -0.01 {
				t.Errorf("R/N %g %s: simulated %.4f, analytic %.4f", row.Ratio, al, sim[al], a[al])
			}
		}
	}
}

// The freshness curve samples the ground truth: fresh copies at the start
// unless they come from the warm-up visits (WarmupCopies), and a
// time-average of the samples close to the integrated freshness, with or
// without them.
func TestFreshnessSamples(t *testing.T) {
	s, err := SARSS("ruc", 300, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	s.Sample = 10 * time.Minute
	for _, warm := range []bool{false, true} {
		s.WarmupCopies = warm
		r, err := Run(s, recrawl.IIR)
		if err != nil {
			t.Fatal(err)
		}
		first := r.Series[0].Fresh
		if warm && first >= 0.9 || !warm && first != 1 {
			t.Errorf("warm-up copies %v: freshness %.3f at the start", warm, first)
		}
		var sum float64
		for _, smp := range r.Series {
			sum += smp.Fresh
		}
		if mean := sum / float64(len(r.Series)); math.Abs(mean-r.Freshness) > 0.03 {
			t.Errorf("warm-up copies %v: samples average %.3f, integrated freshness %.3f", warm, mean, r.Freshness)
		}
		if r.Age < 0 {
			t.Errorf("warm-up copies %v: age %v", warm, r.Age)
		}
	}
}

// Given channels replace the drawn ones: their changes are what the
// freshness measures.
func TestGivenChannels(t *testing.T) {
	s, err := SARSS("ruc", 0, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	given := func(mean time.Duration) []Channel {
		var out []Channel
		for i := range 40 {
			m := change.Model{Kind: change.Poisson, Mean: mean}
			out = append(out, Channel{Group: i % len(s.GroupShare), Pages: 10, Changes: func() *change.Stream { return m.Stream(4, uint64(i)) }})
		}
		return out
	}
	for _, tt := range []struct {
		mean     time.Duration
		min, max float64
	}{
		{10000 * time.Hour, 0.99, 1}, // changes hardly ever
		{time.Minute, 0, 0.25},       // changes about as often as the fastest recrawl
	} {
		s.Given = given(tt.mean)
		r, err := Run(s, recrawl.Fixed)
		if err != nil {
			t.Fatal(err)
		}
		if r.Freshness < tt.min || r.Freshness > tt.max || len(r.Groups) != len(s.GroupShare) {
			t.Errorf("channels changing every %v: freshness %.3f, want in [%g, %g]", tt.mean, r.Freshness, tt.min, tt.max)
		}
	}
	s.Given[3].Group = 99
	if _, err := Run(s, recrawl.Fixed); err == nil {
		t.Error("a channel in no group is accepted")
	}
}
