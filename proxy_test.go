package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// testProxy is an HTTP proxy in the test process: CONNECT tunnels (HTTPS)
// and absolute-form requests (plain HTTP), resolving names through the DNS
// server it is given. It counts what passed through it.
type testProxy struct {
	ln       net.Listener
	resolver *net.Resolver
	tunnels  atomic.Int64 // CONNECT tunnels opened
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
