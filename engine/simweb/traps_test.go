package simweb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"flag"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// trapWeb has every kind of trap on three sites, both styles of directory
// mirror, and two kinds of session id; trapWeb2 the other two kinds.
// crawlWeb is a smaller web with traps for the tests that crawl all of it.
var (
	trapWeb  = Options{Seed: 1, Sites: 60, Pages: 4000, Traps: 3}
	trapWeb2 = Options{Seed: 2, Sites: 60, Pages: 4000, Traps: 3}
	crawlWeb = Options{Seed: 3, Sites: 40, Pages: 1500, Traps: 2}
)

func instances(w *Web, k TrapKind) []TrapInstance {
	var out []TrapInstance
	for _, in := range w.Traps() {
		if in.Kind == k {
			out = append(out, in)
		}
	}
	return out
}

// hrefs returns the hrefs of a page's anchors, entities decoded.
func hrefs(body []byte) []string {
	var out []string
	for _, m := range hrefRE.FindAllSubmatch(body, -1) {
		out = append(out, html.UnescapeString(string(m[1])))
	}
	return out
}

func resolveRef(t testing.TB, base, href string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(href)
	if err != nil {
		t.Fatalf("href %q: %v", href, err)
	}
	return b.ResolveReference(r).String()
}

func pathOf(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.EscapedPath()
}

// withPort turns a URL without port (as Traps and Truth give them) into one
// on the server's port.
func withPort(s *Server, raw string) string {
	u, _ := url.Parse(raw)
	u.Host += ":" + strconv.Itoa(s.Port())
	return u.String()
}

// serve answers a URL through the server's handler, without the network.
func serve(s *Server, method, u string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(method, u, nil))
	return rec
}

func TestTrapsLaidOut(t *testing.T) {
	w := testWeb(t, trapWeb)
	st := w.Stats()
	sites := map[TrapKind]map[int]bool{}
	for _, in := range w.Traps() {
		if sites[in.Kind] == nil {
			sites[in.Kind] = map[int]bool{}
		}
		sites[in.Kind][in.Site] = true
		if !strings.HasPrefix(in.URL, "http://") || in.Detail == "" {
			t.Errorf("instance %+v", in)
		}
	}
	for _, k := range TrapKinds() {
		if len(sites[k]) != trapWeb.Traps {
			t.Errorf("%v on %d sites, want %d", k, len(sites[k]), trapWeb.Traps)
		}
		if st.Traps[k] != len(instances(w, k)) {
			t.Errorf("Stats counts %d %v, Traps lists %d", st.Traps[k], k, len(instances(w, k)))
		}
	}
	trapped := map[int]bool{}
	for _, in := range w.Traps() {
		trapped[in.Site] = true
	}
	if st.TrapSites != len(trapped) {
		t.Errorf("TrapSites %d, want %d", st.TrapSites, len(trapped))
	}
	// Trapped sites can be crawled entirely and quickly by a polite crawler.
	for s := range trapped {
		si := w.Site(s)
		if !si.Robots.open() || si.CrawlDelay != 0 {
			t.Errorf("site %d with traps has robots %v, crawl delay %v", s, si.Robots, si.CrawlDelay)
		}
		for p := si.HomePage; p < si.HomePage+si.Pages; p++ {
			if w.Page(p).Disallowed {
				t.Errorf("site %d with traps forbids page %d", s, p)
			}
		}
	}
	var banner, rename bool
	for _, in := range instances(w, TrapDirMirror) {
		st := w.traps.sites[in.Site]
		banner = banner || st.mirrorBanner
		rename = rename || !st.mirrorBanner
	}
	if !banner || !rename {
		t.Errorf("directory mirrors: banner style %v, renamed style %v; want both", banner, rename)
	}
}

