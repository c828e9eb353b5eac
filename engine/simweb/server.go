package simweb

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Defaults applied by Start to zero ServerConfig fields.
const (
	DefaultDNSTTL               = 300 * time.Second
	DefaultNegativeTTL          = 60 * time.Second
	DefaultMaxKeepAliveRequests = 100
	DefaultIdleTimeout          = 15 * time.Second
)

// ServerConfig configures Start. The zero value picks free ports and
// behaves like a default Apache: keep-alive for up to 100 requests per
// connection, closed after 15 s idle.
type ServerConfig struct {
	// Port is the HTTP port (HTTPS on a TLS web), the same on every
	// address. Zero picks a port that is free on all the addresses in use.
	Port int
	// HTTPPort is, on a TLS web, the port of plain HTTP on every address,
	// which answers every request with a 301 to its https:// URL. Zero
	// picks a free port.
	HTTPPort int
	// DNSPort is the DNS server's port on 127.0.0.1 (UDP and TCP). Zero
	// picks a free one.
	DNSPort int
	// AdminAddr is where the admin HTTP server listens. Empty means
	// 127.0.0.1 on a free port.
	AdminAddr string
	// DNSTTL is the TTL of the A records. Zero means DefaultDNSTTL.
	DNSTTL time.Duration
	// NegativeTTL is the SOA minimum sent with NXDOMAIN and empty answers.
	// Zero means DefaultNegativeTTL.
	NegativeTTL time.Duration
	// MaxKeepAliveRequests is the number of requests after which a
	// connection is closed (the last response says "Connection: close").
	// Zero means DefaultMaxKeepAliveRequests; negative means no limit.
	MaxKeepAliveRequests int
	// IdleTimeout closes keep-alive connections idle this long. Zero means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Now is the witness's clock. Nil means time.Now.
	Now func() time.Time
	// TimeScale and Epoch set the virtual clock of a changing web (see
	// Clock): virtual time runs TimeScale times as fast as Now from Epoch.
	// Zeros mean 1 and the time Start is called.
	TimeScale float64
	Epoch     time.Time
	// LogPages makes the witness keep a page log (Server.PageRequests): per
	// URL requested, robots.txt excepted, its request count and when it was
	// last answered, about 100 bytes a URL. False keeps none.
	LogPages bool
	// Hostile makes every site misbehave in one way under HostilePath
	// (see HostileKind). Zero means none.
	Hostile HostileKind
}

// RegisterFlags defines command-line flags that set c's fields, with c's
// current values as the flags' defaults.
func (c *ServerConfig) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.Port, "port", c.Port, "HTTP port (HTTPS with --tls) on every simulated address (0 = free port)")
	fs.IntVar(&c.HTTPPort, "http-port", c.HTTPPort, "with --tls, the plain HTTP port that redirects to HTTPS (0 = free port)")
	fs.IntVar(&c.DNSPort, "dns-port", c.DNSPort, "DNS port on 127.0.0.1 (0 = free port)")
	fs.StringVar(&c.AdminAddr, "admin", c.AdminAddr, "admin server `address` (empty = 127.0.0.1, free port)")
	fs.DurationVar(&c.DNSTTL, "dns-ttl", c.DNSTTL, "TTL of the DNS A records (0 = 300s)")
	fs.IntVar(&c.MaxKeepAliveRequests, "keepalive-requests", c.MaxKeepAliveRequests, "requests per connection before it is closed (0 = 100, negative = no limit)")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", c.IdleTimeout, "keep-alive idle timeout (0 = 15s)")
	fs.Float64Var(&c.TimeScale, "time-scale", c.TimeScale, "run a changing web's clock `N` times faster than real time (0 = 1)")
}

// Server serves a Web: HTTP for every simulated host on its loopback
// address, DNS for the simulated names, and an admin endpoint with the
// witness counts. It is made by Start (the zero value is not usable) and its
// methods are safe for concurrent use.
type Server struct {
	web      *Web
	cfg      ServerConfig
	port     int
	httpPort int            // a TLS web's redirecting HTTP port
	ca       *certAuthority // a TLS web's CA; nil on an HTTP web
	addrs    []netip.Addr   // listening addresses, index = connState.addr
	wit      *witness
	clock    Clock // a changing web's virtual time

	httpSrv   *http.Server
	listeners []net.Listener
	dns       *dnsServer
	adminSrv  *http.Server
	adminLn   net.Listener
	siteReqs  []atomic.Uint64 // per-site request sequence, for error draws
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error
	stopCtx   func() bool
}

