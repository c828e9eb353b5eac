package extract_test

import (
	"fmt"
	"net/url"

	"lidi/engine/extract"
)

func ExampleLinks() {
	page, _ := url.Parse("https://example.com/news/index.html")
	body := []byte(`<html><head><title>News</title>
<base href="/archive/">
<meta name="robots" content="noarchive">
<link rel="canonical" href="https://example.com/news/">
</head><body>
<a href="2024/story.html?utm_source=feed">A story</a>
<a href="https://ads.example.net/" rel="nofollow">An ad</a>
<a href="mailto:editor@example.com">Mail</a>
</body></html>`)
	var r extract.Result // reusable, for instance from a sync.Pool
	if err := extract.Links(body, "text/html; charset=utf-8", page, &r); err != nil {
		fmt.Println(err)
		return
	}
	for _, l := range r.Links {
		fmt.Println(l.Kind, l.URL, l.NoFollow)
	}
	fmt.Println("title:", r.Title)
	fmt.Println("canonical:", r.Canonical)
	fmt.Println("robots:", r.MetaRobots)
	fmt.Println("skipped:", r.Skipped)
	// Output:
	// canonical https://example.com/news/ false
	// a https://example.com/archive/2024/story.html false
	// a https://ads.example.net/ true
	// title: News
	// canonical: https://example.com/news/
	// robots: noarchive
	// skipped: 1
}
