package sitemap

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkRead reads a urlset of the protocol's 50,000 entries, each with
// a lastmod, and reports its speed and the heap it held at the most.
func BenchmarkRead(b *testing.B) {
	var file bytes.Buffer
	file.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset ` + ns + `>`)
	for i := range MaxEntries {
		fmt.Fprintf(&file, "<url><loc>https://example.org/section/page-%d.html</loc><lastmod>2025-06-%02dT10:00:00+00:00</lastmod></url>\n", i, i%28+1)
	}
	file.WriteString("</urlset>")
	data := file.Bytes()
	src := Source{URL: "https://example.org/sitemap.xml"}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	n := 0
	for b.Loop() {
		st, err := Read(bytes.NewReader(data), src, Limits{}, func(Entry) error { n++; return nil })
		if err != nil || st.Entries != MaxEntries {
			b.Fatal(st, err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	fmt.Printf("bench=sitemap_read entries=%d bytes=%d ns_per_entry=%.0f mb_per_s=%.1f total_alloc_per_file=%d\n",
		MaxEntries, len(data), perOp/MaxEntries, float64(len(data))/perOp*1e3, (after.TotalAlloc-before.TotalAlloc)/uint64(b.N))
}
