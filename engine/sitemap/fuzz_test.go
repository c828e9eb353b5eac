package sitemap

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzRead: whatever the bytes, Read returns, within its limits, entries
// that are absolute http(s) URLs on the file's site, and its errors are
// *FileError.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		urlset(`<url><loc>https://example.org/a</loc><lastmod>2024-01-02</lastmod></url>`),
		`<sitemapindex ` + ns + `><sitemap><loc>https://example.org/s.xml</loc></sitemap></sitemapindex>`,
		"https://example.org/a\nhttps://example.org/b\n",
		gz(urlset(`<url><loc>https://example.org/a</loc></url>`)),
		`<urlset><url><loc>https://example.org/&amp;</loc></url>`,
		`<!DOCTYPE x [<!ENTITY a "b">]><urlset>&a;</urlset>`,
	} {
		f.Add([]byte(s))
	}
	src := Source{URL: "https://example.org/sitemap.xml"}
	lim := Limits{MaxEntries: 100, MaxSize: 1 << 16, MaxToken: 4 << 10}
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := Read(bytes.NewReader(data), src, lim, func(e Entry) error {
			u, ok := entryURL(e.URL)
			if !ok || !newScope(src).allows(u) {
				t.Fatalf("yielded %q", e.URL)
			}
			return nil
		})
		var fe *FileError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("error %v (%T) is no *FileError", err, err)
		}
		if st.Entries+st.OffSite+st.Invalid > lim.MaxEntries || st.Bytes > lim.MaxSize {
			t.Fatalf("past the limits: %+v", st)
		}
	})
}
