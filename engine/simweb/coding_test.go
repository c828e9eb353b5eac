package simweb

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"testing"
)

// HTML goes gzip-coded to a GET that accepts gzip (RFC 9110's
// Accept-Encoding, weights included), with Vary: Accept-Encoding; HEAD,
// robots.txt (text/plain), a request that does not accept gzip and a
// server set to identity get identity. Every response's Content-Length is
// the bytes sent, and a coded body decodes to the page.
func TestGzipCoding(t *testing.T) {
	w := testWeb(t, smallWeb)
	page := w.Seeds(1)[0]
	robotsSite := -1 // a site whose robots.txt is a file (text/plain)
	for i := range w.sites {
		if w.sites[i].robots.status == 200 {
			robotsSite = i
			break
		}
	}
	if robotsSite < 0 {
		t.Fatal("no site has a robots.txt")
	}
	for _, identity := range []bool{false, true} {
		s := startServer(t, w, ServerConfig{Identity: identity})
		site := w.Site(w.Page(page).Site)
		c := addrClient(site.Addr, s.Port())
		c.Transport.(*http.Transport).DisableCompression = true // the test sets Accept-Encoding
		for _, tc := range []struct {
			method, path, accept string
			gzip                 bool // when the server has compression on
		}{
			{"GET", "", "gzip", true},
			{"GET", "", "gzip, deflate, br", true},
			{"GET", "", "br;q=1.0, GZIP;q=0.5", true},
			{"GET", "", "x-gzip", true},
			{"GET", "", "*", true},
			{"GET", "", "", false},
			{"GET", "", "identity", false},
			{"GET", "", "br", false},
			{"GET", "", "gzip;q=0", false},
			{"GET", "", "gzip;q=0.000, *", false},
			{"GET", "", "*;q=0", false},
			{"HEAD", "", "gzip", false},
			{"GET", "/robots.txt", "gzip", false},
		} {
			u, c := s.URL(page), c
			if tc.path != "" {
				rs := w.Site(robotsSite)
				u, c = "http://"+rs.Host+":"+strconv.Itoa(s.Port())+tc.path, addrClient(rs.Addr, s.Port())
				c.Transport.(*http.Transport).DisableCompression = true
			}
			req, _ := http.NewRequest(tc.method, u, nil)
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				t.Fatalf("%s %s: %v %s", tc.method, u, err, resp.Status)
			}
			name := tc.method + " " + tc.path + " Accept-Encoding " + strconv.Quote(tc.accept) + " identity " + strconv.FormatBool(identity)
			wantGzip := tc.gzip && !identity
			if got := resp.Header.Get("Content-Encoding") == "gzip"; got != wantGzip {
				t.Errorf("%s: Content-Encoding %q, want gzip %v", name, resp.Header.Get("Content-Encoding"), wantGzip)
			}
			if got, want := resp.Header.Get("Vary"), map[bool]string{true: "Accept-Encoding"}[!identity && tc.path == ""]; got != want {
				t.Errorf("%s: Vary %q, want %q", name, got, want)
			}
			if tc.method == "HEAD" || tc.path != "" {
				continue
			}
			if resp.ContentLength != int64(len(raw)) {
				t.Errorf("%s: Content-Length %d for %d bytes", name, resp.ContentLength, len(raw))
			}
			body := raw
			if wantGzip {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if len(raw) >= len(body) {
					t.Errorf("%s: %d bytes sent for a page of %d", name, len(raw), len(body))
				}
			}
			if !bytes.Equal(body, s.Render(page)) {
				t.Errorf("%s: the body is not the page", name)
			}
		}
	}
}
