package sitemap_test

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"lidi/engine/fetch"
	"lidi/engine/sitemap"
)

const ns = `xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"`

// loopback serves files on a loopback port as host (the fetcher dials the
// address it is given: no name is looked up).
func loopback(t *testing.T, files map[string]http.HandlerFunc) netip.AddrPort {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := files[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(ts.Close)
	return netip.MustParseAddrPort(ts.Listener.Addr().String())
}

func xmlFile(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		io.WriteString(w, body)
	}
}

// walkerOn fetches sitemaps over one session as a robot does: redirects
// followed (to hosts of addrs), the body streamed into the reader.
func walkerOn(t *testing.T, first netip.AddrPort, addrs map[string]netip.Addr) *sitemap.Walker {
	s := fetch.New(fetch.Config{}).Open(first.Addr(), int(first.Port()))
	t.Cleanup(s.Close)
	return &sitemap.Walker{Fetch: func(ctx context.Context, url string, read func(string, io.Reader) error) error {
		c, err := s.GetFollow(ctx, url, fetch.Follow{
			Max:   5,
			Limit: sitemap.MaxSize,
			Addr:  func(h string) (netip.Addr, bool) { a, ok := addrs[h]; return a, ok },
			Body:  read,
		})
		if err == nil && c.End != fetch.ChainAnswered || err == nil && c.Response.Status/100 != 2 {
			return fmt.Errorf("sitemap %s: %s, answered %d", url, c.End, c.Hops[len(c.Hops)-1].Status)
		}
		return err
	}}
}