// TestTrapsServed fetches every kind of trap over HTTP, through the
// simulated DNS, and checks what is served against Truth.
func TestTrapsServed(t *testing.T) {
	w := testWeb(t, trapWeb)
	s := startServer(t, w, ServerConfig{})
	c := resolvingClient(s, 4)
	fetch := func(t *testing.T, u string) (*http.Response, []byte) {
		t.Helper()
		resp, body := get(t, c, u)
		tr := w.Truth(u)
		if resp.StatusCode != tr.Status || resp.Header.Get("Content-Type") != tr.ContentType {
			t.Fatalf("GET %s: %s %q; Truth says %d %q", u, resp.Status, resp.Header.Get("Content-Type"), tr.Status, tr.ContentType)
		}
		return resp, body
	}
	body200 := func(t *testing.T, u string) []byte {
		t.Helper()
		resp, body := fetch(t, u)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s", u, resp.Status)
		}
		return body
	}
	checkCopy := func(t *testing.T, u string, kind TrapKind, page int) {
		t.Helper()
		tr := w.Truth(u)
		if tr.Content != PageContent(page) || tr.Page != page || !tr.Genuine || tr.Trap != kind || tr.Canonical != w.URL(page) {
			t.Errorf("Truth(%s) = %+v; want a %v copy of page %d", u, tr, kind, page)
		}
		if orig := w.Truth(s.URL(page)); orig.Content != tr.Content || orig.Trap != TrapNone {
			t.Errorf("original %s: %+v", s.URL(page), orig)
		}
	}

	t.Run("host-mirror", func(t *testing.T) {
		for _, in := range instances(w, TrapHostMirror) {
			alias := strings.TrimSuffix(strings.TrimPrefix(in.URL, "http://"), "/")
			si := w.Site(in.Site)
			if id, ok := w.SiteByHost(alias); !ok || id != in.Site {
				t.Fatalf("alias %s names site %d, %v", alias, id, ok)
			}
			for _, p := range []int{si.HomePage, si.HomePage + si.Pages - 1} {
				u := withPort(s, "http://"+alias+w.Page(p).Path)
				if !bytes.Equal(body200(t, u), body200(t, s.URL(p))) {
					t.Errorf("%s differs from %s", u, s.URL(p))
				}
				checkCopy(t, u, TrapHostMirror, p)
			}
			linked := false
			for _, seed := range w.Seeds(trapHomeHops) {
				linked = linked || bytes.Contains(s.Render(seed), []byte(`href="`+withPort(s, "http://"+alias+"/")+`"`))
			}
			if !linked {
				t.Errorf("no popular home page links to %s", alias)
			}
			wit := s.Witness()
			if wit.Hosts[alias].Requests < 2 || wit.DNS.ByName[alias] < 1 {
				t.Errorf("witness for %s: %+v, %d DNS queries", alias, wit.Hosts[alias], wit.DNS.ByName[alias])
			}
		}
	})

	t.Run("dir-mirror", func(t *testing.T) {
		bannerRE := regexp.MustCompile(`<p class="mirror">[^<]*</p>\n`)
		for _, in := range instances(w, TrapDirMirror) {
			from, to := pathOf(t, in.URL), pathOf(t, in.Original)
			si := w.Site(in.Site)
			if !strings.Contains(string(s.Render(si.HomePage)), `href="`+from+`"`) {
				t.Errorf("home page of site %d does not link to %s", in.Site, from)
			}
			checked := 0
			for p := si.HomePage; p < si.HomePage+si.Pages && checked < 6; p++ {
				path := w.Page(p).Path
				if !strings.HasPrefix(path, to) {
					continue
				}
				checked++
				u := withPort(s, "http://"+si.Host+from+path[len(to):])
				copyBody, orig := body200(t, u), body200(t, s.URL(p))
				if w.traps.sites[in.Site].mirrorBanner {
					if bytes.Equal(copyBody, orig) || !bytes.Equal(bannerRE.ReplaceAll(copyBody, nil), orig) {
						t.Errorf("%s is not %s with a banner line", u, s.URL(p))
					}
				} else if !bytes.Equal(copyBody, orig) {
					t.Errorf("%s differs from %s", u, s.URL(p))
				}
				checkCopy(t, u, TrapDirMirror, p)
			}
			if checked == 0 {
				t.Errorf("no page under %s", to)
			}
		}
	})

	t.Run("loop", func(t *testing.T) {
		for _, in := range instances(w, TrapLoop) {
			si := w.Site(in.Site)
			dir := pathOf(t, in.Original)
			seg := strings.TrimSuffix(pathOf(t, in.URL)[len(dir):], "/")
			d, ok := w.Lookup(si.Host, dir)
			if !ok {
				t.Fatalf("loop directory %s not a page", dir)
			}
			orig := body200(t, s.URL(d))
			if !strings.Contains(string(orig), `href="`+seg+`/"`) && !strings.Contains(string(orig), `href="./`+seg+`/"`) {
				t.Errorf("%s does not link to %s/", dir, seg)
			}
			u := withPort(s, "http://"+si.Host+dir+strings.Repeat(seg+"/", 20))
			if !bytes.Equal(body200(t, u), orig) {
				t.Errorf("loop at depth 20 differs from %s", dir)
			}
			checkCopy(t, u, TrapLoop, d)
			// Its relative links recurse: the loop link of the copy leads
			// one level deeper, to the same page again.
			for _, h := range hrefs(orig) {
				if strings.TrimPrefix(h, "./") == seg+"/" {
					if next := resolveRef(t, u, h); w.Truth(next).Content != PageContent(d) || !strings.HasSuffix(next, strings.Repeat(seg+"/", 21)) {
						t.Errorf("loop link of %s leads to %s", u, next)
					}
				}
			}
			for p := si.HomePage; p < si.HomePage+si.Pages; p++ {
				if pg := w.Page(p); pg.Parent == d {
					u := withPort(s, "http://"+si.Host+dir+strings.Repeat(seg+"/", 3)+pg.Path[len(dir):])
					if !bytes.Equal(body200(t, u), body200(t, s.URL(p))) {
						t.Errorf("%s differs from %s", u, s.URL(p))
					}
					checkCopy(t, u, TrapLoop, p)
					break
				}
			}
		}
	})

	t.Run("calendar", func(t *testing.T) {
		for _, in := range instances(w, TrapCalendar) {
			st := w.traps.sites[in.Site]
			si := w.Site(in.Site)
			entry := withPort(s, in.URL)
			if !strings.Contains(string(s.Render(si.HomePage)), `href="`+pathOf(t, in.URL)+`"`) {
				t.Errorf("home page does not link to the calendar %s", in.URL)
			}
			if tr := w.Truth(entry); !tr.Genuine || tr.Trap != TrapCalendar || tr.Page != -1 {
				t.Errorf("entry month %s: %+v", entry, tr)
			}
			far := withPort(s, "http://"+si.Host+st.calRoot+"2100/01/")
			body := body200(t, far)
			if !strings.Contains(string(body), "No events are scheduled for January 2100") {
				t.Errorf("January 2100: %s", body)
			}
			if tr := w.Truth(far); tr.Genuine || tr.Trap != TrapCalendar || tr.Content == 0 || tr.Content == w.Truth(entry).Content {
				t.Errorf("January 2100: %+v", tr)
			}
			// Empty months are near-identical: they differ in month names.
			other := body200(t, withPort(s, "http://"+si.Host+st.calRoot+"2100/02/"))
			if d := len(body) - len(other); d < -20 || d > 20 || bytes.Equal(body, other) {
				t.Errorf("empty months differ by %d bytes", d)
			}
			// Next, next, next... from the entry: genuine months, then empty
			// ones, forever.
			u, genuine, junk := entry, 0, 0
			for range 48 {
				b := body200(t, u)
				tr := w.Truth(u)
				m := int32(tr.Content & 0xffffffff)
				if tr.Genuine != (m >= st.calFirst && m <= st.calLast) || tr.Genuine != !strings.Contains(string(b), "No events") {
					t.Fatalf("%s: %+v, month %s, range %s..%s", u, tr, monthName(m), monthName(st.calFirst), monthName(st.calLast))
				}
				if tr.Genuine {
					genuine++
				} else {
					junk++
				}
				hs := hrefs(b)
				u = resolveRef(t, u, hs[len(hs)-1]) // the last link is the next month
				if w.Truth(u).Content&0xffffffff != uint64(m+1) {
					t.Fatalf("next of %s is %s", monthName(m), u)
				}
			}
			if genuine == 0 || junk == 0 {
				t.Errorf("48 months from the entry: %d genuine, %d empty", genuine, junk)
			}
			for _, edge := range []struct {
				path string
				want string
			}{{"0001/01/", "February 1 &raquo;"}, {"9999/12/", "&laquo; November 9999"}} {
				b := body200(t, withPort(s, "http://"+si.Host+st.calRoot+edge.path))
				if n := len(hrefs(b)); n != 2 || !strings.Contains(string(b), edge.want) {
					t.Errorf("%s has %d links", edge.path, n)
				}
			}
			fetch(t, withPort(s, "http://"+si.Host+st.calRoot+"2026/13/"))
			if resp, _ := fetch(t, withPort(s, "http://"+si.Host+st.calRoot+"2026/11")); resp.StatusCode != 301 {
				t.Errorf("month without slash: %s", resp.Status)
			}
		}
	})

	t.Run("session-id", func(t *testing.T) {
		for _, in := range instances(w, TrapSessionID) {
			testSessionSite(t, w, s, in.Site, body200)
		}
	})

	t.Run("tracking", func(t *testing.T) {
		tracking := map[int]bool{}
		for _, in := range instances(w, TrapTracking) {
			tracking[in.Site] = true
		}
		var utm, ref int
		for p := range w.NumPages() {
			for _, h := range hrefs(s.Render(p)) {
				if !strings.Contains(h, "utm_source=") && !strings.Contains(h, "ref=") {
					continue
				}
				u := resolveRef(t, s.URL(p), h)
				tr := w.Truth(u)
				if !tracking[w.Page(tr.Page).Site] || !tr.Traps.Has(TrapTracking) || !tr.Genuine || tr.Page < 0 {
					t.Fatalf("link %s: %+v", u, tr)
				}
				if tr.Trap != TrapTracking && tr.Trap != TrapSessionID {
					t.Errorf("link %s: trap %v", u, tr.Trap)
				}
				if utm+ref < 20 && !bytes.Equal(body200(t, u), body200(t, s.URL(tr.Page))) {
					t.Errorf("%s differs from %s", u, s.URL(tr.Page))
				}
				if strings.Contains(h, "utm_source=") {
					if w.Page(p).Site == w.Page(tr.Page).Site {
						t.Errorf("utm parameters on an internal link %s", u)
					}
					utm++
				} else {
					ref++
				}
			}
		}
		if utm == 0 || ref == 0 {
			t.Errorf("%d links with utm_source, %d with ref", utm, ref)
		}
	})

	t.Run("soft-404", func(t *testing.T) {
		soft := map[int]bool{}
		for _, in := range instances(w, TrapSoft404) {
			soft[in.Site] = true
			si := w.Site(in.Site)
			before := s.Witness().Hosts[si.Host].NotFound
			u := withPort(s, "http://"+si.Host+"/no/such/page-zz.html")
			body := body200(t, u)
			if !strings.Contains(string(body), "Page not found") || !strings.Contains(string(body), "/no/such/page-zz.html") {
				t.Errorf("soft 404: %s", body)
			}
			tr := w.Truth(u)
			if tr.Genuine || tr.Trap != TrapSoft404 || tr.Status != 200 || tr.Content == 0 {
				t.Errorf("Truth(%s) = %+v", u, tr)
			}
			if got := s.Witness().Hosts[si.Host].NotFound; got != before {
				t.Errorf("a soft 404 counted as a 404")
			}
			// Broken links on the site lead there.
			broken := 0
			for p := si.HomePage; p < si.HomePage+si.Pages; p++ {
				for _, h := range hrefs(s.Render(p)) {
					if bu := resolveRef(t, s.URL(p), h); w.Truth(bu).Trap == TrapSoft404 {
						broken++
						if b := body200(t, bu); !strings.Contains(string(b), "Page not found") {
							t.Errorf("broken link %s: %s", bu, b)
						}
					}
				}
			}
			if broken == 0 {
				t.Errorf("site %d has no broken links", in.Site)
			}
		}
		for i := range w.NumSites() {
			if !soft[i] {
				u := s.URL(w.Site(i).HomePage) + "no/such/page-zz.html"
				if resp, _ := fetch(t, u); resp.StatusCode != 404 {
					t.Errorf("site %d without soft 404s: %s", i, resp.Status)
				}
				break
			}
		}
	})

	t.Run("print-copy", func(t *testing.T) {
		for _, in := range instances(w, TrapPrintCopy) {
			si := w.Site(in.Site)
			for p := si.HomePage; p < si.HomePage+min(si.Pages, 5); p++ {
				orig := body200(t, s.URL(p))
				path := w.Page(p).Path
				if !strings.Contains(string(orig), `href="/print`+path+`"`) {
					t.Errorf("page %s does not link to its print copy", path)
				}
				u := withPort(s, "http://"+si.Host+"/print"+path)
				pr := body200(t, u)
				if !strings.Contains(string(pr), `<p class="printed">Printed on `) || !strings.Contains(string(pr), "Printer-friendly version of") {
					t.Errorf("print copy %s lacks its header or date line", u)
				}
				// The same text: every paragraph of the page, byte for byte.
				paras := paragraphRE.FindAll(orig, -1)
				if len(paras) == 0 {
					t.Fatalf("page %s has no paragraphs", path)
				}
				for _, para := range paras {
					if !bytes.Contains(pr, para) {
						t.Fatalf("print copy %s lacks paragraph %.80q", u, para)
					}
				}
				checkCopy(t, u, TrapPrintCopy, p)
			}
			fetch(t, withPort(s, "http://"+si.Host+"/print/no-such-page-zz.html"))
		}
	})

	t.Run("binary-as-html", func(t *testing.T) {
		for _, in := range instances(w, TrapBinaryAsHTML) {
			u := withPort(s, in.URL)
			resp, body := fetch(t, u)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html" {
				t.Fatalf("%s: %s %q", u, resp.Status, resp.Header.Get("Content-Type"))
			}
			size, _ := strconv.Atoi(strings.Fields(in.Detail)[0])
			if len(body) != size || size < binaryMin || resp.ContentLength != int64(size) {
				t.Errorf("%s: %d bytes, Content-Length %d, detail %q", u, len(body), resp.ContentLength, in.Detail)
			}
			if !bytes.HasPrefix(body, []byte("\x89PNG\r\n\x1a\n")) && !bytes.HasPrefix(body, []byte("PK\x03\x04")) {
				t.Errorf("%s starts with %q", u, body[:8])
			}
			if bytes.Count(body, []byte{0}) < size/512 {
				t.Errorf("%s: not binary", u)
			}
			if _, again := get(t, c, u); !bytes.Equal(body, again) {
				t.Errorf("%s differs from one request to the next", u)
			}
			if tr := w.Truth(u); tr.Genuine || tr.Trap != TrapBinaryAsHTML || tr.Content == 0 {
				t.Errorf("Truth(%s) = %+v", u, tr)
			}
			head, err := c.Head(u)
			if err != nil || head.ContentLength != int64(size) {
				t.Errorf("HEAD %s: %v %v", u, head, err)
			} else {
				head.Body.Close()
			}
			if !strings.Contains(string(s.Render(w.Site(in.Site).HomePage)), `href="`+pathOf(t, in.URL)+`"`) {
				t.Errorf("home page does not link to %s", in.URL)
			}
		}
	})

	t.Run("html-as-octet", func(t *testing.T) {
		reach := w.ReachableUnique(w.Seeds(10))
		for _, in := range instances(w, TrapHTMLAsOctet) {
			u := withPort(s, in.URL)
			resp, body := fetch(t, u)
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/octet-stream" || !bytes.HasPrefix(body, []byte("<!DOCTYPE html>")) {
				t.Fatalf("%s: %s %q %.20q", u, resp.Status, resp.Header.Get("Content-Type"), body)
			}
			tr := w.Truth(u)
			if !tr.Genuine || tr.Trap != TrapHTMLAsOctet {
				t.Errorf("Truth(%s) = %+v", u, tr)
			}
			parts := 0
			for _, h := range hrefs(body) {
				pu := resolveRef(t, u, h)
				if !strings.Contains(pu, "/part-") {
					continue
				}
				parts++
				presp, _ := fetch(t, pu)
				ptr := w.Truth(pu)
				if presp.StatusCode != 200 || presp.Header.Get("Content-Type") != "text/html; charset=utf-8" || !ptr.Genuine || ptr.Trap != TrapNone {
					t.Errorf("part %s: %s, %+v", pu, presp.Status, ptr)
				}
				// Only the octet-stream page links to its parts.
				if reach.Distance(ptr.Content) != reach.Distance(tr.Content)+1 {
					t.Errorf("part %s at distance %d, its page at %d", pu, reach.Distance(ptr.Content), reach.Distance(tr.Content))
				}
			}
			if parts != octetParts {
				t.Errorf("%s links to %d parts", u, parts)
			}
		}
	})

	t.Run("deep-chain", func(t *testing.T) {
		reach := w.ReachableUnique(w.Seeds(10))
		for _, in := range instances(w, TrapDeepChain) {
			u := withPort(s, in.URL)
			rootDist := reach.Distance(w.Truth(u).Content)
			if rootDist < 1 {
				t.Fatalf("deep chain %s at distance %d", u, rootDist)
			}
			contents := map[uint64]bool{}
			for level := 0; ; level++ {
				b := body200(t, u)
				tr := w.Truth(u)
				if !tr.Genuine || tr.Trap != TrapDeepChain || contents[tr.Content] {
					t.Fatalf("level %d %s: %+v", level, u, tr)
				}
				contents[tr.Content] = true
				if d := reach.Distance(tr.Content); d != rootDist+level {
					t.Errorf("level %d at distance %d, root at %d", level, d, rootDist)
				}
				next, parts := "", 0
				for _, h := range hrefs(b) {
					hu := resolveRef(t, u, h)
					switch {
					case strings.HasSuffix(h, ".html"):
						ptr := w.Truth(hu)
						if parts++; parts <= 3 {
							body200(t, hu)
						}
						if !ptr.Genuine || contents[ptr.Content] || reach.Distance(ptr.Content) != rootDist+level+1 {
							t.Errorf("page %s: %+v", hu, ptr)
						}
						contents[ptr.Content] = true
					case h == strconv.Itoa(level+1)+"/":
						next = hu
					}
				}
				if next == "" {
					if level != deepLevels {
						t.Fatalf("chain ends at level %d", level)
					}
					if rootDist+level <= 10 {
						t.Errorf("bottom of %s at distance %d", in.URL, rootDist+level)
					}
					if tr := w.Truth(u + "16/"); tr.Genuine {
						t.Errorf("level 16 genuine: %+v", tr)
					}
					break
				}
				u = next
			}
			bottom := w.traps.sites[in.Site].deepBottom
			if want := deepLevels + 1 + deepLevels*deepParts + bottom; len(contents) != want || bottom < deepBottomMin {
				t.Errorf("%d genuine pages in the chain, want %d", len(contents), want)
			}
		}
	})
}

