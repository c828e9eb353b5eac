package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

const ns = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`

func urlset(entries ...string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n<urlset " + ns + ` xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">` + strings.Join(entries, "\n") + "</urlset>"
}

func gz(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

// readAll reads a file, returning the URLs yielded (with their lastmod
// when set).
func readAll(t *testing.T, body string, src Source, lim Limits) ([]string, Stats, error) {
	t.Helper()
	var got []string
	st, err := Read(strings.NewReader(body), src, lim, func(e Entry) error {
		s := e.URL
		if !e.LastMod.IsZero() {
			s += " " + e.LastMod.Format(time.RFC3339Nano)
		}
		got = append(got, s)
		return nil
	})
	return got, st, err
}

func TestRead(t *testing.T) {
	src := Source{URL: "https://example.org/blog/sitemap.xml"}
	plain := urlset(
		`<url><loc>https://example.org/blog/a</loc><lastmod>2024-03-01</lastmod><changefreq>daily</changefreq></url>`,
		`<url><loc> https://example.org/blog/b?x=1&amp;y=2 </loc><lastmod>2024-03-01T10:20:30+02:00</lastmod>`+
			`<image:image><image:loc>https://cdn.example.net/i.png</image:loc></image:image></url>`,
		`<url><lastmod>2024-03-01</lastmod><loc>https://example.org/blog/c</loc></url>`,
	)
	tests := []struct {
		name string
		body string
		src  Source
		lim  Limits
		want []string
		st   Stats // Kind, Gzip, Entries, OffSite, Invalid, BadLastMod compared
		err  error
	}{
		{"urlset", plain, src, Limits{}, []string{
			"https://example.org/blog/a 2024-03-01T00:00:00Z",
			"https://example.org/blog/b?x=1&y=2 2024-03-01T08:20:30Z",
			"https://example.org/blog/c 2024-03-01T00:00:00Z",
		}, Stats{Kind: KindURLSet, Entries: 3}, nil},
		{"gzip", gz(plain), src, Limits{}, []string{
			"https://example.org/blog/a 2024-03-01T00:00:00Z",
			"https://example.org/blog/b?x=1&y=2 2024-03-01T08:20:30Z",
			"https://example.org/blog/c 2024-03-01T00:00:00Z",
		}, Stats{Kind: KindURLSet, Gzip: true, Entries: 3}, nil},
		{"index", `<sitemapindex ` + ns + `><sitemap><loc>https://example.org/blog/s1.xml.gz</loc><lastmod>2025-01</lastmod></sitemap></sitemapindex>`,
			src, Limits{}, []string{"https://example.org/blog/s1.xml.gz 2025-01-01T00:00:00Z"}, Stats{Kind: KindIndex, Entries: 1}, nil},
		{"text", "\ufeffhttps://example.org/blog/a\r\n\r\n  https://example.org/blog/b  \nhttps://other.example/x\n", src, Limits{},
			[]string{"https://example.org/blog/a", "https://example.org/blog/b"}, Stats{Kind: KindText, Entries: 2, OffSite: 1}, nil},
		{"no namespace, old Google one", `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>https://example.org/blog/x</loc></url></urlset>`,
			src, Limits{}, []string{"https://example.org/blog/x"}, Stats{Kind: KindURLSet, Entries: 1}, nil},
		{"off-site: host, scheme, port, directory", urlset(
			`<url><loc>https://evil.example/blog/a</loc></url>`,
			`<url><loc>http://example.org/blog/a</loc></url>`,
			`<url><loc>https://example.org:8443/blog/a</loc></url>`,
			`<url><loc>https://example.org/shop/a</loc></url>`,
			`<url><loc>https://EXAMPLE.org:443/blog/ok</loc></url>`,
		), src, Limits{}, []string{"https://EXAMPLE.org:443/blog/ok"}, Stats{Kind: KindURLSet, Entries: 1, OffSite: 4}, nil},
		{"vouched by a site's robots.txt", urlset(
			`<url><loc>https://www.example.com/any/where</loc></url>`,
			`<url><loc>https://example.org/shop/a</loc></url>`,
			`<url><loc>https://evil.example/a</loc></url>`,
		), Source{URL: "https://cdn.example.net/maps/s.xml", Vouchers: []string{"https://www.example.com", "https://example.org"}}, Limits{},
			[]string{"https://www.example.com/any/where", "https://example.org/shop/a"}, Stats{Kind: KindURLSet, Entries: 2, OffSite: 1}, nil},
		{"invalid entries kept out, bad lastmod counted", urlset(
			`<url><loc>/blog/relative</loc></url>`,
			`<url><loc>ftp://example.org/blog/f</loc></url>`,
			`<url><loc>https://example.org/blog/`+strings.Repeat("x", MaxURLLen)+`</loc></url>`,
			`<url><lastmod>2024-01-01</lastmod></url>`,
			`<url><loc>https://example.org/blog/d</loc><lastmod>yesterday</lastmod></url>`,
		), src, Limits{}, []string{"https://example.org/blog/d"}, Stats{Kind: KindURLSet, Entries: 1, Invalid: 4, BadLastMod: 1}, nil},
		{"html is no sitemap", `<!DOCTYPE html><html><body><a href="/x">x</a></body></html>`, src, Limits{}, nil, Stats{}, ErrNotSitemap},
		{"empty file", "", src, Limits{}, nil, Stats{}, ErrNotSitemap},
		{"malformed: unclosed", strings.TrimSuffix(urlset(`<url><loc>https://example.org/blog/a</loc></url>`, `<url><loc>https://example.org/blog/b`), "</urlset>"), src, Limits{}, []string{"https://example.org/blog/a"}, Stats{Kind: KindURLSet, Entries: 1}, ErrMalformed},
		{"malformed: mismatched", `<urlset ` + ns + `><url><loc>https://example.org/blog/a</url></loc></urlset>`, src, Limits{}, nil, Stats{Kind: KindURLSet}, ErrMalformed},
		{"malformed: bad gzip", gz(plain)[:40], src, Limits{}, nil, Stats{Gzip: true}, io.ErrUnexpectedEOF},
		{"entity bomb", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>` +
			`<urlset ` + ns + `><url><loc>https://example.org/blog/&lol2;</loc></url></urlset>`, src, Limits{}, nil, Stats{Kind: KindURLSet}, ErrMalformed},
		{"too many entries", urlset(strings.Repeat(`<url><loc>https://example.org/blog/a</loc></url>`, 5)), src, Limits{MaxEntries: 3}, []string{
			"https://example.org/blog/a", "https://example.org/blog/a", "https://example.org/blog/a",
		}, Stats{Kind: KindURLSet, Entries: 3}, ErrTooManyEntries},
		{"too large", urlset(strings.Repeat(`<url><loc>https://example.org/blog/a</loc></url>`, 100)), src, Limits{MaxSize: 1000}, slices.Repeat([]string{"https://example.org/blog/a"}, 17), Stats{Kind: KindURLSet, Entries: 17}, ErrTooLarge},
		{"too deep", `<urlset ` + ns + `>` + strings.Repeat("<a>", 100_000), src, Limits{}, nil, Stats{Kind: KindURLSet}, ErrTooDeep},
		{"one endless text", `<urlset ` + ns + `><url><loc>https://example.org/blog/` + strings.Repeat("x", 200_000), src, Limits{}, nil, Stats{Kind: KindURLSet}, ErrTokenTooLong},
		{"one endless line", strings.Repeat("x", 200_000), src, Limits{}, nil, Stats{Kind: KindText}, ErrTokenTooLong},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st, err := readAll(t, tc.body, tc.src, tc.lim)
			if tc.err == nil && err != nil || tc.err != nil && !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			var fe *FileError
			if err != nil && (!errors.As(err, &fe) || fe.URL != tc.src.URL) {
				t.Errorf("err %v is no *FileError naming the file", err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
			st.Bytes = 0
			if st.Entries != len(got) || st != tc.st {
				t.Errorf("stats %+v, want %+v", st, tc.st)
			}
		})
	}
}

// Files far larger than the limits, as a hostile server sends them, are
// refused at the limit whatever their size: an endless urlset at its
// 50,000th entry, a gzip bomb at 50 MB uncompressed, endless white space at
// 50 MB. Nothing is held but the entry being read.
func TestReadHostile(t *testing.T) {
	src := Source{URL: "http://example.org/sitemap.xml"}
	entry := []byte("<url><loc>http://example.org/p</loc></url>\n")
	endless := io.MultiReader(strings.NewReader(`<urlset `+ns+`>`), &repeatReader{chunk: entry})
	n := 0
	st, err := Read(endless, src, Limits{}, func(Entry) error { n++; return nil })
	if !errors.Is(err, ErrTooManyEntries) || n != MaxEntries || st.Entries != MaxEntries {
		t.Errorf("endless urlset: %v after %d entries (%+v)", err, n, st)
	}

	// A gzip bomb: 8 MB of white space compressed to about 8 KB is
	// refused as one text too long; 8 MB of entries at MaxSize (1 MB
	// here: compressing and decoding 50 MB takes long under the race
	// detector; what stops it is the same count).
	space := bytes.Repeat([]byte(" "), 1<<20)
	entries := bytes.Repeat(entry, 1<<20/len(entry))
	for _, tc := range []struct {
		name  string
		chunk []byte
		lim   Limits
		err   error
		bytes int64
	}{
		{"white space", space, Limits{}, ErrTokenTooLong, -1},
		{"entries", entries, Limits{MaxSize: 1 << 20, MaxEntries: 1 << 30}, ErrTooLarge, 1 << 20},
	} {
		var bomb bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
		io.WriteString(zw, `<urlset `+ns+`><url><loc>http://example.org/p</loc></url>`)
		for range 8 {
			zw.Write(tc.chunk)
		}
		zw.Close()
		st, err := Read(&bomb, src, tc.lim, func(Entry) error { return nil })
		if !errors.Is(err, tc.err) || !st.Gzip || tc.bytes > 0 && st.Bytes != tc.bytes || tc.bytes < 0 && st.Bytes > 2*MaxToken {
			t.Errorf("gzip bomb of %s: %v, %+v", tc.name, err, st)
		}
	}

	_, err = Read(io.MultiReader(strings.NewReader(`<urlset `+ns+`>`), &repeatReader{chunk: []byte("<!-- -->")}), src, Limits{MaxSize: 1 << 20}, func(Entry) error { return nil })
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("endless comments: %v", err)
	}
}

// repeatReader repeats chunk for ever.
type repeatReader struct {
	chunk []byte
	off   int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], r.chunk[r.off:])
		n += k
		r.off = (r.off + k) % len(r.chunk)
	}
	return n, nil
}