// A site's sitemaps on loopback servers: a plain one, a gzip one, an index
// of indexes, one redirected to another host, one with off-site URLs, a
// malformed one, an endless one and an index nested too deep. Every file is
// read once, each refusal names its file and reason, and the pages of the
// good files all come through.
func TestWalkLoopback(t *testing.T) {
	var a string // http://a.test:port
	url := func(path string) string { return a + path }
	urlset := func(paths ...string) string {
		var b strings.Builder
		b.WriteString(`<urlset ` + ns + `>`)
		for _, p := range paths {
			if !strings.Contains(p, "://") {
				p = url(p)
			}
			fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2025-06-01</lastmod></url>", p)
		}
		return b.String() + "</urlset>"
	}
	index := func(paths ...string) string {
		var b strings.Builder
		b.WriteString(`<sitemapindex ` + ns + `>`)
		for _, p := range paths {
			fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>", url(p))
		}
		return b.String() + "</sitemapindex>"
	}
	bAP := loopback(t, map[string]http.HandlerFunc{
		"/maps/moved.xml": func(w http.ResponseWriter, r *http.Request) {
			xmlFile(urlset("http://"+r.Host+"/maps/p", "/on-a", "http://c.test/x"))(w, r)
		},
	})
	b := fmt.Sprintf("http://b.test:%d", bAP.Port())
	files := map[string]http.HandlerFunc{}
	aAP := loopback(t, files)
	a = fmt.Sprintf("http://a.test:%d", aAP.Port())
	files["/sitemap_index.xml"] = xmlFile(index("/sitemap.xml", "/idx/nested.xml", "/sitemap.xml", "/offsite.xml", "/broken.xml", "/endless.xml", "/moved.xml", "/missing.xml", "/d1.xml"))
	files["/sitemap.xml"] = xmlFile(urlset("/p1", "/p2"))
	files["/idx/nested.xml"] = xmlFile(index("/idx/gz.xml.gz", "/sitemap_index.xml"))
	files["/idx/gz.xml.gz"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, urlset("/idx/g1", "/g2"))
		zw.Close()
	}
	files["/offsite.xml"] = xmlFile(urlset("/p3", "http://evil.test/x", "https://a.test/p4"))
	files["/broken.xml"] = xmlFile(`<urlset ` + ns + `><url><loc>` + url("/p5") + `</loc><lastmod>2025-06-01</lastmod></url><url><loc>` + url("/never") + `</url></urlset>`)
	files["/endless.xml"] = func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<urlset `+ns+`>`)
		entry := "<url><loc>" + url("/e") + "</loc><lastmod>2025-06-01</lastmod></url>"
		for i := 0; i < 10*sitemap.MaxEntries; i++ { // bounded, not endless, if the client never stops
			if _, err := io.WriteString(w, entry); err != nil {
				return
			}
		}
	}
	files["/moved.xml"] = func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b+"/maps/moved.xml", http.StatusMovedPermanently)
	}
	files["/d1.xml"] = xmlFile(index("/d2.xml"))
	files["/d2.xml"] = xmlFile(index("/d3.xml"))
	files["/d3.xml"] = xmlFile(urlset("/too-deep"))

	w := walkerOn(t, aAP, map[string]netip.Addr{"b.test": bAP.Addr()})
	pages := map[string]int{}
	res, err := w.Walk(context.Background(), sitemap.Source{URL: url("/sitemap_index.xml")}, func(e sitemap.Entry) error {
		if e.LastMod.IsZero() {
			t.Errorf("%s without its lastmod", e.URL)
		}
		pages[strings.TrimPrefix(strings.TrimPrefix(e.URL, a), b)]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wantPages := map[string]int{"/p1": 1, "/p2": 1, "/idx/g1": 1, "/p3": 1, "/p5": 1, "/e": sitemap.MaxEntries, "/maps/p": 1, "/g2": 1, "/on-a": 1}
	if fmt.Sprint(pages) != fmt.Sprint(wantPages) {
		t.Errorf("pages %v\nwant  %v", pages, wantPages)
	}
	type outcome struct {
		path    string
		depth   int
		kind    sitemap.Kind
		err     error // nil: read whole
		offsite int
	}
	want := []outcome{
		{"/sitemap_index.xml", 0, sitemap.KindIndex, nil, 0},
		{"/sitemap.xml", 1, sitemap.KindURLSet, nil, 0},
		{"/idx/nested.xml", 1, sitemap.KindIndex, nil, 0},
		{"/idx/gz.xml.gz", 2, sitemap.KindURLSet, nil, 0}, // /g2 is outside /idx/, but the root index vouches for /
		{"/offsite.xml", 1, sitemap.KindURLSet, nil, 2},
		{"/broken.xml", 1, sitemap.KindURLSet, sitemap.ErrMalformed, 0},
		{"/endless.xml", 1, sitemap.KindURLSet, sitemap.ErrTooManyEntries, 0},
		{"/moved.xml", 1, sitemap.KindURLSet, nil, 1}, // moved to b.test: a's URL is vouched for by a's index, c's is off-site
		{"/missing.xml", 1, sitemap.KindUnknown, errors.New("answered 404"), 0},
		{"/d1.xml", 1, sitemap.KindIndex, nil, 0},
		{"/d2.xml", 2, sitemap.KindIndex, sitemap.ErrIndexTooDeep, 0},
	}
	var got []outcome
	for _, r := range res {
		got = append(got, outcome{strings.TrimPrefix(r.URL, a), r.Depth, r.Stats.Kind, r.Err, r.Stats.OffSite})
	}
	if len(got) != len(want) {
		t.Fatalf("files %v\nwant %v", got, want)
	}
	for i, g := range got {
		w := want[i]
		errOK := (g.err == nil) == (w.err == nil) && (w.err == nil || errors.Is(g.err, w.err) || strings.Contains(g.err.Error(), w.err.Error()))
		if g.path != w.path || g.depth != w.depth || g.kind != w.kind || g.offsite != w.offsite || !errOK {
			t.Errorf("file %d: %+v, want %+v", i, g, w)
		}
	}
	if res[0].NotWalked != 1 || res[2].NotWalked != 1 {
		t.Errorf("the index's repeat and the nested index's loop back: not walked %d, %d; want 1, 1", res[0].NotWalked, res[2].NotWalked)
	}
	if res[7].Final != b+"/maps/moved.xml" {
		t.Errorf("moved sitemap's final URL %s", res[7].Final)
	}
	if !slices.ContainsFunc(res, func(r sitemap.FileResult) bool { return r.Err != nil && strings.Contains(r.Err.Error(), "/broken.xml") }) {
		t.Errorf("the malformed file's error does not name it")
	}
}
