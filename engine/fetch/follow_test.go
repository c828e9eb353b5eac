package fetch

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// redirectStatuses are the statuses a chain follows, used in turn.
var redirectStatuses = []int{301, 302, 303, 307, 308}

// A chain of n redirects on one host is followed up to Follow.Max (five, as
// RFC 9309 asks of robots.txt): the final answer and every hop are
// reported; the sixth redirect ends the chain as too long, its 3xx the last
// hop's status. Pace runs before every request but the first.
func TestGetFollowChainLength(t *testing.T) {
	_, conns, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if n == 0 {
			io.WriteString(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		w.Header().Set("Location", "/r/"+strconv.Itoa(n-1))
		w.WriteHeader(redirectStatuses[n%len(redirectStatuses)])
	}))
	base := "http://a.test:" + strconv.Itoa(int(ap.Port()))
	f := New(Config{})
	for n := 0; n <= 6; n++ {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			s := f.Open(ap.Addr(), int(ap.Port()))
			defer s.Close()
			paced := 0
			c, err := s.GetFollow(context.Background(), base+"/r/"+strconv.Itoa(n), Follow{Max: 5, Pace: func(context.Context) error {
				paced++
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			wantEnd, wantHops, wantStatus := ChainAnswered, n+1, 200
			if n > 5 {
				wantEnd, wantHops, wantStatus = ChainTooLong, 6, redirectStatuses[(n-5)%len(redirectStatuses)]
			}
			if c.End != wantEnd || len(c.Hops) != wantHops || c.Response.Status != wantStatus {
				t.Fatalf("end %s, %d hops, status %d; want %s, %d, %d: %+v", c.End, len(c.Hops), c.Response.Status, wantEnd, wantHops, wantStatus, c.Hops)
			}
			if paced != wantHops-1 {
				t.Errorf("paced %d times, want %d", paced, wantHops-1)
			}
			if wantEnd == ChainAnswered && (c.Final() != base+"/r/0" || !strings.Contains(string(c.Response.Body), "Disallow")) {
				t.Errorf("final %s, body %q", c.Final(), c.Response.Body)
			}
			if c.Hops[0].URL != base+"/r/"+strconv.Itoa(n) {
				t.Errorf("first hop %s", c.Hops[0].URL)
			}
		})
	}
	if got := conns.Load(); got != 7 {
		t.Errorf("server saw %d connections for 7 sessions on one address, want 7", got)
	}
}

