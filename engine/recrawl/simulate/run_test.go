package simulate

import (
	"testing"
	"time"

	"lidi/engine/recrawl"
	"lidi/engine/recrawl/change"
)

// TestSARSSShape runs both set-ups small and checks what SARSS's argument
// rests on: FIXED submits the same tasks whatever the capacity; under REC,
// IIR and ICR submit fewer tasks than FIXED and lose fewer to cancelled
// queues; a run is a function of its set-up; freshness is a share.
func TestSARSSShape(t *testing.T) {
	results := map[string]map[recrawl.PolicyName]*Result{}
	for _, name := range []string{"rec", "ruc"} {
		s, err := SARSS(name, 400, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		results[name] = map[recrawl.PolicyName]*Result{}
		for _, p := range recrawl.PolicyNames() {
			r, err := Run(s, p)
			if err != nil {
				t.Fatal(err)
			}
			if r.Freshness < 0 || r.Freshness > 1 || r.Age < 0 || r.SuccessRate > 1 {
				t.Errorf("%s/%s: freshness %g, age %v, success %g", name, p, r.Freshness, r.Age, r.SuccessRate)
			}
			results[name][p] = r
		}
	}
	rec, ruc := results["rec"], results["ruc"]
	if rec[recrawl.Fixed].Tasks != ruc[recrawl.Fixed].Tasks {
		t.Errorf("FIXED submitted %d tasks under REC, %d under RUC", rec[recrawl.Fixed].Tasks, ruc[recrawl.Fixed].Tasks)
	}
	for _, p := range []recrawl.PolicyName{recrawl.IIR, recrawl.ICR} {
		if rec[p].Tasks >= rec[recrawl.Fixed].Tasks || rec[p].Cancelled+rec[p].Dropped >= rec[recrawl.Fixed].Cancelled+rec[recrawl.Fixed].Dropped {
			t.Errorf("REC: %s submitted %d tasks (%d cancelled or dropped), FIXED %d (%d)", p,
				rec[p].Tasks, rec[p].Cancelled+rec[p].Dropped, rec[recrawl.Fixed].Tasks, rec[recrawl.Fixed].Cancelled+rec[recrawl.Fixed].Dropped)
		}
		if rec[p].Reassignments == 0 {
			t.Errorf("REC: %s never reassigned", p)
		}
	}
	s, _ := SARSS("rec", 400, 3, 1)
	again, err := Run(s, recrawl.IIR)
	if err != nil {
		t.Fatal(err)
	}
	if again.Tasks != rec[recrawl.IIR].Tasks || again.Freshness != rec[recrawl.IIR].Freshness {
		t.Error("two runs of one set-up differ")
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
		for _, al := range Allocations() {
			if d := sim[al] - a[al]; d > 0.01 || d < -0.01 {
				t.Errorf("R/N %g %s: simulated %.4f, analytic %.4f", row.Ratio, al, sim[al], a[al])
			}
		}
	}
}
