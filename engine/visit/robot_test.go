package visit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/urlnorm"
	"lidi/engine/visit"
)

// A robot honours the robots meta tags that speak to it: <meta
// name="robots"> and the one named by its product token (<meta
// name="lidi">, as Googlebot honours <meta name="googlebot">), and no
// other crawler's.
func TestRobotHonoursMetaTagsAddressedToIt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path         string
		meta         string // the <meta> element of the page
		noIndex      bool
		linksVisible bool
	}{
		{"/none", ``, false, true},
		{"/robots", `<meta name="robots" content="noindex, nofollow">`, true, false},
		{"/lidi", `<meta name="lidi" content="noindex,nofollow">`, true, false},
		{"/lidi-upper", `<meta name=" LIDI " content="nofollow">`, false, false},
		{"/lidi-noindex", `<meta name="lidi" content="noindex">`, true, true},
		{"/both", `<meta name="robots" content="noindex"><meta name="lidi" content="nofollow">`, true, false},
		{"/googlebot", `<meta name="googlebot" content="noindex, nofollow">`, false, true},
		{"/lidibot", `<meta name="lidibot" content="noindex, nofollow">`, false, true},
	}
	pages := map[string]string{}
	for _, tt := range tests {
		pages[tt.path] = `<!doctype html><html><head><title>t</title>` + tt.meta +
			`</head><body><a href="/a">a</a> <a href="/b">b</a></body></html>`
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()

	cfg := engine.Defaults()
	cfg.Seeds = []string{srv.URL + "/"}
	cfg.UserAgent = "lidi/0.1 (+https://example.org/lidi)"
	robot, err := visit.NewRobot(cfg.Robot(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, tt := range tests {
		paths = append(paths, tt.path)
	}
	lease := leaseOn(t, srv, paths...)
	got := map[string]*visit.PageResult{}
	var end *visit.LeaseEnd
	robot.Run(context.Background(), lease, func(r visit.Result) {
		if r.Page != nil {
			got[r.Page.URL] = r.Page
		}
		if r.End != nil {
			end = r.End
		}
	})
	if end == nil || end.Fetched != len(tests) {
		t.Fatalf("lease ended %+v, want %d pages fetched", end, len(tests))
	}
	for _, tt := range tests {
		p := got[srv.URL+tt.path]
		if p == nil {
			t.Errorf("%s: no page reported", tt.path)
			continue
		}
		if p.Record.NoIndex != tt.noIndex {
			t.Errorf("%s (%s): NoIndex %v, want %v", tt.path, tt.meta, p.Record.NoIndex, tt.noIndex)
		}
		if visible := len(p.Links) > 0; visible != tt.linksVisible || !visible && p.Skipped.NoFollow != 2 {
			t.Errorf("%s (%s): %d links reported, %d skipped for nofollow; want them followed: %v", tt.path, tt.meta,
				len(p.Links), p.Skipped.NoFollow, tt.linksVisible)
		}
	}
}

// leaseOn returns a lease of srv's pages at paths, in that order, on a
// site without robots.txt (404).
func leaseOn(t *testing.T, srv *httptest.Server, paths ...string) *visit.Lease {
	t.Helper()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	l := &visit.Lease{ID: 1, Site: 1, Key: srv.URL, Host: u.Hostname(), Addr: netip.MustParseAddr(u.Hostname()), Port: port,
		Robots: &visit.RobotsFile{Status: 404}, NotBefore: now, Deadline: now.Add(time.Minute)}
	for i, p := range paths {
		link := srv.URL + p
		l.URLs = append(l.URLs, record.QueuedURL{ID: urlnorm.Fingerprint(link), URL: link, Seq: int64(i)})
	}
	return l
}
