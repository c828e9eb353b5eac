package engine_test

import (
	"compress/gzip"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine/record"
)

// The sitemaps a seed's robots.txt names are read (an index, a gzip
// sitemap and a plain one): their pages, linked from nowhere, are fetched
// unless robots.txt disallows them; off-site entries are refused. Another
// site's sitemap is not read (sitemaps: seeds, the default).
func TestCrawlReadsSeedSitemaps(t *testing.T) {
	var hidden atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "Sitemap: /sitemap.xml\n")
		case "/sitemap.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://%s/hidden</loc></url></urlset>`, r.Host)
		case "/hidden":
			hidden.Add(1)
			fmt.Fprint(w, "<html>hidden</html>")
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>other</html>")
		}
	}))
	defer other.Close()
	// The other site is other.test, not the seed's host.
	otherURL := "http://other.test:" + other.URL[strings.LastIndexByte(other.URL, ':')+1:]
	urlset := func(host string, paths ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, p := range paths {
			if !strings.Contains(p, "://") {
				p = "http://" + host + p
			}
			fmt.Fprintf(&b, "<url><loc>%s</loc><lastmod>2025-01-02</lastmod></url>", p)
		}
		return b.String() + "</urlset>"
	}
	seed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n\nSitemap: /sitemap_index.xml\n")
		case "/sitemap_index.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>http://%[1]s/maps/a.xml.gz</loc></sitemap><sitemap><loc>http://%[1]s/maps/b.xml</loc></sitemap></sitemapindex>`, r.Host)
		case "/maps/a.xml.gz":
			w.Header().Set("Content-Type", "application/gzip")
			zw := gzip.NewWriter(w)
			fmt.Fprint(zw, urlset(r.Host, "/orphan1"))
			zw.Close()
		case "/maps/b.xml":
			w.Header().Set("Content-Type", "text/xml")
			fmt.Fprint(w, urlset(r.Host, "/orphan2", "/private/x", otherURL+"/elsewhere"))
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body><a href="%s/">other</a></body></html>`, otherURL)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>page</html>")
		}
	}))
	defer seed.Close()

	path := filepath.Join(t.TempDir(), "crawl.db")
	st := runCrawlHosts(t, crawlConfig([]string{seed.URL + "/"}), "127.0.0.1 other.test\n", path)
	got := fetchedURLs(t, path)
	for _, u := range []string{"/sitemap_index.xml", "/maps/a.xml.gz", "/maps/b.xml", "/orphan1", "/orphan2"} {
		if !got[seed.URL+u] {
			t.Errorf("%s not fetched", u)
		}
	}
	if !got[otherURL+"/"] {
		t.Errorf("the other site was not crawled: %v", got)
	}
	if got[seed.URL+"/private/x"] || got[otherURL+"/elsewhere"] || hidden.Load() != 0 {
		t.Errorf("fetched what robots.txt, the cross-host rule or the seeds-only default forbid: %v (hidden: %d)", got, hidden.Load())
	}
	sm := st.Sitemaps
	if sm.Named != 1 || sm.Read != 3 || sm.OffSite != 1 || sm.URLs != 5 || sm.Refused != 0 {
		t.Errorf("sitemap counts %+v, want 1 named, 3 read, 5 URLs (2 sitemaps, 3 pages), 1 off-site", sm)
	}
	// A continued crawl shows the figures of the first run: the sitemaps
	// read, the URLs robots.txt kept out.
	again := runCrawlHosts(t, crawlConfig([]string{seed.URL + "/"}), "127.0.0.1 other.test\n", path)
	if again.Sitemaps != sm || again.Skipped[record.SkipRobots] != st.Skipped[record.SkipRobots] || st.Skipped[record.SkipRobots] == 0 {
		t.Errorf("continued: sitemaps %+v, %d skipped for robots.txt; the first run: %+v, %d", again.Sitemaps, again.Skipped[record.SkipRobots], sm, st.Skipped[record.SkipRobots])
	}
	// Each page a sitemap listed keeps its <lastmod>, a change hint for
	// recrawl; a link has none.
	lastmod := map[string]int64{}
	eachRow(t, path, "SELECT url, coalesce(lastmod, 0) FROM urls", func(rows *sql.Rows) error {
		var u string
		var ms int64
		err := rows.Scan(&u, &ms)
		lastmod[strings.TrimPrefix(u, seed.URL)] = ms
		return err
	})
	want := time.Date(2025, 1, 2, 0, 0, 0, 0, time.UTC).UnixMilli()
	for u, ms := range lastmod {
		listed := u == "/orphan1" || u == "/orphan2" || u == "/private/x"
		if listed && ms != want || !listed && ms != 0 {
			t.Errorf("%s has lastmod %d, want %d", u, ms, map[bool]int64{true: want}[listed])
		}
	}
}
