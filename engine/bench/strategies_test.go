package bench

import (
	"bytes"
	"context"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSampleCurve(t *testing.T) {
	// Ten pages of 0.1 each: coverage after n pages is n/10.
	cov := func(n int) float64 { return float64(n) / 10 }
	tests := []struct {
		name           string
		total, fetched int
		step           float64
		pages          []int
	}{
		{"every fifth", 10, 10, 0.2, []int{0, 2, 4, 6, 8, 10}},
		{"rounding and no repeats", 10, 10, 0.15, []int{0, 2, 3, 5, 6, 8, 9, 10}},
		{"stops at the last page fetched", 10, 7, 0.2, []int{0, 2, 4, 6, 7}},
		{"step past the end", 10, 10, 2, []int{0, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pts := sampleCurve(cov, tt.total, tt.fetched, tt.step)
			var pages []int
			for _, p := range pts {
				pages = append(pages, p.Pages)
				if p.Fraction != float64(p.Pages)/float64(tt.total) || p.Coverage != cov(p.Pages) {
					t.Errorf("point %+v", p)
				}
			}
			if !slices.Equal(pages, tt.pages) {
				t.Errorf("pages %v, want %v", pages, tt.pages)
			}
		})
	}
}

func TestCoverageAt(t *testing.T) {
	pts := []Point{{0, 0, 0}, {3, 0.3, 0.5}, {6, 0.6, 0.8}, {10, 1, 1}}
	for _, c := range []struct{ f, want float64 }{{0.1, 0}, {0.3, 0.5}, {0.5, 0.5}, {0.6, 0.8}, {1, 1}} {
		if got := coverageAt(pts, c.f); got != c.want {
			t.Errorf("coverageAt(%v) = %v, want %v", c.f, got, c.want)
		}
	}
}

func TestSpeedUps(t *testing.T) {
	h := time.Hour
	rows := []Speed{
		{Bandwidth: 100, Robots: 1, Whole: 100 * h, Half: 40 * h},
		{Bandwidth: 100, Robots: 64, Whole: 50 * h, Half: 4 * h},
		{Bandwidth: 10, Robots: 1, Whole: 200 * h, Half: 80 * h},
		{Bandwidth: 10, Robots: 64, Whole: 0},
	}
	speedUps(rows)
	want := [][2]float64{{1, 1}, {2, 10}, {0.5, 0.5}, {0, 0}}
	for i, w := range want {
		if rows[i].WholeSpeed != w[0] || rows[i].HalfSpeed != w[1] {
			t.Errorf("row %d: speed-ups %v, %v; want %v", i, rows[i].WholeSpeed, rows[i].HalfSpeed, w)
		}
	}
	var b bytes.Buffer
	writeSpeedTable(&b, rows, []int{1, 64})
	lines := strings.Split(b.String(), "\n")
	if got := strings.Fields(lines[2]); !slices.Equal(got, []string{"100", "1.0", "10.0", "1.0", "2.0"}) {
		t.Errorf("table row %q", lines[2])
	}
}

func TestCumulativeAndMaxDiff(t *testing.T) {
	rank := []float64{0.5, 0.3, 0.2}
	got := cumulative([]int32{1, 1, 0, 2}, rank) // a page counts once
	want := []float64{0.3, 0.3, 0.8, 1}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("cumulative %v, want %v", got, want)
		}
	}
	a := func(n int) float64 { return got[n-1] }
	b := func(n int) float64 { return []float64{0.5, 0.8, 0.9, 1}[n-1] }
	if d, at := maxDiff(a, b, 1, 4); math.Abs(d-0.5) > 1e-12 || at != 2 {
		t.Errorf("maxDiff = %v at %d, want 0.5 at 2", d, at)
	}
	if d, at := maxDiff(a, b, 3, 4); math.Abs(d-0.1) > 1e-12 || at != 3 {
		t.Errorf("maxDiff from 3 = %v at %d, want 0.1 at 3", d, at)
	}
}

func TestCurvesCSV(t *testing.T) {
	curves := []Curve{
		{Robots: 64, Strategy: "length", Points: []Point{{0, 0, 0}, {5, 0.5, 0.75}}},
		{Robots: 64, Strategy: "length", Points: []Point{{10, 1, 1}}},
	}
	var b bytes.Buffer
	if err := writeCurvesCSV(&b, curves, []string{"real", "sim"}); err != nil {
		t.Fatal(err)
	}
	want := "run,r,strategy,pages,fraction,coverage\n" +
		"real,64,length,0,0.000000,0.000000\n" +
		"real,64,length,5,0.500000,0.750000\n" +
		"sim,64,length,10,1.000000,1.000000\n"
	if b.String() != want {
		t.Errorf("CSV\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeCurvesCSV(&b, curves[:1], nil)
	if !strings.HasPrefix(b.String(), "r,strategy,pages,fraction,coverage\n64,length,0,") {
		t.Errorf("CSV without runs:\n%s", b.String())
	}
}

// TestStrategiesRun runs the whole benchmark on a tiny web, the real crawl
// included, and checks its results and files.
func TestStrategiesRun(t *testing.T) {
	t.Parallel()
	fs := flag.NewFlagSet("bench strategies", flag.ContinueOnError)
	var o StrategiesOptions
	o.RegisterFlags(fs)
	out := t.TempDir()
	err := fs.Parse([]string{"--sites", "30", "--pages", "600", "--r", "1,8", "--bandwidths", "2000000,20000",
		"--real-sites", "12", "--real-pages", "240", "--real-r", "4", "--real-w", "2ms", "--real-latency", "1ms", "--out", out})
	if err != nil {
		t.Fatal(err)
	}
	o.OpenStore = openTestStore
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	res, err := Strategies(ctx, o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if len(res.Curves) != 2*5 {
		t.Fatalf("%d curves, want 10", len(res.Curves))
	}
	for _, c := range res.Curves {
		last := c.Points[len(c.Points)-1]
		if last.Pages != res.Collection || last.Fraction != 1 || math.Abs(last.Coverage-1) > 1e-9 {
			t.Errorf("%s r=%d ends at %+v, want the whole collection (%d pages) and coverage 1", c.Strategy, c.Robots, last, res.Collection)
		}
	}
	if len(res.Speeds) != 4 || res.Speeds[0].HalfSpeed != 1 || res.Speeds[0].WholeSpeed != 1 {
		t.Errorf("speeds %+v", res.Speeds)
	}
	// The real crawl fetches exactly what the simulation does: the
	// collection, every page answering 200.
	if res.RealPages != res.RealCollection || res.SimPages != res.RealCollection || res.RealOther != 0 {
		t.Errorf("real crawl %d pages (%d other answers), simulated %d, collection %d", res.RealPages, res.RealOther, res.SimPages, res.RealCollection)
	}
	for _, name := range []string{"coverage.csv", "speedup.csv", "fig6.13.csv", "strategies.png", "results.txt"} {
		st, err := os.Stat(filepath.Join(out, name))
		if err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	csv, err := os.ReadFile(filepath.Join(out, "coverage.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, c := range res.Curves {
		rows += len(c.Points)
	}
	if got := strings.Count(string(csv), "\n"); got != rows+1 {
		t.Errorf("coverage.csv has %d lines, want %d", got, rows+1)
	}
	png, _ := os.ReadFile(filepath.Join(out, "strategies.png"))
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Error("strategies.png is not a PNG")
	}
}