// ErrPortInUse reports that a fixed ServerConfig.Port is taken on one of the
// addresses.
var ErrPortInUse = errors.New("simweb: port in use")

// Start serves w until ctx is done or Close is called. It listens on
// every address the sites use, all on one port, and on 127.0.0.1 for DNS
// and the admin server. On Linux the whole 127.0.0.0/8 reaches the loopback
// interface, so no setup is needed.
func Start(ctx context.Context, w *Web, cfg ServerConfig) (*Server, error) {
	if cfg.DNSTTL == 0 {
		cfg.DNSTTL = DefaultDNSTTL
	}
	if cfg.NegativeTTL == 0 {
		cfg.NegativeTTL = DefaultNegativeTTL
	}
	if cfg.MaxKeepAliveRequests == 0 {
		cfg.MaxKeepAliveRequests = DefaultMaxKeepAliveRequests
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AdminAddr == "" {
		cfg.AdminAddr = "127.0.0.1:0"
	}
	s := &Server{web: w, cfg: cfg, addrs: w.addrs, siteReqs: make([]atomic.Uint64, len(w.sites))}
	s.clock = Clock{Epoch: cfg.Epoch, Scale: cfg.TimeScale, Now: cfg.Now}
	if s.clock.Epoch.IsZero() {
		s.clock.Epoch = cfg.Now()
	}
	names := make([]string, len(s.addrs))
	for i, a := range s.addrs {
		names[i] = a.String()
	}
	s.wit = newWitness(w, names, cfg.Now)
	if cfg.LogPages {
		s.wit.pages = newPageLog()
	}

	var err error
	if s.listeners, s.port, err = s.listen(cfg.Port, false); err != nil {
		return nil, err
	}
	var plain []net.Listener
	if w.opt.TLS {
		if s.ca, err = newCertAuthority(); err != nil {
			s.closeListeners(s.listeners)
			return nil, err
		}
		if plain, s.httpPort, err = s.listen(cfg.HTTPPort, true); err != nil {
			s.closeListeners(s.listeners)
			return nil, err
		}
	}
	s.httpSrv = &http.Server{
		Handler:           s,
		IdleTimeout:       cfg.IdleTimeout,
		ReadHeaderTimeout: 30 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			return context.WithValue(ctx, connKey{}, tracked(c).state)
		},
		ConnState: func(c net.Conn, st http.ConnState) {
			tc := tracked(c)
			if tc == nil {
				return
			}
			switch st {
			case http.StateNew:
				s.wit.connOpened(tc.state)
			case http.StateClosed, http.StateHijacked:
				s.wit.release(tc.state)
			}
		},
	}
	if s.ca != nil {
		s.httpSrv.TLSConfig = s.tlsConfig()
		for _, ln := range s.listeners {
			s.wg.Go(func() { s.httpSrv.ServeTLS(ln, "", "") })
		}
	} else {
		for _, ln := range s.listeners {
			s.wg.Go(func() { s.httpSrv.Serve(ln) })
		}
	}
	for _, ln := range plain {
		s.wg.Go(func() { s.httpSrv.Serve(ln) })
	}

	s.dns, err = startDNS(w, s.wit, cfg)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.adminLn, err = net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("simweb: admin listener: %w", err)
	}
	s.adminSrv = &http.Server{Handler: s.adminHandler(), ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	s.wg.Go(func() { s.adminSrv.Serve(s.adminLn) })
	s.stopCtx = context.AfterFunc(ctx, func() { s.Close() })
	return s, nil
}

// listen opens one listener per address, all on the same port (fixed or,
// if zero, free on all). plain marks a TLS web's redirecting HTTP port.
func (s *Server) listen(fixed int, plain bool) ([]net.Listener, int, error) {
	const attempts = 50
	for range attempts {
		port := fixed
		var lns []net.Listener
		var err error
		for i, a := range s.addrs {
			var ln net.Listener
			ln, err = net.Listen("tcp4", netip.AddrPortFrom(a, uint16(port)).String())
			if err != nil {
				break
			}
			if port == 0 {
				port = ln.Addr().(*net.TCPAddr).Port
			}
			lns = append(lns, &trackingListener{Listener: ln, addr: i, plain: plain, wit: s.wit})
		}
		if err == nil {
			return lns, port, nil
		}
		s.closeListeners(lns)
		if !errors.Is(err, syscall.EADDRINUSE) {
			return nil, 0, fmt.Errorf("simweb: listen: %w", err)
		}
		if fixed != 0 {
			return nil, 0, fmt.Errorf("%w: %d: %v", ErrPortInUse, fixed, err)
		}
	}
	return nil, 0, fmt.Errorf("simweb: no port free on all %d addresses after %d attempts", len(s.addrs), attempts)
}

