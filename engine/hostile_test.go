package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/extract"
	"lidi/engine/fetch"
	"lidi/engine/robots"
	"lidi/engine/simweb"
	"lidi/engine/simweb/simwebtest"
	"lidi/engine/urlnorm"
	"lidi/engine/visit"
	"lidi/storage"
)

// hostileSite serves, on 127.0.0.1, every kind of bad input a crawler meets,
// and counts the requests for each path.
type hostileSite struct {
	mu       sync.Mutex
	requests map[string]int
}

func (h *hostileSite) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests[path]
}

func (h *hostileSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests[r.URL.RequestURI()]++
	h.mu.Unlock()
	html := func(body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	p := r.URL.Path
	switch {
	case p == "/robots.txt":
		// Garbage around one valid group.
		w.Write([]byte("\x00\xff\xfe garbage \x01\x02\nUser-agent: *\nDisallow: /private\n\xde\xad\xbe\xef: ???\n<html>"))
	case p == "/":
		html(`<html><body>
			<a href="/malformed">m</a> <a href="/invalid">i</a> <a href="/endless">e</a>
			<a href="/stall">s</a> <a href="/loop1">l</a> <a href="/chain/0">c</a>
			<a href="/binary">b</a> <a href="/octet">o</a> <a href="/png-as-html">g</a> <a href="/private/secret">p</a>
			<a href="/nofollowed" rel="nofollow">n</a></body></html>`)
	case p == "/malformed":
		// What a browser makes of it: good1, good3 and good4 are links;
		// the rest are attributes of other tags, script text, or a tag cut
		// off by the end of the file.
		html("<html><a href=\"/good1\">x<a href='/good2'<<<<>>><div <<a href=/bad1>\x00\xff<p>unclosed <b><i><a href=/good3>y</p></b><a hr ef=/bad><script>document.write('<a href=/js>')</script><table><tr><td><a href=\"/good4\">z</table><a href=\"/bad2\"")
	case p == "/invalid":
		html(`<a href="http://[::1">1</a><a href="ht tp://x">2</a><a href="javascript:alert(1)">3</a>
			<a href="http://127.0.0.1:99999/">4</a><a href="mailto:a@b">5</a><a href="/ok-after-invalid">6</a>`)
	case p == "/endless":
		w.Header().Set("Content-Type", "text/html")
		chunk := []byte(strings.Repeat("<p>more and more</p>", 200))
		for i := 0; i < 100000; i++ { // far past the body limit, bounded anyway
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case p == "/stall":
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	case p == "/loop1":
		http.Redirect(w, r, "/loop2", http.StatusFound)
	case p == "/loop2":
		http.Redirect(w, r, "/loop1", http.StatusFound)
	case strings.HasPrefix(p, "/chain/"):
		var n int
		fmt.Sscanf(p, "/chain/%d", &n)
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n+1), http.StatusMovedPermanently)
	case p == "/binary":
		// Binary that happens to hold markup: never parsed.
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(append([]byte{0x89, 'P', 'N', 'G', 0, 0, 0, 0x0d, 0xff, 0xfe}, []byte(`<a href="/from-binary">x</a>`)...))
	case p == "/png-as-html":
		// Binary declared as HTML: the download stops at its first bytes.
		w.Header().Set("Content-Type", "text/html")
		w.Write(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 1<<20)...))
	case p == "/octet":
		// HTML declared as something else: still parsed.
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte(`<!DOCTYPE html><html><body><a href="/from-octet">x</a></body></html>`))
	default:
		html("<html><body>fine</body></html>")
	}
}

