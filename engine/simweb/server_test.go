package simweb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lidi/internal/testkit"
)

var smallWeb = Options{Seed: 11, Sites: 40, Pages: 2000}

func get(t testing.TB, c *http.Client, u string) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// addrClient sends every request to addr, whatever the URL's host, so that
// tests can choose the Host header freely.
func addrClient(addr netip.Addr, port int) *http.Client {
	return &http.Client{
		Timeout: 10 * time.Second,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, netip.AddrPortFrom(addr, uint16(port)).String())
			},
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func TestServeSeedsThroughDNS(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{})
	c := resolvingClient(s, 2)
	seeds := w.Seeds(3)
	for i, u := range s.SeedURLs(3) {
		if !strings.Contains(u, ":"+strconv.Itoa(s.Port())+"/") {
			t.Errorf("seed URL %q lacks port %d", u, s.Port())
		}
		resp, body := get(t, c, u)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
			t.Fatalf("GET %s: %s %q", u, resp.Status, resp.Header.Get("Content-Type"))
		}
		if !bytes.Equal(body, s.Render(seeds[i])) {
			t.Errorf("GET %s: body differs from Render", u)
		}
		if !resp.Uncompressed {
			t.Errorf("GET %s: not gzip-coded to a client that asked for gzip", u)
		}
	}
	info := s.Info(3)
	for _, want := range []string{s.DNSAddr(), s.AdminAddr(), s.SeedURLs(1)[0]} {
		if !strings.Contains(info, want) {
			t.Errorf("Info lacks %q:\n%s", want, info)
		}
	}
}

// TestCrawlWholeWebOverHTTP fetches every page through the server, following
// the links found in the HTML, and checks that what is served is the graph.
func TestCrawlWholeWebOverHTTP(t *testing.T) {
	w := testWeb(t, Options{Seed: 12, Sites: 15, Pages: 600})
	s := startServer(t, w, ServerConfig{})
	c := resolvingClient(s, 4)
	seen := map[string]bool{}
	queue := []string{s.SeedURLs(1)[0]}
	seen[queue[0]] = true
	fetched := 0
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		resp, body := get(t, c, u)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", u, resp.Status)
		}
		fetched++
		base, _ := url.Parse(u)
		for _, m := range hrefRE.FindAllSubmatch(body, -1) {
			ref, err := url.Parse(string(m[1]))
			if err != nil {
				t.Fatal(err)
			}
			next := base.ResolveReference(ref).String()
			if !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	if fetched != w.NumPages() {
		t.Errorf("crawl fetched %d pages of %d", fetched, w.NumPages())
	}
	wit := s.Witness()
	if wit.Totals.Requests != int64(fetched) || wit.Totals.NotFound != 0 || wit.Totals.Misdirected != 0 {
		t.Errorf("witness totals %+v after %d fetches", wit.Totals, fetched)
	}
	if len(wit.Hosts) != w.NumSites() {
		t.Errorf("witness saw %d hosts, web has %d", len(wit.Hosts), w.NumSites())
	}
}

// sharedAddress returns two sites on one address and a site on another.
func sharedAddress(t *testing.T, w *Web) (a, b, other Site) {
	t.Helper()
	byAddr := map[netip.Addr][]Site{}
	for i := range w.NumSites() {
		si := w.Site(i)
		byAddr[si.Addr] = append(byAddr[si.Addr], si)
	}
	for addr, sites := range byAddr {
		if len(sites) < 2 {
			continue
		}
		for addr2, sites2 := range byAddr {
			if addr2 != addr {
				return sites[0], sites[1], sites2[0]
			}
		}
	}
	t.Fatal("no shared address")
	return
}

