package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/internal/testkit"
	"lidi/storage"
)

// TestMain lets the test binary play the crawler in a child process that
// the kill -9 test kills.
func TestMain(m *testing.M) {
	if db := os.Getenv("LIDI_TEST_CRAWL_DB"); db != "" {
		cfg := killConfig(strings.Split(os.Getenv("LIDI_TEST_CRAWL_SEEDS"), " "), os.Getenv("LIDI_TEST_CRAWL_LONG") != "")
		os.Exit(childCrawl(db, os.Getenv("LIDI_TEST_CRAWL_DNS"), cfg))
	}
	os.Exit(m.Run())
}

// killConfig is the kill -9 test's crawl; with long, a visit takes every
// page queued on its site (c larger than any site), so the kill cuts visits
// short rather than falling between them.
func killConfig(seeds []string, long bool) engine.Config {
	cfg := crawlConfig(seeds)
	cfg.Robots = 4
	cfg.Delay, cfg.MaxDelay = 10*time.Millisecond, 10*time.Millisecond
	if long {
		cfg.PagesPerVisit = 100000
	}
	return cfg
}

// childCrawl crawls until killed (or, bounded, for at most three minutes).
func childCrawl(path, dnsAddr string, cfg engine.Config) int {
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	resolver, err := dns.NewCache(dns.Config{Servers: []string{dnsAddr}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	eng, err := engine.New(cfg, db, resolver, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func countFetched(path string) int {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return 0
	}
	defer db.Close()
	var n int
	db.QueryRow("SELECT count(*) FROM urls WHERE state = 1").Scan(&n)
	return n
}

// kill -9 in the middle of a crawl, then run again: no stored page is lost
// or fetched again, no discovered URL is forgotten, visits cut short go on
// where they stopped, and the crawl ends with the same pages as one never
// interrupted.
func TestKill9Resume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	// Parallel, as the other long crawl tests: the package is CI's longest.
	t.Parallel()
	for _, long := range []bool{false, true} {
		name := "short-visits"
		if long {
			name = "long-visits"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			testKill9Resume(t, long)
		})
	}
}

func testKill9Resume(t *testing.T, long bool) {
	// Small pages: what is tested is which pages are stored and asked for,
	// and the default's 12 KiB bodies made it CI's longest test (a body's
	// every byte is slow under the race detector).
	web, err := simweb.Generate(simweb.Options{Seed: 11, Sites: 15, Pages: 1500, PageSizeMedian: smallPages})
	if err != nil {
		t.Fatal(err)
	}
	// The page log names the URL behind a wrong request count.
	srv := simwebtest.Serve(t, web, simweb.ServerConfig{LogPages: true})
	seeds := srv.SeedURLs(3)
	dir := t.TempDir()
	path := filepath.Join(dir, "crawl.db")

	child := exec.Command(os.Args[0], "-test.run=^TestKill9Resume$")
	child.Env = append(os.Environ(), "LIDI_TEST_CRAWL_DB="+path, "LIDI_TEST_CRAWL_DNS="+srv.DNSAddr(), "LIDI_TEST_CRAWL_SEEDS="+strings.Join(seeds, " "))
	if long {
		child.Env = append(child.Env, "LIDI_TEST_CRAWL_LONG=1")
	}
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill() // when the wait fails
	// Generous: CI runs every package at once on two cores.
	testkit.WaitFor(t, 2*time.Minute, "the child crawl to reach 300 pages", func() bool { return countFetched(path) >= 300 })
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if st := child.ProcessState; st.Exited() {
		t.Fatalf("the child crawl ended by itself (%v) before the kill; make the web bigger", st)
	}

	before := fetchedURLs(t, path)
	t.Logf("killed with %d pages stored", len(before))
	srv.ResetWitness()
	st := runCrawl(t, killConfig(seeds, long), srv.DNSAddr(), path)
	w := srv.Witness()
	after := fetchedURLs(t, path)

	for u := range before {
		if !after[u] {
			t.Errorf("%s was stored before the kill and is lost", u)
		}
	}
	var robotsFetches int64
	for _, h := range w.Hosts {
		robotsFetches += h.RobotsFetches
	}
	if pageRequests := w.Totals.Requests - robotsFetches; pageRequests != int64(len(after)-len(before)) {
		t.Errorf("the resumed crawl made %d page requests for %d new pages (its errors by kind: %v)", pageRequests, len(after)-len(before), st.ErrorKind)
		for u, r := range srv.PageRequests() {
			switch {
			case before[u]:
				t.Errorf("%s: stored before the kill, requested %d times after it", u, r.Requests)
			case r.Requests > 1:
				t.Errorf("%s: requested %d times after the kill (stored: %v)", u, r.Requests, after[u])
			}
		}
	}
	if w.Totals.Disallowed != 0 {
		t.Errorf("%d disallowed requests", w.Totals.Disallowed)
	}
	if st.Pages != int64(len(after)) {
		t.Errorf("stats say %d pages, the store holds %d", st.Pages, len(after))
	}

	// The same crawl, never interrupted, fetches exactly the same pages.
	ref := fetchedURLs(t, func() string {
		p := filepath.Join(dir, "ref.db")
		runCrawl(t, killConfig(seeds, long), srv.DNSAddr(), p)
		return p
	}())
	if len(ref) != len(after) {
		t.Errorf("interrupted crawl fetched %d pages, uninterrupted %d", len(after), len(ref))
	}
	for u := range ref {
		if !after[u] {
			t.Errorf("%s: fetched by the uninterrupted crawl only", u)
		}
	}
}
