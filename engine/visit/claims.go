package visit

import (
	"net/http"
	"net/url"

	"lidi/engine/dedup"
	"lidi/engine/extract"
)

// claimsOf returns what a fetched page says of its origin, for duplicate
// detection to weigh which of two copies is the original: its
// rel=canonical (the <link> element, else the HTTP Link header, RFC
// 6596), its og:url, a mirroring tool's note, and Last-Modified; and the
// set of pages it links to, which tells a listing sorted another way.
func claimsOf(res *extract.Result, h http.Header, page *url.URL) dedup.Claims {
	c := dedup.Claims{Canonical: res.Canonical, OGURL: res.OGURL, MirroredFrom: res.MirroredFrom}
	c.Items = dedup.ListingItems(page.String(), func(yield func(string) bool) {
		for _, l := range res.Links {
			if l.Kind == extract.KindA && !yield(l.URL) {
				return
			}
		}
	})
	if c.Canonical == "" {
		c.Canonical = extract.LinkCanonical(h.Values("Link"), page, nil)
	}
	// Most pages have no Last-Modified, and ParseTime allocates an error
	// for each of the three formats it tries (three allocations a page).
	if lm := h.Get("Last-Modified"); lm != "" {
		if t, err := http.ParseTime(lm); err == nil && t.Unix() > 0 {
			c.LastModified = t.Unix()
		}
	}
	return c
}
