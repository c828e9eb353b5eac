package engine_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A site that links each page's tracked spelling (?ref=nav) before the
// page itself: the lease fetches the plain spelling first, so the page
// kept is the one at the URL a rule keeps and every copy recorded is a
// tracked spelling; and the tracked spellings, fetched last, stop once
// their rule is learned.
func TestCanonicalSpellingFetchedFirst(t *testing.T) {
	const pages = 12
	site, base := startTinySite(t, func(uri string) (int, string) {
		var links []string
		for i := range pages {
			links = append(links, fmt.Sprintf("/p%d.html?ref=nav", i), fmt.Sprintf("/p%d.html", i))
		}
		switch {
		case uri == "/":
			return 200, htmlPage("Home", prose(1, 120), links...)
		case strings.HasPrefix(uri, "/p"):
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(uri, "?ref=nav"), "/p"), ".html"))
			if err != nil {
				break
			}
			return 200, htmlPage(fmt.Sprint("Page ", n), prose(100+uint64(n), 150))
		}
		return 404, htmlPage("404", "no such page")
	})
	cfg := tinyConfig([]string{base + "/"}, 1, 40)
	cfg.Strategy = "depth"
	path := filepath.Join(t.TempDir(), "crawl.db")
	runCrawl(t, cfg, "127.0.0.1:1", path)

	var kept, copies []string
	eachRow(t, path, "SELECT u.url, o.url FROM duplicates d JOIN urls u ON u.id = d.url_id JOIN urls o ON o.id = d.of_id", func(rows *sql.Rows) error {
		var c, o string
		if err := rows.Scan(&c, &o); err != nil {
			return err
		}
		copies, kept = append(copies, c), append(kept, o)
		return nil
	})
	if len(copies) == 0 {
		t.Fatal("no copy recorded")
	}
	for i := range copies {
		if !strings.HasSuffix(copies[i], "?ref=nav") || strings.Contains(kept[i], "?") {
			t.Errorf("%s recorded as a copy of %s: the tracked spelling was kept", copies[i], kept[i])
		}
	}
	for i := range pages {
		if n := site.count(func(uri string) bool { return uri == fmt.Sprintf("/p%d.html", i) }); n != 1 {
			t.Errorf("/p%d.html fetched %d times, want once", i, n)
		}
	}
	if n := site.count(func(uri string) bool { return strings.HasSuffix(uri, "?ref=nav") }); n > tinyEvidence+1 {
		t.Errorf("%d tracked spellings fetched; the rule needs %d pairs", n, tinyEvidence)
	}
}

// A site that links only the tracked spellings of its pages from the
// pages met first (the plain ones further on): once a pair proposed
// dropping ?ref, a tracked spelling waits while its plain URL, not met
// yet, is fetched first, so the page kept is at the plain URL here too.
// Visits of 4 pages keep the tracked spellings and the plain ones in
// separate visits.
func TestCanonicalSpellingAwaited(t *testing.T) {
	const pages = 8
	site, base := startTinySite(t, func(uri string) (int, string) {
		path, query, _ := strings.Cut(uri, "?")
		if query != "" && query != "ref=nav" {
			return 404, htmlPage("404", "no such page")
		}
		switch path {
		case "/":
			links := []string{"/a", "/a?ref=nav", "/b", "/b?ref=nav"}
			for i := range pages {
				links = append(links, fmt.Sprintf("/p%d?ref=nav", i))
			}
			return 200, htmlPage("Home", prose(1, 120), append(links, "/more")...)
		case "/more":
			var links []string
			for i := range pages {
				links = append(links, fmt.Sprintf("/p%d", i))
			}
			return 200, htmlPage("More", prose(2, 120), links...)
		}
		return plainPage(path, pages)
	})
	path := crawlKeepsPlainSpellings(t, site, base, pages)
	if n := queryCount(t, path, "SELECT count(*) FROM urls WHERE state = 1 AND url LIKE '%?ref=nav' AND id NOT IN (SELECT url_id FROM duplicates)"); n != 0 {
		t.Errorf("%d tracked spellings kept as pages of their own", n)
	}
}

// Two tracked spellings of one page in the same visit (?ref=nav and
// ?ref=top, a rule dropping ref proposed): the first queues the plain URL
// ahead and waits, and so does the second, though the plain URL is known
// by then; fetched at once, it would be kept as the original.
func TestCanonicalSpellingAwaitedByEverySpelling(t *testing.T) {
	const pages = 6
	site, base := startTinySite(t, func(uri string) (int, string) {
		path, query, _ := strings.Cut(uri, "?")
		if query != "" && query != "ref=nav" && query != "ref=top" {
			return 404, htmlPage("404", "no such page")
		}
		switch path {
		case "/":
			links := []string{"/a", "/a?ref=nav", "/b", "/b?ref=top"}
			for i := range pages {
				links = append(links, fmt.Sprintf("/p%d?ref=nav", i), fmt.Sprintf("/p%d?ref=top", i))
			}
			return 200, htmlPage("Home", prose(1, 120), links...)
		}
		return plainPage(path, pages)
	})
	crawlKeepsPlainSpellings(t, site, base, pages)
}

// crawlKeepsPlainSpellings crawls the tiny site at base from its home
// page, depth first in visits of 4 pages, and checks that no page was
// recorded as a copy of a spelling with a query and that each of /p0 to
// /p(pages-1) was fetched once. It returns the crawl file.
func crawlKeepsPlainSpellings(t *testing.T, site *tinySite, base string, pages int) string {
	t.Helper()
	cfg := tinyConfig([]string{base + "/"}, 1, 4)
	cfg.Strategy = "depth"
	path := filepath.Join(t.TempDir(), "crawl.db")
	runCrawl(t, cfg, "127.0.0.1:1", path)
	eachRow(t, path, "SELECT u.url, o.url FROM duplicates d JOIN urls u ON u.id = d.url_id JOIN urls o ON o.id = d.of_id", func(rows *sql.Rows) error {
		var c, o string
		if err := rows.Scan(&c, &o); err != nil {
			return err
		}
		if strings.Contains(o, "?") {
			t.Errorf("%s recorded as a copy of %s: a tracked spelling was kept", c, o)
		}
		return nil
	})
	for i := range pages {
		if n := site.count(func(uri string) bool { return uri == fmt.Sprintf("/p%d", i) }); n != 1 {
			t.Errorf("/p%d fetched %d times, want once", i, n)
		}
	}
	return path
}

// plainPage answers path on the tracked-spelling tests' site: /a, /b, and
// /p0 to /p(pages-1), each its own text; 404 for the rest.
func plainPage(path string, pages int) (int, string) {
	if path == "/a" || path == "/b" {
		return 200, htmlPage(path, prose(uint64(path[1]), 150))
	}
	n, err := strconv.Atoi(strings.TrimPrefix(path, "/p"))
	if err != nil || n >= pages {
		return 404, htmlPage("404", "no such page")
	}
	return 200, htmlPage(fmt.Sprint("Page ", n), prose(100+uint64(n), 150))
}