func (s *Server) closeListeners(lns []net.Listener) {
	for _, ln := range lns {
		ln.Close()
	}
}

// Close stops all servers and closes their connections. It is safe to call
// more than once.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.stopCtx != nil {
			s.stopCtx()
		}
		var errs []error
		if s.httpSrv != nil {
			errs = append(errs, s.httpSrv.Close())
		} else {
			for _, ln := range s.listeners {
				ln.Close()
			}
		}
		if s.adminSrv != nil {
			errs = append(errs, s.adminSrv.Close())
		} else if s.adminLn != nil {
			s.adminLn.Close()
		}
		if s.dns != nil {
			errs = append(errs, s.dns.close())
		}
		s.wg.Wait()
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

// Web returns the web being served.
func (s *Server) Web() *Web { return s.web }

// Port returns the HTTP port (HTTPS on a TLS web) shared by all addresses.
func (s *Server) Port() int { return s.port }

// HTTPPort returns a TLS web's plain HTTP port, which redirects to HTTPS,
// or 0 on an HTTP web.
func (s *Server) HTTPPort() int { return s.httpPort }

// DNSAddr returns the DNS server's address, such as "127.0.0.1:40053".
func (s *Server) DNSAddr() string { return s.dns.addr }

// AdminAddr returns the admin server's address; the witness counts are at
// http://AdminAddr/witness.
func (s *Server) AdminAddr() string { return s.adminLn.Addr().String() }

// URL returns the URL of a page on this server, such as
// "http://www.site42.test:38211/seman-4/".
func (s *Server) URL(page int) string {
	return string(s.web.appendURL(nil, int32(page), s.port))
}

// SeedURLs returns the URLs of the n seed pages (see Web.Seeds).
func (s *Server) SeedURLs(n int) []string {
	seeds := s.web.Seeds(n)
	urls := make([]string, len(seeds))
	for i, p := range seeds {
		urls[i] = s.URL(p)
	}
	return urls
}

// Render returns a page's HTML exactly as this server serves it.
func (s *Server) Render(page int) []byte { return s.web.AppendHTML(nil, page, s.port) }

// Witness returns a snapshot of the witness counts.
func (s *Server) Witness() WitnessSnapshot { return s.wit.snapshot() }

// ResetWitness zeroes the witness counts.
func (s *Server) ResetWitness() { s.wit.reset() }

// Info describes the running server for a person: what it serves, the DNS
// and admin addresses, and the first n seed URLs.
func (s *Server) Info(n int) string {
	var b strings.Builder
	st := s.web.Stats()
	o := s.web.opt
	fmt.Fprintf(&b, "simweb: seed %d, %d sites, %d pages, %d links (%d to other sites)\n",
		o.Seed, st.Sites, st.Pages, st.Links, st.ExternalLinks)
	if st.TrapSites > 0 {
		fmt.Fprintf(&b, "Traps:   %d sites per kind on %d sites (--export lists them in traps.csv)\n", o.Traps, st.TrapSites)
	}
	if s.ca != nil {
		fmt.Fprintf(&b, "HTTPS:   port %d on %d addresses from %v to %v (a certificate per host from simweb's own CA)\n", s.port, len(s.addrs), s.addrs[0], s.addrs[len(s.addrs)-1])
		fmt.Fprintf(&b, "HTTP:    port %d on the same addresses, redirecting to HTTPS\n", s.httpPort)
	} else {
		fmt.Fprintf(&b, "HTTP:    port %d on %d addresses from %v to %v\n", s.port, len(s.addrs), s.addrs[0], s.addrs[len(s.addrs)-1])
	}
	fmt.Fprintf(&b, "DNS:     %s (udp and tcp), A records for *.test, TTL %v\n", s.DNSAddr(), s.cfg.DNSTTL)
	fmt.Fprintf(&b, "Admin:   http://%s/witness (JSON counts), POST http://%s/witness/reset\n", s.AdminAddr(), s.AdminAddr())
	fmt.Fprintf(&b, "Seed URLs:\n")
	for _, u := range s.SeedURLs(n) {
		fmt.Fprintf(&b, "  %s\n", u)
	}
	if seeds := s.web.Seeds(1); len(seeds) > 0 {
		si := s.web.Site(s.web.Page(seeds[0]).Site)
		fmt.Fprintf(&b, "Try:     dig @%s -p %s %s\n", hostOf(s.DNSAddr()), portOf(s.DNSAddr()), si.Host)
		fmt.Fprintf(&b, "         curl --resolve %s:%d:%v %s%s\n", si.Host, s.port, si.Addr, s.curlCA(), s.URL(seeds[0]))
	}
	return b.String()
}