// A chain goes across hosts and from http to https: each hop carries its
// own Host, reaches the address Follow.Addr gives (never a DNS look-up),
// and the https hop verifies the certificate against the crawl's CAs.
// Requests are never concurrent.
func TestGetFollowAcrossHostsAndSchemes(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	inFlight, overlap := 0, false
	track := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Host+r.URL.Path)
			inFlight++
			overlap = overlap || inFlight > 1
			mu.Unlock()
			defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
			h(w, r)
		}
	}
	tlsSrv := httptest.NewUnstartedServer(track(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "User-agent: *\nDisallow: /\n")
	}))
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	tlsAP := netip.MustParseAddrPort(tlsSrv.Listener.Addr().String())
	final := fmt.Sprintf("https://example.com:%d/robots.txt", tlsAP.Port())
	_, _, bAP := server(t, track(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, final, http.StatusPermanentRedirect)
	}))
	second := fmt.Sprintf("http://www.b.test:%d/robots.txt", bAP.Port())
	_, _, aAP := server(t, track(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, second, http.StatusMovedPermanently)
	}))
	start := fmt.Sprintf("http://a.test:%d/robots.txt", aAP.Port())
	roots := x509.NewCertPool()
	roots.AddCert(tlsSrv.Certificate())
	addrs := map[string]netip.Addr{"www.b.test": bAP.Addr(), "example.com": tlsAP.Addr()}
	s := New(Config{RootCAs: roots}).Open(aAP.Addr(), int(aAP.Port()))
	defer s.Close()
	c, err := s.GetFollow(context.Background(), start, Follow{Max: 5, Addr: func(h string) (netip.Addr, bool) {
		a, ok := addrs[h]
		return a, ok
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Hop{{start, 301}, {second, 308}, {final, 200}}
	if c.End != ChainAnswered || fmt.Sprint(c.Hops) != fmt.Sprint(want) || string(c.Response.Body) != "User-agent: *\nDisallow: /\n" {
		t.Fatalf("end %s hops %v body %q; want hops %v", c.End, c.Hops, c.Response.Body, want)
	}
	mu.Lock()
	got, overlapped := fmt.Sprint(seen), overlap
	mu.Unlock()
	if got != fmt.Sprintf("[a.test:%d/robots.txt www.b.test:%d/robots.txt example.com:%d/robots.txt]", aAP.Port(), bAP.Port(), tlsAP.Port()) || overlapped {
		t.Errorf("servers saw %v (overlapping: %v)", got, overlapped)
	}

	// Without the address of www.b.test the chain stops there and says
	// which host it needs.
	c, err = s.GetFollow(context.Background(), start, Follow{Max: 5})
	if err != nil || c.End != ChainUnresolved || c.Host != "www.b.test" || len(c.Hops) != 1 {
		t.Fatalf("no address: %v end %s host %q hops %v", err, c.End, c.Host, c.Hops)
	}
}

// Loops, targets that are no web URL and failed hops end the chain with
// what happened; a cancelled Pace is the chain's error.
func TestGetFollowEnds(t *testing.T) {
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/loop1":
			w.Header().Set("Location", "/loop2")
			w.WriteHeader(302)
		case "/loop2":
			// The same URL written otherwise is the same URL.
			w.Header().Set("Location", "http://A.test"+strings.TrimPrefix(r.Host, "a.test")+"/loop1#x")
			w.WriteHeader(307)
		case "/ftp":
			w.Header().Set("Location", "ftp://a.test/robots.txt")
			w.WriteHeader(301)
		case "/noloc":
			w.WriteHeader(302)
		case "/multiple":
			w.Header().Set("Location", "/loop1")
			w.WriteHeader(300)
		case "/stall":
			<-r.Context().Done()
		case "/to-stall":
			w.Header().Set("Location", "/stall")
			w.WriteHeader(301)
		}
	}))
	base := "http://a.test:" + strconv.Itoa(int(ap.Port()))
	f := New(Config{HeaderTimeout: 200 * time.Millisecond})
	errPace := errors.New("stopped")
	for _, tc := range []struct {
		path   string
		pace   error
		end    ChainEnd
		hops   int
		status int // of the last hop
		kind   ErrorKind
	}{
		{"/loop1", nil, ChainLoop, 2, 307, ""},
		{"/ftp", nil, ChainBadTarget, 1, 301, ""},
		{"/noloc", nil, ChainAnswered, 1, 302, ""},
		{"/multiple", nil, ChainAnswered, 1, 300, ""},
		{"/to-stall", nil, ChainFailed, 2, 0, KindTimeout},
		{"/to-stall", errPace, ChainFailed, 1, 301, ""},
	} {
		t.Run(tc.path, func(t *testing.T) {
			s := f.Open(ap.Addr(), int(ap.Port()))
			defer s.Close()
			c, err := s.GetFollow(context.Background(), base+tc.path, Follow{Max: 5, Pace: func(context.Context) error { return tc.pace }})
			if c.End != tc.end || len(c.Hops) != tc.hops || c.Hops[len(c.Hops)-1].Status != tc.status {
				t.Fatalf("end %s hops %v; want %s, %d hops, last %d", c.End, c.Hops, tc.end, tc.hops, tc.status)
			}
			var fe *Error
			switch {
			case tc.kind != "" && (!errors.As(err, &fe) || fe.Kind != tc.kind):
				t.Errorf("err %v, want kind %s", err, tc.kind)
			case tc.pace != nil && !errors.Is(err, tc.pace):
				t.Errorf("err %v, want %v", err, tc.pace)
			case tc.kind == "" && tc.pace == nil && err != nil:
				t.Errorf("err %v", err)
			}
		})
	}
}
