package fetch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// After a body abandoned halfway (binary declared HTML, a body timeout,
// a cap) the next request of the session waits until the server has
// finished with the previous one: the server never serves two at once.
func TestNextRequestWaitsForTheClose(t *testing.T) {
	// /slow sends 64 chunks slowGap apart, past the body timeout of 20
	// gaps. The timeout also bounds each /next, which first waits for the
	// abandoned connection's close (the server's rest read and dropped):
	// 100 ms for it timed out once at a load of 7 to 9.
	const slowGap = 25 * time.Millisecond
	var inFlight, maxInFlight atomic.Int64
	_, conns, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for m := maxInFlight.Load(); n > m && !maxInFlight.CompareAndSwap(m, n); m = maxInFlight.Load() {
		}
		switch r.URL.Path {
		case "/png-as-html", "/endless", "/slow":
			w.Header().Set("Content-Type", "text/html")
			chunk := append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 32<<10)...)
			switch r.URL.Path {
			case "/endless":
				chunk = []byte(strings.Repeat("<p>text</p>", 3000))
			case "/slow":
				chunk = []byte(strings.Repeat("<p>text</p>", 10))
			}
			rc := http.NewResponseController(w)
			// Like a server sending a file, it writes to the end
			// (2 MiB) whether the client still reads or not.
			for i := 0; i < 64; i++ {
				if _, err := w.Write(chunk); err != nil {
					return
				}
				if r.URL.Path == "/slow" {
					rc.Flush()
					t := time.NewTimer(slowGap)
					select {
					case <-t.C:
					case <-r.Context().Done():
						t.Stop()
						return
					}
				}
			}
		default:
			w.Write([]byte("<html>fine</html>"))
		}
	}))
	f := New(Config{CheckType: true, MaxBodySize: 64 << 10, BodyTimeout: 20 * slowGap})
	s := f.Open(ap.Addr(), int(ap.Port()))
	base := "http://x.test:" + strconv.Itoa(int(ap.Port()))
	for i := 0; i < 5; i++ {
		for _, p := range []string{"/png-as-html", "/next", "/endless", "/next", "/slow", "/next"} {
			r, err := s.Get(context.Background(), base+p)
			switch p {
			case "/png-as-html":
				if err != nil || r.TypeCheck != "binary-as-html" {
					t.Fatalf("%s: %v %+v", p, err, r)
				}
			case "/endless":
				if err != nil || !r.Truncated {
					t.Fatalf("%s: %v, truncated %v", p, err, r != nil && r.Truncated)
				}
			case "/slow":
				var fe *Error
				if !errors.As(err, &fe) || fe.Kind != KindTimeout {
					t.Fatalf("%s: %v, want a timeout (%d bytes, truncated %v, %s)", p, err, len(r.Body), r.Truncated, r.Duration)
				}
			default:
				if err != nil || string(r.Body) != "<html>fine</html>" {
					t.Fatalf("%s: %v", p, err)
				}
			}
		}
	}
	s.Close()
	if m := maxInFlight.Load(); m != 1 {
		t.Errorf("the server had %d requests in flight at once", m)
	}
	if n := conns.Load(); n != 5*3+1 {
		t.Errorf("%d connections, want one per abandoned body and one more", n)
	}
}

// A TLS handshake the server never answers ends in a timeout after
// ConnectTimeout.
func TestTLSHandshakeStall(t *testing.T) {
	ap := loopbackServer(t, func(c net.Conn) { // reads the ClientHello, answers nothing
		io.Copy(io.Discard, c)
	})
	s := New(Config{ConnectTimeout: 200 * time.Millisecond}).Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	_, err := s.Get(context.Background(), "https://x.test:"+strconv.Itoa(int(ap.Port()))+"/")
	var fe *Error
	if !errors.As(err, &fe) || fe.Kind != KindTimeout {
		t.Fatalf("err = %v, want a timeout", err)
	}
}

func TestGetLimit(t *testing.T) {
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(strings.Repeat("Disallow: /\n", 100_000)))
	}))
	s := New(Config{}).Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	r, err := s.GetLimit(context.Background(), "http://x.test:"+strconv.Itoa(int(ap.Port()))+"/robots.txt", 1000)
	if err != nil || len(r.Body) != 1000 || !r.Truncated {
		t.Fatalf("%v: %d bytes, truncated %v; want 1000, true", err, len(r.Body), r.Truncated)
	}
}