func TestHostRouting(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{})
	a, b, other := sharedAddress(t, w)
	c := addrClient(a.Addr, s.Port())
	fetch := func(host, path string) (*http.Response, []byte) {
		return get(t, c, "http://"+host+":"+strconv.Itoa(s.Port())+path)
	}
	ra, bodyA := fetch(a.Host, "/")
	rb, bodyB := fetch(strings.ToUpper(b.Host), "/") // host names are case-insensitive
	if ra.StatusCode != 200 || rb.StatusCode != 200 {
		t.Fatalf("statuses %d, %d", ra.StatusCode, rb.StatusCode)
	}
	if !bytes.Equal(bodyA, s.Render(a.HomePage)) || !bytes.Equal(bodyB, s.Render(b.HomePage)) || bytes.Equal(bodyA, bodyB) {
		t.Error("same address, different Host: not each site's own home page")
	}
	for _, host := range []string{"nosuch.test", other.Host, a.Addr.String()} {
		if resp, _ := fetch(host, "/"); resp.StatusCode != http.StatusMisdirectedRequest {
			t.Errorf("Host %s on %v: %s, want 421", host, a.Addr, resp.Status)
		}
	}
	if got := s.Witness().Addresses[a.Addr.String()].Misdirected; got != 3 {
		t.Errorf("witness counted %d misdirected requests, want 3", got)
	}
}

func TestStatusCodes(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{})
	c := resolvingClient(s, 2)
	var dir Page
	for p := range w.NumPages() {
		if pg := w.Page(p); pg.Depth >= 1 && pg.Kind == KindIndex {
			dir = pg
			break
		}
	}
	u := s.URL(dir.ID)
	resp, _ := get(t, c, strings.TrimSuffix(u, "/"))
	if resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != u {
		t.Errorf("directory without slash: %s, Location %q, want 301 to %q", resp.Status, resp.Header.Get("Location"), u)
	}
	home := s.URL(w.Site(dir.Site).HomePage)
	resp, _ = get(t, c, home+"no-such-page-zz.html")
	if resp.StatusCode != 404 {
		t.Errorf("missing page: %s", resp.Status)
	}
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader("x"))
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	resp, err := c.Head(u)
	if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(s.Render(dir.ID))) {
		t.Errorf("HEAD: %v %v", resp, err)
	}
	resp.Body.Close()
	host := w.Site(dir.Site).Host
	hc := s.Witness().Hosts[host]
	if hc.NotFound != 1 || hc.Requests != 4 {
		t.Errorf("witness for %s: %+v", host, hc)
	}
	for site := range w.NumSites() {
		status, body := w.RobotsTxt(site)
		resp, got := get(t, c, s.URL(w.Site(site).HomePage)+"robots.txt")
		if resp.StatusCode != status || !bytes.Equal(got, body) {
			t.Errorf("site %d robots.txt: %d %q, want %d %q", site, resp.StatusCode, got, status, body)
		}
	}
	if got := s.Witness().Hosts[host].RobotsFetches; got != 1 {
		t.Errorf("robots fetches for %s: %d", host, got)
	}
}

// rawConn speaks HTTP/1.1 on one TCP connection, so tests see exactly what
// happens to that connection.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t testing.TB, addr netip.Addr, port int) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", netip.AddrPortFrom(addr, uint16(port)).String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{Conn: c, r: bufio.NewReader(c)}
}

func (c *rawConn) send(t testing.TB, host, path string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: test\r\n\r\n", path, host); err != nil {
		t.Fatal(err)
	}
}

func (c *rawConn) receive(t testing.TB) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func (c *rawConn) do(t testing.TB, host, path string) *http.Response {
	t.Helper()
	c.send(t, host, path)
	return c.receive(t)
}

// TestKeepAliveLimit checks the Apache behaviour: the 100th response on a
// connection says "Connection: close" and the server closes it, so a
// client's 101st request must go on a new connection.
func TestKeepAliveLimit(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{})
	site := w.Site(0)
	c := dialRaw(t, site.Addr, s.Port())
	for i := 1; i <= DefaultMaxKeepAliveRequests; i++ {
		resp := c.do(t, site.Host, "/")
		if resp.StatusCode != 200 {
			t.Fatalf("request %d: %s", i, resp.Status)
		}
		if closing := resp.Close; closing != (i == DefaultMaxKeepAliveRequests) {
			t.Fatalf("request %d: Connection: close = %v", i, closing)
		}
	}
	// The write may fail or not, depending on how far the close has got.
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", site.Host)
	if _, err := http.ReadResponse(c.r, nil); err == nil {
		t.Fatal("101st request on the connection was answered")
	}
	hc := s.Witness().Hosts[site.Host]
	if hc.Connections != 1 || hc.Requests != 100 || hc.MaxRequestsPerConn != 100 || hc.MeanRequestsPerConn != 100 {
		t.Errorf("witness: %+v", hc)
	}
}