// testSessionSite finds links with session ids on site and checks them.
func testSessionSite(t *testing.T, w *Web, s *Server, site int, body200 func(*testing.T, string) []byte) {
	t.Helper()
	si := w.Site(site)
	name := sessionNames[w.traps.sites[site].session]
	with, without := 0, 0
	for p := si.HomePage; p < si.HomePage+si.Pages; p++ {
		for _, h := range hrefs(s.Render(p)) {
			u := resolveRef(t, s.URL(p), h)
			tr := w.Truth(u)
			if tr.Page < 0 || w.Page(tr.Page).Site != site {
				continue
			}
			if !strings.Contains(h, name+"=") {
				without++
				continue
			}
			with++
			if !tr.Traps.Has(TrapSessionID) || tr.Trap != TrapSessionID || !tr.Genuine {
				t.Fatalf("link %s: %+v", u, tr)
			}
			if with <= 5 && !bytes.Equal(body200(t, u), body200(t, s.URL(tr.Page))) {
				t.Errorf("%s differs from %s", u, s.URL(tr.Page))
			}
		}
	}
	// Half of the links, within four standard deviations.
	n := with + without
	if dev := float64(with) - float64(n)/2; n < 4 || dev*dev > 4*float64(n) {
		t.Errorf("site %d: %d internal links with %s, %d without", site, with, name, without)
	}
}