// Bad input gets a clear record and loses nothing: malformed HTML, invalid
// URLs, a robots.txt of garbage, an endless body, a server that stalls, a
// redirect loop and an endless redirect chain, binary bodies.
func TestHostileServer(t *testing.T) {
	t.Parallel()
	site := &hostileSite{requests: map[string]int{}}
	ts := httptest.NewServer(site)
	defer ts.Close()
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	base := "http://127.0.0.1:" + port

	cfg := crawlConfig([]string{base + "/"})
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.ParkAfter = 5
	cfg.Fetch.MaxBodySize = 64 << 10
	cfg.Fetch.HeaderTimeout = 300 * time.Millisecond
	cfg.Fetch.BodyTimeout = 5 * time.Second
	path := filepath.Join(t.TempDir(), "crawl.db")
	st := runCrawl(t, cfg, "127.0.0.1:1", path) // an IP literal needs no DNS

	for _, p := range []string{"/good1", "/good3", "/good4", "/ok-after-invalid", "/from-octet", "/loop1", "/loop2", "/endless", "/stall"} {
		if site.count(p) != 1 {
			t.Errorf("%s requested %d times, want 1", p, site.count(p))
		}
	}
	for _, p := range []string{"/private/secret", "/from-binary", "/nofollowed", "/bad", "/bad1", "/bad2", "/js", "/chain/6"} {
		if site.count(p) != 0 {
			t.Errorf("%s requested %d times, want 0", p, site.count(p))
		}
	}
	for i := 0; i <= 5; i++ { // fetch.max_redirects = 5
		if p := fmt.Sprintf("/chain/%d", i); site.count(p) != 1 {
			t.Errorf("%s requested %d times, want 1", p, site.count(p))
		}
	}

	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	row := func(path string) (status int, truncated bool, errText string, length int64) {
		t.Helper()
		var e sql.NullString
		var tr sql.NullBool
		if err := db.QueryRow("SELECT coalesce(status,0), truncated, error, coalesce(length,0) FROM urls WHERE url = ?", base+path).Scan(&status, &tr, &e, &length); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return status, tr.Bool, e.String, length
	}
	if _, truncated, _, n := row("/endless"); !truncated || n != 64<<10 {
		t.Errorf("/endless: truncated=%v length=%d, want a truncated 64 KiB body", truncated, n)
	}
	if status, _, e, _ := row("/stall"); status != 0 || !strings.Contains(e, "timeout") {
		t.Errorf("/stall: status %d error %q, want a timeout", status, e)
	}
	if status, _, _, _ := row("/loop1"); status != 302 {
		t.Errorf("/loop1: status %d", status)
	}
	var check string
	var length int64
	if err := db.QueryRow("SELECT type_check, length FROM urls WHERE url = ?", base+"/png-as-html").Scan(&check, &length); err != nil || check != "binary-as-html" || length > 512 {
		t.Errorf("/png-as-html: type check %q, %d bytes kept (%v); want binary-as-html, at most 512", check, length, err)
	}
	if err := db.QueryRow("SELECT type_check FROM urls WHERE url = ?", base+"/octet").Scan(&check); err != nil || check != "html-undeclared" {
		t.Errorf("/octet: type check %q (%v), want html-undeclared", check, err)
	}
	var skipped int
	db.QueryRow("SELECT count(*) FROM urls WHERE state = 2").Scan(&skipped)
	if skipped != 1 { // /private/secret
		t.Errorf("%d URLs skipped, want 1 (robots.txt)", skipped)
	}
	if st.ErrorKind["timeout"] != 1 || st.ErrorKind["truncated"] != 1 {
		t.Errorf("errors by kind = %v", st.ErrorKind)
	}
	if st.Skipped["redirect-chain"] != 1 || st.Skipped["nofollow"] < 1 || st.Skipped["invalid"] < 1 {
		t.Errorf("skipped = %v", st.Skipped)
	}
	if st.State != engine.StateDone {
		t.Errorf("state = %s", st.State)
	}
}

// hostileWeb is the small synthetic web every hostile-server test crawls.
var hostileWeb = simweb.Options{Seed: 11, Sites: 4, Pages: 80, ExternalLinks: 0.2, PageSizeMedian: smallPages}

