package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"net/netip"
	"sync"
)

// Wire is one exchange as it went over the connection, what a WARC record
// of the fetch needs (ISO 28500 keeps the request and the response as
// sent and received): the request head as written, the response head as
// read, both ending with their blank line, and the address connected to.
// Config.KeepWire turns the capture on.
type Wire struct {
	Request []byte // request line and header fields as sent
	Head    []byte // status line and header fields as received, in order
	IP      string // the address connected to ("" when not an IP connection)
}

// recordWire makes every connection of the session record its exchanges
// (see Wire). HTTPS connections are made here rather than by the
// transport, so that the recorder sits above TLS and sees plain HTTP.
func (s *Session) recordWire() {
	dial := s.tr.DialContext
	s.tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return s.watch(c, c), nil
	}
	// The transport uses DialTLSContext for an https URL without a proxy
	// (or an https proxy); through an http or SOCKS proxy it tunnels and
	// adds TLS itself, and the recorder (beneath TLS) captures nothing.
	s.tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := s.f.tlsConfig()
		cfg.ServerName = host
		tc := tls.Client(c, cfg)
		hctx, cancel := context.WithTimeout(ctx, s.f.cfg.ConnectTimeout)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			c.Close()
			return nil, err
		}
		return s.watch(tc, c), nil
	}
}

// watch wraps c in a recorder, the session's latest; raw is the network
// connection beneath (for the address).
func (s *Session) watch(c, raw net.Conn) net.Conn {
	w := &wireConn{Conn: c}
	if ap, err := netip.ParseAddrPort(raw.RemoteAddr().String()); err == nil {
		w.ip = ap.Addr().Unmap().String()
	}
	s.mu.Lock()
	s.wire = w
	s.mu.Unlock()
	return w
}

// lastWire returns the exchange of the session's latest connection, nil
// when none was recorded or what was recorded is not an HTTP/1 exchange
// (a tunnel through a proxy, a head cut at MaxHeaderBytes).
func (s *Session) lastWire() *Wire {
	s.mu.Lock()
	w := s.wire
	s.mu.Unlock()
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.req.done || !w.head.done || !bytes.HasPrefix(w.head.b, []byte("HTTP/1.")) || !isRequestLine(w.req.b) {
		return nil
	}
	return &Wire{Request: bytes.Clone(w.req.b), Head: bytes.Clone(w.head.b), IP: w.ip}
}

// isRequestLine reports whether b starts with an HTTP/1 request line of
// a method other than CONNECT (which opens a tunnel, not a fetch).
func isRequestLine(b []byte) bool {
	line, _, ok := bytes.Cut(b, []byte("\r\n"))
	method, rest, ok2 := bytes.Cut(line, []byte(" "))
	return ok && ok2 && len(method) > 0 && !bytes.Equal(method, []byte("CONNECT")) &&
		bytes.HasPrefix(rest[bytes.LastIndexByte(rest, ' ')+1:], []byte("HTTP/1."))
}

// wireConn records the head of the request written last and of the
// response read after it. The transport writes a request only once the
// previous response has been read (no pipelining), so a write after a
// response began starts a new exchange. Safe for the transport's reading
// and writing goroutines and the session's at once.
type wireConn struct {
	net.Conn
	ip string

	mu        sync.Mutex
	req, head headBuf
}

// headBuf collects a message head: bytes up to and including the first
// blank line.
type headBuf struct {
	b    []byte
	done bool
}

// add appends what of p belongs to the head and returns the rest. Only
// the head is copied: a read brings the head with much of the body (a
// page's whole response, often), which the buffer does not grow to hold.
func (h *headBuf) add(p []byte) []byte {
	if h.done {
		return p
	}
	blank := []byte("\r\n\r\n")
	// The blank line may straddle two reads: it may start in the last
	// three bytes held, and then ends in p's first three.
	var joint [6]byte
	held := copy(joint[:], h.b[max(0, len(h.b)-3):])
	n := held + copy(joint[held:], p)
	end := -1
	if i := bytes.Index(joint[:n], blank); i >= 0 {
		end = i + 4 - held
	} else if i := bytes.Index(p, blank); i >= 0 {
		end = i + 4
	}
	if end >= 0 {
		h.b, h.done = append(h.b, p[:end]...), true
		return p[end:]
	}
	h.b = append(h.b, p...)
	if len(h.b) > MaxHeaderBytes {
		h.b, h.done = h.b[:0], true // too large to be kept: recorded as nothing
	}
	return nil
}

func (h *headBuf) reset() { h.b, h.done = h.b[:0], false }

func (c *wireConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if len(c.head.b) > 0 || c.head.done {
		c.req.reset()
		c.head.reset()
	}
	c.req.add(p)
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		for rest := p[:n]; len(rest) > 0 && !c.head.done; {
			rest = c.head.add(rest)
			if c.head.done && interim(c.head.b) {
				c.head.reset() // a 1xx answer precedes the response
			}
		}
		c.mu.Unlock()
	}
	return n, err
}

// interim reports whether head is an informational (1xx) response other
// than 101, which the final response follows on the same connection.
func interim(head []byte) bool {
	_, rest, _ := bytes.Cut(head, []byte(" "))
	return len(rest) >= 3 && rest[0] == '1' && !bytes.HasPrefix(rest, []byte("101"))
}