func TestSessionIDKinds(t *testing.T) {
	seen := map[sessionKind]bool{}
	for _, opt := range []Options{trapWeb, trapWeb2} {
		w := testWeb(t, opt)
		s := startServer(t, w, ServerConfig{})
		body200 := func(t *testing.T, u string) []byte {
			t.Helper()
			rec := serve(s, http.MethodGet, u)
			if rec.Code != 200 {
				t.Fatalf("GET %s: %d", u, rec.Code)
			}
			return rec.Body.Bytes()
		}
		for _, in := range instances(w, TrapSessionID) {
			seen[w.traps.sites[in.Site].session] = true
			testSessionSite(t, w, s, in.Site, body200)
		}
	}
	for k := sessionSID; k <= sessionHex; k++ {
		if !seen[k] {
			t.Errorf("session kind %s not in the test webs", sessionNames[k])
		}
	}
	w := testWeb(t, trapWeb)
	tests := []struct {
		query string
		want  TrapSet
	}{
		{"", 0},
		{"sid=1", 1 << TrapSessionID},
		{"PHPSESSID=ab", 1 << TrapSessionID},
		{"a=1&utm_source=x", 1 << TrapTracking},
		{"ref=nav&sid=2", 1<<TrapTracking | 1<<TrapSessionID},
		{"q=shoes", 0},
	}
	home := w.URL(w.Seeds(1)[0])
	for _, tt := range tests {
		tr := w.Truth(home + "?" + tt.query)
		if tr.Traps != tt.want || tr.Content != PageContent(w.Seeds(1)[0]) {
			t.Errorf("?%s: %+v, want traps %v", tt.query, tr, tt.want)
		}
	}
}