// hostileConfig is crawlConfig without delays (so that any overlap of two
// requests shows). Its timeouts leave room for a loaded machine (a 10 MiB
// gzip bomb takes seconds to inflate under the race detector); a test that
// waits for one sets it smaller.
func hostileConfig(seeds []string) engine.Config {
	cfg := crawlConfig(seeds)
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.ParkAfter = 3
	cfg.Fetch.ConnectTimeout = 5 * time.Second
	cfg.Fetch.HeaderTimeout = 10 * time.Second
	cfg.Fetch.BodyTimeout = 30 * time.Second
	cfg.Fetch.CloseTimeout = time.Second
	cfg.ResolveFailed = time.Hour
	return cfg
}

// crawlHostile crawls to the end with a DNS cache whose queries time out after
// 200 ms, and returns the stats and the peak of the live heap during the
// crawl, over what it was before.
func crawlHostile(t *testing.T, cfg engine.Config, dnsAddr, path string) (engine.Stats, uint64) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	resolver, err := dns.NewCache(dns.Config{Servers: []string{dnsAddr}, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer resolver.Close()
	eng, err := engine.New(cfg, db, resolver, nil)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	before := heapBytes()
	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			peak.Store(max(peak.Load(), heapBytes()))
			select {
			case <-tick.C:
			case <-stop:
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err = eng.Run(ctx)
	close(stop)
	<-sampled
	if err != nil {
		t.Fatalf("crawl: %v (stats %+v)", err, eng.Stats())
	}
	st := eng.Stats()
	if st.State != engine.StateDone {
		t.Fatalf("state = %s, want done", st.State)
	}
	return st, peak.Load() - min(before, peak.Load())
}

// heapBytes is the heap held by objects, live or not yet collected.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// checkWitness fails t if the server saw two requests of one host or one
// address in flight at once, or two connections open at once.
func checkWitness(t *testing.T, w simweb.WitnessSnapshot) {
	t.Helper()
	for host, h := range w.Hosts {
		if h.MaxInFlight > 1 || h.MaxOpenConns > 1 {
			t.Errorf("witness: %s had %d requests in flight and %d connections open at once", host, h.MaxInFlight, h.MaxOpenConns)
		}
	}
	for addr, a := range w.Addresses {
		if a.MaxInFlight > 1 || a.MaxOpenConns > 1 {
			t.Errorf("witness: address %s had %d requests in flight and %d connections open at once (one_per_address)", addr, a.MaxInFlight, a.MaxOpenConns)
		}
	}
}

// pageRow is what the store says of one URL.
type pageRow struct {
	state, status     int
	length, outlinks  int64
	truncated         bool
	errText, redirect string
}

func readRow(t *testing.T, path, url string) (pageRow, bool) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var r pageRow
	var tr sql.NullBool
	var e, red sql.NullString
	err = db.QueryRow(`SELECT state, coalesce(status,0), coalesce(length,0), coalesce(outlinks,0), truncated, error, redirect
		FROM urls WHERE url = ?`, url).Scan(&r.state, &r.status, &r.length, &r.outlinks, &tr, &e, &red)
	if err == sql.ErrNoRows {
		return r, false
	}
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	r.truncated, r.errText, r.redirect = tr.Bool, e.String, red.String
	return r, true
}

// Every hostile server kind, each in its own subtest, on one site of a
// small synthetic web: the hostile answer gets a clear record, the crawl
// goes on to fetch everything a crawl of the same web without the hostile
// answer fetches, memory stays bounded, and simweb's witness never sees two
// requests of one site (or one address) in flight at once, nor two
// connections open.
//
// The test is not parallel, and the kinds whose heap is checked run alone
// (the others, parallel, wait for them): the heap is the process's.
func TestHostileServers(t *testing.T) {
	web, err := simweb.Generate(hostileWeb)
	if err != nil {
		t.Fatal(err)
	}
	// The hostile site: the first whose robots.txt lets HostilePath be
	// fetched.
	site := -1
	for i := range hostileWeb.Sites {
		if !web.Disallowed(i, simweb.HostilePath+"x") && web.Site(i).Robots != simweb.RobotsServerError {
			site = i
			break
		}
	}
	if site < 0 {
		t.Fatal("no site allows " + simweb.HostilePath)
	}
	start := func(t *testing.T, kind simweb.HostileKind) *simweb.Server {
		return simwebtest.Serve(t, web, simweb.ServerConfig{Hostile: kind})
	}
	seeds := func(srv *simweb.Server) []string {
		return append(srv.SeedURLs(2), srv.URL(web.Site(site).HomePage))
	}

	// What a crawl of the same web gets without hostility.
	plain := start(t, simweb.HostileNone)
	basePath := filepath.Join(t.TempDir(), "plain.db")
	crawlHostile(t, hostileConfig(seeds(plain)), plain.DNSAddr(), basePath)
	baseline := map[string]bool{}
	for u := range fetchedURLs(t, basePath) {
		baseline[strings.Replace(u, ":"+strconv.Itoa(plain.Port())+"/", ":PORT/", 1)] = true
	}
	plain.Close()

	tests := []struct {
		kind  simweb.HostileKind
		check func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64)
	}{
		{simweb.HostileGzipBomb, func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
			r := mustRow(t, path, hostile)
			if r.status != 200 || !r.truncated || r.length != 10<<20 {
				t.Errorf("bomb: status %d, truncated %v, %d bytes kept; want 200, a body cut at 10 MiB", r.status, r.truncated, r.length)
			}
			if heap > 200<<20 {
				t.Errorf("bomb: heap peaked %d MiB over the start", heap>>20)
			}
		}},
		{simweb.HostileHugeHeaders, wantError(fetch.KindHeaderTooLarge)},
		{simweb.HostileResetBody, wantError(fetch.KindReset)},
		{simweb.HostileShortLength, func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
			// Only the declared 64 bytes are the page; the rest, garbage
			// on the connection, must not become the next page.
			if r := mustRow(t, path, hostile); r.status != 200 || r.length != 64 || r.errText != "" {
				t.Errorf("short length: %+v, want 200 with the 64 bytes declared", r)
			}
		}},
		{simweb.HostileLongLength, wantError(fetch.KindShortBody)},
		{simweb.HostileBadChunked, wantError(fetch.KindProtocol)},
		{simweb.HostileDrip, wantError(fetch.KindTimeout)},
		{simweb.HostileHugeRobots, func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
			// The rule at the top applies; "Disallow: /" past 500 KiB
			// does not (the crawl goes on, checked below).
			if r, ok := readRow(t, path, hostile); !ok || r.state != 2 {
				t.Errorf("%s: %+v (stored %v), want skipped by robots.txt", hostile, r, ok)
			}
			// What is kept of the file is what is parsed: 500 KiB, and one
			// byte that shows the cut.
			db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			var kept int
			key := hostile[:strings.Index(hostile, simweb.HostilePath)]
			if err := db.QueryRow("SELECT length(robots_body) FROM sites WHERE key = ?", key).Scan(&kept); err != nil || kept != robots.MaxBodySize+1 {
				t.Errorf("robots.txt: %d bytes kept (%v), want %d", kept, err, robots.MaxBodySize+1)
			}
			if got := srv.Witness().Hosts[web.Site(site).Host].Requests; got < 2 {
				t.Errorf("%d requests to the site with the huge robots.txt", got)
			}
		}},
		{simweb.HostileBadRedirect, func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
			if r := mustRow(t, path, hostile); r.status != 302 || r.redirect != "" || r.errText != "" {
				t.Errorf("redirect to ftp: %+v, want a 302 whose target is not followed", r)
			}
		}},
		{simweb.HostileLongURL, func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
			if r := mustRow(t, path, hostile); r.status != 200 || r.outlinks != 2 {
				t.Errorf("long URL page: %+v, want 200 with 2 links kept (the 100 KB one dropped)", r)
			}
			redirect := strings.TrimSuffix(hostile, "long-url") + "long-url/redirect"
			if r := mustRow(t, path, redirect); r.status != 301 || r.redirect != "" {
				t.Errorf("redirect to a long URL: %+v, want a 301 whose target is not followed", r)
			}
			if n := longestURL(t, path); n > urlnorm.DefaultMaxLength {
				t.Errorf("a %d-byte URL stored", n)
			}
			if st.Skipped["invalid"] < 1 {
				t.Errorf("skipped = %v, want the long link counted invalid", st.Skipped)
			}
		}},
		{simweb.HostileManyLinks, func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
			r := mustRow(t, path, hostile)
			if r.status != 200 || r.outlinks != extract.DefaultMaxLinks || !r.truncated {
				t.Errorf("many links: %+v, want 200, truncated, %d links kept", r, extract.DefaultMaxLinks)
			}
			if n := srv.Witness().DNS.ByName["links.test"]; n != 1 {
				t.Errorf("links.test asked of DNS %d times, want 1", n)
			}
			if heap > 200<<20 {
				t.Errorf("many links: heap peaked %d MiB over the start", heap>>20)
			}
		}},
		{simweb.HostileDNSServFail, wantDNSFailure},
		{simweb.HostileDNSSilent, wantDNSFailure},
	}
	// The kinds whose check reads the heap.
	heapChecked := map[simweb.HostileKind]bool{simweb.HostileGzipBomb: true, simweb.HostileManyLinks: true}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			if !heapChecked[tt.kind] {
				t.Parallel()
			}
			srv := start(t, tt.kind)
			hostile := srv.HostileURL(site)
			cfg := hostileConfig(append(seeds(srv), hostile))
			if tt.kind == simweb.HostileDrip {
				cfg.Fetch.BodyTimeout = time.Second // the drip's page times out
			}
			path := filepath.Join(t.TempDir(), "crawl.db")
			began := time.Now()
			st, heap := crawlHostile(t, cfg, srv.DNSAddr(), path)
			t.Logf("%s: %d pages in %s, heap peak +%.1f MiB, errors %v", tt.kind, st.Pages, time.Since(began).Round(time.Millisecond), float64(heap)/(1<<20), st.ErrorKind)
			checkWitness(t, srv.Witness())
			tt.check(t, srv, path, hostile, st, heap)
			// The crawl went on: everything the plain crawl fetched.
			got := fetchedURLs(t, path)
			port := ":" + strconv.Itoa(srv.Port()) + "/"
			for u := range baseline {
				if full := strings.Replace(u, ":PORT/", port, 1); !got[full] && !strings.Contains(full, simweb.HostilePath) {
					t.Errorf("%s not fetched", full)
				}
			}
		})
	}
}

