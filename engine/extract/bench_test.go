package extract

import (
	"bytes"
	"fmt"
	"io"
	"net/url"
	"testing"

	"golang.org/x/net/html"

	"lidi/engine/cputime"
	"lidi/engine/simweb"
)

// BenchmarkLinks measures extraction from a 20 KB news page with 53 <a>
// elements (benchmark fixture testdata/bench.html), reusing one Result as
// the crawler does.
func BenchmarkLinks(b *testing.B) {
	body := readFixture(b, "bench.html")
	page := mustURL(b, "https://www.example.com/news/2024/05/a-day-on-the-web.html")
	var r Result
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Links(body, "text/html; charset=utf-8", page, &r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(r.Links)), "links/page")
}

// BenchmarkLinksWeb extracts the links of 358 pages of a simweb, the
// pages `lidi bench crawl` fetches, one after the other, as the crawler
// does (one Result reused), and reports the thread's CPU time a page
// (cpu_ns_per_page), which a loaded machine moves less than the wall
// time, and the allocations a page.
func BenchmarkLinksWeb(b *testing.B) {
	w, err := simweb.Generate(simweb.Options{Seed: 1, Sites: 50})
	if err != nil {
		b.Fatal(err)
	}
	var bodies [][]byte
	var pages []*url.URL
	size := 0
	for p := 0; p < w.NumPages(); p += 7 {
		bodies = append(bodies, w.Render(p))
		pages = append(pages, mustURL(b, w.URL(p)))
		size += len(bodies[len(bodies)-1])
	}
	var r Result
	b.SetBytes(int64(size))
	b.ReportAllocs()
	t := cputime.Start()
	links := 0
	for b.Loop() {
		links = 0
		for k, body := range bodies {
			if err := Links(body, "text/html; charset=utf-8", pages[k], &r); err != nil {
				b.Fatal(err)
			}
			links += len(r.Links)
		}
	}
	b.ReportMetric(float64(t.Elapsed().Nanoseconds())/float64(b.N)/float64(len(bodies)), "cpu_ns_per_page")
	b.ReportMetric(float64(links)/float64(len(bodies)), "links/page")
}

// BenchmarkLinksLatin1 is the same page labelled windows-1252 with one
// non-ASCII byte, so that it must be decoded first.
func BenchmarkLinksLatin1(b *testing.B) {
	body := append(bytes.Clone(readFixture(b, "bench.html")), []byte("<p>caf\xe9</p>")...)
	page := mustURL(b, "https://www.example.com/news/2024/05/a-day-on-the-web.html")
	var r Result
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Links(body, "text/html; charset=windows-1252", page, &r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTokenizeOnly is the floor: the tokenizer alone on the same page.
func BenchmarkTokenizeOnly(b *testing.B) {
	body := readFixture(b, "bench.html")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		z := html.NewTokenizer(bytes.NewReader(body))
		for z.Next() != html.ErrorToken {
		}
		if z.Err() != io.EOF {
			b.Fatal(z.Err())
		}
	}
}

// BenchmarkParseTree is html.Parse on the same page, for comparison with
// the tokenizer.
func BenchmarkParseTree(b *testing.B) {
	body := readFixture(b, "bench.html")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := html.Parse(bytes.NewReader(body)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLinksRealPages extracts the links of the real pages in testdata
// (a university home page with 16 scripts, a blog page, a Jargon File
// page), one after another.
func BenchmarkLinksRealPages(b *testing.B) {
	var bodies [][]byte
	var size int64
	for _, name := range []string{"realweb-stanford.html", "realweb-sinewalker.html", "realweb-jargon.html"} {
		body := readFixture(b, name)
		bodies = append(bodies, body)
		size += int64(len(body))
	}
	page := mustURL(b, "https://www.example.com/a/b.html")
	var r Result
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, body := range bodies {
			if err := Links(body, "text/html", page, &r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkScannerVsTokenizer reads the tokens of the benchmark page and
// the real pages in testdata with the scanner and with html.Tokenizer,
// reading every tag's href as Extract does. It ends with a key=value line.
func BenchmarkScannerVsTokenizer(b *testing.B) {
	var bodies [][]byte
	var size int64
	for _, name := range []string{"bench.html", "realweb-stanford.html", "realweb-sinewalker.html", "realweb-jargon.html"} {
		body := readFixture(b, name)
		bodies = append(bodies, body)
		size += int64(len(body))
	}
	var scanNs, tokNs float64
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, body := range bodies {
				s := newScanner(body)
				for tt := s.next(); tt != html.ErrorToken; tt = s.next() {
					if tt == html.StartTagToken {
						tagAttrs(s, "href", "")
					}
				}
			}
		}
		scanNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("tokenizer", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, body := range bodies {
				z := html.NewTokenizer(bytes.NewReader(body))
				for tt := z.Next(); tt != html.ErrorToken; tt = z.Next() {
					if tt == html.StartTagToken {
						attrs2(z, "href", "")
					}
				}
			}
		}
		tokNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	fmt.Printf("extract_scan bytes=%d scanner_mb_s=%.0f tokenizer_mb_s=%.0f speedup=%.2f\n",
		size, float64(size)/scanNs*1e3, float64(size)/tokNs*1e3, tokNs/scanNs)
}