// TestTrappedLinksAreTheGraph checks that a trapped web's pages still link
// to their graph out-edges, in order (some with parameters), and that every
// other anchor is one that a trap adds.
func TestTrappedLinksAreTheGraph(t *testing.T) {
	w := testWeb(t, trapWeb)
	const port = 8123
	for p := range w.NumPages() {
		base := string(w.appendURL(nil, int32(p), port))
		var got []int32
		extra := 0
		for _, h := range hrefs(w.AppendHTML(nil, p, port)) {
			u := resolveRef(t, base, h)
			tr := w.Truth(u)
			switch tr.Trap {
			case TrapNone, TrapSessionID, TrapTracking:
				if tr.Page >= 0 {
					got = append(got, int32(tr.Page))
					continue
				}
			}
			extra++
		}
		if want := w.Graph().Out(int32(p)); !slices.Equal(got, want) {
			t.Fatalf("page %d: anchors lead to %v, graph has %v", p, got, want)
		}
		s := w.Page(p).Site
		wantExtra := len(w.traps.extra[int32(p)])
		if st := w.traps.sites[s]; st != nil {
			if st.set.Has(TrapPrintCopy) {
				wantExtra++
			}
			if st.printParam != "" {
				wantExtra++
			}
			if st.loopDir == int32(p) {
				wantExtra++
			}
			path := w.appendPath(nil, int32(p))
			if st.indexName != "" && path[len(path)-1] == '/' {
				wantExtra++
			}
			if st.caseFold && hasLower(path) {
				wantExtra++
			}
		}
		if extra != wantExtra {
			t.Fatalf("page %d: %d anchors beyond the graph, want %d", p, extra, wantExtra)
		}
	}
}

