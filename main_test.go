package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/storage"
)

// startWeb serves the small web the command-line tests crawl.
func startWeb(t *testing.T) *simweb.Server {
	return simwebtest.Start(t, simweb.Options{Seed: 2, Sites: 8, Pages: 300})
}

func writeConfig(t *testing.T, dir string, srv *simweb.Server, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "config.yaml")
	body := fmt.Sprintf(`seeds: [%q]
scope:
  allowed_domains: [test] # simweb's hosts are under .test
robots: 4
politeness:
  delay: 0s
  max_delay: 0s
  pages_per_connection: 20
dns:
  servers: [%q]
robots_txt:
  retry: 50ms
errors:
  park_after: 1
storage:
  path: %q
%s`, srv.SeedURLs(1)[0], srv.DNSAddr(), filepath.Join(dir, "crawl.db"), extra)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// `lidi crawl --config config.yaml --headless` crawls to the end, prints
// progress and exits 0; `lidi export` then snapshots the result.
func TestHeadlessCrawlAndExport(t *testing.T) {
	srv := startWeb(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, srv, "limits:\n  max_pages: 120\n")
	var out, errOut bytes.Buffer
	if code := run([]string{"crawl", "--config", cfg, "--headless"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "done pages=120") {
		t.Errorf("no final progress line in:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "ended: limits.max_pages reached") || !strings.Contains(out.String(), "event start") {
		t.Errorf("no end line or no start event in:\n%s", out.String())
	}

	snap := filepath.Join(dir, "snap.db")
	out.Reset()
	if code := run([]string{"export", "--db", filepath.Join(dir, "crawl.db"), "--out", snap}, &out, &errOut); code != 0 {
		t.Fatalf("export exit %d: %s", code, errOut.String())
	}
	db, err := sql.Open("sqlite", "file:"+snap+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM urls WHERE state = 1").Scan(&n); err != nil || n != 120 {
		t.Errorf("snapshot holds %d fetched pages (%v), want 120", n, err)
	}
}

// A headless crawl whose every seed fails exits non-zero at once, with one
// line that says why, after an event line for each seed.
func TestHeadlessSeedsFailed(t *testing.T) {
	srv := startWeb(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, srv, "")
	body, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A host the test web's DNS server does not know; retries an hour
	// away, which the crawl must not wait for.
	text := strings.Replace(string(body), srv.SeedURLs(1)[0], "http://nowhere.test/", 1)
	text = strings.Replace(text, "errors:\n", "errors:\n  park_for: 1h\n", 1)
	body = []byte(strings.Replace(text, "dns:\n", "dns:\n  retry: 1h\n", 1))
	if err := os.WriteFile(cfg, body, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"crawl", "--config", cfg, "--headless"}, &out, &errOut); code == 0 {
		t.Fatalf("exit 0; out:\n%s", out.String())
	}
	if lines := strings.Split(strings.TrimSpace(errOut.String()), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "every seed failed") || !strings.Contains(lines[0], "nowhere.test") {
		t.Errorf("stderr is not one line saying why:\n%s", errOut.String())
	}
	if !strings.Contains(out.String(), "event seed-failed") || !strings.Contains(out.String(), "ended: every seed failed") {
		t.Errorf("no seed-failed event line or end line in:\n%s", out.String())
	}
}

// Errors on start are plain messages, before any screen opens.
func TestStartErrors(t *testing.T) {
	srv := startWeb(t)
	dir := t.TempDir()

	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("seeds: [http://a.test/]\nscope: {anywhere: true}\npoliteness:\n  pages_per_connection: 0\n"), 0o644)
	var out, errOut bytes.Buffer
	if code := run([]string{"--config", bad}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "politeness.pages_per_connection") {
		t.Errorf("bad config: exit %d, %q", code, errOut.String())
	}

	errOut.Reset()
	if code := run([]string{"--config", filepath.Join(dir, "missing.yaml")}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "missing.yaml") {
		t.Errorf("missing config: exit %d, %q", code, errOut.String())
	}

	// A second lidi on the same crawl file.
	cfg := writeConfig(t, dir, srv, "")
	held, err := storage.Open(filepath.Join(dir, "crawl.db"), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	errOut.Reset()
	if code := run([]string{"--config", cfg, "--headless"}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "in use") {
		t.Errorf("locked database: exit %d, %q", code, errOut.String())
	}

	// The console without a terminal (go test's stdin is none) says
	// what to do instead, before opening anything.
	errOut.Reset()
	if code := run([]string{"--config", cfg}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "--headless") {
		t.Errorf("no terminal: exit %d, %q", code, errOut.String())
	}
}

// TestSimCommand runs `lidi sim` on a tiny web: it must crawl every page of
// it in virtual time and end with the key=value lines scripts read.
func TestSimCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"sim", "--sites", "20", "--pages", "400", "--strategy", "depth", "-r", "4"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("lidi sim exited %d: %s", code, errOut.String())
	}
	for _, want := range []string{"strategy=depth", "pages=", "coverage=1.000000"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if code := run([]string{"sim", "--strategy", "nosuch"}, &out, &errOut); code == 0 {
		t.Error("an unknown strategy was accepted")
	}
}

