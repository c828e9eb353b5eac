package engine_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"lidi/engine"
)

// tinySite serves on 127.0.0.1 the pages page returns (status and HTML
// body) and counts the requests for each request URI.
type tinySite struct {
	page     func(uri string) (int, string)
	mu       sync.Mutex
	requests map[string]int
}

func startTinySite(t *testing.T, page func(uri string) (int, string)) (site *tinySite, base string) {
	t.Helper()
	site = &tinySite{page: page, requests: map[string]int{}}
	ts := httptest.NewServer(site)
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	return site, "http://127.0.0.1:" + port
}

func (s *tinySite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	uri := r.URL.RequestURI()
	s.mu.Lock()
	s.requests[uri]++
	s.mu.Unlock()
	if uri == "/robots.txt" {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "User-agent: *\nDisallow:\n")
		return
	}
	status, body := s.page(uri)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// count returns the requests whose URI match.
func (s *tinySite) count(match func(uri string) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for uri, k := range s.requests {
		if match(uri) {
			n += k
		}
	}
	return n
}

// prose returns n pseudo-words drawn from seed, cut into sentences: the
// text of a page that shares nothing with pages of other seeds.
func prose(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 0x7072))
	const letters = "bcdfghklmnprstvz"
	const vowels = "aeiou"
	var b strings.Builder
	for i := range n {
		for range 2 + r.IntN(2) {
			b.WriteByte(letters[r.IntN(len(letters))])
			b.WriteByte(vowels[r.IntN(len(vowels))])
		}
		if i%12 == 11 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// htmlPage is a page with a title, a text and links.
func htmlPage(title, text string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p><ul>", title, title, text)
	for _, l := range links {
		fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, l, l)
	}
	b.WriteString("</ul></body></html>")
	return b.String()
}

// skipReasons returns the skip reason of each URL skipped, by URL.
func skipReasons(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	eachRow(t, path, "SELECT url, coalesce(skip_reason, '') FROM urls WHERE state = 2", func(rows *sql.Rows) error {
		var u, why string
		if err := rows.Scan(&u, &why); err != nil {
			return err
		}
		out[u] = why
		return nil
	})
	return out
}

// A rule learned from the first pages of a lease spares the rest of that
// lease: the site's second lease holds every item and its print copy,
// taken before any copy was seen, and once the copies have shown that
// "view=print" changes nothing the robot gets the remaining copies
// revoked. Without that it fetched every copy of the lease.
func TestRuleLearnedMidLeaseSparesTheLease(t *testing.T) {
	const items, evidence = 24, 3
	site, base := startTinySite(t, func(uri string) (int, string) {
		path, _, _ := strings.Cut(uri, "?")
		if path == "/" {
			var links []string
			for k := range items {
				links = append(links, fmt.Sprintf("/item/%d", k), fmt.Sprintf("/item/%d?view=print", k))
			}
			return 200, htmlPage("Items", prose(1000, 80), links...)
		}
		var k int
		if _, err := fmt.Sscanf(path, "/item/%d", &k); err == nil && k < items {
			// The print copy is the page itself.
			return 200, htmlPage(fmt.Sprintf("Item %d", k), prose(uint64(k), 120))
		}
		return 404, htmlPage("Not found", "no such page")
	})
	cfg := crawlConfig([]string{base + "/"})
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.Robots = 2
	cfg.PagesPerVisit = 2 * items
	cfg.MirrorEvidence = evidence
	path := filepath.Join(t.TempDir(), "crawl.db")
	st := runCrawl(t, cfg, "127.0.0.1:1", path) // an IP literal needs no DNS

	isCopy := func(uri string) bool { return strings.Contains(uri, "view=print") }
	copies := site.count(isCopy)
	// The rule needs evidence copies; a robot may have started up to
	// engine's aheadMax (2) more before the loop applied the last of them.
	if copies > evidence+2 {
		t.Errorf("%d print copies fetched, want at most %d (the evidence and the pages in flight)", copies, evidence+2)
	}
	for k := range items {
		if n := site.count(func(uri string) bool { return uri == fmt.Sprintf("/item/%d", k) }); n != 1 {
			t.Errorf("/item/%d fetched %d times, want 1", k, n)
		}
	}
	skipped := 0
	for u, why := range skipReasons(t, path) {
		if isCopy(u) {
			if why != engine.SkipRule {
				t.Errorf("%s skipped for %q, want %q", u, why, engine.SkipRule)
			}
			skipped++
		}
	}
	if copies+skipped != items {
		t.Errorf("%d copies fetched and %d skipped under the rule, want %d in all", copies, skipped, items)
	}
	if st.Dup.Rules != 1 {
		t.Errorf("%d rules learned, want 1 (drop view=print)", st.Dup.Rules)
	}
	t.Logf("%d copies fetched, %d skipped under a rule; dup stats %+v", copies, skipped, st.Dup)
}
