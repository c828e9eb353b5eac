package fetch

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
)

// TLS failures reported by Kind.
const (
	// KindTLSCertificate: the server's certificate is not trusted (an
	// unknown CA: see fetch.ca_file), expired, or for another host.
	KindTLSCertificate ErrorKind = "tls-certificate"
	// KindTLS: the TLS handshake failed otherwise (no common version or
	// cipher, an alert from the server, not TLS at all).
	KindTLS ErrorKind = "tls-handshake"
)

// classifyTLS returns the kind of a TLS failure, or "" if err is not one.
func classifyTLS(err error) ErrorKind {
	var (
		verify    *tls.CertificateVerificationError
		unknownCA x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		alert     tls.AlertError
		record    tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &verify), errors.As(err, &unknownCA), errors.As(err, &hostname), errors.As(err, &invalid):
		return KindTLSCertificate
	case errors.As(err, &alert), errors.As(err, &record), strings.Contains(err.Error(), "tls: "),
		strings.Contains(err.Error(), "HTTP response to HTTPS client"):
		return KindTLS
	}
	return ""
}

// tlsConfig trusts the system's CAs, or RootCAs when set.
func (f *Fetcher) tlsConfig() *tls.Config {
	return &tls.Config{RootCAs: f.cfg.RootCAs, MinVersion: tls.VersionTLS12}
}

// proxyTracker remembers the proxy a session's last request went through,
// so that its dialer knows a dial to the proxy from one to the site.
type proxyTracker struct {
	mu   sync.Mutex
	addr string // host:port of the proxy, "" when none
}

// wrap returns the transport's Proxy function: proxy's choice, recorded.
func (p *proxyTracker) wrap(proxy func(*http.Request) (*url.URL, error)) func(*http.Request) (*url.URL, error) {
	if proxy == nil {
		return nil
	}
	return func(r *http.Request) (*url.URL, error) {
		u, err := proxy(r)
		addr := ""
		if u != nil {
			addr = proxyAddr(u)
		}
		p.mu.Lock()
		p.addr = addr
		p.mu.Unlock()
		return u, err
	}
}

// isProxy reports whether addr, as the transport dials it, is the proxy.
func (p *proxyTracker) isProxy(addr string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addr != "" && p.addr == addr
}

// proxyAddr is the address net/http dials for proxy u: its host and port,
// or the scheme's default port.
func proxyAddr(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
	return net.JoinHostPort(u.Hostname(), port)
}

// ConnStats counts a Fetcher's connections: how well keep-alive holds.
type ConnStats struct {
	Connections int64 // connections opened
	Sessions    int64 // sessions (visits) that opened at least one
	Requests    int64 // requests sent
}

// Reconnects is the connections opened after a session's first: each is a
// server that closed the connection before the session was done (an idle
// timeout shorter than the delay between requests, or a keep-alive
// maximum).
func (s ConnStats) Reconnects() int64 { return s.Connections - s.Sessions }

// PerConnection is the mean number of requests a connection carried.
func (s ConnStats) PerConnection() float64 {
	if s.Connections == 0 {
		return 0
	}
	return float64(s.Requests) / float64(s.Connections)
}

// Stats returns the connection counts so far. It is safe for concurrent use.
func (f *Fetcher) Stats() ConnStats {
	return ConnStats{Connections: f.conns.Load(), Sessions: f.sessions.Load(), Requests: f.requests.Load()}
}
