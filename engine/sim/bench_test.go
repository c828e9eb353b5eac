package sim

import (
	"context"
	"fmt"
	"testing"
	"time"

	"lidi/engine/simweb"
)

var benchWebs = map[int]*Web{}

// benchWeb generates (once per size) a simweb with Castillo-like site
// latency and bandwidth, measuring page sizes by rendering.
func benchWeb(b *testing.B, pages int) *Web {
	if w, ok := benchWebs[pages]; ok {
		return w
	}
	t0 := time.Now()
	sw, err := simweb.Generate(simweb.Options{Seed: 1, Sites: pages / 50, Pages: pages,
		LatencyMedian: 250 * time.Millisecond, BandwidthMedian: 50_000})
	if err != nil {
		b.Fatal(err)
	}
	w := FromSimweb(sw, 10)
	b.Logf("web of %d pages, %d links ready in %v", pages, w.Graph.NumEdges(), time.Since(t0).Round(time.Millisecond))
	benchWebs[pages] = w
	return w
}

// BenchmarkRun simulates whole crawls with w = 15 s. Run it with
// -benchtime=1x: one op is a crawl of every page. The 1,000,000-page web
// takes about half a minute to generate and render before the timing starts.
func BenchmarkRun(b *testing.B) {
	for _, c := range []struct {
		pages    int
		strategy string
		r        int
	}{
		{200_000, "length", 256},
		{1_000_000, "length", 1},
		{1_000_000, "length", 256},
		{1_000_000, "depth", 256},
		{1_000_000, "optimal", 256},
		{1_000_000, "partial", 256},
		{1_000_000, "batch", 256},
	} {
		b.Run(fmt.Sprintf("%s/pages=%d/r=%d", c.strategy, c.pages, c.r), func(b *testing.B) {
			w := benchWeb(b, c.pages)
			var res *Result
			for b.Loop() {
				s, err := NewStrategy(c.strategy, w, 0)
				if err != nil {
					b.Fatal(err)
				}
				res, err = Run(context.Background(), w, s, Options{Robots: c.r, PagesPerVisit: 1, Delay: 15 * time.Second, Bandwidth: 2_000_000})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Pages())/res.Wall.Seconds(), "pages/s")
			b.ReportMetric(res.Elapsed.Hours(), "virtual-h")
		})
	}
}