func mustRow(t *testing.T, path, url string) pageRow {
	t.Helper()
	r, ok := readRow(t, path, url)
	if !ok {
		t.Fatalf("%s not stored", url)
	}
	return r
}

// wantError checks that the hostile URL was fetched and failed with kind.
func wantError(kind fetch.ErrorKind) func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
	return func(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
		r := mustRow(t, path, hostile)
		if r.state != 1 || !strings.Contains(r.errText, ": "+string(kind)+": ") {
			t.Errorf("%s: state %d, error %q; want fetched with a %s error", hostile, r.state, r.errText, kind)
		}
		if st.ErrorKind[visit.FetchFailure(kind)] < 1 {
			t.Errorf("errors by kind = %v, want %s", st.ErrorKind, kind)
		}
	}
}

// wantDNSFailure checks that the seed whose name does not resolve was
// reported and asked of DNS once only.
func wantDNSFailure(t *testing.T, srv *simweb.Server, path, hostile string, st engine.Stats, heap uint64) {
	host := strings.TrimPrefix(hostile, "http://")
	host = host[:strings.IndexByte(host, ':')]
	if st.ErrorKind["dns"] != 1 {
		t.Errorf("errors by kind = %v, want one dns", st.ErrorKind)
	}
	if n := srv.Witness().DNS.ByName[host]; n < 1 || n > 4 {
		t.Errorf("%s asked of DNS %d times", host, n)
	}
	reported := false
	for _, ev := range st.Events {
		reported = reported || strings.Contains(ev.Site+ev.Text, host)
	}
	if !reported {
		t.Errorf("no event names %s: %+v", host, st.Events)
	}
}

