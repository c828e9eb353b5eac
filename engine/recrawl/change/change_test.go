package change

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"
)

func TestStreamMeanAndDeterminism(t *testing.T) {
	tests := []struct {
		name string
		m    Model
		tol  float64 // relative tolerance on the mean gap
	}{
		{"poisson", Model{Kind: Poisson, Mean: time.Hour}, 0.03},
		{"pareto", Model{Kind: Pareto, Mean: time.Hour, Alpha: 2.5}, 0.08},
		{"quasi", Model{Kind: Quasi, Mean: time.Hour, P: 0.25}, 0.03},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.m.Validate(); err != nil {
				t.Fatal(err)
			}
			const horizon = 5000 * time.Hour
			var n int
			for item := range uint64(4) {
				h := tt.m.Times(7, item, horizon)
				again := tt.m.Times(7, item, horizon)
				if len(h) != len(again) || (len(h) > 0 && h[len(h)-1] != again[len(again)-1]) {
					t.Fatalf("item %d: two streams of one seed differ", item)
				}
				for i := 1; i < len(h); i++ {
					if h[i] < h[i-1] {
						t.Fatalf("item %d: times out of order at %d", item, i)
					}
				}
				n += len(h)
			}
			gap := 4 * horizon.Seconds() / float64(n)
			if rel := math.Abs(gap/tt.m.Mean.Seconds() - 1); rel > tt.tol {
				t.Errorf("mean gap %.0fs, want %.0fs within %.0f%%", gap, tt.m.Mean.Seconds(), 100*tt.tol)
			}
			other := tt.m.Times(8, 0, horizon)
			if len(other) > 0 && len(other) == len(tt.m.Times(7, 0, horizon)) && other[0] == tt.m.Times(7, 0, horizon)[0] {
				t.Error("seeds 7 and 8 give the same stream")
			}
		})
	}
}

func TestQuasiChangesOnlyAtPotentialTimes(t *testing.T) {
	m := Model{Kind: Quasi, Mean: 4 * time.Hour, P: 0.5}
	h := m.Times(1, 3, 500*time.Hour)
	period := 2 * time.Hour
	for i := 1; i < len(h); i++ {
		gap := h[i] - h[i-1]
		k := math.Round(float64(gap) / float64(period))
		if k < 1 || math.Abs(float64(gap)-k*float64(period)) > float64(time.Millisecond) {
			t.Fatalf("gap %v is not a multiple of the period %v", gap, period)
		}
	}
}

func TestHistory(t *testing.T) {
	h := History{10 * time.Second, 20 * time.Second, 30 * time.Second}
	tests := []struct {
		at      time.Duration
		version int
		last    time.Duration
		hasLast bool
		first   time.Duration
		hasNext bool
	}{
		{0, 0, 0, false, 10 * time.Second, true},
		{10 * time.Second, 1, 10 * time.Second, true, 20 * time.Second, true},
		{25 * time.Second, 2, 20 * time.Second, true, 30 * time.Second, true},
		{40 * time.Second, 3, 30 * time.Second, true, 0, false},
	}
	for _, tt := range tests {
		if v := h.Version(tt.at); v != tt.version {
			t.Errorf("Version(%v) = %d, want %d", tt.at, v, tt.version)
		}
		if l, ok := h.LastAt(tt.at); l != tt.last || ok != tt.hasLast {
			t.Errorf("LastAt(%v) = %v %v, want %v %v", tt.at, l, ok, tt.last, tt.hasLast)
		}
		if f, ok := h.FirstAfter(tt.at); f != tt.first || ok != tt.hasNext {
			t.Errorf("FirstAfter(%v) = %v %v, want %v %v", tt.at, f, ok, tt.first, tt.hasNext)
		}
	}
	if !h.Changed(5*time.Second, 10*time.Second) || h.Changed(10*time.Second, 19*time.Second) {
		t.Error("Changed is wrong at the boundaries")
	}
}

func TestValidateAndParse(t *testing.T) {
	bad := []Model{
		{Kind: Poisson},
		{Kind: Pareto, Mean: time.Hour, Alpha: 0.9},
		{Kind: Quasi, Mean: time.Hour, P: 1.5},
		{Kind: Kind(9), Mean: time.Hour},
	}
	for _, m := range bad {
		if err := m.Validate(); !errors.Is(err, ErrBadModel) {
			t.Errorf("Validate(%+v) = %v, want ErrBadModel", m, err)
		}
	}
	for _, k := range Kinds() {
		got, err := ParseKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k.String(), got, err)
		}
	}
	if _, err := ParseKind("weibull"); !errors.Is(err, ErrBadModel) {
		t.Errorf("ParseKind(weibull) = %v, want ErrBadModel", err)
	}
}

func ExampleModel_Times() {
	m := Model{Kind: Poisson, Mean: time.Hour}
	h := m.Times(1, 42, 24*time.Hour)
	fmt.Println(h.Version(24*time.Hour) == len(h), h.Changed(0, 24*time.Hour) == (len(h) > 0))
	// Output: true true
}
