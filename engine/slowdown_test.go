package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"lidi/engine"
	"lidi/internal/testkit"
)

// A page answered 429 or 503 goes back to its site's queue and is asked
// for again after the Retry-After (seconds or an HTTP date) or a back-off,
// up to visit.DefaultSlowDownTries times; then it is recorded with its
// status. The crawl ends by itself either way.
func TestSlowDownRetried(t *testing.T) {
	type answer struct {
		status     int
		retryAfter func(now time.Time) string // "" for none
	}
	seconds := func(time.Time) string { return "1" }
	date := func(now time.Time) string { return now.Add(2 * time.Second).UTC().Format(http.TimeFormat) }
	for _, tc := range []struct {
		name    string
		answers []answer // the page's answers in turn; the last repeats
		tries   int      // requests for the page
		status  int      // recorded
		minGap  func(first time.Time, ra string) time.Time
	}{
		{"429 then 200", []answer{{429, nil}, {200, nil}}, 2, 200, nil},
		{"503 Retry-After seconds", []answer{{503, seconds}, {200, nil}}, 2, 200,
			func(first time.Time, _ string) time.Time { return first.Add(time.Second) }},
		{"503 Retry-After date", []answer{{503, date}, {200, nil}}, 2, 200,
			func(_ time.Time, ra string) time.Time { d, _ := http.ParseTime(ra); return d }},
		{"503 forever", []answer{{503, nil}}, 3, 503, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var times []time.Time
			var sent []string // Retry-After values sent
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/robots.txt":
					http.NotFound(w, r)
				case "/":
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><body><a href="/p">p</a> <a href="/q">q</a></body></html>`)
				case "/p":
					mu.Lock()
					now := time.Now()
					a := tc.answers[min(len(times), len(tc.answers)-1)]
					times = append(times, now)
					ra := ""
					if a.retryAfter != nil {
						ra = a.retryAfter(now)
						w.Header().Set("Retry-After", ra)
					}
					sent = append(sent, ra)
					mu.Unlock()
					w.Header().Set("Content-Type", "text/html")
					w.WriteHeader(a.status)
					fmt.Fprint(w, "<html>p</html>")
				default:
					fmt.Fprint(w, "<html>other</html>")
				}
			}))
			defer ts.Close()
			path := filepath.Join(t.TempDir(), "crawl.db")
			cfg := crawlConfig([]string{ts.URL + "/"})
			cfg.ParkAfter = 10 // the back-offs must not park the site here
			runCrawl(t, cfg, "127.0.0.1:1", path)
			mu.Lock()
			defer mu.Unlock()
			if len(times) != tc.tries {
				t.Fatalf("/p asked for %d times, want %d", len(times), tc.tries)
			}
			if tc.minGap != nil {
				if at := tc.minGap(times[0], sent[0]); times[1].Before(at) {
					t.Errorf("asked again at %s, before the Retry-After %q allowed (%s)", times[1].Format(time.StampMilli), sent[0], at.Format(time.StampMilli))
				}
			}
			status := 0
			eachRow(t, path, "SELECT status FROM urls WHERE url = '"+ts.URL+"/p' AND state = 1", func(rows *sql.Rows) error { return rows.Scan(&status) })
			if status != tc.status {
				t.Errorf("/p recorded with status %d, want %d", status, tc.status)
			}
			if got := fetchedURLs(t, path); !got[ts.URL+"/q"] {
				t.Errorf("/q not fetched: %v", got)
			}
		})
	}
}

// A page's 429 and 503 answers count across runs: one that drew two, in a
// crawl then stopped, is asked for once more when the crawl is continued
// (errors.slow_down_tries is 3), then recorded with its status.
func TestSlowDownTriesSurviveRestart(t *testing.T) {
	var mu sync.Mutex
	asked := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><a href="/p">p</a></body></html>`)
		case "/p":
			mu.Lock()
			asked++
			mu.Unlock()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer ts.Close()
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := crawlConfig([]string{ts.URL + "/"})
	cfg.ParkAfter = 10
	if cfg.SlowDownTries != 3 {
		t.Fatalf("errors.slow_down_tries defaults to %d; this test counts on 3", cfg.SlowDownTries)
	}
	slowDowns := func() int {
		n := -1
		eachRow(t, path, "SELECT slow_downs FROM urls WHERE url = '"+ts.URL+"/p' AND state = 0", func(rows *sql.Rows) error { return rows.Scan(&n) })
		return n
	}

	eng, release := openEngine(t, cfg, "127.0.0.1:1", path)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	testkit.WaitFor(t, time.Minute, "two 503 answers kept", func() bool { return slowDowns() == 2 })
	cancel()
	if err := <-done; !errors.Is(err, engine.ErrStopped) {
		t.Fatalf("first run: %v", err)
	}
	kinds := eng.Stats().ErrorKind
	release()
	mu.Lock()
	first := asked
	mu.Unlock()
	if first != 2 || slowDowns() != 2 {
		t.Fatalf("stopped after /p was asked %d times, %d kept; want 2 and 2", first, slowDowns())
	}

	st := runCrawl(t, cfg, "127.0.0.1:1", path)
	for k, n := range kinds {
		if st.ErrorKind[k] < n {
			t.Errorf("errors of kind %s: %d after the continue, %d before", k, st.ErrorKind[k], n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if asked != 3 {
		t.Errorf("/p asked for %d times over both runs, want 3 (errors.slow_down_tries)", asked)
	}
	status := 0
	eachRow(t, path, "SELECT status FROM urls WHERE url = '"+ts.URL+"/p' AND state = 1", func(rows *sql.Rows) error { return rows.Scan(&status) })
	if status != 503 {
		t.Errorf("/p recorded with status %d, want 503", status)
	}
}