// longestURL is the length of the longest URL stored.
func longestURL(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n sql.NullInt64
	if err := db.QueryRow("SELECT max(length(url)) FROM urls").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return int(n.Int64)
}

// The case that showed the fault: bodies declared text/html that turn out
// binary are abandoned after their first bytes, and the next request to
// the site (or its address) starts at once, without delays. The server
// must still never see two requests of one site or address in flight.
func TestPolitenessAfterAbortedBodies(t *testing.T) {
	t.Parallel()
	srv := simwebtest.Start(t, simweb.Options{Seed: 5, Sites: 12, Pages: 120, Traps: 2, PageSizeMedian: smallPages})
	cfg := hostileConfig(srv.SeedURLs(3))
	path := filepath.Join(t.TempDir(), "crawl.db")
	st, _ := crawlHostile(t, cfg, srv.DNSAddr(), path)
	checkWitness(t, srv.Witness())
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var aborted int
	if err := db.QueryRow("SELECT count(*) FROM urls WHERE type_check = 'binary-as-html'").Scan(&aborted); err != nil {
		t.Fatal(err)
	}
	if aborted == 0 {
		t.Fatal("no body was abandoned: the test tests nothing")
	}
	t.Logf("%d pages, %d bodies abandoned as binary, %d connections", st.Pages, aborted, srv.Witness().Totals.Connections)
}

