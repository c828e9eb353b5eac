package main

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
)

// startTLSWeb serves a small HTTPS simweb and writes its CA to dir/certs.
func startTLSWeb(t *testing.T, dir string) *simweb.Server {
	t.Helper()
	srv := simwebtest.Start(t, simweb.Options{Seed: 3, Sites: 8, Pages: 240, TLS: true})
	os.MkdirAll(filepath.Join(dir, "certs"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "certs", "ca.pem"), srv.CA(), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv
}

// The real-site walk-through on loopback: an HTTPS web with its own CA,
// reached through a proxy, crawled from a config file in another directory
// whose relative names (storage.path, fetch.ca_file) are the file's. One
// seed is an http:// URL that the site redirects to https://: the target
// goes through the scheduler like any URL. The witness finds the crawl
// polite; everything went through the proxy.
func TestHTTPSThroughProxy(t *testing.T) {
	dir := t.TempDir()
	srv := startTLSWeb(t, dir)
	proxy := startProxy(t, srv.DNSAddr())
	seeds := srv.SeedURLs(2)
	// The first seed as a researcher might type it: http:// on port 80's
	// stand-in, redirected to HTTPS.
	plainSeed := strings.Replace(seeds[0], "https://", "http://", 1)
	plainSeed = strings.Replace(plainSeed, fmt.Sprintf(":%d/", srv.Port()), fmt.Sprintf(":%d/", srv.HTTPPort()), 1)
	cfg := filepath.Join(dir, "site.yaml")
	body := fmt.Sprintf(`seeds: [%q, %q]
user_agent: "lidi/0.1 (+https://lab.example/crawl; crawl@lab.example)"
robots: 4
scope:
  allowed_domains: [test] # simweb's hosts
politeness:
  delay: 0s
  max_delay: 0s
  pages_per_connection: 20
fetch:
  ca_file: certs/ca.pem
  proxy: %q
dns:
  servers: [%q]
storage:
  path: crawl.db
`, plainSeed, seeds[1], proxy.URL(), srv.DNSAddr())
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run([]string{"crawl", "--config", cfg, "--headless"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut.String(), out.String())
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pages, https, failed int
	if err := db.QueryRow(`SELECT count(*) FILTER (WHERE status = 200), count(*) FILTER (WHERE status = 200 AND url LIKE 'https://%'), count(*) FILTER (WHERE error IS NOT NULL)
		FROM urls WHERE state = 1`).Scan(&pages, &https, &failed); err != nil {
		t.Fatal(err)
	}
	reachable := 0
	for range srv.Web().ReachableUnique(srv.Web().Seeds(2)).All() {
		reachable++
	}
	if pages < reachable || https != pages || failed > 0 {
		t.Errorf("%d pages fetched (%d over https), %d failed: want the %d reachable, all over https", pages, https, failed, reachable)
	}
	var status int
	var redirect sql.NullString
	if err := db.QueryRow(`SELECT status, redirect FROM urls WHERE url = ?`, plainSeed).Scan(&status, &redirect); err != nil {
		t.Fatalf("the http:// seed: %v", err)
	}
	var targetState int
	db.QueryRow(`SELECT state FROM urls WHERE url = ?`, redirect.String).Scan(&targetState)
	if status != 301 || !strings.HasPrefix(redirect.String, "https://") || targetState != 1 {
		t.Errorf("http:// seed: status %d, redirect %q (state %d): want 301 to an https:// URL fetched in its turn", status, redirect.String, targetState)
	}

	w := srv.Witness()
	for host, h := range w.Hosts {
		if h.MaxOpenConns > 1 || h.MaxInFlight > 1 || h.Disallowed > 0 {
			t.Errorf("%s: %d connections at once, %d requests at once, %d disallowed", host, h.MaxOpenConns, h.MaxInFlight, h.Disallowed)
		}
		if h.Requests > 0 && h.RobotsFetches == 0 {
			t.Errorf("%s: %d requests and no robots.txt", host, h.Requests)
		}
	}
	for addr, a := range w.Addresses {
		if a.MaxOpenConns > 1 {
			t.Errorf("address %s: %d connections at once (politeness.one_per_address)", addr, a.MaxOpenConns)
		}
	}
	// Every connection the sites saw came from the proxy, and robots.txt
	// of the http:// site went through it like the pages.
	if got, want := proxy.upstream.Load(), w.Totals.Connections; got != want {
		t.Errorf("the sites saw %d connections, the proxy opened %d: lidi went around the proxy", want, got)
	}
	if proxy.tunnels.Load() == 0 || !anyHasSuffix(proxy.Gets(), "/robots.txt") {
		t.Errorf("proxy: %d tunnels, plain requests %q", proxy.tunnels.Load(), proxy.Gets())
	}
	if _, err := os.Stat("crawl.db"); err == nil {
		t.Error("crawl.db written in the working directory, not beside the config file")
	}
}

// Without the web's CA, every site's robots.txt fails the certificate
// check: the failure has its own kind, in the events and in the one line
// with which the crawl, whose every seed failed, exits non-zero; nothing is
// fetched.
func TestHTTPSUntrusted(t *testing.T) {
	dir := t.TempDir()
	srv := startTLSWeb(t, dir)
	cfg := writeConfig(t, dir, srv, "limits:\n  max_duration: 3s\n")
	var out, errOut bytes.Buffer
	if code := run([]string{"crawl", "--config", cfg, "--headless"}, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "every seed failed") || !strings.Contains(errOut.String(), "tls-certificate") {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var text string
	if err := db.QueryRow(`SELECT text FROM events WHERE kind = 'robots-5xx' LIMIT 1`).Scan(&text); err != nil || !strings.Contains(text, "tls-certificate") {
		t.Errorf("event %q (%v): want robots.txt unreachable (tls-certificate)", text, err)
	}
	if w := srv.Witness(); w.Totals.Requests != 0 {
		t.Errorf("%d requests reached the sites through an untrusted TLS connection", w.Totals.Requests)
	}
}

// proxiedCrawl crawls the HTTPS web of startTLSWeb from a config whose
// fetch section is fetchYAML, as a child `lidi crawl --headless` process
// with env added to its environment (the proxy variables are read once per
// process, so a child is the only honest way to set them). It checks that
// every reachable page was fetched and that every connection the sites saw
// came through proxy.
func proxiedCrawl(t *testing.T, fetchYAML string, env ...string) {
	t.Helper()
	dir := t.TempDir()
	srv := startTLSWeb(t, dir)
	proxy := startProxy(t, srv.DNSAddr())
	fetchYAML = strings.ReplaceAll(fetchYAML, "PROXY_SOCKS5", proxy.SOCKS5URL())
	cfg := filepath.Join(dir, "site.yaml")
	body := fmt.Sprintf(`seeds: [%q, %q]
robots: 4
scope:
  allowed_domains: [test] # simweb's hosts
politeness:
  delay: 0s
  max_delay: 0s
fetch:
  ca_file: certs/ca.pem
%s
dns:
  servers: [%q]
storage:
  path: crawl.db
`, srv.SeedURLs(2)[0], srv.SeedURLs(2)[1], fetchYAML, srv.DNSAddr())
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "crawl", "--config", cfg, "--headless")
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !strings.EqualFold(name, "http_proxy") && !strings.EqualFold(name, "https_proxy") && !strings.EqualFold(name, "no_proxy") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for _, kv := range env {
		cmd.Env = append(cmd.Env, strings.ReplaceAll(kv, "PROXY_HTTP", proxy.URL()))
	}
	cmd.Env = append(cmd.Env, runMainEnv+"=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("lidi crawl: %v\n%s", err, out)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "crawl.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var pages, failed int
	if err := db.QueryRow(`SELECT count(*) FILTER (WHERE status = 200), count(*) FILTER (WHERE error IS NOT NULL) FROM urls WHERE state = 1`).Scan(&pages, &failed); err != nil {
		t.Fatal(err)
	}
	reachable := 0
	for range srv.Web().ReachableUnique(srv.Web().Seeds(2)).All() {
		reachable++
	}
	if pages < reachable || failed > 0 {
		t.Errorf("%d pages fetched, %d failed: want the %d reachable", pages, failed, reachable)
	}
	w := srv.Witness()
	if got, want := proxy.upstream.Load(), w.Totals.Connections; got != want || proxy.tunnels.Load() == 0 {
		t.Errorf("the sites saw %d connections, the proxy opened %d (%d tunnels): lidi went around the proxy", want, got, proxy.tunnels.Load())
	}
	for host, h := range w.Hosts {
		if h.MaxOpenConns > 1 || h.MaxInFlight > 1 || h.Disallowed > 0 {
			t.Errorf("%s: %d connections at once, %d requests at once, %d disallowed", host, h.MaxOpenConns, h.MaxInFlight, h.Disallowed)
		}
	}
}

// With fetch.proxy empty, lidi takes its proxy from HTTPS_PROXY, as curl
// and the go tool do on a university network.
func TestProxyFromEnvironment(t *testing.T) {
	proxiedCrawl(t, "", "HTTPS_PROXY=PROXY_HTTP", "HTTP_PROXY=PROXY_HTTP")
}

// fetch.proxy takes a socks5:// proxy (an ssh -D tunnel, Tor); the names
// are resolved by the proxy's side.
func TestSOCKS5Proxy(t *testing.T) {
	proxiedCrawl(t, "  proxy: PROXY_SOCKS5")
}
