package visit

import (
	"context"
	"crypto/x509"
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

	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/robots"
	"lidi/engine/scope"
)

// robotsSite is a loopback server whose /robots.txt is served by h and
// whose pages answer 200; it records every request, and whether two
// overlapped.
type robotsSite struct {
	ap   netip.AddrPort
	cert *x509.Certificate // of an HTTPS site

	mu       sync.Mutex
	requests []string
	starts   []time.Time
	inFlight int
	overlap  bool
}

func newRobotsSite(t *testing.T, tls bool, h http.HandlerFunc) *robotsSite {
	t.Helper()
	rs := &robotsSite{}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		rs.requests = append(rs.requests, r.Host+r.URL.Path)
		rs.starts = append(rs.starts, time.Now())
		rs.inFlight++
		rs.overlap = rs.overlap || rs.inFlight > 1
		rs.mu.Unlock()
		defer func() { rs.mu.Lock(); rs.inFlight--; rs.mu.Unlock() }()
		if r.URL.Path == "/robots.txt" || strings.HasPrefix(r.URL.Path, "/r/") {
			h(w, r)
			return
		}
		io.WriteString(w, "<html>page</html>")
	}))
	if tls {
		ts.StartTLS()
		rs.cert = ts.Certificate()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	rs.ap = netip.MustParseAddrPort(ts.Listener.Addr().String())
	return rs
}

func (rs *robotsSite) seen() ([]string, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return append([]string(nil), rs.requests...), rs.overlap
}

// testRobotConfig is a robot's configuration for a crawl of the site at
// key, with the engine's defaults where they matter here.
func testRobotConfig(key string) Config {
	return Config{
		UserAgent:   "lidi",
		Scope:       scope.Config{Seeds: []string{key + "/"}},
		MaxDelay:    time.Minute,
		RobotsRetry: 10 * time.Minute,
		BackoffMax:  time.Hour,
	}
}

const robotsBody = "User-agent: *\nDisallow: /private\n"