func hostOf(hostport string) string { h, _, _ := net.SplitHostPort(hostport); return h }
func portOf(hostport string) string { _, p, _ := net.SplitHostPort(hostport); return p }

// connKey is the context key of the connection's *connState.
type connKey struct{}

// trackingListener wraps accepted connections so the witness can follow
// them from accept to close and know their local address.
type trackingListener struct {
	net.Listener
	addr  int
	plain bool // a TLS web's plain HTTP port
	wit   *witness
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &trackedConn{Conn: c, state: &connState{addr: l.addr, plain: l.plain}, wit: l.wit}, nil
}

// tracked returns the trackedConn under c (a TLS connection wraps it), or
// nil.
func tracked(c net.Conn) *trackedConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	tc, _ := c.(*trackedConn)
	return tc
}

type trackedConn struct {
	net.Conn
	state *connState
	wit   *witness
}

// Read ends the connection's count as open as soon as the server reads the
// client's close (end of file): a client that closes before connecting again
// is then never seen with two connections open, whatever the order in which
// net/http's goroutines run after that.
func (c *trackedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err == io.EOF && c.wit != nil {
		c.wit.release(c.state)
	}
	return n, err
}

// CloseWrite keeps net/http's graceful close (it half-closes TCP
// connections before closing them). Like Close, it ends the connection's
// count as open before the client can see the end: a client that waits for
// the server's close before connecting again (through a proxy, or over TLS,
// where the server stops reading at the client's close_notify and never
// reads its end of file) is then never seen with two connections open.
func (c *trackedConn) CloseWrite() error {
	if c.wit != nil {
		c.wit.release(c.state)
	}
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close ends the connection's count as open, then closes it.
func (c *trackedConn) Close() error {
	if c.wit != nil {
		c.wit.release(c.state)
	}
	return c.Conn.Close()
}

// Header values shared by all responses (net/http only reads them), set
// without canonicalising keys on the hot path.
var (
	serverHeader = []string{"Apache/2.4 (simweb)"}
	htmlType     = []string{"text/html; charset=utf-8"}
)

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// canonicalHost lower-cases a Host header and strips its port.
func canonicalHost(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if c := h[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}

// ServeHTTP answers one request for a simulated host. It is what the
// server's listeners run; called directly (as an http.Handler elsewhere),
// each request counts as its own connection on its host's address.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w := s.web
	hdr := rw.Header()
	hdr["Server"] = serverHeader

	host := canonicalHost(r.Host)
	id, known := w.hosts[host]
	cs, _ := r.Context().Value(connKey{}).(*connState)
	if cs == nil {
		// Not through the server's listeners (an http.Handler harness, say):
		// count the request on the host's own address, once per request.
		cs = &connState{}
		if known {
			cs.addr, _ = slices.BinarySearchFunc(s.addrs, w.sites[id].addr, netip.Addr.Compare)
		}
		s.wit.connOpened(cs)
		defer s.wit.release(cs)
	}
	site, slot := -1, -1
	if known && w.sites[id].addr == s.addrs[cs.addr] {
		site, slot = int(id), int(id)
		if w.traps != nil && host != w.sites[id].host {
			slot = int(w.traps.sites[id].aliasSlot) // the witness counts an alias host on its own
		}
	}
	path := r.URL.EscapedPath()
	target := path
	if r.URL.RawQuery != "" || r.URL.ForceQuery {
		target += "?" + r.URL.RawQuery
	}
	disallowed := site >= 0 && w.sites[site].robots.disallowed(target)
	var logURL []byte // the page log's key
	if s.wit.pages != nil && slot >= 0 && path != "/robots.txt" {
		logURL = append(s.web.appendHostOrigin(nil, host, s.port), target...)
		s.wit.pages.start(logURL)
	}
	n := s.wit.requestStart(cs, slot, target, disallowed)
	closing := r.Close || (s.cfg.MaxKeepAliveRequests > 0 && n >= int64(s.cfg.MaxKeepAliveRequests))
	if closing {
		hdr.Set("Connection", "close")
	}
	if cs.plain && site >= 0 {
		// A TLS web's plain HTTP: every URL has moved to HTTPS.
		loc := w.appendHostOrigin(nil, host, s.port)
		hdr.Set("Location", string(loc)+target)
		status := plain(rw, http.StatusMovedPermanently, "301 Moved Permanently\n")
		s.wit.requestEnd(cs, slot, status, 0, false, closing)
		return
	}
	if s.cfg.Hostile != HostileNone && site >= 0 {
		end := func(status int, size int64) {
			s.wit.requestEnd(cs, slot, status, size, path == "/robots.txt", closing)
			if logURL != nil {
				s.wit.pages.done(logURL, s.cfg.Now())
			}
		}
		if s.respondHostile(rw, r, host, path, end) {
			return
		}
	}
	status, size, robots := s.respond(rw, r, site, host, path)
	s.wit.requestEnd(cs, slot, status, size, robots, closing)
	if logURL != nil {
		s.wit.pages.done(logURL, s.cfg.Now())
	}
}

// respond writes the response and returns its status, body size and
// whether it was a robots.txt fetch.
func (s *Server) respond(rw http.ResponseWriter, r *http.Request, site int, host, path string) (status int, size int64, robots bool) {
	w := s.web
	hdr := rw.Header()
	if site < 0 {
		return plain(rw, http.StatusMisdirectedRequest, "421 Misdirected Request: no such host on this address\n"), 0, false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		return plain(rw, http.StatusMethodNotAllowed, "405 Method Not Allowed\n"), 0, false
	}
	st := &w.sites[site]
	if st.latency > 0 {
		t := time.NewTimer(st.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return 499, 0, false // client went away (nginx's code), nothing sent
		}
	}
	if path == "/robots.txt" {
		rb := &st.robots
		if rb.status == 200 {
			hdr.Set("Content-Type", "text/plain; charset=utf-8")
		} else {
			hdr.Set("Content-Type", "text/html; charset=utf-8")
		}
		return rb.status, s.write(rw, r, rb.status, rb.body, st.bandwidth), true
	}
	if rate := w.opt.ErrorRate; rate > 0 {
		seq := s.siteReqs[site].Add(1)
		er := newRNG(w.opt.Seed, tagErrors, uint64(site)<<32^seq)
		if er.chance(rate) {
			code := http.StatusServiceUnavailable
			if er.chance(0.5) {
				code = http.StatusInternalServerError
			} else {
				hdr.Set("Retry-After", "5")
			}
			return plain(rw, code, strconv.Itoa(code)+" "+http.StatusText(code)+"\n"), 0, false
		}
	}
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	if status, size, ok := s.serveArticle(rw, r, site, path, bp); ok {
		return status, size, false
	}
	if w.traps != nil {
		status, size := s.respondTrapped(rw, r, site, host, path, bp)
		return status, size, false
	}
	p, redirect, ok := w.lookupPath(site, path, bp)
	switch {
	case !ok:
		status, size := s.notFound(rw, r, bp, st.bandwidth)
		return status, size, false
	case redirect:
		loc := w.appendURL(nil, p, s.port)
		hdr.Set("Location", string(loc))
		return plain(rw, http.StatusMovedPermanently, "301 Moved Permanently\n"), 0, false
	}
	status, size = s.servePage(rw, r, site, p, viewPlain, bp)
	return status, size, false
}

// notFound answers 404.
func (s *Server) notFound(rw http.ResponseWriter, r *http.Request, bp *[]byte, bandwidth int64) (int, int64) {
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	body := append((*bp)[:0], "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>\n"...)
	*bp = body
	return http.StatusNotFound, s.write(rw, r, http.StatusNotFound, body, bandwidth)
}

// respondTrapped answers for a web with traps: the path is resolved
// through the site's traps (the resolution Web.Truth reports).
func (s *Server) respondTrapped(rw http.ResponseWriter, r *http.Request, site int, host, path string, bp *[]byte) (int, int64) {
	w := s.web
	hdr := rw.Header()
	bandwidth := w.sites[site].bandwidth
	res := w.resolveQuery(site, path, r.URL.RawQuery)
	switch res.status {
	case http.StatusNotFound:
		return s.notFound(rw, r, bp, bandwidth)
	case http.StatusMovedPermanently:
		loc := w.appendHostOrigin(nil, host, s.port)
		hdr.Set("Location", string(append(loc, res.location...)))
		return plain(rw, http.StatusMovedPermanently, "301 Moved Permanently\n"), 0
	}
	var body []byte
	switch {
	case res.page >= 0:
		return s.servePage(rw, r, site, res.page, res.view, bp)
	case res.virt.kind == TrapBinaryAsHTML:
		hdr.Set("Content-Type", typeBinary)
		return http.StatusOK, s.writeBinary(rw, r, site, int(res.virt.local), bp, bandwidth)
	default:
		body = w.appendVirtual((*bp)[:0], site, res.virt, path)
	}
	*bp = body
	if ct := contentType(res); ct == typeHTML {
		hdr["Content-Type"] = htmlType
	} else {
		hdr.Set("Content-Type", ct)
	}
	return http.StatusOK, s.write(rw, r, http.StatusOK, body, bandwidth)
}

// writeBinary streams binary file idx of site in chunks generated on the
// fly, so that a large file costs no memory and a client that stops
// reading stops the generation.
func (s *Server) writeBinary(rw http.ResponseWriter, r *http.Request, site, idx int, bp *[]byte, bandwidth int64) int64 {
	w := s.web
	blob := w.traps.sites[site].binaries[idx]
	header := w.binaryHeader(site, idx, blob)
	buf := (*bp)[:cap(*bp)]
	if len(buf) < 16<<10 {
		buf = make([]byte, 64<<10)
		*bp = buf[:0]
	}
	return s.writeFrom(rw, r, http.StatusOK, blob.size, func(off, n int) []byte {
		chunk := buf[:min(n, len(buf))]
		w.fillBinary(chunk, site, idx, blob, header, off)
		return chunk
	}, bandwidth)
}

func plain(rw http.ResponseWriter, code int, msg string) int {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.WriteHeader(code)
	io.WriteString(rw, msg)
	return code
}

// write sends body, paced to bandwidth bytes per second if it is positive,
// and returns the number of bytes sent.
func (s *Server) write(rw http.ResponseWriter, r *http.Request, code int, body []byte, bandwidth int64) int64 {
	if bandwidth <= 0 {
		rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
		rw.WriteHeader(code)
		if r.Method == http.MethodHead {
			return 0
		}
		n, _ := rw.Write(body)
		return int64(n)
	}
	return s.writeFrom(rw, r, code, len(body), func(off, n int) []byte { return body[off : off+n] }, bandwidth)
}

// writeFrom sends a body of size bytes that chunk(off, n) returns piece by
// piece (at most n bytes from offset off, at least one), paced to bandwidth
// bytes per second if it is positive, and returns the number of bytes sent.
func (s *Server) writeFrom(rw http.ResponseWriter, r *http.Request, code, size int, chunk func(off, n int) []byte, bandwidth int64) int64 {
	rw.Header().Set("Content-Length", strconv.Itoa(size))
	rw.WriteHeader(code)
	if r.Method == http.MethodHead {
		return 0
	}
	// Send chunks of about 20 ms each, sleeping to keep to the rate.
	step := 64 << 10
	if bandwidth > 0 {
		step = int(max(bandwidth/50, 512))
	}
	rc := http.NewResponseController(rw)
	start := time.Now()
	sent := 0
	for sent < size {
		n, err := rw.Write(chunk(sent, min(step, size-sent)))
		sent += n
		if err != nil {
			break
		}
		if bandwidth <= 0 {
			continue
		}
		rc.Flush()
		due := start.Add(time.Duration(float64(sent) / float64(bandwidth) * float64(time.Second)))
		if d := time.Until(due); d > 0 && sent < size {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return int64(sent)
			}
		}
	}
	return int64(sent)
}

// adminHandler serves the witness as JSON and a short description.
func (s *Server) adminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /witness", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(rw)
		enc.SetIndent("", "  ")
		enc.Encode(s.Witness())
	})
	mux.HandleFunc("POST /witness/reset", func(rw http.ResponseWriter, r *http.Request) {
		s.ResetWitness()
		rw.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /seeds", func(rw http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.URL.Query().Get("n"))
		if err != nil || n <= 0 {
			n = 10
		}
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		for _, u := range s.SeedURLs(n) {
			fmt.Fprintln(rw, u)
		}
	})
	mux.HandleFunc("GET /{$}", func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(rw, s.Info(10))
	})
	return mux
}
