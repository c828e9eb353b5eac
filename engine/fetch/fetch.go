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
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Config sets the limits of every fetch. The zero value gets the defaults
// noted on each field.
type Config struct {
	UserAgent      string        // empty: DefaultUserAgent
	ConnectTimeout time.Duration `yaml:"connect_timeout"`          // fetch.connect_timeout
	HeaderTimeout  time.Duration `yaml:"header_timeout"`           // fetch.header_timeout: time to first response byte
	BodyTimeout    time.Duration `yaml:"body_timeout"`             // fetch.body_timeout: time for the whole response
	MaxBodySize    int64         `yaml:"max_body_size" check:">0"` // fetch.max_body_size: bytes kept; the rest is not downloaded
	// CloseTimeout bounds the wait, when a connection closes, for the
	// server to close its side too (see Session): fetch.close_timeout.
	CloseTimeout time.Duration `yaml:"close_timeout"`
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
	// KeepWire records each exchange's heads as sent and received
	// (Response.Wire; see Wire). Off, Response.Wire is nil.
	KeepWire bool
}

// DefaultUserAgent is lidi's User-Agent: its product token "lidi" is the
// agent robots.txt groups are matched against (config.yaml's user_agent
// starts from it).
const DefaultUserAgent = "lidi/0.1 (+https://github.com/lidi-crawler/lidi)"

// Defaults returns the fetcher's defaults, which a zero field of a Config
// takes. UserAgent is left empty: DefaultUserAgent is sent. A close
// timeout of a second is plenty: servers close at once when the client
// does.
func Defaults() Config {
	return Config{ConnectTimeout: 10 * time.Second, HeaderTimeout: 15 * time.Second, BodyTimeout: 60 * time.Second,
		MaxBodySize: 10 << 20, CloseTimeout: time.Second}
}

func (c *Config) defaults() {
	d := Defaults()
	if c.UserAgent == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = d.ConnectTimeout
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = d.HeaderTimeout
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = d.BodyTimeout
	}
	if c.MaxBodySize <= 0 {
		c.MaxBodySize = d.MaxBodySize
	}
	if c.CloseTimeout <= 0 {
		c.CloseTimeout = d.CloseTimeout
	}
}

// Fetcher opens sessions. It is safe for concurrent use.
type Fetcher struct {
	cfg Config
	// fixed are the header fields every request carries, made once and
	// shared by each request's own header map (never written to): set
	// with Header.Set, they were three allocations a request.
	fixed    http.Header
	conns    atomic.Int64
	sessions atomic.Int64 // sessions that opened a connection
	requests atomic.Int64
}

// New returns a Fetcher with cfg.
func New(cfg Config) *Fetcher {
	cfg.defaults()
	return &Fetcher{cfg: cfg, fixed: http.Header{
		"User-Agent":      {cfg.UserAgent},
		"Accept":          {"text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"},
		"Accept-Encoding": {AcceptEncoding},
	}}
}

// Connections reports how many connections sessions have opened.
func (f *Fetcher) Connections() int64 { return f.conns.Load() }

// Session is one visit's connection to one site: every request goes over a
// single keep-alive connection to addr (a new one only if the server closes
// it or a response cannot be finished).
//
// A connection is never open while the previous one is closing: a closing
// connection first shuts its sending side and reads until the server has
// closed its own (for at most Config.CloseTimeout), and a new connection
// (and so the next request) waits for that. So the server never serves two
// requests of one session at once, even after a body abandoned halfway, a
// timeout or a reset. A Session is not safe for concurrent use; a visit
// fetches one page at a time anyway.
type Session struct {
	f      *Fetcher
	client *http.Client
	tr     *http.Transport
	conns  int
	buf    bytes.Buffer // bodies are read here; reused by the next Get
	body   []byte       // gzip-coded bodies are decoded whole here (gunzip.whole); reused too
	gz     *gunzip      // decodes gzip-coded bodies, borrowed from gunzips until Close

	mu   sync.Mutex
	last *politeConn // the connection opened last; the next waits for its close
	wire *wireConn   // its recorder, with Config.KeepWire

	addr netip.Addr // where every connection goes (see Open)
	port int
}

