package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
)

// A crawl whose seed's robots.txt redirects to another host: the robot
// meets a name it may not resolve, the loop looks it up, and the next
// visit follows the chain to the file whose rules then hold.
func TestCrawlRobotsRedirectToAnotherHost(t *testing.T) {
	var robotsFetches atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" && strings.HasPrefix(r.Host, "robots.test:") {
			robotsFetches.Add(1)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		http.NotFound(w, r)
	}))
	defer other.Close()
	otherPort := strconv.Itoa(int(netip.MustParseAddrPort(other.Listener.Addr().String()).Port()))
	var privateHits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			http.Redirect(w, r, "http://robots.test:"+otherPort+"/robots.txt", http.StatusMovedPermanently)
		case strings.HasPrefix(r.URL.Path, "/private"):
			privateHits.Add(1)
			fmt.Fprint(w, "<html>secret</html>")
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><a href="/private/x">x</a> <a href="/public">p</a></body></html>`)
		}
	}))
	defer site.Close()

	path := filepath.Join(t.TempDir(), "crawl.db")
	runCrawlHosts(t, crawlConfig([]string{site.URL + "/"}), "127.0.0.1 robots.test\n", path)
	got := fetchedURLs(t, path)
	if !got[site.URL+"/"] || !got[site.URL+"/public"] || got[site.URL+"/private/x"] || privateHits.Load() != 0 {
		t.Errorf("fetched %v (%d requests for /private): robots.txt of robots.test must hold", got, privateHits.Load())
	}
	if n := robotsFetches.Load(); n != 1 {
		t.Errorf("robots.test's robots.txt fetched %d times, want 1", n)
	}
	// The site's record says where its robots.txt was read, and how.
	var robotsURL, chain, end string
	eachRow(t, path, "SELECT coalesce(robots_url, ''), coalesce(robots_redirects, ''), coalesce(robots_end, '') FROM sites WHERE key = '"+site.URL+"'",
		func(rows *sql.Rows) error { return rows.Scan(&robotsURL, &chain, &end) })
	if want := "http://robots.test:" + otherPort + "/robots.txt"; robotsURL != want || chain != "301 "+site.URL+"/robots.txt" || end != "answered" {
		t.Errorf("site's robots.txt: %q after %q (%s); want %q after a 301 from the site", robotsURL, chain, end, want)
	}
}

// runCrawlHosts crawls to the end (bounded in time) into the SQLite file
// at path, resolving names from hosts (a hosts file's text) and nothing
// else.
func runCrawlHosts(t *testing.T, cfg engine.Config, hosts, path string) engine.Stats {
	t.Helper()
	hostsFile := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hostsFile, []byte(hosts), 0o600); err != nil {
		t.Fatal(err)
	}
	eng, release := openEngineDNS(t, cfg, dns.Config{Servers: []string{"127.0.0.1:1"}, HostsFile: hostsFile}, path, nil)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	return eng.Stats()
}
