// Package fetch downloads pages for a crawler: one keep-alive HTTP/1.1
// connection per visit to a site, dialled to an address resolved beforehand
// (so no fetch waits on DNS), with timeouts on connect, headers and body and
// a cap on the body size.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Config sets the limits of every fetch. The zero value gets the defaults
// noted on each field.
type Config struct {
	UserAgent      string        // default "lidi"
	ConnectTimeout time.Duration // default 10 s
	HeaderTimeout  time.Duration // time to first response byte; default 15 s
	BodyTimeout    time.Duration // time for the whole response; default 60 s
	MaxBodySize    int64         // bytes kept; the rest is not downloaded; default 10 MiB
	// CheckType looks at a body's first bytes as they arrive: a body
	// declared HTML that is binary stops downloading at once (TypeCheck
	// "binary-as-html"); an HTML body declared as something else is
	// reported as "html-undeclared" so that it is parsed all the same.
	CheckType bool
	// RootCAs are the CAs trusted for HTTPS; nil means the system's.
	RootCAs *x509.CertPool
	// Proxy, if set, picks the proxy of each request (as
	// http.Transport.Proxy: http://, https:// or socks5:// URLs; nil for
	// a direct connection). Nil means no proxy.
	Proxy func(*http.Request) (*url.URL, error)
	// Dial, if set, replaces net.Dialer for every connection (tests).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (c *Config) defaults() {
	if c.UserAgent == "" {
		c.UserAgent = "lidi"
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = 15 * time.Second
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = 60 * time.Second
	}
	if c.MaxBodySize <= 0 {
		c.MaxBodySize = 10 << 20
	}
}

// Fetcher opens sessions. It is safe for concurrent use.
type Fetcher struct {
	cfg   Config
	conns atomic.Int64
}

// New returns a Fetcher with cfg.
func New(cfg Config) *Fetcher {
	cfg.defaults()
	return &Fetcher{cfg: cfg}
}

// Connections reports how many connections sessions have opened.
func (f *Fetcher) Connections() int64 { return f.conns.Load() }

// Session is one visit's connection to one site: every request goes over a
// single keep-alive connection to addr (a new one only if the server closes
// it). A Session is not safe for concurrent use; a visit fetches one page at
// a time anyway.
type Session struct {
	f      *Fetcher
	client *http.Client
	tr     *http.Transport
	conns  int
	buf    bytes.Buffer // bodies are read here; reused by the next Get
}

