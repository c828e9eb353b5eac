package urlnorm

import (
	"net/url"
	"testing"
)

// benchRefs are hrefs as they appear on a typical page.
var benchRefs = []string{
	"/",
	"/news/2024/05/story-of-the-day.html",
	"../archive/index.html",
	"story.html?id=12345&utm_source=homepage&utm_medium=web",
	"https://www.example.com/search?q=web+crawler&page=2",
	"//cdn.example.net/assets/app.css",
	"#top",
	"https://other.example.org/a/b/c/d/e/f/g.html",
	"/shop/caf%C3%A9/cr%c3%a8me?sort=price&dir=asc",
	"https://www.example.com/path/with%2Fslash/and%20space",
}

func BenchmarkResolve(b *testing.B) {
	base, err := url.Parse("https://www.example.com/news/2024/index.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Default.Resolve(base, benchRefs[i%len(benchRefs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResolveString(b *testing.B) {
	const base = "https://www.example.com/news/2024/index.html"
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Default.ResolveString(base, benchRefs[i%len(benchRefs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalize(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Default.Normalize("HTTP://Www.Example.COM:80/a/./b/../c/%7euser?utm_source=x&b=1"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNormalizeIDN(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Default.Normalize("https://bücher.example/ä"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNetURLResolve is the standard library doing less (no
// normalisation) for comparison.
func BenchmarkNetURLResolve(b *testing.B) {
	base, err := url.Parse("https://www.example.com/news/2024/index.html")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ref, err := url.Parse(benchRefs[i%len(benchRefs)])
		if err != nil {
			b.Fatal(err)
		}
		_ = base.ResolveReference(ref).String()
	}
}