func TestIdleTimeoutClosesConnection(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{IdleTimeout: 100 * time.Millisecond, MaxKeepAliveRequests: -1})
	site := w.Site(0)
	c := dialRaw(t, site.Addr, s.Port())
	if resp := c.do(t, site.Host, "/"); resp.Close {
		t.Fatal("first response closes the connection")
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	if _, err := c.r.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: read %v, want EOF", err)
	}
	if waited := time.Since(start); waited < 90*time.Millisecond {
		t.Errorf("closed after %v, before the idle timeout", waited)
	}
}

// TestWitnessCatchesImpoliteClient drives the server with a deliberately
// impolite client and checks that every count catches it.
func TestWitnessCatchesImpoliteClient(t *testing.T) {
	opt := smallWeb
	opt.LatencyMedian, opt.LatencySigma = 150*time.Millisecond, -1 // requests overlap
	w := testWeb(t, opt)
	s := startServer(t, w, ServerConfig{})
	var site Site
	var forbidden Page
	for i := range w.NumSites() {
		si := w.Site(i)
		if si.Robots != RobotsDisallow {
			continue
		}
		for p := si.HomePage; p < si.HomePage+si.Pages; p++ {
			if pg := w.Page(p); pg.Disallowed {
				site, forbidden = si, pg
				break
			}
		}
		if forbidden.Path != "" {
			break
		}
	}
	if forbidden.Path == "" {
		t.Fatal("no disallowed page")
	}

	// Two connections at once, each with a request in flight.
	c1, c2 := dialRaw(t, site.Addr, s.Port()), dialRaw(t, site.Addr, s.Port())
	c1.send(t, site.Host, "/")
	c2.send(t, site.Host, "/")
	c1.receive(t)
	c2.receive(t)
	// Back to back on one connection, then a disallowed path.
	c1.do(t, site.Host, "/")
	c1.do(t, site.Host, forbidden.Path)
	// Many DNS lookups of one name.
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.DNSAddr())
	}}
	for range 7 {
		if _, err := resolver.LookupNetIP(context.Background(), "ip4", site.Host); err != nil {
			t.Fatal(err)
		}
	}

	snap := s.Witness()
	hc := snap.Hosts[site.Host]
	if hc.Connections != 2 || hc.MaxOpenConns != 2 || hc.MaxInFlight != 2 {
		t.Errorf("connections %d, max open %d, max in flight %d; want 2, 2, 2", hc.Connections, hc.MaxOpenConns, hc.MaxInFlight)
	}
	if hc.Requests != 4 || hc.MaxRequestsPerConn != 3 || hc.MeanRequestsPerConn != 2 {
		t.Errorf("requests %d, per connection max %d mean %v; want 4, 3, 2", hc.Requests, hc.MaxRequestsPerConn, hc.MeanRequestsPerConn)
	}
	if hc.MinGap < 0 || hc.MinGap >= opt.LatencyMedian {
		t.Errorf("min gap %v; two requests started together", hc.MinGap)
	}
	if hc.Disallowed != 1 || len(hc.DisallowedSample) != 1 || hc.DisallowedSample[0] != forbidden.Path {
		t.Errorf("disallowed %d %v; want 1 [%s]", hc.Disallowed, hc.DisallowedSample, forbidden.Path)
	}
	ac := snap.Addresses[site.Addr.String()]
	if ac.Connections != 2 || ac.MaxOpenConns != 2 || ac.MaxInFlight != 2 || ac.Requests != 4 {
		t.Errorf("address counts %+v", ac)
	}
	if got := snap.DNS.ByName[site.Host]; got < 7 {
		t.Errorf("DNS queries for %s: %d, want at least 7", site.Host, got)
	}
	if snap.Totals.Disallowed != 1 || snap.Totals.Requests != 4 {
		t.Errorf("totals %+v", snap.Totals)
	}

	s.ResetWitness()
	snap = s.Witness()
	if len(snap.Hosts) != 0 || snap.Totals.Requests != 0 || snap.DNS.Queries != 0 {
		t.Errorf("after reset: %+v", snap)
	}
}