// TestTruthAgreesWithServer crawls the trapped web through the handler,
// following every link (robots.txt or not) breadth first to depth 25, and
// checks every answer against Truth; copies must carry the bytes (or, for
// print copies and bannered mirrors, the paragraphs) of their original.
func TestTruthAgreesWithServer(t *testing.T) {
	w := testWeb(t, crawlWeb)
	s := startServer(t, w, ServerConfig{})
	port := ":" + strconv.Itoa(s.Port())
	canon := map[string][]byte{}
	canonical := func(u string) []byte {
		if b, ok := canon[u]; ok {
			return b
		}
		b := serve(s, http.MethodGet, withPort(s, u)).Body.Bytes()
		canon[u] = b
		return b
	}
	type item struct {
		u     string
		depth int
	}
	seen := map[string]bool{}
	var queue []item
	for _, u := range s.SeedURLs(10) {
		seen[u] = true
		queue = append(queue, item{u, 0})
	}
	kinds := map[TrapKind]int{}
	fetched := 0
	for len(queue) > 0 && fetched < 60000 {
		it := queue[0]
		queue = queue[1:]
		rec := serve(s, http.MethodGet, it.u)
		fetched++
		tr := w.Truth(it.u)
		kinds[tr.Trap]++
		if rec.Code != tr.Status || rec.Header().Get("Content-Type") != tr.ContentType {
			t.Fatalf("%s: %d %q, Truth %+v", it.u, rec.Code, rec.Header().Get("Content-Type"), tr)
		}
		if rec.Code == 301 {
			if loc := rec.Header().Get("Location"); loc != withPort(s, tr.Location) {
				t.Fatalf("%s: Location %s, Truth %s", it.u, loc, tr.Location)
			}
			continue
		}
		if rec.Code != 200 {
			continue
		}
		body := rec.Body.Bytes()
		if tr.Page >= 0 {
			orig := canonical(tr.Canonical)
			switch {
			case tr.Traps.Has(TrapPrintCopy) || tr.Traps.Has(TrapPrintParam) || (tr.Traps.Has(TrapDirMirror) && w.traps.sites[w.Page(tr.Page).Site].mirrorBanner):
				if !sameText(body, orig) || bytes.Equal(body, orig) {
					t.Fatalf("%s: not a near-duplicate of %s", it.u, tr.Canonical)
				}
			case !bytes.Equal(body, orig):
				t.Fatalf("%s (%v) differs from %s", it.u, tr.Traps, tr.Canonical)
			}
		} else if tr.Traps.Has(TrapFacets) {
			// Another order or view: the same items, linked alike.
			if !slices.Equal(itemLinks(body), itemLinks(canonical(tr.Canonical))) {
				t.Fatalf("%s lists other items than %s", it.u, tr.Canonical)
			}
		} else if tr.Genuine && tr.Canonical != "" && !bytes.Equal(body, canonical(tr.Canonical)) && !tr.Traps.Has(TrapHostMirror) {
			t.Fatalf("%s differs from %s", it.u, tr.Canonical)
		}
		if it.depth >= 25 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") && rec.Header().Get("Content-Type") != "application/octet-stream" {
			continue
		}
		if tr.Trap == TrapBinaryAsHTML {
			continue
		}
		for _, h := range hrefs(body) {
			u := resolveRef(t, it.u, h)
			if !strings.Contains(u, port) {
				t.Fatalf("%s: link %q without the port", it.u, h)
			}
			if !seen[u] {
				seen[u] = true
				queue = append(queue, item{u, it.depth + 1})
			}
		}
	}
	t.Logf("fetched %d URLs: %v", fetched, kinds)
	for _, k := range TrapKinds() {
		if kinds[k] == 0 && k != TrapHTMLAsOctet { // octet parts report TrapNone
			t.Errorf("crawl met no %v URL", k)
		}
	}
}

var (
	paragraphRE = regexp.MustCompile(`<p>.*</p>`)
	printedRE   = regexp.MustCompile(`<p class="printed">[^<]*</p>\n`)
	moreRE      = regexp.MustCompile(`(?s)<ul class="more">.*?</ul>\n`)
)

// sameText reports whether two HTML pages say the same between their
// headings and footers (listings, text and links), leaving out the date
// line of a print copy and the links traps add.
func sameText(a, b []byte) bool {
	main := func(x []byte) []byte {
		i, j := bytes.Index(x, []byte("</h1>\n")), bytes.Index(x, []byte(`<div id="footer">`))
		if j < 0 { // a bare print copy has no footer
			j = bytes.Index(x, []byte("</body>"))
		}
		if i < 0 || j < i {
			return nil
		}
		return moreRE.ReplaceAll(printedRE.ReplaceAll(x[i:j], nil), nil)
	}
	ma := main(a)
	return ma != nil && bytes.Equal(ma, main(b))
}

