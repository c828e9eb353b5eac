package simweb

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
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
	// Identity serves every body identity-coded, as a server with
	// compression off. False (a server with compression on, as most
	// are): HTML is sent gzip-coded, at GzipLevel, to a GET that accepts
	// gzip (Content-Encoding: gzip, Vary: Accept-Encoding); other types,
	// robots.txt (text/plain) among them, and the hostile paths keep
	// their own codings.
	Identity bool
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
	IdentityFlag(fs, &c.Identity)
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
	if s.cfg.Identity {
		fmt.Fprintf(&b, "Coding:  identity (--identity)\n")
	} else {
		fmt.Fprintf(&b, "Coding:  gzip: HTML at level %d (nginx's default) to requests that accept it (--identity: none)\n", GzipLevel)
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

// Header values shared by all responses (net/http only reads them), set
// without canonicalising keys on the hot path.
var (
	serverHeader = []string{"Apache/2.4 (simweb)"}
	htmlType     = []string{"text/html; charset=utf-8"}
)

var bodyPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

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
