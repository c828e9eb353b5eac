package engine

import (
	"math"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// crawlGraph builds a linkGraph shaped like the 1,000,000-URL crawl of lidi
// bench crawl: n URLs known, the first fetched of them fetched in discovery
// order, each with about deg links (near the page, to popular pages, or
// anywhere).
func crawlGraph(n, fetched, deg int, seed uint64) *linkGraph {
	rng := rand.New(rand.NewPCG(seed, 3))
	g := &linkGraph{}
	for i := range n {
		g.add(uint64(i) + 1)
	}
	links := make([]int32, 0, 4*deg)
	for p := range fetched {
		links = links[:0]
		for range rng.IntN(2*deg + 1) {
			var t int
			switch rng.IntN(3) {
			case 0:
				t = min(max(p+rng.IntN(200)-50, 0), n-1)
			case 1:
				t = int(math.Exp(rng.Float64()*math.Log(float64(n)+1))) - 1
			default:
				t = rng.IntN(n)
			}
			links = append(links, int32(t))
		}
		g.fetched(int32(p), links)
	}
	return g
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCrawlPageRank1M is one background recomputation as a crawl runs
// it, on the engine's own graph (1,000,000 URLs, 820,000 fetched, about
// 10,000,000 links): rank.PageRankLists pushing along the link lists on
// one goroutine to 1e-7, cold and warm-started after 1% more pages.
func BenchmarkCrawlPageRank1M(b *testing.B) {
	const n, fetched = 1_000_000, 820_000
	g := crawlGraph(n, fetched-fetched/100, 12, 1)
	b.Logf("graph: %d nodes, %d fetched, %d links; %d MB kept for it", len(g.ids), len(g.pages), g.links,
		(cap(g.ids)*8+cap(g.pages)*4+cap(g.ends)*8+len(g.chunks)*linkChunk*4)>>20)
	var last []float64
	run := func(b *testing.B, v graphView, start []float64) {
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		c0 := cpuTime()
		var iters int
		var share float64
		for b.Loop() {
			res, s, err := v.pagerank(start)
			if err != nil {
				b.Fatal(err)
			}
			last, iters, share = res.Scores, res.Iterations, s
		}
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(iters), "iterations")
		b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op")
		b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N)/(1<<20), "MB-alloc/op")
		b.ReportMetric(share, "coverage")
	}
	b.Run("cold", func(b *testing.B) { run(b, g.view(), nil) })
	prev := last
	// 1% more pages fetched, with their links, as between two runs.
	rng := rand.New(rand.NewPCG(9, 9))
	for p := fetched - fetched/100; p < fetched; p++ {
		links := make([]int32, rng.IntN(25))
		for i := range links {
			links[i] = int32(rng.IntN(n))
		}
		g.fetched(int32(p), links)
	}
	b.Run("warm", func(b *testing.B) { run(b, g.view(), prev) })
}