// Open starts a session to the site whose pages are fetched from addr (the
// site's resolved address) and port.
func (f *Fetcher) Open(addr netip.Addr, port int) *Session {
	s := &Session{f: f, addr: addr, port: port}
	target := netip.AddrPortFrom(addr, uint16(port)).String()
	dialer := &net.Dialer{Timeout: f.cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	dial := dialer.DialContext
	if f.cfg.Dial != nil {
		dial = f.cfg.Dial
	}
	var proxy proxyTracker
	s.tr = &http.Transport{
		// The host in the URL is never looked up here: the engine resolved
		// it through its own cache, and every connection goes to target,
		// or to the proxy (which then reaches the site).
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if !proxy.isProxy(addr) {
				addr = target
			}
			if err := s.waitClosed(ctx); err != nil {
				return nil, err
			}
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			pc := &politeConn{Conn: c, grace: f.cfg.CloseTimeout, closed: make(chan struct{})}
			s.mu.Lock()
			s.conns++
			s.last = pc
			first := s.conns == 1
			s.mu.Unlock()
			f.conns.Add(1)
			if first {
				f.sessions.Add(1)
			}
			return pc, nil
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
		MaxResponseHeaderBytes: MaxHeaderBytes,
		ReadBufferSize:         16 << 10, // a typical page in a few reads
		WriteBufferSize:        8 << 10,
	}
	s.client = &http.Client{
		Transport: s.tr,
		// Redirects are not followed inside a visit: the target goes through
		// the scheduler like any other URL.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if f.cfg.KeepWire {
		s.recordWire()
	}
	return s
}

// MaxHeaderBytes caps the size of a response head; a larger one fails with
// KindHeaderTooLarge.
const MaxHeaderBytes = 256 << 10

// Close closes the session's connection and returns once it is closed (or
// the server has had Config.CloseTimeout to close its side).
func (s *Session) Close() {
	if s.gz != nil {
		// Response.Deflate is valid until Close too.
		s.gz.reset(nil, 0)
		gunzips.Put(s.gz)
		s.gz = nil
	}
	s.tr.CloseIdleConnections()
	// A connection abandoned by the last Get is closed by the transport
	// in the background; wait for that too.
	ctx, cancel := context.WithTimeout(context.Background(), 2*s.f.cfg.CloseTimeout)
	defer cancel()
	s.waitClosed(ctx)
}

// waitClosed waits until the session's last connection, if any, has been
// closed.
func (s *Session) waitClosed(ctx context.Context) error {
	s.mu.Lock()
	last := s.last
	s.mu.Unlock()
	if last == nil {
		return nil
	}
	select {
	case <-last.closed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Connections reports how many connections the session has opened.
func (s *Session) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Response is a fetched page.
type Response struct {
	Status      int
	Header      http.Header
	ContentType string
	Body        []byte // at most MaxBodySize bytes, content-decoded (gzip); valid until the session's next Get
	Truncated   bool   // the body was longer than MaxBodySize
	// Deflate is the body as the server compressed it, when it came
	// gzip-coded as one complete gzip member (RFC 1952) whose decoded
	// length is within the limit: that member's deflate stream (RFC
	// 1951), which inflates to Body. Nil otherwise (identity, another
	// coding, several members, a body cut or failed). Valid until the
	// session's next Get.
	Deflate    []byte
	Location   string    // the Location header of a 3xx, resolved against the URL
	TypeCheck  TypeCheck // see Config.CheckType
	RetryAfter time.Duration
	Duration   time.Duration
	Wire       *Wire // the exchange's heads, with Config.KeepWire; nil when not recorded
}

// TypeCheck is what a fetch made of a body's type (see Config.CheckType).
type TypeCheck string

// The type checks.
const (
	TypeHTML           TypeCheck = "html"            // declared HTML, and it is
	TypeHTMLUndeclared TypeCheck = "html-undeclared" // declared otherwise, sniffed as HTML: parsed all the same
	TypeBinaryAsHTML   TypeCheck = "binary-as-html"  // declared HTML, binary: the download stopped at its first bytes
	TypeOther          TypeCheck = "other"           // anything else
)

// IsHTML reports whether a body of this type is parsed as HTML.
func (t TypeCheck) IsHTML() bool { return t == TypeHTML || t == TypeHTMLUndeclared }

// ErrorKind names why a fetch failed, in Error.Kind.
type ErrorKind string

// Error kinds reported in Error.Kind.
const (
	KindTimeout        ErrorKind = "timeout"          // connect, TLS handshake, response head or body too slow
	KindRefused        ErrorKind = "refused"          // nothing listens at the address
	KindReset          ErrorKind = "reset"            // the server reset the connection, or closed it before any response
	KindShortBody      ErrorKind = "short-body"       // the body ended before its Content-Length or last chunk
	KindHeaderTooLarge ErrorKind = "header-too-large" // a response head over MaxHeaderBytes
	KindTooLarge       ErrorKind = "truncated"        // a body cut at MaxBodySize (Response.Truncated; no Error)
	KindBadURL         ErrorKind = "bad-url"          // the URL cannot be requested
	KindProtocol       ErrorKind = "protocol"         // not HTTP/1.1 as written: bad status line, chunking or encoding
	KindCancelled      ErrorKind = "cancelled"        // the caller's context ended
	KindOther          ErrorKind = "network"          // any other network failure
)

// Error is a failed fetch.
type Error struct {
	URL  string
	Kind ErrorKind
	Err  error
}

func (e *Error) Error() string { return fmt.Sprintf("fetch: %s: %s: %v", e.URL, e.Kind, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// Get fetches url over the session's connection. A response with any status
// is a success; an error means no complete response head was received, or
// the body failed before its end (then the partial body is returned with the
// error).
func (s *Session) Get(ctx context.Context, url string) (*Response, error) {
	return s.get(ctx, url, Validators{}, s.f.cfg.MaxBodySize, nil)
}

// GetIf is Get made conditional on the validators of a stored copy (see
// Validators): a server that finds the copy current answers 304 Not
// Modified without a body.
func (s *Session) GetIf(ctx context.Context, url string, v Validators) (*Response, error) {
	return s.get(ctx, url, v, s.f.cfg.MaxBodySize, nil)
}

// GetLimit is Get keeping at most limit bytes of the body (and at most
// Config.MaxBodySize), for files that have a smaller cap of their own, such
// as robots.txt.
func (s *Session) GetLimit(ctx context.Context, url string, limit int64) (*Response, error) {
	return s.get(ctx, url, Validators{}, min(limit, s.f.cfg.MaxBodySize), nil)
}

// get fetches url. With consume set, a 2xx body is handed to it as a
// stream of at most limit bytes instead of being read into Response.Body
// (Truncated then says that consume stopped before the body's end).
func (s *Session) get(ctx context.Context, url string, v Validators, limit int64, consume func(io.Reader) error) (*Response, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, s.f.cfg.BodyTimeout)
	defer cancel()
	var reused bool
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}
	// The request is made with the traced context, not given it after
	// (Request.WithContext copies the request).
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, url, nil)
	if err != nil {
		return nil, &Error{URL: url, Kind: KindBadURL, Err: err}
	}
	for k, v := range s.f.fixed {
		req.Header[k] = v
	}
	v.set(req.Header)
	s.f.requests.Add(1)
	resp, err := s.client.Do(req)
	if err != nil && reused && classify(err) == KindProtocol && ctx.Err() == nil {
		// An unreadable response on a reused connection may be what a
		// previous response sent past its Content-Length: ask once more
		// on a connection of its own.
		s.tr.CloseIdleConnections()
		resp, err = s.client.Do(req)
	}
	if err != nil {
		return nil, &Error{URL: url, Kind: classify(err), Err: err}
	}
	defer resp.Body.Close()
	r := &Response{
		Status:      resp.StatusCode,
		Header:      resp.Header,
		ContentType: resp.Header.Get("Content-Type"),
		Wire:        s.lastWire(),
	}
	if loc := resp.Header.Get("Location"); loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if u, err := resp.Request.URL.Parse(loc); err == nil {
			r.Location = u.String()
		}
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		r.RetryAfter = parseRetryAfter(ra, time.Now())
	}
	var (
		src    io.Reader = resp.Body
		length           = resp.ContentLength
		gz     *gunzip
	)
	if gzipCoded(resp) {
		// Decoded here, as the transport would have: the fields that
		// describe the coded body go, and the limit applies to the
		// decoded bytes. The compressed ones are kept (up to the limit
		// too) only for a body read whole.
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		length = -1
		keep := limit
		if consume != nil {
			keep = 0
		}
		if s.gz == nil {
			s.gz = gunzips.Get().(*gunzip)
		}
		gz = s.gz
		gz.reset(resp.Body, keep)
		src = gz
	}
	if consume != nil && r.Status >= 200 && r.Status <= 299 {
		body := &countReader{r: io.LimitReader(src, limit)}
		err = consume(body)
		r.TypeCheck = declaredType(r.ContentType)
		r.Duration = time.Since(start)
		r.Truncated = body.n >= limit
		if err != nil || body.err != io.EOF || r.Truncated {
			// Not read to its end (consume stopped, or the limit did):
			// the connection cannot be reused. Nothing more is read, so
			// a server stalling after the file holds nobody.
			s.tr.CloseIdleConnections()
		}
		var fe *Error
		if err != nil && !errors.As(err, &fe) && body.err != nil && body.err != io.EOF {
			return r, &Error{URL: url, Kind: classify(body.err), Err: body.err}
		}
		return r, err
	}
	if gz != nil {
		if w, ok := gz.whole(s.body[:0], resp.Body, limit, r.ContentType, s.f.cfg.CheckType); ok {
			s.body = w.body
			r.Body, r.Truncated, r.TypeCheck, r.Deflate = w.body, w.truncated, w.check, w.deflate
			r.Duration = time.Since(start)
			if r.Truncated {
				// A binary declared HTML, not read to its end.
				s.tr.CloseIdleConnections()
			}
			return r, nil
		}
		// Left to the streaming reader, gz, reset to read it.
	}
	if s.f.cfg.CheckType {
		r.Body, r.Truncated, r.TypeCheck, err = readChecked(&s.buf, src, limit, length, r.ContentType)
	} else {
		r.Body, r.Truncated, err = readLimited(&s.buf, src, limit, length)
		r.TypeCheck = declaredType(r.ContentType)
	}
	r.Duration = time.Since(start)
	if err != nil {
		return r, &Error{URL: url, Kind: classify(err), Err: err}
	}
	if gz != nil && !r.Truncated {
		r.Deflate = gz.deflate()
	}
	if r.Truncated || r.TypeCheck == TypeBinaryAsHTML {
		// What is left of the body is not read, so the connection cannot
		// be reused: let the transport close it.
		s.tr.CloseIdleConnections()
	}
	return r, nil
}

// countReader counts what it passes and keeps its source's last error.
type countReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n += int64(k)
	if err != nil {
		c.err = err
	}
	return k, err
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
func readChecked(b *bytes.Buffer, body io.Reader, max, length int64, contentType string) ([]byte, bool, TypeCheck, error) {
	b.Reset()
	if length > 0 && length <= max {
		b.Grow(int(length) + bytes.MinRead)
	}
	head := io.LimitReader(body, min(sniffLen, max+1))
	if _, err := b.ReadFrom(head); err != nil {
		return b.Bytes(), false, declaredType(contentType), err
	}
	check := sniffedType(b.Bytes(), declaredType(contentType))
	if check == TypeBinaryAsHTML {
		// Stop at once: whatever follows is not worth the bandwidth.
		return b.Bytes(), true, TypeBinaryAsHTML, nil
	}
	_, err := b.ReadFrom(io.LimitReader(body, max+1-int64(b.Len())))
	data := b.Bytes()
	if int64(len(data)) > max {
		return data[:max], true, check, nil
	}
	return data, false, check, err
}

// sniffedType is the type check of a body whose first bytes (up to
// sniffLen) are head, declared as declared.
func sniffedType(head []byte, declared TypeCheck) TypeCheck {
	sniffed := http.DetectContentType(head)
	switch {
	case declared == TypeHTML && len(head) > 0 && !strings.HasPrefix(sniffed, "text/"):
		return TypeBinaryAsHTML
	case declared != TypeHTML && strings.HasPrefix(sniffed, "text/html"):
		return TypeHTMLUndeclared
	}
	return declared
}

// declaredType says whether a Content-Type declares HTML.
func declaredType(contentType string) TypeCheck {
	ct := strings.ToLower(contentType)
	if strings.Contains(ct, "text/html") || strings.Contains(ct, "application/xhtml") {
		return TypeHTML
	}
	return TypeOther
}

func classify(err error) ErrorKind {
	var ne net.Error
	if kind := classifyTLS(err); kind != "" {
		return kind
	}
	msg := err.Error()
	switch {
	case errors.Is(err, context.Canceled):
		return KindCancelled
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return KindTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF):
		// Reset, or closed before any response.
		return KindReset
	case errors.Is(err, io.ErrUnexpectedEOF):
		// The server closed the connection before the response's end.
		return KindShortBody
	case strings.Contains(msg, "response headers exceeded"): // net/http has no sentinel for it
		return KindHeaderTooLarge
	case strings.Contains(msg, "malformed"), strings.Contains(msg, "invalid"), strings.Contains(msg, "gzip"), strings.Contains(msg, "flate"):
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

// politeConn closes gracefully: it shuts its sending side first and reads
// (discarding) until the server has closed its own, for at most grace and
// drainMax bytes, so that the server has finished with the connection
// before the session opens the next one. closed is closed when Close has
// returned.
type politeConn struct {
	net.Conn
	grace     time.Duration
	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
}

// drainMax bounds what a closing connection reads from a server that keeps
// sending after the client's close (the rest of a file, say): past it the
// connection is reset, and the server may still be writing when the next
// connection opens.
const drainMax = 4 << 20

// Read fails once Close has begun, even if data arrived: what the server
// sends after the client gave up (the end of a chunked body cut short, say)
// must not complete the response.
func (c *politeConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.closing.Load() {
		return 0, net.ErrClosed
	}
	return n, err
}

func (c *politeConn) Close() error {
	c.closeOnce.Do(func() {
		defer close(c.closed)
		c.closing.Store(true)
		cw, ok := c.Conn.(interface{ CloseWrite() error })
		if !ok || cw.CloseWrite() != nil {
			c.closeErr = c.Conn.Close()
			return
		}
		// The transport's read loop may be reading too (an idle
		// connection); reads are serialised, and both see the end.
		c.Conn.SetReadDeadline(time.Now().Add(c.grace))
		n, err := io.Copy(io.Discard, io.LimitReader(c.Conn, drainMax))
		if err != nil || n == drainMax {
			// The server did not close in time: reset rather than leave
			// it writing into a closed connection's buffers.
			if tc, ok := c.Conn.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
		}
		c.closeErr = c.Conn.Close()
	})
	<-c.closed
	return c.closeErr
}