// A demo's database is named after its flags; a file made with other flags
// is refused with the flags that differ.
func TestDemoFlags(t *testing.T) {
	ctx := context.Background()
	a := demoFlags{{"sites", "200"}, {"pages", "4000"}, {"seed", "1"}, {"strategy", "length"}, {"recrawl", "iir"}}
	b := demoFlags{{"sites", "50"}, {"pages", "4000"}, {"seed", "1"}, {"strategy", "optimal"}, {"recrawl", "iir"}}
	if a.fileName() == b.fileName() || a.fileName() != "lidi-demo-sites200-pages4000-seed1-strategylength-recrawliir.db" {
		t.Errorf("file names %q and %q", a.fileName(), b.fileName())
	}
	path := filepath.Join(t.TempDir(), "demo.db")
	first := time.Date(2026, 11, 25, 12, 0, 0, 123456789, time.UTC)
	epoch, err := a.claim(ctx, path, first)
	if err != nil || !epoch.Equal(first) {
		t.Fatalf("a new demo: epoch %v, %v; want %v", epoch, err, first)
	}
	// Run again later, the demo's web continues its clock from the
	// first run's epoch.
	if epoch, err := a.claim(ctx, path, first.Add(time.Hour)); err != nil || !epoch.Equal(first) {
		t.Errorf("the same flags again: epoch %v, %v; want %v", epoch, err, first)
	}
	_, err = b.claim(ctx, path, first)
	if err == nil || !strings.Contains(err.Error(), "--sites 50 (the file has 200), --strategy optimal (the file has length)") {
		t.Errorf("other flags: %v", err)
	}
}

// A seed whose host is an IP address never touches DNS: the crawl runs
// with no DNS server reachable and sends no query.
func TestIPLiteralSeedsNeedNoDNS(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			io.WriteString(w, `<html><a href="/a">a</a> <a href="/b">b</a></html>`)
		default:
			io.WriteString(w, `<html><a href="/">home</a></html>`)
		}
	}))
	defer site.Close()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "ip.yaml")
	os.WriteFile(cfg, []byte(fmt.Sprintf(`seeds: [%q]
scope:
  allowed_hosts: [127.0.0.1]
politeness:
  delay: 0s
  max_delay: 0s
dns:
  servers: ["127.0.0.1:9"]
  hosts_file: ""
  timeout: 100ms
storage:
  path: ip.db
`, site.URL+"/")), 0o644)
	var out, errOut bytes.Buffer
	if code := run([]string{"crawl", "--config", cfg, "--headless"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "done pages=3 ") || !strings.Contains(out.String(), "dns_queries=0") {
		t.Errorf("want 3 pages and no DNS query:\n%s", out.String())
	}
}

// Bare lidi in the checkout reads the shipped config.yaml, which names no
// seed: it refuses to start, says what to write, and creates nothing.
func TestBareLidiRefuses(t *testing.T) {
	if _, err := os.Stat("config.yaml"); err != nil {
		t.Fatal(err)
	}
	_, dbErr := os.Stat("crawl.db")
	var out, errOut bytes.Buffer
	code := run(nil, &out, &errOut)
	msg := errOut.String()
	if code != 1 || !strings.Contains(msg, "config.yaml:") || !strings.Contains(msg, "seeds: [https://") || !strings.Contains(msg, "scope: {allowed_domains:") || !strings.Contains(msg, "lidi demo") {
		t.Errorf("bare lidi: exit %d, stderr %q; want a refusal that says to write seeds and a scope", code, msg)
	}
	if _, err := os.Stat("crawl.db"); dbErr != nil && err == nil {
		t.Error("bare lidi created crawl.db")
	}
}

// A config that cannot run fails before any file is made: no database and
// no lock are left behind, and a database in a missing directory is named
// as such.
func TestFailingConfigLeavesNoFiles(t *testing.T) {
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"bad seed", "seeds: [example.org]\nscope: {anywhere: true}\n", `config.yaml:1: seeds[0]: "example.org"`},
		{"no scope", "seeds: [http://a.test/]\n", "config.yaml: scope: none: write the hosts"},
		{"bad scope", "seeds: [http://a.test/]\nscope: {anywhere: true, exclude: ['(']}\n", "config.yaml:2: scope: bad exclude pattern"},
		{"negative dns", "seeds: [http://a.test/]\nscope: {anywhere: true}\ndns: {min_ttl: -1s}\n", "config.yaml:3: dns.min_ttl: must not be negative"},
		{"missing directory", "seeds: [http://a.test/]\nscope: {anywhere: true}\nstorage: {path: data/crawl.db}\n", "config.yaml:3: storage.path: the directory "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(cfg, []byte(tc.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			if code := run([]string{"crawl", "--config", cfg, "--headless"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want %q", code, errOut.String(), tc.want)
			}
			if strings.Contains(errOut.String(), ".lock") || strings.Count(errOut.String(), "config:") != 1 {
				t.Errorf("stderr %q names the lock or repeats its prefix", errOut.String())
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				var names []string
				for _, e := range entries {
					names = append(names, e.Name())
				}
				t.Errorf("files left: %v", names)
			}
		})
	}
}
