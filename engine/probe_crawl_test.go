package engine_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"lidi/engine"
)

// softWeb is a tiny site with two broken links whose "not found" page
// answers 200, which points detection to a soft 404 and makes it probe
// the host; soft says whether any URL that does not exist (the probe
// included) answers so, or a real 404.
func softWeb(soft bool) func(uri string) (int, string) {
	return func(uri string) (int, string) {
		switch {
		case uri == "/":
			return 200, htmlPage("Home", prose(1, 120), "/a.html", "/b.html", "/old/gone.html", "/archive/missing.php")
		case uri == "/a.html":
			return 200, htmlPage("A", prose(2, 120))
		case uri == "/b.html":
			return 200, htmlPage("B", prose(3, 120))
		case uri == "/old/gone.html" || uri == "/archive/missing.php" || soft:
			return 200, htmlPage("Page not found", "Sorry, the page "+uri+" does not exist on this server. It may have moved, or the link that brought you here is broken.")
		}
		return 404, htmlPage("404", "no such page")
	}
}

// lidi's own soft-404 probe is no page of the crawl: a crawl that probed
// a host counts it in neither pages, fetches nor errors (a host that
// answers it 404 made "errors" count it before), and its answer is kept
// apart (state 3), out of the fetch history. The evidence survives a
// restart: the continued crawl knows the host's soft 404 without asking
// again, and its figures are the same.
func TestProbeKeptApart(t *testing.T) {
	for _, soft := range []bool{true, false} {
		name := map[bool]string{true: "soft", false: "honest"}[soft]
		t.Run(name, func(t *testing.T) {
			site, base := startTinySite(t, softWeb(soft))
			cfg := tinyConfig([]string{base + "/"}, 1, 20)
			cfg.Strategy = "depth"
			path := filepath.Join(t.TempDir(), "crawl.db")
			st := runCrawl(t, cfg, "127.0.0.1:1", path)
			isProbe := func(uri string) bool { return strings.Contains(uri, "lidi-no-such-page-") }
			if n := site.count(isProbe); n != 1 {
				t.Fatalf("the probe asked for %d times, want once", n)
			}
			pages := queryCount(t, path, "SELECT count(*) FROM urls WHERE state = 1")
			errs := queryCount(t, path, "SELECT count(*) FROM urls WHERE state = 1 AND (error IS NOT NULL OR status >= 400)")
			fetches := queryCount(t, path, "SELECT count(*) FROM fetches")
			requests := site.count(func(uri string) bool { return uri != "/robots.txt" })
			if st.Pages != int64(pages) || st.Fetches != int64(fetches) || st.Errors != int64(errs) || st.Recrawls != 0 {
				t.Errorf("stats: %d pages, %d fetches, %d errors, %d recrawls; the store: %d pages, %d fetches, %d errors",
					st.Pages, st.Fetches, st.Errors, st.Recrawls, pages, fetches, errs)
			}
			if st.Fetches != int64(requests-1) {
				t.Errorf("%d fetches counted of %d requests for pages and the probe", st.Fetches, requests)
			}
			if errs != 0 {
				t.Errorf("%d errors: every page of the site answered 200", errs)
			}
			want := map[bool]int{true: 200, false: 404}[soft]
			probeID := queryCount(t, path, "SELECT count(*) FROM urls WHERE state = 3 AND status = ? AND url LIKE '%lidi-no-such-page-%'", want)
			if probeID != 1 {
				t.Errorf("%d probes kept in state 3 with their answer %d, want 1", probeID, want)
			}
			if n := queryCount(t, path, "SELECT count(*) FROM fetches f JOIN urls u ON u.id = f.url_id WHERE u.state = 3"); n != 0 {
				t.Errorf("%d rows of the probe in the fetch history", n)
			}
			// A soft host's signature names the probe that confirmed it; an
			// honest host's 404 put none in force.
			if n := queryCount(t, path, "SELECT count(*) FROM soft404s s JOIN urls u ON u.id = s.probe_id WHERE u.state = 3 AND s.probe_status = 200 AND s.withdrawn = 0"); n != map[bool]int{true: 1, false: 0}[soft] {
				t.Errorf("%d soft-404 signatures in force naming the probe", n)
			}

			again := runCrawl(t, cfg, "127.0.0.1:1", path)
			if n := site.count(isProbe); n != 1 {
				t.Errorf("the probe asked for %d times after the restart, want once", n)
			}
			if again.Pages != st.Pages || again.Fetches != st.Fetches || again.Errors != st.Errors {
				t.Errorf("continued: %d pages, %d fetches, %d errors; before: %d, %d, %d", again.Pages, again.Fetches, again.Errors, st.Pages, st.Fetches, st.Errors)
			}
			if got, want := again.Dup.Soft404Hosts, map[bool]int64{true: 1, false: 0}[soft]; got != want || got != st.Dup.Soft404Hosts {
				t.Errorf("continued: %d soft-404 hosts, want %d (dup %+v, before %+v)", got, want, again.Dup, st.Dup)
			}
		})
	}
}

// The duplicate counters go on across a continue, as the rules do: a
// crawl stopped by limits.max_pages and continued ends with the counts of
// the pages the store holds as duplicates, the first run's included.
func TestDupCountersSurviveContinue(t *testing.T) {
	_, base := startTinySite(t, func(uri string) (int, string) {
		var links []string
		for i := range 12 {
			links = append(links, fmt.Sprintf("/p%d.html", i), fmt.Sprintf("/p%d.html?print=1", i))
		}
		switch {
		case uri == "/":
			return 200, htmlPage("Home", prose(1, 120), links...)
		case strings.HasPrefix(uri, "/p"):
			n := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(uri, "?print=1"), "/p"), ".html")
			return 200, htmlPage("Page "+n, prose(uint64(len(n))*7+uint64(n[0]), 150)) // the ?print=1 copy is the same page
		}
		return 404, htmlPage("404", "no such page")
	})
	cfg := tinyConfig([]string{base + "/"}, 1, 4)
	cfg.Strategy = "depth"
	cfg.MaxPages = 10
	path := filepath.Join(t.TempDir(), "crawl.db")
	first := runCrawl(t, cfg, "127.0.0.1:1", path)
	if first.End != engine.EndMaxPages || first.Dup.Exact+first.Dup.Near == 0 {
		t.Fatalf("first run ended %s with duplicates %+v; want max-pages, with some found", first.End, first.Dup)
	}
	cfg.MaxPages = 0
	st := runCrawl(t, cfg, "127.0.0.1:1", path)
	exact := queryCount(t, path, "SELECT count(*) FROM duplicates WHERE kind = 'exact'")
	near := queryCount(t, path, "SELECT count(*) FROM duplicates WHERE kind = 'near'")
	if st.Dup.Exact != int64(exact) || st.Dup.Near != int64(near) || st.Dup.Exact < first.Dup.Exact || st.Dup.Near < first.Dup.Near {
		t.Errorf("continued: %d exact, %d near; the store holds %d and %d; the first run found %d and %d",
			st.Dup.Exact, st.Dup.Near, exact, near, first.Dup.Exact, first.Dup.Near)
	}
}
