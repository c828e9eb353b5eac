package engine_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A crawl whose only work left is to ask again for robots.txt files that
// were unreachable (503, a timeout) ends by itself, without waiting for
// robots_txt.retry, naming the sites it gave up and why. The next run
// tries them again.
func TestCrawlEndsWithOnlyRetriesLeft(t *testing.T) {
	var robots503, robotsSlow atomic.Int64
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robots503.Add(1)
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer down.Close()
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			robotsSlow.Add(1)
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><body><a href="%s/a">a</a> <a href="%s/b">b</a> <a href="/c">c</a></body></html>`, down.URL, slow.URL)
	}))
	defer good.Close()

	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := crawlConfig([]string{good.URL + "/"})
	cfg.RobotsRetry = 10 * time.Minute // the default: the crawl must not wait for it
	cfg.Fetch.HeaderTimeout = 300 * time.Millisecond
	st := runCrawl(t, cfg, "127.0.0.1:1", path)
	t.Logf("first run: %s", st.EndText)
	for _, want := range []string{"given up for this run", down.URL + " (robots.txt answered 503", slow.URL + " (robots.txt unreachable (timeout)"} {
		if !strings.Contains(st.EndText, want) {
			t.Errorf("end %q does not say %q", st.EndText, want)
		}
	}
	if got := fetchedURLs(t, path); !got[good.URL+"/c"] {
		t.Errorf("the good site's pages were not all fetched: %v", got)
	}
	if robots503.Load() != 1 || robotsSlow.Load() != 1 {
		t.Errorf("robots.txt asked for %d and %d times, want once each", robots503.Load(), robotsSlow.Load())
	}

	// The next run asks again.
	st = runCrawl(t, cfg, "127.0.0.1:1", path)
	t.Logf("next run: %s", st.EndText)
	// (Parked after errors.park_after failures, it may be asked again
	// after errors.park_for, short here.)
	if robots503.Load() < 2 || robotsSlow.Load() < 2 {
		t.Errorf("continued: robots.txt asked for %d and %d times in all, want at least twice each", robots503.Load(), robotsSlow.Load())
	}
	// Failed again: parked (errors.park_after is 2 here) or given up,
	// and named either way.
	for _, u := range []string{down.URL, slow.URL} {
		if !strings.Contains(st.EndText, u+" (") {
			t.Errorf("continued: end %q does not name %s", st.EndText, u)
		}
	}
}