// An error from yield ends the read and comes back as it is.
func TestReadYieldError(t *testing.T) {
	stop := errors.New("enough")
	n := 0
	_, err := Read(strings.NewReader(urlset(strings.Repeat(`<url><loc>https://example.org/a</loc></url>`, 5))), Source{URL: "https://example.org/s.xml"}, Limits{},
		func(Entry) error { n++; return stop })
	if err != stop || n != 1 {
		t.Errorf("err %v after %d entries", err, n)
	}
}

func TestParseLastMod(t *testing.T) {
	for in, want := range map[string]string{
		"2024":                          "2024-01-01T00:00:00Z",
		"2024-05":                       "2024-05-01T00:00:00Z",
		"2024-05-06":                    "2024-05-06T00:00:00Z",
		"2024-05-06T07:08+01:00":        "2024-05-06T06:08:00Z",
		"2024-05-06T07:08:09Z":          "2024-05-06T07:08:09Z",
		"2024-05-06T07:08:09.5-02:00":   "2024-05-06T09:08:09.5Z",
		"2024-05-06T07:08:09":           "2024-05-06T07:08:09Z",
		"2024-05-06 07:08:09":           "2024-05-06T07:08:09Z",
		" 2024-05-06 ":                  "2024-05-06T00:00:00Z",
		"06/05/2024":                    "",
		"2024-13-01":                    "",
		"yesterday":                     "",
		"Mon, 06 May 2024 07:08:09 GMT": "",
	} {
		tm, ok := ParseLastMod(in)
		got := ""
		if ok {
			got = tm.Format(time.RFC3339Nano)
		}
		if got != want {
			t.Errorf("ParseLastMod(%q) = %q, want %q", in, got, want)
		}
	}
}
