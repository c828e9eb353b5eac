package sitemap_test

import (
	"fmt"
	"strings"

	"lidi/engine/sitemap"
)

func ExampleRead() {
	const file = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.org/docs/intro</loc><lastmod>2025-03-04T10:00:00+01:00</lastmod></url>
  <url><loc>https://example.org/docs/faq</loc></url>
  <url><loc>https://example.org/shop/cart</loc></url>
  <url><loc>https://tracker.example/pixel</loc></url>
</urlset>`
	// The file lives in /docs/: it may list only what is under /docs/ on
	// its own host, unless a robots.txt vouches for it.
	src := sitemap.Source{URL: "https://example.org/docs/sitemap.xml"}
	st, err := sitemap.Read(strings.NewReader(file), src, sitemap.Limits{}, func(e sitemap.Entry) error {
		fmt.Println(e.URL, e.LastMod.Format("2006-01-02T15:04Z"))
		return nil
	})
	fmt.Println(st.Kind, st.Entries, "entries,", st.OffSite, "off-site,", err)

	// The same file named by example.org's robots.txt may list all of
	// example.org.
	src.Vouchers = []string{"https://example.org"}
	st, _ = sitemap.Read(strings.NewReader(file), src, sitemap.Limits{}, func(sitemap.Entry) error { return nil })
	fmt.Println(st.Entries, "entries,", st.OffSite, "off-site")
	// Output:
	// https://example.org/docs/intro 2025-03-04T09:00Z
	// https://example.org/docs/faq 0001-01-01T00:00Z
	// urlset 2 entries, 2 off-site, <nil>
	// 3 entries, 1 off-site
}