// TestWitnessPoliteClient uses a fake clock so that gaps are exact.
func TestWitnessPoliteClient(t *testing.T) {
	w := testWeb(t, smallWeb)
	clock := newFakeClock()
	s := startServer(t, w, ServerConfig{Now: clock.Now})
	var delayed Site
	for i := range w.NumSites() {
		if si := w.Site(i); si.CrawlDelay > 0 {
			delayed = si
			break
		}
	}
	if delayed.Host == "" {
		t.Fatal("no site with a crawl delay")
	}
	c := dialRaw(t, delayed.Addr, s.Port())
	gaps := []time.Duration{delayed.CrawlDelay + time.Second, delayed.CrawlDelay, delayed.CrawlDelay / 2, 3 * delayed.CrawlDelay}
	c.do(t, delayed.Host, "/robots.txt")
	for _, g := range gaps {
		clock.Advance(g)
		c.do(t, delayed.Host, "/")
	}
	hc := s.Witness().Hosts[delayed.Host]
	if hc.MinGap != delayed.CrawlDelay/2 || hc.WithinCrawlDelay != 1 {
		t.Errorf("min gap %v, within crawl delay %d; want %v, 1", hc.MinGap, hc.WithinCrawlDelay, delayed.CrawlDelay/2)
	}
	if hc.MaxOpenConns != 1 || hc.MaxInFlight != 1 || hc.RobotsFetches != 1 || hc.Requests != 5 {
		t.Errorf("counts %+v", hc)
	}
}

func TestAdminEndpoint(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{})
	c := resolvingClient(s, 1)
	for _, u := range s.SeedURLs(2) {
		get(t, c, u)
	}
	admin := &http.Client{Timeout: 10 * time.Second}
	// The witness counts a response's bytes once the handler has written
	// it, which may be after the client has read it: the JSON and the
	// direct snapshot are compared once the server has ended both requests
	// (they agree then), and a mismatch that lasts is the failure.
	var body []byte
	var snap, direct WitnessSnapshot
	testkit.WaitFor(t, 30*time.Second, "the JSON witness to agree with the direct one", func() bool {
		var resp *http.Response
		resp, body = get(t, admin, "http://"+s.AdminAddr()+"/witness")
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("witness endpoint: %s %s", resp.Status, resp.Header.Get("Content-Type"))
		}
		snap = WitnessSnapshot{}
		if err := json.Unmarshal(body, &snap); err != nil {
			t.Fatal(err)
		}
		direct = s.Witness()
		if snap.Totals != direct.Totals || len(snap.Hosts) != 2 || snap.DNS.Queries != direct.DNS.Queries {
			return false
		}
		for host, hc := range direct.Hosts {
			if snap.Hosts[host].Requests != hc.Requests || snap.Hosts[host].MinGap != hc.MinGap || snap.Hosts[host].Bytes != hc.Bytes {
				return false
			}
		}
		return true
	})
	for _, key := range []string{`"hosts"`, `"max_in_flight"`, `"min_gap_ns"`, `"by_name"`, `"disallowed"`} {
		if !bytes.Contains(body, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	resp, err := admin.Post("http://"+s.AdminAddr()+"/witness/reset", "", nil)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("reset: %v %v", resp, err)
	}
	resp.Body.Close()
	if got := s.Witness().Totals.Requests; got != 0 {
		t.Errorf("%d requests after reset", got)
	}
	_, seeds := get(t, admin, "http://"+s.AdminAddr()+"/seeds?n=3")
	if got := strings.Fields(string(seeds)); len(got) != 3 || got[0] != s.SeedURLs(1)[0] {
		t.Errorf("seeds endpoint: %q", seeds)
	}
	_, info := get(t, admin, "http://"+s.AdminAddr()+"/")
	if !strings.Contains(string(info), s.DNSAddr()) {
		t.Errorf("admin index lacks the DNS address:\n%s", info)
	}
}