// TestReachableUniqueMatchesCrawl compares ReachableUnique with a polite
// URL-level crawl through the server: breadth first, robots.txt obeyed
// (Web.Disallowed), every distinct URL fetched once, a page's links followed
// unless the same bytes were already seen on the same host, up to depth
// 40. The genuine contents it fetches must be exactly the reachable ones,
// at the distances ReachableUnique says.
func TestReachableUniqueMatchesCrawl(t *testing.T) {
	w := testWeb(t, crawlWeb)
	s := startServer(t, w, ServerConfig{})
	reach := w.ReachableUnique(w.Seeds(10))
	type item struct {
		u     string
		depth int
	}
	seen := map[string]bool{}
	bodies := map[[32]byte]bool{}
	var queue []item
	for _, u := range s.SeedURLs(10) {
		seen[u] = true
		queue = append(queue, item{u, 0})
	}
	got := map[uint64]int{}
	fetched := 0
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		pu, _ := url.Parse(it.u)
		site, _ := w.SiteByHost(pu.Hostname())
		if w.Disallowed(site, pu.RequestURI()) {
			continue
		}
		rec := serve(s, http.MethodGet, it.u)
		fetched++
		if rec.Code != 200 {
			continue
		}
		body := rec.Body.Bytes()
		tr := w.Truth(it.u)
		if tr.Genuine {
			if _, ok := got[tr.Content]; !ok {
				got[tr.Content] = it.depth
			}
		}
		if tr.Trap == TrapSoft404 {
			continue // its suggestions lead to more soft 404s, without end
		}
		key := sha256.Sum256(append(body, pu.Hostname()...))
		if bodies[key] || it.depth >= 40 || bytes.HasPrefix(body, []byte("\x89PNG")) || bytes.HasPrefix(body, []byte("PK")) {
			continue
		}
		bodies[key] = true
		for _, h := range hrefs(body) {
			u := resolveRef(t, it.u, h)
			if !seen[u] {
				seen[u] = true
				queue = append(queue, item{u, it.depth + 1})
			}
		}
	}
	t.Logf("crawl fetched %d URLs, %d genuine contents; ReachableUnique: %d contents (%d beyond depth 10, max distance %d), %d states",
		fetched, len(got), reach.Unique, reach.BeyondDepth10, reach.MaxDistance, reach.States)
	if len(got) != reach.Unique {
		t.Errorf("crawl found %d genuine contents, ReachableUnique %d", len(got), reach.Unique)
	}
	// The crawl skips the links of copies with bytes already seen on their
	// host, which could in principle hide a shorter path; in this web none
	// is hidden, so the distances agree exactly.
	for c, d := range got {
		if rd := reach.Distance(c); rd != d {
			t.Errorf("content %x first fetched at depth %d, ReachableUnique says %d", c, d, rd)
		}
	}
	if reach.BeyondDepth10 < crawlWeb.Traps*(deepLevels-10) || reach.BeyondDepth10 != reach.Beyond(10) {
		t.Errorf("%d contents beyond depth 10 (Beyond says %d)", reach.BeyondDepth10, reach.Beyond(10))
	}
}

// TestReachableUniqueWithoutTraps checks ReachableUnique on a web without
// traps against a plain breadth-first search of the graph.
func TestReachableUniqueWithoutTraps(t *testing.T) {
	w := testWeb(t, midWeb)
	seeds := w.Seeds(10)
	dist := make([]int, w.NumPages())
	for i := range dist {
		dist[i] = -1
	}
	var queue []int32
	for _, p := range seeds {
		if !w.Page(p).Disallowed {
			dist[p] = 0
			queue = append(queue, int32(p))
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, q := range w.Graph().Out(p) {
			if dist[q] < 0 && !w.Page(int(q)).Disallowed {
				dist[q] = dist[p] + 1
				queue = append(queue, q)
			}
		}
	}
	reach := w.ReachableUnique(seeds)
	n, beyond := 0, 0
	for p, d := range dist {
		if reach.Distance(PageContent(p)) != d {
			t.Fatalf("page %d: distance %d, ReachableUnique %d", p, d, reach.Distance(PageContent(p)))
		}
		if d >= 0 {
			n++
			if d > 10 {
				beyond++
			}
		}
	}
	if reach.Unique != n || reach.BeyondDepth10 != beyond {
		t.Errorf("ReachableUnique: %d contents, %d beyond 10; BFS: %d, %d", reach.Unique, reach.BeyondDepth10, n, beyond)
	}
	t.Logf("%d of %d pages reachable, %d beyond depth 10, max distance %d", n, w.NumPages(), beyond, reach.MaxDistance)
}

func TestTrapsDeterministic(t *testing.T) {
	a, err := Generate(crawlWeb)
	if err != nil {
		t.Fatal(err)
	}
	b := testWeb(t, crawlWeb)
	if !slices.Equal(a.Traps(), b.Traps()) {
		t.Fatal("same options, different traps")
	}
	da, db := webDigest(t, a), webDigest(t, b)
	if da != db {
		t.Error("same options, different trapped webs")
	}
	if da == untrappedGolden {
		t.Error("traps change nothing")
	}
	other := testWeb(t, trapWeb2)
	if slices.Equal(a.Traps(), other.Traps()) {
		t.Error("different seeds, same traps")
	}
	ra, rb := a.ReachableUnique(a.Seeds(10)), b.ReachableUnique(b.Seeds(10))
	if ra.Unique != rb.Unique || ra.BeyondDepth10 != rb.BeyondDepth10 || ra.States != rb.States {
		t.Errorf("ReachableUnique differs: %+v vs %+v", ra, rb)
	}
}

func TestBinaryChunks(t *testing.T) {
	w := testWeb(t, trapWeb)
	in := instances(w, TrapBinaryAsHTML)[0]
	st := w.traps.sites[in.Site]
	for idx, blob := range st.binaries {
		header := w.binaryHeader(in.Site, idx, blob)
		whole := make([]byte, blob.size)
		w.fillBinary(whole, in.Site, idx, blob, header, 0)
		var pieces []byte
		for off, step := 0, 1; off < blob.size; step = step*7%1031 + 1 {
			n := min(step, blob.size-off)
			chunk := make([]byte, n)
			w.fillBinary(chunk, in.Site, idx, blob, header, off)
			pieces = append(pieces, chunk...)
			off += n
		}
		if !bytes.Equal(whole, pieces) {
			t.Errorf("binary %d: chunks differ from the whole", idx)
		}
	}
}

func TestTrapBandwidthStreams(t *testing.T) {
	opt := trapWeb
	opt.BandwidthMedian, opt.BandwidthSigma = 8<<20, -1
	w := testWeb(t, opt)
	s := startServer(t, w, ServerConfig{})
	in := instances(w, TrapBinaryAsHTML)[0]
	resp, err := resolvingClient(s, 1).Get(withPort(s, in.URL))
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 512)
	if _, err := io.ReadFull(resp.Body, head); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // a careful crawler stops here
	size, _ := strconv.Atoi(strings.Fields(in.Detail)[0])
	if resp.ContentLength != int64(size) {
		t.Errorf("Content-Length %d, want %d", resp.ContentLength, size)
	}
}

