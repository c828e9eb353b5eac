package robots

import (
	"bytes"
	"fmt"
	"testing"
)

// benchPaths mix allowed and disallowed, matching and non-matching paths
// against warc_http_ajax.googleapis.com.txt (a real file of about 200 rules).
var benchPaths = []string{
	"/ajax/libs/jquery/3.7.1/jquery.min.js",
	"/search?q=robots+txt",
	"/news/directory/world",
	"/maps/api/js?sensor=false&key=abc",
	"/setnewsprefs?hl=en",
	"/",
	"/books/feeds/volumes?q=x",
	"/%7Euser/page%2fwith%2Fescapes",
}

func BenchmarkAllowed(b *testing.B) {
	r := FromResponse(200, readTestFile(b, "warc_http_ajax.googleapis.com.txt"))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Allowed(lidiUA, benchPaths[i%len(benchPaths)])
	}
}

func BenchmarkAllowedWildcards(b *testing.B) {
	r := FromResponse(200, readTestFile(b, "crawlercommons_wildcards.txt"))
	paths := []string{"/gp/registry/wishlist/123/reserve", "/wishlist/universal-x", "/gp/product/B000", "/dp/shipping/x"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		r.Allowed(lidiUA, paths[i%len(paths)])
	}
}

func BenchmarkAllowedParallel(b *testing.B) {
	r := FromResponse(200, readTestFile(b, "warc_http_ajax.googleapis.com.txt"))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			r.Allowed(lidiUA, benchPaths[i%len(benchPaths)])
			i++
		}
	})
}

func BenchmarkFromResponse(b *testing.B) {
	body := readTestFile(b, "warc_http_ajax.googleapis.com.txt")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		FromResponse(200, body)
	}
}

// BenchmarkFromResponseMaxBody parses a file of MaxBodySize octets of
// distinct rules, the most work one robots.txt can cause.
func BenchmarkFromResponseMaxBody(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString("User-agent: *\n")
	for i := 0; buf.Len() < MaxBodySize; i++ {
		fmt.Fprintf(&buf, "Disallow: /section-%d/*/page-%d.html$\nAllow: /section-%d/public/\n", i%97, i, i)
	}
	body := buf.Bytes()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		FromResponse(200, body)
	}
}
