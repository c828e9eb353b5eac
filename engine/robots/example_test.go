package robots_test

import (
	"fmt"

	"lidi/engine/robots"
)

func ExampleFromResponse() {
	body := []byte(`User-agent: *
Disallow: /private/
Allow: /private/press/
Crawl-delay: 2

User-agent: lidi
Disallow: /search
Disallow: /*.pdf$
Crawl-delay: 0.5

Sitemap: https://example.org/sitemap.xml
`)
	const ua = "lidi/0.1 (+https://example.org/lidi)"
	rules := robots.FromResponse(200, body)
	for _, p := range []string{"/private/x", "/search?q=go", "/paper.pdf", "/paper.pdf?dl=1"} {
		fmt.Println(p, rules.Allowed(ua, p))
	}
	fmt.Println("other bot /private/x:", rules.Allowed("otherbot", "/private/x"))
	fmt.Println("crawl-delay:", rules.CrawlDelay(ua))
	fmt.Println("sitemaps:", rules.Sitemaps())

	down := robots.FromResponse(503, nil)
	fmt.Println("503:", down.Kind(), down.Allowed(ua, "/"), "retry:", down.Kind().Temporary())
	// Output:
	// /private/x true
	// /search?q=go false
	// /paper.pdf false
	// /paper.pdf?dl=1 true
	// other bot /private/x: false
	// crawl-delay: 500ms
	// sitemaps: [https://example.org/sitemap.xml]
	// 503: server-error false retry: true
}

func ExampleParseXRobotsTag() {
	const ua = "lidi/0.1"
	d := robots.ParseXRobotsTag([]string{"googlebot: noindex", "lidi: nofollow"}, ua)
	m := robots.ParseMeta("NOINDEX, follow")
	fmt.Printf("%+v\n", d.Merge(m))
	// Output:
	// {NoIndex:true NoFollow:true}
}