func TestErrorRate(t *testing.T) {
	opt := smallWeb
	opt.ErrorRate = 0.5
	w := testWeb(t, opt)
	s := startServer(t, w, ServerConfig{})
	site := w.Site(0)
	c := dialRaw(t, site.Addr, s.Port())
	errs := 0
	const n = 90 // under the keep-alive limit
	for range n {
		resp := c.do(t, site.Host, "/")
		switch {
		case resp.StatusCode == 500 || resp.StatusCode == 503:
			errs++
		case resp.StatusCode != 200:
			t.Fatalf("status %s", resp.Status)
		}
	}
	if errs < n/4 || errs > 3*n/4 {
		t.Errorf("%d errors in %d requests at rate 0.5", errs, n)
	}
	if got := s.Witness().Hosts[site.Host].Errors; got != int64(errs) {
		t.Errorf("witness counted %d errors, client saw %d", got, errs)
	}
}

func TestLatencyAndBandwidth(t *testing.T) {
	opt := smallWeb
	opt.LatencyMedian, opt.LatencySigma = 80*time.Millisecond, -1
	opt.BandwidthMedian, opt.BandwidthSigma = 200_000, -1
	w := testWeb(t, opt)
	s := startServer(t, w, ServerConfig{})
	site := w.Site(1)
	if site.Latency != 80*time.Millisecond || site.Bandwidth != 200_000 {
		t.Fatalf("site behaviour %v, %d", site.Latency, site.Bandwidth)
	}
	c := dialRaw(t, site.Addr, s.Port())
	size := len(s.Render(site.HomePage))
	start := time.Now()
	c.do(t, site.Host, "/")
	// Lower bounds only: the machine may be slower, never faster.
	want := site.Latency + time.Duration(float64(size)/float64(site.Bandwidth)*float64(time.Second))*8/10
	if took := time.Since(start); took < want {
		t.Errorf("a %d-byte page took %v, want at least %v", size, took, want)
	}
}

func TestListensOnEveryAddressWithOnePort(t *testing.T) {
	w := testWeb(t, Options{Seed: 2, Sites: 30, Pages: 300, Addresses: 12})
	s := startServer(t, w, ServerConfig{})
	addrs := w.Addresses()
	if len(addrs) < 5 {
		t.Fatalf("only %d addresses", len(addrs))
	}
	for _, a := range addrs {
		c, err := net.DialTimeout("tcp", netip.AddrPortFrom(a, uint16(s.Port())).String(), 5*time.Second)
		if err != nil {
			t.Errorf("dial %v: %v", a, err)
			continue
		}
		c.Close()
	}
	// A second server on the same port must fail, not steal the addresses.
	if _, err := Start(context.Background(), w, ServerConfig{Port: s.Port()}); err == nil {
		t.Error("second server on a taken port started")
	}
}

func TestStartStopsWithContext(t *testing.T) {
	w := testWeb(t, smallWeb)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Start(ctx, w, ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	addr := netip.AddrPortFrom(w.Site(0).Addr, uint16(s.Port())).String()
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("server still accepting after the context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close after cancel: %v", err)
	}
}

func TestConcurrentClients(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{})
	c := resolvingClient(s, 4)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				p := (g*25 + i) * 7 % w.NumPages()
				resp, err := c.Get(s.URL(p))
				if err != nil {
					t.Error(err)
					return
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if !bytes.Equal(body, s.Render(p)) {
					t.Errorf("page %d: body differs", p)
				}
			}
		})
	}
	wg.Wait()
	if got := s.Witness().Totals.Requests; got != 200 {
		t.Errorf("witness counted %d requests, want 200", got)
	}
}

func TestServeHTTPAsHandler(t *testing.T) {
	w := testWeb(t, smallWeb)
	s := startServer(t, w, ServerConfig{})
	site := w.Site(5)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://"+site.Host+"/", nil))
	if rec.Code != 200 || !bytes.Equal(rec.Body.Bytes(), s.Render(site.HomePage)) {
		t.Errorf("direct ServeHTTP: %d", rec.Code)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://nosuch.test/", nil))
	if rec.Code != http.StatusMisdirectedRequest {
		t.Errorf("unknown host: %d", rec.Code)
	}
	if hc := s.Witness().Hosts[site.Host]; hc.Requests != 1 || hc.Connections != 1 {
		t.Errorf("witness %+v", hc)
	}
}
