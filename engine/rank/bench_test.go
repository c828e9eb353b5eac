package rank

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time the process has used. The benchmarks report
// it next to wall time because the machine they run on is shared.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPageRank1M measures a full recomputation (transpose included) on
// 1,000,000 nodes and about 10,000,000 edges, from a uniform start and from a
// warm start on a graph grown by 1%.
func BenchmarkPageRank1M(b *testing.B) {
	const n = 1_000_000
	g := bigGraph(b, n, 10, 1)
	b.Logf("graph: %d nodes, %d edges", g.NumNodes(), g.NumEdges())
	var prev Result
	b.Run("cold", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			r, err := PageRank(g, Options{})
			if err != nil {
				b.Fatal(err)
			}
			prev = r
		}
		b.ReportMetric(float64(prev.Iterations), "iterations")
		b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op")
	})
	b.Run("cold-tol1e-7", func(b *testing.B) {
		var r Result
		for b.Loop() {
			var err error
			if r, err = PageRank(g, Options{Tolerance: 1e-7}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(r.Iterations), "iterations")
	})
	// Grow the graph by 1% of edges, as between two recomputations of a crawl.
	offsets := make([]int64, n+1)
	targets := make([]int32, 0, g.NumEdges()+g.NumEdges()/100)
	rng := rand.New(rand.NewPCG(5, 5))
	for v := range int32(n) {
		targets = append(targets, g.Out(v)...)
		if rng.IntN(10) == 0 {
			targets = append(targets, int32(rng.IntN(n)))
		}
		offsets[v+1] = int64(len(targets))
	}
	g2, err := FromCSR(offsets, targets)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("warm", func(b *testing.B) {
		var r Result
		c0 := cpuTime()
		for b.Loop() {
			r, err = PageRank(g2, Options{Start: prev.Scores})
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(r.Iterations), "iterations")
		b.ReportMetric((cpuTime()-c0).Seconds()/float64(b.N), "cpu-s/op")
	})
	b.Run("transpose", func(b *testing.B) {
		for b.Loop() {
			g.Transpose()
		}
	})
}
