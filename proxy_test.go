package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// testProxy is a proxy in the test process: HTTP (CONNECT tunnels for
// HTTPS, absolute-form requests for plain HTTP) and SOCKS5 (CONNECT, no
// authentication) on the same port, told apart by the first byte. It
// resolves names through the DNS server it is given and counts what passed
// through it.
type testProxy struct {
	ln       net.Listener
	resolver *net.Resolver
	tunnels  atomic.Int64 // CONNECT tunnels opened (HTTP and SOCKS5)
	upstream atomic.Int64 // connections opened to servers (tunnels and forwards)
	mu       sync.Mutex
	gets     []string // absolute-form request URLs
	wg       sync.WaitGroup
}

func startProxy(t *testing.T, dnsAddr string) *testProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &testProxy{ln: ln, resolver: &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, dnsAddr)
	}}}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() { p.serve(c) })
		}
	})
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *testProxy) URL() string { return "http://" + p.ln.Addr().String() }

// SOCKS5URL is the proxy's address as a socks5:// URL.
func (p *testProxy) SOCKS5URL() string { return "socks5://" + p.ln.Addr().String() }

func (p *testProxy) dial(ctx context.Context, hostport string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, err
	}
	addrs, err := p.resolver.LookupHost(ctx, host)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp4", net.JoinHostPort(addrs[0], port))
	if err == nil {
		p.upstream.Add(1)
	}
	return c, err
}

// serve answers one client connection: a tunnel, or forwarded requests
// (each over a new server connection, closed after it: the proxy keeps no
// idle connection that would make a second one open to a site).
func (p *testProxy) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	if first, err := br.Peek(1); err == nil && first[0] == socks5Version {
		p.socks5(c, br)
		return
	}
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if req.Method == http.MethodConnect {
			p.tunnel(c, br, req.Host)
			return
		}
		p.mu.Lock()
		p.gets = append(p.gets, req.URL.String())
		p.mu.Unlock()
		resp, err := p.forward(req)
		if err != nil {
			io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
			return
		}
		err = resp.Write(c)
		resp.Body.Close()
		if err != nil || req.Close {
			return
		}
	}
}

func (p *testProxy) forward(req *http.Request) (*http.Response, error) {
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) { return p.dial(ctx, addr) }}
	defer tr.CloseIdleConnections()
	req.RequestURI = ""
	return tr.RoundTrip(req)
}

func (p *testProxy) tunnel(c net.Conn, br *bufio.Reader, target string) {
	up, err := p.dial(context.Background(), target)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer up.Close()
	p.tunnels.Add(1)
	io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	pipe(c, br, up)
}

// pipe copies between a client and the server until both have closed.
func pipe(c net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{})
	go func() {
		io.Copy(up, br) // the client's bytes, then its close
		up.(*net.TCPConn).CloseWrite()
		close(done)
	}()
	io.Copy(c, up)
	c.(*net.TCPConn).CloseWrite()
	<-done
}

const socks5Version = 5

// socks5 answers one SOCKS5 client (RFC 1928): no authentication, CONNECT
// to an IPv4 address or a name, which the proxy resolves.
func (p *testProxy) socks5(c net.Conn, br *bufio.Reader) {
	hdr := make([]byte, 2)
	if _, err := io.ReadFull(br, hdr); err != nil {
		return
	}
	if _, err := io.ReadFull(br, make([]byte, hdr[1])); err != nil { // methods offered
		return
	}
	c.Write([]byte{socks5Version, 0}) // no authentication
	req := make([]byte, 4)            // version, command, reserved, address type
	if _, err := io.ReadFull(br, req); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		ip := make([]byte, 4)
		if _, err := io.ReadFull(br, ip); err != nil {
			return
		}
		host = net.IP(ip).String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return
		}
		host = string(name)
	default:
		c.Write([]byte{socks5Version, 8, 0, 1, 0, 0, 0, 0, 0, 0}) // address type not supported
		return
	}
	port := make([]byte, 2)
	if _, err := io.ReadFull(br, port); err != nil {
		return
	}
	up, err := p.dial(context.Background(), net.JoinHostPort(host, strconv.Itoa(int(port[0])<<8|int(port[1]))))
	if err != nil {
		c.Write([]byte{socks5Version, 4, 0, 1, 0, 0, 0, 0, 0, 0}) // host unreachable
		return
	}
	defer up.Close()
	p.tunnels.Add(1)
	c.Write([]byte{socks5Version, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	pipe(c, br, up)
}

// Gets returns the absolute-form URLs requested through the proxy.
func (p *testProxy) Gets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.gets...)
}

func anyHasSuffix(list []string, suffix string) bool {
	for _, s := range list {
		if strings.HasSuffix(s, suffix) {
			return true
		}
	}
	return false
}
