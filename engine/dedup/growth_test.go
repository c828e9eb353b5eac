package dedup

import (
	"fmt"
	"runtime/metrics"
	"testing"
	"time"

	"lidi/internal/gcpace"
	"lidi/internal/race"
)

// TestObserveAllocatesInSteps observes 100,000 pages and checks that no
// decision allocates more than a few chunks of slots in any of the
// detector's tables, however large they are: the tables that grow
// together (URL id, the four bands, path, last segment, title: every page
// goes in each) allocated their larger slots whole, 24 to 38 MB in one
// decision at 460,000 to 740,000 pages of a crawl, which held its loop 59
// to 119 ms.
func TestObserveAllocatesInSteps(t *testing.T) {
	const pages = 100_000
	ps := benchPages(pages)
	d := New(Config{})
	tabs := d.tables()
	before := make([]int, len(tabs))
	most := make([]int, len(tabs))
	for _, p := range ps {
		for k, tab := range tabs {
			before[k] = tab.allocated()
		}
		d.Observe(p)
		for k, tab := range tabs {
			most[k] = max(most[k], tab.allocated()-before[k])
		}
	}
	if n := d.ids.cur.n; n < 16*chunkSlots {
		t.Fatalf("the URL ids' table holds %d slots, want a test whose tables outgrow many chunks", n)
	}
	for k, tab := range tabs {
		if most[k] > 4*chunkSlots {
			t.Errorf("table %d (%d slots): a decision allocated %d slots in it, want at most %d (4 chunks)", k, tab.cur.n, most[k], 4*chunkSlots)
		}
	}
}

// BenchmarkObserveWorst observes the pages of BenchmarkDetectorMemory's
// crawl, 600,000 of them, under the collector's pacing that a crawl runs
// with (memory.gc_headroom_mb and heap_limit_mb's defaults), and ends
// with a key=value line: the longest single decision in wall time and
// the most one decision allocated (what its growing tables took at once).
func BenchmarkObserveWorst(b *testing.B) {
	const pages = 600_000
	ps := benchPages(pages)
	defer gcpace.Start(1536, 32)() // engine/config's defaults: it imports this package
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var worst time.Duration
	var worstAlloc, mostAlloc uint64
	var worstAt int
	for b.Loop() {
		d := New(Config{})
		worst, worstAlloc, mostAlloc = 0, 0, 0
		for i, p := range ps {
			a := allocated()
			t0 := time.Now()
			d.Observe(p)
			took := time.Since(t0)
			n := allocated() - a
			mostAlloc = max(mostAlloc, n)
			if took > worst {
				worst, worstAlloc, worstAt = took, n, i
			}
		}
	}
	b.ReportMetric(worst.Seconds()*1000, "worst_ms")
	b.ReportMetric(float64(mostAlloc)/(1<<20), "most_alloc_mb")
	fmt.Printf("observe_worst pages=%d worst_ms=%.3f worst_at=%d worst_alloc_mb=%.3f most_alloc_mb=%.3f\n",
		pages, worst.Seconds()*1000, worstAt, float64(worstAlloc)/(1<<20), float64(mostAlloc)/(1<<20))
}

// TestObserveDirectoriesAllocateInSteps observes pages each in a directory
// of its own, so that the directories' records outgrow many chunks, and
// checks that no decision allocates more than 2 MB at once (the string
// arena's 1 MiB chunk and a few chunks of records and tables): kept in
// a slice grown by append, they were copied whole each time it grew by a
// quarter (38 MB in one decision at 2,860,000 URLs of a crawl, beside the
// 31 MB it replaced).
func TestObserveDirectoriesAllocateInSteps(t *testing.T) {
	race.SkipSingleGoroutine(t)
	const pages = 120_000
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	allocated := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	d := New(Config{})
	var most uint64
	for i := range pages {
		url := fmt.Sprintf("http://www.site%d.example/d%d/e/p.html", i%50, i)
		p := Page{ID: ID(url), URL: url, Digest: uint64(i), Simhash: uint64(i) * 0x9e3779b97f4a7c15, Main: uint64(i) * 0xbf58476d1ce4e5b9, Title: uint64(i), Status: 200}
		p.NoURL = p.Simhash
		a := allocated()
		d.Observe(p)
		most = max(most, allocated()-a)
	}
	if n := d.dirs.len(); n < 2*pages {
		t.Fatalf("%d directories stored, want at least %d (two a page)", n, 2*pages)
	}
	if most > 2<<20 {
		t.Errorf("a decision allocated %.2f MB at once with %d directories stored, want at most 2 MB", float64(most)/(1<<20), d.dirs.len())
	}
}