func TestTrapsFlagAndExport(t *testing.T) {
	tests := []struct {
		args []string
		want int
		ok   bool
	}{
		{nil, 0, true},
		{[]string{"--traps"}, DefaultTrapSites, true},
		{[]string{"--traps=2"}, 2, true},
		{[]string{"--traps=false"}, 0, true},
		{[]string{"--traps=true"}, DefaultTrapSites, true},
		{[]string{"--traps=-1"}, 0, false},
		{[]string{"--traps=x"}, 0, false},
	}
	for _, tt := range tests {
		var o Options
		fs := flag.NewFlagSet("simweb", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o.RegisterFlags(fs)
		err := fs.Parse(tt.args)
		if (err == nil) != tt.ok || (tt.ok && o.Traps != tt.want) {
			t.Errorf("%v: Traps %d, err %v", tt.args, o.Traps, err)
		}
	}
	if _, err := Generate(Options{Sites: 5, Traps: 6}); err == nil {
		t.Error("more trap sites per kind than sites accepted")
	}

	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := Command(context.Background(), []string{"--sites", "30", "--seed", "4", "--traps", "--export", dir}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	w := testWeb(t, Options{Seed: 4, Sites: 30, Traps: DefaultTrapSites})
	rows := readCSV(t, filepath.Join(dir, "traps.csv"))
	if len(rows)-1 != len(w.Traps()) || !slices.Equal(rows[0], []string{"kind", "site", "host", "url", "original", "detail"}) {
		t.Fatalf("traps.csv: %d rows for %d traps, header %v", len(rows)-1, len(w.Traps()), rows[0])
	}
	for i, in := range w.Traps() {
		if row := rows[i+1]; row[0] != in.Kind.String() || row[1] != strconv.Itoa(in.Site) || row[3] != in.URL || row[5] != in.Detail {
			t.Errorf("row %v for %+v", row, in)
		}
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.txt"))
	if err != nil || !strings.Contains(string(readme), "traps.csv: one line per trap instance") || !strings.Contains(string(readme), "Traps:4}") {
		t.Errorf("README.txt: %v\n%s", err, readme)
	}
}

// TestIndexAliasAndCaseFold checks the two traps' copies: a directory
// page answered under the site's index name, and any page under any case
// of its path on a case-insensitive site (only there).
func TestIndexAliasAndCaseFold(t *testing.T) {
	w := testWeb(t, trapWeb)
	var alias, fold, plain int
	for s := range w.sites {
		st := w.traps.sites[s]
		for p := w.siteStart[s]; p < w.siteStart[s+1]; p++ {
			u := w.URL(int(p))
			path := string(w.appendPath(nil, p))
			orig := w.Truth(u)
			if orig.Status != 200 || !orig.Genuine {
				continue
			}
			if st != nil && st.indexName != "" && strings.HasSuffix(path, "/") {
				tr := w.Truth(u + st.indexName)
				if tr.Status != 200 || tr.Content != orig.Content || tr.Trap != TrapIndexAlias {
					t.Fatalf("%s%s: %+v, want the copy of %s", u, st.indexName, tr, u)
				}
				alias++
			}
			if !hasLower([]byte(path)) {
				continue
			}
			origin := u[:len(u)-len(path)]
			tr := w.Truth(origin + string(appendTitleCase(nil, path)))
			switch {
			case st != nil && st.caseFold:
				if tr.Status != 200 || tr.Content != orig.Content || tr.Trap != TrapCaseFold {
					t.Fatalf("%s in title case: %+v, want the copy", u, tr)
				}
				fold++
			case st == nil || !st.set.Has(TrapSoft404):
				if tr.Status == 200 {
					t.Fatalf("%s in title case on a case-sensitive site: %+v", u, tr)
				}
				plain++
			}
		}
	}
	if alias == 0 || fold == 0 || plain == 0 {
		t.Errorf("%d index aliases, %d case-folded pages, %d case-sensitive ones checked", alias, fold, plain)
	}
}

// itemLinks returns the sorted links of a page but those to its own
// directory ("./?...": its other orders, views and pages).
func itemLinks(body []byte) []string {
	var out []string
	for _, h := range hrefs(body) {
		if !strings.HasPrefix(h, "./") {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return out
}
