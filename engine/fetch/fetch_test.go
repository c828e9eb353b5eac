package fetch

import (
	"compress/gzip"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// server starts a loopback server counting its connections.
func server(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int64, netip.AddrPort) {
	t.Helper()
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(h)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	t.Cleanup(ts.Close)
	ap := netip.MustParseAddrPort(ts.Listener.Addr().String())
	return ts, &conns, ap
}

func TestOneConnectionPerSession(t *testing.T) {
	_, conns, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != "site.test:"+strconv.Itoa(int(r.Context().Value(http.LocalAddrContextKey).(net.Addr).(*net.TCPAddr).Port)) {
			http.Error(w, "wrong host "+r.Host, 400)
			return
		}
		w.Write([]byte("<html>page " + r.URL.Path + "</html>"))
	}))
	f := New(Config{UserAgent: "lidi-test"})
	s := f.Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	for i := 0; i < 10; i++ {
		// The host is never looked up: the session dials ap.
		r, err := s.Get(context.Background(), "http://site.test:"+strconv.Itoa(int(ap.Port()))+"/p"+strconv.Itoa(i))
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != 200 || !strings.Contains(string(r.Body), "/p"+strconv.Itoa(i)) {
			t.Fatalf("got %d %q", r.Status, r.Body)
		}
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("server saw %d connections, want 1", got)
	}
	if s.Connections() != 1 || f.Connections() != 1 {
		t.Errorf("session counted %d, fetcher %d", s.Connections(), f.Connections())
	}
}

func TestBodyLimitAndEndlessBody(t *testing.T) {
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 4096))
		for i := 0; i < 1<<20; i++ { // 4 GiB if nobody stops it
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	f := New(Config{MaxBodySize: 100_000, BodyTimeout: 5 * time.Second})
	s := f.Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	r, err := s.Get(context.Background(), "http://x.test:"+strconv.Itoa(int(ap.Port()))+"/endless")
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated || len(r.Body) != 100_000 {
		t.Errorf("truncated=%v len=%d, want true 100000", r.Truncated, len(r.Body))
	}
}

func TestStallingServerTimesOut(t *testing.T) {
	release := make(chan struct{})
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	f := New(Config{HeaderTimeout: 200 * time.Millisecond})
	s := f.Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	start := time.Now()
	_, err := s.Get(context.Background(), "http://x.test:"+strconv.Itoa(int(ap.Port()))+"/stall")
	var fe *Error
	if !errors.As(err, &fe) || fe.Kind != KindTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s", d)
	}
}

func TestRedirectNotFollowedGzipAndRetryAfter(t *testing.T) {
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/old":
			w.Header().Set("Location", "../new?x=1")
			w.WriteHeader(301)
		case "/gz":
			if !strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
				http.Error(w, "no gzip", 400)
				return
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/html")
			zw := gzip.NewWriter(w)
			zw.Write([]byte("<p>compressed</p>"))
			zw.Close()
		case "/busy":
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(503)
		}
	}))
	base := "http://x.test:" + strconv.Itoa(int(ap.Port()))
	s := New(Config{}).Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	r, err := s.Get(context.Background(), base+"/old")
	if err != nil || r.Status != 301 || r.Location != base+"/new?x=1" {
		t.Fatalf("redirect: %v %d %q", err, r.Status, r.Location)
	}
	r, err = s.Get(context.Background(), base+"/gz")
	if err != nil || string(r.Body) != "<p>compressed</p>" {
		t.Fatalf("gzip: %v %q", err, r.Body)
	}
	r, err = s.Get(context.Background(), base+"/busy")
	if err != nil || r.Status != 503 || r.RetryAfter != 120*time.Second {
		t.Fatalf("retry-after: %v %d %s", err, r.Status, r.RetryAfter)
	}
}

func TestRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort(l.Addr().String())
	l.Close() // nothing listens there now
	s := New(Config{ConnectTimeout: time.Second}).Open(ap.Addr(), int(ap.Port()))
	_, err = s.Get(context.Background(), "http://x.test:"+strconv.Itoa(int(ap.Port()))+"/")
	var fe *Error
	if !errors.As(err, &fe) || fe.Kind != KindRefused {
		t.Fatalf("err = %v, want refused", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"30":                            30 * time.Second,
		"Thu, 01 Jan 2026 00:01:00 GMT": time.Minute,
		"garbage":                       0,
		"-5":                            0,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestTypeCheck(t *testing.T) {
	png := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 1<<20)...)
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/png-as-html":
			w.Header().Set("Content-Type", "text/html")
			w.Write(png)
		case "/html-as-octet":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write([]byte("<!DOCTYPE html><html><body><a href=/x>x</a></body></html>"))
		case "/html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(strings.Repeat("<p>été</p>", 1000)))
		case "/pdf":
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte("%PDF-1.4 ..."))
		}
	}))
	base := "http://x.test:" + strconv.Itoa(int(ap.Port()))
	tests := []struct {
		path      string
		check     TypeCheck
		maxLen    int
		truncated bool
	}{
		{"/png-as-html", "binary-as-html", sniffLen, true},
		{"/html-as-octet", "html-undeclared", 1 << 20, false},
		{"/html", "html", 1 << 20, false},
		{"/pdf", "other", 1 << 20, false},
	}
	s := New(Config{CheckType: true}).Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	for _, tt := range tests {
		r, err := s.Get(context.Background(), base+tt.path)
		if err != nil {
			t.Fatalf("%s: %v", tt.path, err)
		}
		if r.TypeCheck != tt.check || len(r.Body) > tt.maxLen || r.Truncated != tt.truncated {
			t.Errorf("%s: check %q, %d bytes, truncated %v; want %q, at most %d, %v", tt.path, r.TypeCheck, len(r.Body), r.Truncated, tt.check, tt.maxLen, tt.truncated)
		}
	}
	// The same server without the check reads the whole binary.
	s2 := New(Config{}).Open(ap.Addr(), int(ap.Port()))
	defer s2.Close()
	r, err := s2.Get(context.Background(), base+"/png-as-html")
	if err != nil || len(r.Body) != len(png) || r.TypeCheck != "html" {
		t.Errorf("unchecked: %d bytes, %q, %v", len(r.Body), r.TypeCheck, err)
	}
}