// runRobotsLease runs a lease of two pages (one robots.txt disallows) on
// host, whose robots.txt is not known yet, and returns its end.
func runRobotsLease(t *testing.T, host string, rs *robotsSite, addrs map[string]netip.Addr, roots *x509.CertPool, fc fetch.Config) (*LeaseEnd, []*PageResult) {
	t.Helper()
	key := "http://" + host + ":" + strconv.Itoa(int(rs.ap.Port()))
	cfg := testRobotConfig(key)
	cfg.Fetch = fc
	cfg.Fetch.RootCAs = roots
	robot, err := NewRobot(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	l := &Lease{ID: 1, Site: 1, Key: key, Host: host, Addr: rs.ap.Addr(), Port: int(rs.ap.Port()),
		RobotsAddrs: addrs, Delay: 20 * time.Millisecond, NotBefore: now, Deadline: now.Add(time.Minute),
		URLs: []record.QueuedURL{{ID: 1, URL: key + "/private/x"}, {ID: 2, URL: key + "/public"}}}
	var end *LeaseEnd
	var pages []*PageResult
	robot.Run(context.Background(), l, func(r Result) {
		if r.Page != nil {
			pages = append(pages, r.Page)
		}
		if r.End != nil {
			end = r.End
		}
	})
	return end, pages
}

// robots.txt behind 1 to 6 redirects of every kind on its own host: up to
// five are followed (RFC 9309 2.3.1.2) and its rules obeyed, the chain kept
// in the record; at six the file is "unavailable" and everything allowed.
// The redirects are requests of the visit like any: one at a time, the
// site's delay apart.
func TestRobotsRedirectChain(t *testing.T) {
	statuses := []int{301, 302, 303, 307, 308}
	for n := 1; n <= 6; n++ {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			rs := newRobotsSite(t, false, func(w http.ResponseWriter, r *http.Request) {
				// /robots.txt -> /r/n-1 -> ... -> /r/0, which answers.
				left := n
				if r.URL.Path != "/robots.txt" {
					left, _ = strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
				}
				if left == 0 {
					io.WriteString(w, robotsBody)
					return
				}
				w.Header().Set("Location", "/r/"+strconv.Itoa(left-1))
				w.WriteHeader(statuses[left%len(statuses)])
			})
			end, pages := runRobotsLease(t, "site.test", rs, nil, nil, fetch.Config{})
			rf := end.Robots
			if rf == nil || len(rf.Redirects) != min(n, robots.MaxRedirects) || end.BackedOff {
				t.Fatalf("robots file %+v, backed off %v", rf, end.BackedOff)
			}
			key := "http://site.test:" + strconv.Itoa(int(rs.ap.Port()))
			if rf.Redirects[0].URL != key+"/robots.txt" || rf.Redirects[0].Status != statuses[n%len(statuses)] {
				t.Errorf("first redirect %+v", rf.Redirects[0])
			}
			reqs, overlap := rs.seen()
			if overlap {
				t.Errorf("requests overlapped: %v", reqs)
			}
			rs.mu.Lock()
			for i := 1; i < len(rs.starts); i++ {
				if gap := rs.starts[i].Sub(rs.starts[i-1]); gap < 20*time.Millisecond {
					t.Errorf("request %d came %s after the one before, within the delay", i, gap)
				}
			}
			rs.mu.Unlock()
			if n <= robots.MaxRedirects {
				// Followed: the rules hold, /private/x is skipped.
				if rf.Status != 200 || rf.URL != key+"/r/0" || rf.End != fetch.ChainAnswered || string(rf.Body) != robotsBody {
					t.Errorf("status %d url %s end %s body %q", rf.Status, rf.URL, rf.End, rf.Body)
				}
				if len(end.Skips) != 1 || end.Skips[0].URL != 1 || len(pages) != 1 || pages[0].URL != key+"/public" {
					t.Errorf("skips %+v, pages %d: want /private/x skipped, /public fetched", end.Skips, len(pages))
				}
				if len(reqs) != n+2 {
					t.Errorf("%d requests, want %d redirects, robots.txt and /public: %v", len(reqs), n, reqs)
				}
				return
			}
			// Too many: unavailable, everything allowed.
			if rf.End != fetch.ChainTooLong || rf.Rules().Kind() != robots.KindUnavailable || len(pages) != 2 || len(end.Skips) != 0 {
				t.Errorf("end %s kind %s, %d pages, skips %v: want too long, unavailable, both pages", rf.End, rf.Rules().Kind(), len(pages), end.Skips)
			}
		})
	}
}

// robots.txt redirected from http://site.test to http://www.other.test and
// on to https://example.com (the certificate's host, checked against the
// CA of the HTTPS tests). The first visit meets www.other.test without its
// address: it fetches nothing and names the host for the loop to resolve.
// The next visit, with the addresses, follows the chain to its end.
func TestRobotsRedirectAcrossHosts(t *testing.T) {
	final := newRobotsSite(t, true, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, robotsBody) })
	finalURL := fmt.Sprintf("https://example.com:%d/robots.txt", final.ap.Port())
	other := newRobotsSite(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, finalURL, http.StatusMovedPermanently)
	})
	otherURL := fmt.Sprintf("http://www.other.test:%d/robots.txt", other.ap.Port())
	first := newRobotsSite(t, false, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL, http.StatusFound)
	})
	roots := x509.NewCertPool()
	roots.AddCert(final.cert)

	end, pages := runRobotsLease(t, "site.test", first, nil, roots, fetch.Config{})
	if end.Robots == nil || end.Robots.Unresolved != "www.other.test" || len(pages) != 0 || len(end.Returned) != 2 || end.Failure != FailureRobotsHost {
		t.Fatalf("without the address: %+v, %d pages, returned %v, failure %s", end.Robots, len(pages), end.Returned, end.Failure)
	}
	if end.BackedOff || end.Robots.Rules().Allowed("lidi", "/public") {
		t.Errorf("an unresolved chain must disallow and not count as the site's failure: %+v", end)
	}

	addrs := map[string]netip.Addr{"www.other.test": other.ap.Addr(), "example.com": final.ap.Addr()}
	end, pages = runRobotsLease(t, "site.test", first, addrs, roots, fetch.Config{})
	rf := end.Robots
	key := "http://site.test:" + strconv.Itoa(int(first.ap.Port()))
	want := []fetch.Hop{{URL: key + "/robots.txt", Status: 302}, {URL: otherURL, Status: 301}}
	if rf == nil || rf.Status != 200 || rf.URL != finalURL || fmt.Sprint(rf.Redirects) != fmt.Sprint(want) {
		t.Fatalf("robots file %+v; want %s after %v", rf, finalURL, want)
	}
	if len(end.Skips) != 1 || len(pages) != 1 {
		t.Errorf("skips %v, %d pages: the final file's rules must hold", end.Skips, len(pages))
	}
	for _, s := range []*robotsSite{first, other, final} {
		if reqs, overlap := s.seen(); overlap {
			t.Errorf("overlapping requests: %v", reqs)
		}
	}
}

