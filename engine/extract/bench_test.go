package extract

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/net/html"
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
