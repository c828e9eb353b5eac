package fetch

import (
	"bufio"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"sync/atomic"
	"testing"
)

// TLS failures have their own kinds: a certificate nobody trusts, or for
// another host, is KindTLSCertificate; a server that does not speak TLS is
// KindTLS. With the server's CA among RootCAs the same page is fetched.
func TestTLSKinds(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>ok</html>") }))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ap := netip.MustParseAddrPort(ts.Listener.Addr().String())
	plain := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(plain.Close)
	plainAP := netip.MustParseAddrPort(plain.Listener.Addr().String())
	trusted := x509.NewCertPool()
	trusted.AddCert(ts.Certificate())
	port := strconv.Itoa(int(ap.Port()))
	for _, tc := range []struct {
		name  string
		roots *x509.CertPool
		addr  netip.AddrPort
		url   string
		kind  ErrorKind // "": fetched
	}{
		{"trusted CA", trusted, ap, "https://example.com:" + port + "/", ""},
		{"unknown CA", nil, ap, "https://example.com:" + port + "/", KindTLSCertificate},
		{"another host's certificate", trusted, ap, "https://other.test:" + port + "/", KindTLSCertificate},
		{"not TLS", trusted, plainAP, "https://example.com:" + strconv.Itoa(int(plainAP.Port())) + "/", KindTLS},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{RootCAs: tc.roots}).Open(tc.addr.Addr(), int(tc.addr.Port()))
			defer s.Close()
			resp, err := s.Get(context.Background(), tc.url)
			var fe *Error
			switch {
			case tc.kind == "" && (err != nil || resp.Status != 200):
				t.Fatalf("got %v", err)
			case tc.kind != "" && (!errors.As(err, &fe) || fe.Kind != tc.kind):
				t.Fatalf("err %v, want kind %s", err, tc.kind)
			}
		})
	}
}

// A session through a proxy dials the proxy, never the site's address, and
// sends it absolute-form requests (http://) or a CONNECT (https://).
func TestProxy(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page "+r.URL.Path) }))
	t.Cleanup(site.Close)
	siteAP := netip.MustParseAddrPort(site.Listener.Addr().String())
	var requests atomic.Int64
	var lastURI atomic.Value
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		lastURI.Store(r.RequestURI)
		// Forward to the site whatever the host says: the test resolves
		// site.test to it.
		c, err := net.Dial("tcp", siteAP.String())
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer c.Close()
		r.RequestURI = ""
		r.Write(c)
		resp, err := http.ReadResponse(bufio.NewReader(c), r)
		if err != nil {
			http.Error(w, err.Error(), 502)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(proxy.Close)
	pu, _ := url.Parse(proxy.URL)
	// The site's "resolved" address is one nothing listens on: only the
	// proxy can reach it.
	s := New(Config{Proxy: http.ProxyURL(pu)}).Open(netip.MustParseAddr("127.0.0.9"), 1)
	defer s.Close()
	for _, path := range []string{"/robots.txt", "/a"} {
		resp, err := s.Get(context.Background(), "http://site.test:"+strconv.Itoa(int(siteAP.Port()))+path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if string(resp.Body) != "page "+path {
			t.Fatalf("%s: %q", path, resp.Body)
		}
	}
	if requests.Load() != 2 || lastURI.Load() != "http://site.test:"+strconv.Itoa(int(siteAP.Port()))+"/a" {
		t.Errorf("the proxy saw %d requests, the last for %v", requests.Load(), lastURI.Load())
	}
	if s.Connections() != 1 {
		t.Errorf("%d connections to the proxy, want 1 kept alive", s.Connections())
	}
}

// ConnStats: a server that closes after every response makes every request
// but a session's first a reconnect.
func TestConnStats(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		close                  bool
		conns, reconnects, req int64
	}{
		{"keep-alive", false, 2, 0, 6},
		{"server closes", true, 6, 4, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.close {
					w.Header().Set("Connection", "close")
				}
				io.WriteString(w, "<html>x</html>")
			}))
			f := New(Config{})
			for range 2 { // two visits of three pages
				s := f.Open(ap.Addr(), int(ap.Port()))
				for i := range 3 {
					if _, err := s.Get(context.Background(), "http://site.test:"+strconv.Itoa(int(ap.Port()))+"/"+strconv.Itoa(i)); err != nil {
						t.Fatal(err)
					}
				}
				s.Close()
			}
			st := f.Stats()
			if st.Connections != tc.conns || st.Reconnects() != tc.reconnects || st.Requests != tc.req {
				t.Errorf("%+v (reconnects %d), want %d connections, %d reconnects, %d requests", st, st.Reconnects(), tc.conns, tc.reconnects, tc.req)
			}
		})
	}
}
