package fetch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// loopbackServer listens on loopback until the test ends, serving each
// connection with serve on a goroutine of its own (which closes it after),
// and returns its address.
func loopbackServer(tb testing.TB, serve func(c net.Conn)) netip.AddrPort {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String())
}

// scriptedServer answers the requests of each connection, in order, with
// the given responses written a few bytes at a time (so a head arrives in
// several reads), and returns its address.
func scriptedServer(t *testing.T, responses ...string) netip.AddrPort {
	t.Helper()
	return loopbackServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for _, resp := range responses {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			for b := []byte(resp); len(b) > 0; {
				n := min(len(b), 7)
				if _, err := c.Write(b[:n]); err != nil {
					return
				}
				b = b[n:]
			}
		}
		io.Copy(io.Discard, br)
	})
}

// The recorded heads are the bytes that went over the connection: the
// response's fields in the order and case sent, a 1xx answer before it
// left out, each exchange of a keep-alive connection its own.
func TestWireRecordsHeadsAsSent(t *testing.T) {
	head1 := "HTTP/1.1 200 OK\r\nserver: scripted\r\nX-Zeta: 1\r\nX-Alpha: 2\r\nTransfer-Encoding: chunked\r\nContent-Type: text/html\r\n\r\n"
	head2 := "HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\nCONTENT-TYPE: text/plain\r\n\r\n"
	ap := scriptedServer(t,
		"HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"+head1+"5\r\n<html\r\n1\r\n>\r\n0\r\n\r\n",
		head2+"gone")
	port := strconv.Itoa(int(ap.Port()))
	s := New(Config{UserAgent: "lidi-wire", KeepWire: true}).Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	for _, tc := range []struct {
		path, head, body string
	}{
		{"/one", head1, "<html>"},
		{"/two?q=1", head2, "gone"},
	} {
		r, err := s.Get(context.Background(), "http://site.test:"+port+tc.path)
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Body) != tc.body || r.Wire == nil {
			t.Fatalf("%s: body %q, wire %v", tc.path, r.Body, r.Wire)
		}
		if string(r.Wire.Head) != tc.head {
			t.Errorf("%s: head %q, want %q", tc.path, r.Wire.Head, tc.head)
		}
		req := string(r.Wire.Request)
		if want := "GET " + tc.path + " HTTP/1.1\r\nHost: site.test:" + port + "\r\nUser-Agent: lidi-wire\r\n"; !strings.HasPrefix(req, want) || !strings.HasSuffix(req, "\r\n\r\n") ||
			strings.Count(req, "\r\n\r\n") != 1 {
			t.Errorf("%s: request %q, want it to start %q and end with one blank line", tc.path, req, want)
		}
		if r.Wire.IP != "127.0.0.1" {
			t.Errorf("%s: IP %q", tc.path, r.Wire.IP)
		}
	}
	if s.Connections() != 1 {
		t.Errorf("%d connections, want 1", s.Connections())
	}
}

// Over HTTPS the recorder sits above TLS; certificate failures keep their
// kind; without KeepWire nothing is recorded.
func TestWireHTTPS(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Order", "1")
		io.WriteString(w, "<html>ok</html>")
	}))
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	t.Cleanup(ts.Close)
	ap := netip.MustParseAddrPort(ts.Listener.Addr().String())
	trusted := x509.NewCertPool()
	trusted.AddCert(ts.Certificate())
	u := "https://example.com:" + strconv.Itoa(int(ap.Port())) + "/x"
	for _, tc := range []struct {
		name  string
		cfg   Config
		kind  ErrorKind
		wired bool
	}{
		{"recorded", Config{RootCAs: trusted, KeepWire: true}, "", true},
		{"not kept", Config{RootCAs: trusted}, "", false},
		{"unknown CA", Config{KeepWire: true}, KindTLSCertificate, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(tc.cfg).Open(ap.Addr(), int(ap.Port()))
			defer s.Close()
			r, err := s.Get(context.Background(), u)
			var fe *Error
			switch {
			case tc.kind != "":
				if !errors.As(err, &fe) || fe.Kind != tc.kind {
					t.Fatalf("err %v, want kind %s", err, tc.kind)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if (r.Wire != nil) != tc.wired {
				t.Fatalf("wire %v, want recorded %v", r.Wire, tc.wired)
			}
			if tc.wired && (!bytes.HasPrefix(r.Wire.Head, []byte("HTTP/1.1 200 OK\r\n")) || !bytes.Contains(r.Wire.Head, []byte("\r\nX-Order: 1\r\n")) ||
				!bytes.HasPrefix(r.Wire.Request, []byte("GET /x HTTP/1.1\r\nHost: example.com:")) || r.Wire.IP != "127.0.0.1") {
				t.Errorf("wire %q / %q / %s", r.Wire.Request, r.Wire.Head, r.Wire.IP)
			}
		})
	}
}

func TestHeadBuf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		head   string
		rest   string
		done   bool
	}{
		{"one read", []string{"A\r\n\r\nbody"}, "A\r\n\r\n", "body", true},
		{"blank line split", []string{"A\r\n", "\r", "\nbo"}, "A\r\n\r\n", "bo", true},
		{"unfinished", []string{"A\r\nB: c\r\n"}, "A\r\nB: c\r\n", "", false},
		{"too large", []string{strings.Repeat("x", MaxHeaderBytes+1)}, "", "", true},
		{"blank lines in the body", []string{"A\r\nB: c\r", "\n\r\nx\r\n\r\ny"}, "A\r\nB: c\r\n\r\n", "x\r\n\r\ny", true},
		{"a byte a read", strings.Split("A\r\n\r\nb", ""), "A\r\n\r\n", "b", true},
	} {
		var h headBuf
		var rest []byte
		for _, c := range tc.chunks {
			rest = h.add([]byte(c))
		}
		if string(h.b) != tc.head || string(rest) != tc.rest || h.done != tc.done {
			t.Errorf("%s: head %q rest %q done %v", tc.name, h.b, rest, h.done)
		}
	}
	// The blank line split at every point, over two reads and three.
	const msg = "HTTP/1.1 200 OK\r\nA: b\r\n\r\nbody\r\n\r\n"
	const head = "HTTP/1.1 200 OK\r\nA: b\r\n\r\n"
	for i := range len(msg) + 1 {
		for j := i; j <= len(msg); j++ {
			var h headBuf
			var rest []byte
			for _, c := range []string{msg[:i], msg[i:j], msg[j:]} {
				if r := h.add([]byte(c)); h.done && rest == nil {
					rest = r
				}
			}
			if string(h.b) != head || !strings.HasPrefix(msg[len(head):], string(rest)) || !h.done {
				t.Errorf("reads of %q, %q, %q: head %q, rest %q, done %v", msg[:i], msg[i:j], msg[j:], h.b, rest, h.done)
			}
		}
	}
	// A head read with a page's body: the buffer holds the head alone.
	var h headBuf
	if rest := h.add([]byte(head + strings.Repeat("<p>body</p>", 1500))); len(rest) != 1500*11 || cap(h.b) > 2*len(head) {
		t.Errorf("head read with its body: %d bytes left, the buffer's capacity %d", len(rest), cap(h.b))
	}
}
