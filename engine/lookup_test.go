package engine_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
)

// A site finished in an earlier run has nothing queued when the crawl is
// loaded again, so its address is not looked up then; a new URL of it found
// later must start the look-up, or the site waits for an address forever
// and the crawl never ends.
func TestResumedSiteLookedUpForNewURL(t *testing.T) {
	html := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, body)
		}
	}
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		html("<html><body>no links</body></html>")(w, r)
	}))
	defer b.Close()
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		html(`<html><body><a href="`+b.URL+`/late">late</a></body></html>`)(w, r)
	}))
	defer a.Close()

	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := crawlConfig([]string{b.URL + "/"})
	cfg.Delay, cfg.MaxDelay = 0, 0
	runCrawl(t, cfg, "127.0.0.1:1", path) // IP literals need no DNS server
	// The second run adds a seed whose page links to the finished site.
	cfg.Seeds = []string{b.URL + "/", a.URL + "/"}
	runCrawl(t, cfg, "127.0.0.1:1", path)
	got := fetchedURLs(t, path)
	for _, u := range []string{b.URL + "/", a.URL + "/", b.URL + "/late"} {
		if !got[u] {
			t.Errorf("%s not fetched; fetched %v", u, got)
		}
	}
}