// Open starts a session to the site whose pages are fetched from addr (the
// site's resolved address) and port.
func (f *Fetcher) Open(addr netip.Addr, port int) *Session {
	s := &Session{f: f}
	target := netip.AddrPortFrom(addr, uint16(port)).String()
	dialer := &net.Dialer{Timeout: f.cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	dial := dialer.DialContext
	if f.cfg.Dial != nil {
		dial = f.cfg.Dial
	}
	var mu sync.Mutex
	var proxy proxyTracker
	s.tr = &http.Transport{
		// The host in the URL is never looked up here: the engine resolved
		// it through its own cache, and every connection goes to target,
		// or to the proxy (which then reaches the site).
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if !proxy.isProxy(addr) {
				addr = target
			}
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			s.conns++
			mu.Unlock()
			f.conns.Add(1)
			return &politeConn{Conn: c, eof: make(chan struct{})}, nil
		},
		MaxConnsPerHost:        1,
		MaxIdleConnsPerHost:    1,
		IdleConnTimeout:        90 * time.Second,
		ResponseHeaderTimeout:  f.cfg.HeaderTimeout,
		TLSHandshakeTimeout:    f.cfg.ConnectTimeout,
		TLSClientConfig:        f.tlsConfig(),
		Proxy:                  proxy.wrap(f.cfg.Proxy),
		ForceAttemptHTTP2:      false,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1 only
		MaxResponseHeaderBytes: 256 << 10,
		ReadBufferSize:         16 << 10, // a typical page in a few reads
		WriteBufferSize:        8 << 10,
	}
	s.client = &http.Client{
		Transport: s.tr,
		// Redirects are not followed inside a visit: the target goes through
		// the scheduler like any other URL.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s
}

// Close closes the session's connection.
func (s *Session) Close() { s.tr.CloseIdleConnections() }

// Connections reports how many connections the session has opened.
func (s *Session) Connections() int { return s.conns }

// Response is a fetched page.
type Response struct {
	Status      int
	Header      http.Header
	ContentType string
	Body        []byte // at most MaxBodySize bytes, content-decoded (gzip); valid until the session's next Get
	Truncated   bool   // the body was longer than MaxBodySize
	Location    string // the Location header of a 3xx, resolved against the URL
	TypeCheck   string // "html", "html-undeclared", "binary-as-html" or "other" (see Config.CheckType)
	RetryAfter  time.Duration
	Duration    time.Duration
}

// Error kinds reported by Kind.
const (
	KindTimeout   = "timeout"
	KindRefused   = "refused"
	KindReset     = "reset"
	KindTooLarge  = "truncated"
	KindBadURL    = "bad-url"
	KindProtocol  = "protocol"
	KindCancelled = "cancelled"
	KindOther     = "network"
)

// Error is a failed fetch.
type Error struct {
	URL  string
	Kind string
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("fetch: %s: %s: %v", e.URL, e.Kind, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Get fetches url over the session's connection. A response with any status
// is a success; an error means no complete response head was received, or
// the body failed before its end (then the partial body is returned with the
// error).
func (s *Session) Get(ctx context.Context, url string) (*Response, error) {
	return s.GetIf(ctx, url, Validators{})
}

// GetIf is Get made conditional on the validators of a stored copy (see
// Validators): a server that finds the copy current answers 304 Not
// Modified without a body.
func (s *Session) GetIf(ctx context.Context, url string, v Validators) (*Response, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.f.cfg.BodyTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, &Error{URL: url, Kind: KindBadURL, Err: err}
	}
	req.Header.Set("User-Agent", s.f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5")
	v.set(req.Header)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, &Error{URL: url, Kind: classify(err), Err: err}
	}
	defer resp.Body.Close()
	r := &Response{
		Status:      resp.StatusCode,
		Header:      resp.Header,
		ContentType: resp.Header.Get("Content-Type"),
	}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if u, err := resp.Request.URL.Parse(loc); err == nil {
			r.Location = u.String()
		}
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		r.RetryAfter = parseRetryAfter(ra, time.Now())
	}
	if s.f.cfg.CheckType {
		r.Body, r.Truncated, r.TypeCheck, err = readChecked(&s.buf, resp.Body, s.f.cfg.MaxBodySize, resp.ContentLength, r.ContentType)
	} else {
		r.Body, r.Truncated, err = readLimited(&s.buf, resp.Body, s.f.cfg.MaxBodySize, resp.ContentLength)
		r.TypeCheck = declaredType(r.ContentType)
	}
	r.Duration = time.Since(start)
	if err != nil {
		return r, &Error{URL: url, Kind: classify(err), Err: err}
	}
	if r.Truncated || r.TypeCheck == "binary-as-html" {
		// What is left of the body is not read, so the connection cannot
		// be reused: let the transport close it.
		s.tr.CloseIdleConnections()
	}
	return r, nil
}

// readLimited reads at most max bytes of body; truncated reports that more
// was there.
func readLimited(b *bytes.Buffer, body io.Reader, max, length int64) ([]byte, bool, error) {
	b.Reset()
	if length > 0 && length <= max {
		b.Grow(int(length) + bytes.MinRead) // room to see EOF without growing
	}
	_, err := b.ReadFrom(io.LimitReader(body, max+1))
	data := b.Bytes()
	if int64(len(data)) > max {
		return data[:max], true, nil
	}
	return data, false, err
}

// sniffLen is how much of a body decides its type (what
// http.DetectContentType looks at).
const sniffLen = 512

// readChecked reads like readLimited, deciding the body's type from its
// first bytes: declared HTML that is binary is not read further.
func readChecked(b *bytes.Buffer, body io.Reader, max, length int64, contentType string) ([]byte, bool, string, error) {
	b.Reset()
	if length > 0 && length <= max {
		b.Grow(int(length) + bytes.MinRead)
	}
	head := io.LimitReader(body, min(sniffLen, max+1))
	if _, err := b.ReadFrom(head); err != nil {
		return b.Bytes(), false, declaredType(contentType), err
	}
	sniffed := http.DetectContentType(b.Bytes())
	declared := declaredType(contentType)
	check := declared
	switch {
	case declared == "html" && b.Len() > 0 && !strings.HasPrefix(sniffed, "text/"):
		// Stop at once: whatever follows is not worth the bandwidth.
		return b.Bytes(), true, "binary-as-html", nil
	case declared != "html" && strings.HasPrefix(sniffed, "text/html"):
		check = "html-undeclared"
	}
	_, err := b.ReadFrom(io.LimitReader(body, max+1-int64(b.Len())))
	data := b.Bytes()
	if int64(len(data)) > max {
		return data[:max], true, check, nil
	}
	return data, false, check, err
}

// declaredType says whether a Content-Type declares HTML.
func declaredType(contentType string) string {
	ct := strings.ToLower(contentType)
	if strings.Contains(ct, "text/html") || strings.Contains(ct, "application/xhtml") {
		return "html"
	}
	return "other"
}

func classify(err error) string {
	var ne net.Error
	if kind := classifyTLS(err); kind != "" {
		return kind
	}
	switch {
	case errors.Is(err, context.Canceled):
		return KindCancelled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return KindTimeout
	case strings.Contains(err.Error(), "connection refused"):
		return KindRefused
	case strings.Contains(err.Error(), "connection reset"), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return KindReset
	case strings.Contains(err.Error(), "malformed"), strings.Contains(err.Error(), "invalid"):
		return KindProtocol
	}
	return KindOther
}

// parseRetryAfter reads a Retry-After value: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// politeConn closes gracefully: it shuts its sending side first and waits
// (briefly) until the server has closed its own, so that when a visit ends
// the server has let go of the connection before the crawler opens the next
// one to the same address. Without it a server may see two connections from
// one crawler open at once for a moment.
type politeConn struct {
	net.Conn
	eof     chan struct{} // closed when a read fails: the server has closed
	eofOnce sync.Once
}

// closeGrace bounds the wait for the server to close its side.
const closeGrace = 250 * time.Millisecond

func (c *politeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.eofOnce.Do(func() { close(c.eof) })
	}
	return n, err
}

func (c *politeConn) Close() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		// The transport's read loop is blocked reading this connection;
		// it sees the server's close.
		t := time.NewTimer(closeGrace)
		select {
		case <-c.eof:
		case <-t.C:
		}
		t.Stop()
	}
	return c.Conn.Close()
}