// robots.txt that redirects in a loop is unavailable (RFC 9309: allow);
// one answering 500, 503 or 429, or too slow to answer, is unreachable:
// nothing is fetched, the pages stay queued and the file is asked for
// again after robots_txt.retry.
func TestRobotsUnreachable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		h       http.HandlerFunc
		status  int
		kind    robots.Kind
		failure FailureKind
	}{
		{"loop", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, "/r/a", http.StatusMovedPermanently)
				return
			}
			http.Redirect(w, r, "/robots.txt", http.StatusTemporaryRedirect)
		}, 307, robots.KindUnavailable, FailureNone},
		{"500", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }, 500, robots.KindServerError, FailureNone},
		{"503", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }, 503, robots.KindServerError, FailureNone},
		{"429", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) }, 429, robots.KindServerError, FailureNone},
		{"timeout", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }, -1, robots.KindUnreachable, FetchFailure(fetch.KindTimeout)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRobotsSite(t, false, tc.h)
			start := time.Now()
			end, pages := runRobotsLease(t, "site.test", rs, nil, nil, fetch.Config{HeaderTimeout: 300 * time.Millisecond})
			rf := end.Robots
			if rf == nil || rf.Status != tc.status || rf.Rules().Kind() != tc.kind {
				t.Fatalf("robots file %+v (%s), want status %d, %s", rf, rf.Rules().Kind(), tc.status, tc.kind)
			}
			if tc.kind == robots.KindUnavailable {
				if len(pages) != 2 || rf.End != fetch.ChainLoop {
					t.Errorf("%d pages, end %s: a loop allows everything", len(pages), rf.End)
				}
				return
			}
			if len(pages) != 0 || len(end.Returned) != 2 || !end.BackedOff || end.Next.Before(start.Add(testRobotConfig("").RobotsRetry)) {
				t.Errorf("%d pages, returned %v, backed off %v, next %s: want none, both, true, after robots_txt.retry", len(pages), end.Returned, end.BackedOff, end.Next)
			}
			if tc.failure != FailureNone && end.Failure != tc.failure {
				t.Errorf("failure %q, want %q", end.Failure, tc.failure)
			}
		})
	}
}

// A sitemap scope is written by its name, and a wrong name says what to
// write.
func TestSitemapScopeText(t *testing.T) {
	for _, s := range []SitemapScope{SitemapsSeeds, SitemapsAll, SitemapsOff} {
		b, err := s.MarshalText()
		var back SitemapScope
		if err != nil || back.UnmarshalText(b) != nil || back != s {
			t.Errorf("%d: %q %v, back %d", s, b, err, back)
		}
	}
	var s SitemapScope
	if err := s.UnmarshalText([]byte("some")); err == nil || err.Error() != "write seeds, all or off" {
		t.Errorf("UnmarshalText(some) = %v", err)
	}
}
