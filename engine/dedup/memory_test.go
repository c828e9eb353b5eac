package dedup

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"lidi/engine/cputime"
)

// BenchmarkDetectorMemory observes the pages of a crawl of 400 sites
// (URLs in about 40 directories a site, about 60 bytes long, a page in five with a
// query, a page in ten a listing) and reports what the detector holds per
// page: the live heap it grew by (heap_bytes_per_page) and its own
// estimate (Stats.Bytes, est_bytes_per_page, what `lidi bench crawl`
// reports as detection_bytes_per_url).
func BenchmarkDetectorMemory(b *testing.B) {
	const pages = 200_000
	ps := benchPages(pages)
	var heap, est float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		d := New(Config{})
		for _, p := range ps {
			d.Observe(p)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = float64(after.HeapAlloc-before.HeapAlloc) / pages
		est = float64(d.Stats().Bytes) / pages
		runtime.KeepAlive(d)
	}
	b.ReportMetric(heap, "heap_bytes_per_page")
	b.ReportMetric(est, "est_bytes_per_page")
}

// BenchmarkObserve observes the pages BenchmarkDetectorMemory does and
// reports the CPU time of a decision per page (cpu_ns_per_page, the
// thread's CPU clock, as the engine measures detection): the indexes,
// their growth, the look-ups of suspects, without fingerprints. On a
// shared machine the wall time (ns/op) moves with the load; this does
// far less.
func BenchmarkObserve(b *testing.B) {
	const pages = 200_000
	ps := benchPages(pages)
	var cpu time.Duration
	for b.Loop() {
		d := New(Config{})
		t := cputime.Start()
		for _, p := range ps {
			d.Observe(p)
		}
		cpu += t.Elapsed()
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/pages, "cpu_ns_per_page")
}

// benchPages returns n pages of a crawl of 400 sites (URLs in about 40
// directories a site, about 60 bytes long, a page in five with a query,
// a page in ten a listing), with random fingerprints.
func benchPages(n int) []Page {
	r := rand.New(rand.NewPCG(7, 11))
	g := newTextGen(3)
	ps := make([]Page, n)
	for i := range ps {
		site := r.IntN(400)
		dir := testVocab[(site*13+r.IntN(8))%len(testVocab)]
		url := fmt.Sprintf("http://www.site%d.example/%s/%d/%s-%d.html", site, dir, r.IntN(5), g.word(), i)
		if i%5 == 0 {
			url += fmt.Sprintf("?%s=%d", g.word(), r.IntN(100))
		}
		p := Page{ID: ID(url), URL: url, Digest: r.Uint64(), Simhash: r.Uint64(), Main: r.Uint64(), Title: r.Uint64(), Status: 200}
		p.NoURL = p.Simhash
		if i%10 == 0 {
			p.Items = r.Uint64() | 1
		}
		if i%3 == 0 {
			p.LastModified = 1_700_000_000 + int64(r.IntN(1e7))
		}
		ps[i] = p
	}
	return ps
}