// A TLS handshake the server never answers times out, and the crawl of
// the other sites goes on; the stalled server never has two connections
// open at once.
func TestTLSHandshakeStall(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var open, maxOpen atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n := open.Add(1)
			for m := maxOpen.Load(); n > m && !maxOpen.CompareAndSwap(m, n); m = maxOpen.Load() {
			}
			wg.Go(func() { // reads the ClientHello, answers nothing
				defer c.Close()
				defer open.Add(-1)
				buf := make([]byte, 4096)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			})
		}
	})
	srv := simwebtest.Start(t, hostileWeb)
	stalled := "https://" + ln.Addr().String() + "/"
	cfg := hostileConfig(append(srv.SeedURLs(2), stalled))
	cfg.Fetch.ConnectTimeout = 200 * time.Millisecond
	path := filepath.Join(t.TempDir(), "crawl.db")
	st, _ := crawlHostile(t, cfg, srv.DNSAddr(), path)
	checkWitness(t, srv.Witness())
	if st.ErrorKind[visit.FetchFailure(fetch.KindTimeout)] < 1 {
		t.Errorf("errors by kind = %v, want a timeout; events %+v", st.ErrorKind, st.Events)
	}
	if st.Pages < 20 {
		t.Errorf("only %d pages fetched", st.Pages)
	}
	if m := maxOpen.Load(); m != 1 {
		t.Errorf("the stalled server had %d connections open at once", m)
	}
	// An unreachable robots.txt disallows nothing for good: the page
	// stays queued for a later visit, and the event says why.
	if r, ok := readRow(t, path, stalled); !ok || r.state == 2 {
		t.Errorf("%s: %+v (stored %v), want still queued", stalled, r, ok)
	}
	said := false
	for _, ev := range st.Events {
		said = said || strings.Contains(ev.Text, "unreachable (timeout)")
	}
	if !said {
		t.Errorf("no event says robots.txt timed out: %+v", st.Events)
	}
	ln.Close()
}
