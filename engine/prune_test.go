package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dedup"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// tinySite serves on 127.0.0.1 the pages page returns (status and HTML
// body) and counts the requests for each request URI. Its robots.txt
// allows everything unless robots is set before the crawl.
type tinySite struct {
	page     func(uri string) (int, string)
	robots   string
	mu       sync.Mutex
	requests map[string]int
	order    map[string]int // the rank of the first request of each URI
}

func startTinySite(t *testing.T, page func(uri string) (int, string)) (site *tinySite, base string) {
	t.Helper()
	site = &tinySite{page: page, requests: map[string]int{}, order: map[string]int{}}
	ts := httptest.NewServer(site)
	t.Cleanup(ts.Close)
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	return site, "http://127.0.0.1:" + port
}

func (s *tinySite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	uri := r.URL.RequestURI()
	s.mu.Lock()
	s.requests[uri]++
	if _, ok := s.order[uri]; !ok {
		s.order[uri] = len(s.order)
	}
	robots := s.robots
	s.mu.Unlock()
	if uri == "/robots.txt" {
		w.Header().Set("Content-Type", "text/plain")
		if robots == "" {
			robots = "User-agent: *\nDisallow:\n"
		}
		fmt.Fprint(w, robots)
		return
	}
	status, body := s.page(uri)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// count returns the requests whose URI match.
func (s *tinySite) count(match func(uri string) bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for uri, k := range s.requests {
		if match(uri) {
			n += k
		}
	}
	return n
}

// first returns the rank of the first request for uri among the site's
// request URIs (-1 for none).
func (s *tinySite) first(uri string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.order[uri]; ok {
		return k
	}
	return -1
}

// each calls fn with each URI requested.
func (s *tinySite) each(fn func(uri string)) {
	s.mu.Lock()
	var uris []string
	for u := range s.requests {
		uris = append(uris, u)
	}
	s.mu.Unlock()
	for _, u := range uris {
		fn(u)
	}
}

// prose returns n pseudo-words drawn from seed, cut into sentences: the
// text of a page that shares nothing with pages of other seeds.
func prose(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, 0x7072))
	const letters = "bcdfghklmnprstvz"
	const vowels = "aeiou"
	var b strings.Builder
	for i := range n {
		for range 2 + r.IntN(2) {
			b.WriteByte(letters[r.IntN(len(letters))])
			b.WriteByte(vowels[r.IntN(len(vowels))])
		}
		if i%12 == 11 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// htmlPage is a page with a title, a text and links.
func htmlPage(title, text string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p><ul>", title, title, text)
	for _, l := range links {
		fmt.Fprintf(&b, `<li><a href="%s">%s</a></li>`, l, l)
	}
	b.WriteString("</ul></body></html>")
	return b.String()
}

// tinyEvidence is the pairs a rule needs in tinyConfig.
const tinyEvidence = 3

// tinyConfig crawls the sites of seeds with no delay (they are this
// test's own), r robots, perVisit pages per visit.
func tinyConfig(seeds []string, r, perVisit int) engine.Config {
	cfg := crawlConfig(seeds)
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.Robots = r
	cfg.PagesPerVisit = perVisit
	cfg.MirrorEvidence = tinyEvidence
	return cfg
}

// skipReasons returns the skip reason of each URL skipped, by URL.
func skipReasons(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	eachRow(t, path, "SELECT url, coalesce(skip_reason, '') FROM urls WHERE state = 2", func(rows *sql.Rows) error {
		var u, why string
		if err := rows.Scan(&u, &why); err != nil {
			return err
		}
		out[u] = why
		return nil
	})
	return out
}

// A rule learned from the first pages of a lease spares the rest of that
// lease: the site's second lease holds every item and its print copy,
// taken before any copy was seen, and once the copies have shown that
// "view=print" changes nothing the robot gets the remaining copies
// revoked. Without that it fetched every copy of the lease.
func TestRuleLearnedMidLeaseSparesTheLease(t *testing.T) {
	const items, evidence = 24, tinyEvidence
	site, base := startTinySite(t, func(uri string) (int, string) {
		path, _, _ := strings.Cut(uri, "?")
		if path == "/" {
			var links []string
			for k := range items {
				links = append(links, fmt.Sprintf("/item/%d", k), fmt.Sprintf("/item/%d?view=print", k))
			}
			return 200, htmlPage("Items", prose(1000, 80), links...)
		}
		var k int
		if _, err := fmt.Sscanf(path, "/item/%d", &k); err == nil && k < items {
			// The print copy is the page itself.
			return 200, htmlPage(fmt.Sprintf("Item %d", k), prose(uint64(k), 120))
		}
		return 404, htmlPage("Not found", "no such page")
	})
	cfg := tinyConfig([]string{base + "/"}, 2, 2*items)
	path := filepath.Join(t.TempDir(), "crawl.db")
	st := runCrawl(t, cfg, "127.0.0.1:1", path) // an IP literal needs no DNS

	isCopy := func(uri string) bool { return strings.Contains(uri, "view=print") }
	copies := site.count(isCopy)
	// The rule needs evidence copies; a robot may have started up to
	// engine's aheadMax (2) more before the loop applied the last of them.
	if copies > evidence+2 {
		t.Errorf("%d print copies fetched, want at most %d (the evidence and the pages in flight)", copies, evidence+2)
	}
	for k := range items {
		if n := site.count(func(uri string) bool { return uri == fmt.Sprintf("/item/%d", k) }); n != 1 {
			t.Errorf("/item/%d fetched %d times, want 1", k, n)
		}
	}
	skipped := 0
	for u, why := range skipReasons(t, path) {
		if isCopy(u) {
			if why != string(record.SkipRule) {
				t.Errorf("%s skipped for %q, want %q", u, why, record.SkipRule)
			}
			skipped++
		}
	}
	if copies+skipped != items {
		t.Errorf("%d copies fetched and %d skipped under the rule, want %d in all", copies, skipped, items)
	}
	if st.Dup.Rules != 1 {
		t.Errorf("%d rules learned, want 1 (drop view=print)", st.Dup.Rules)
	}
	t.Logf("%d copies fetched, %d skipped under a rule; dup stats %+v", copies, skipped, st.Dup)
}

// A rule withdrawn queues again the URLs it skipped: they were pruned on
// a rewrite now known to lose content. "/a", "/b" and "/c" give the same
// page under /print/, so a rule takes /print/ for /; "/print/q", found
// after that, is skipped under the rule (it differs from "/q"). The
// lease runs on a robot that gets no revocation (a slave's, its lease
// crossing as JSON), so "/print/z", in the same lease as the copies
// that taught the rule, is fetched after the rule was learned: it differs
// from "/z", which withdraws the rule, and "/print/q" is fetched.
func TestWithdrawnRuleRequeuesWhatItSkipped(t *testing.T) {
	site, base := startTinySite(t, withdrawalWeb(func(page string) string { return "/print/" + page }))
	cfg := tinyConfig([]string{base + "/"}, 1, 20)
	cfg.Strategy = "depth" // breadth-first: the order above
	path := filepath.Join(t.TempDir(), "crawl.db")
	eng, release := openEngine(t, cfg, "127.0.0.1:1", path)
	defer release()
	robot, err := visit.NewRobot(cfg.Robot(), nil)
	if err != nil {
		t.Fatal(err)
	}
	eng.SetDispatcher(&remoteDispatcher{t: t, robot: robot})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	st := eng.Stats()
	if st.Dup.Withdrawn != 1 {
		t.Fatalf("%d rules withdrawn, want 1; stats %+v", st.Dup.Withdrawn, st.Dup)
	}
	if n := site.count(func(uri string) bool { return uri == "/print/q" }); n != 1 {
		t.Errorf("/print/q fetched %d times, want 1 (skipped under the rule, then queued again)", n)
	}
	if why, ok := skipReasons(t, path)[base+"/print/q"]; ok {
		t.Errorf("/print/q left skipped (%q)", why)
	}
	if st.Dup.Requeued != 1 || st.Dup.Pruned != 0 {
		t.Errorf("requeued %d, pruned %d; want 1 and 0", st.Dup.Requeued, st.Dup.Pruned)
	}
	for _, p := range []string{"/", "/next", "/a", "/b", "/c", "/q", "/z", "/print/z"} {
		if n := site.count(func(uri string) bool { return uri == p }); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
}

// A session id carried as a path parameter (";visit=…", a name no code of
// lidi knows) is learned as a rule from the copies, as a query parameter
// would be: each document is linked twice, under two sessions, and once
// a few copies have shown that the parameter changes nothing, the other
// copies are not fetched.
func TestPathParameterRuleLearned(t *testing.T) {
	const docs, evidence = 16, tinyEvidence
	session := func(k, j int) string { return fmt.Sprintf("%08X", uint32(k*7919+j*104729+1)*2654435761) }
	site, base := startTinySite(t, func(uri string) (int, string) {
		path, _, _ := strings.Cut(uri, ";")
		if path == "/" {
			var links []string
			for k := range docs {
				for j := range 2 {
					links = append(links, fmt.Sprintf("/doc/%d.html;visit=%s", k, session(k, j)))
				}
			}
			return 200, htmlPage("Documents", prose(500, 80), links...)
		}
		var k int
		if _, err := fmt.Sscanf(path, "/doc/%d.html", &k); err == nil && k < docs {
			return 200, htmlPage(fmt.Sprintf("Document %d", k), prose(uint64(600+k), 120))
		}
		return 404, htmlPage("Not found", "no such page")
	})
	cfg := tinyConfig([]string{base + "/"}, 2, 4*docs)
	path := filepath.Join(t.TempDir(), "crawl.db")
	st := runCrawl(t, cfg, "127.0.0.1:1", path)

	learned := map[string]bool{} // "kind name" of the rules in force
	eachRow(t, path, "SELECT kind, coalesce(name, '') FROM rules WHERE withdrawn = 0", func(rows *sql.Rows) error {
		var kind, name string
		err := rows.Scan(&kind, &name)
		learned[kind+" "+name] = true
		return err
	})
	if !learned[dedup.DropPathParam.String()+" visit"] {
		t.Fatalf("no rule drops ;visit; rules %v", learned)
	}
	fetched := 0
	for k := range docs {
		n := site.count(func(uri string) bool { return strings.HasPrefix(uri, fmt.Sprintf("/doc/%d.html", k)) })
		if n == 0 {
			t.Errorf("document %d never fetched", k)
		}
		fetched += n
	}
	// Each document once, and the copies that taught the rule (with the
	// pages in flight when it was learned) twice.
	if fetched > docs+evidence+2 {
		t.Errorf("%d fetches of %d documents, want at most %d", fetched, docs, docs+evidence+2)
	}
	if st.Dup.Soft404Hosts != 0 {
		t.Errorf("the copies taken for soft 404s: %+v", st.Dup)
	}
	t.Logf("%d fetches of %d documents; dup stats %+v", fetched, docs, st.Dup)
}

// Soft 404s, checked by a probe: three hosts answer two broken links with
// a page of the same title. "soft" answers every missing URL with its
// not-found page (which suggests more missing URLs), "honest" answers a
// real 404 (its two same-titled pages are one page under two names), and
// "shy" serves soft 404s but its robots.txt forbids the probe. The probe
// is fetched once per host that the evidence points to, within
// robots.txt, and settles it: "soft" is a soft-404 host (confirmed), and
// no link found only on its soft 404s after the first is followed;
// "honest" is not (withdrawn, nothing recorded a soft 404); "shy" is one
// on the evidence alone.
func TestSoft404Probe(t *testing.T) {
	suggestions := func(path string) []string {
		h := fnv.New32a()
		h.Write([]byte(path))
		return []string{fmt.Sprintf("/suggest/%08x-1.html", h.Sum32()), fmt.Sprintf("/suggest/%08x-2.html", h.Sum32())}
	}
	genuine := map[string][]string{
		"/":                    {"/a.html", "/b.html", "/old/gone.html", "/archive/missing.php", "/contact.html", "/about/reach-us.html"},
		"/a.html":              {"/b.html"},
		"/b.html":              {"/a.html"},
		"/contact.html":        nil,
		"/about/reach-us.html": nil, // the contact page under another name
	}
	serve := func(soft bool, salt uint64) func(uri string) (int, string) {
		return func(uri string) (int, string) {
			path, _, _ := strings.Cut(uri, "?")
			if links, ok := genuine[path]; ok {
				if path == "/about/reach-us.html" {
					path = "/contact.html"
				}
				return 200, htmlPage("Page "+path, prose(salt<<16+uint64(len(path))*31+uint64(path[1%len(path)]), 300), links...)
			}
			if !soft {
				return 404, htmlPage("404", "no such page")
			}
			return 200, htmlPage("Page not found", "Sorry, the page "+path+" does not exist on this server. It may have moved, or the link that brought you here is broken. Try one of these pages instead.", suggestions(path)...)
		}
	}
	softSite, softBase := startTinySite(t, serve(true, 1))
	honest, honestBase := startTinySite(t, serve(false, 2))
	shy, shyBase := startTinySite(t, serve(true, 3))
	shy.robots = "User-agent: *\nDisallow: /*lidi-no-such-page\n"

	cfg := tinyConfig([]string{softBase + "/", honestBase + "/", shyBase + "/"}, 3, 20)
	cfg.Strategy = "depth"
	path := filepath.Join(t.TempDir(), "crawl.db")
	st := runCrawl(t, cfg, "127.0.0.1:1", path)

	type soft404Row struct {
		probe     string
		status    int
		withdrawn bool
	}
	rows := map[string]soft404Row{}
	eachRow(t, path, `SELECT s.origin, coalesce(u.url, ''), coalesce(s.probe_status, 0), s.withdrawn
		FROM soft404s s LEFT JOIN urls u ON u.id = s.probe_id`, func(r *sql.Rows) error {
		var origin string
		var row soft404Row
		err := r.Scan(&origin, &row.probe, &row.status, &row.withdrawn)
		rows[origin] = row
		return err
	})
	recorded := map[string]int{} // soft-404 pages recorded, by origin
	eachRow(t, path, `SELECT u.url FROM duplicates d JOIN urls u ON u.id = d.url_id WHERE d.kind = 'soft-404'`, func(r *sql.Rows) error {
		var u string
		err := r.Scan(&u)
		recorded[originOf(u)]++
		return err
	})
	isProbe := func(uri string) bool { return strings.Contains(uri, "lidi-no-such-page") }

	// soft: confirmed by its probe, fetched once after robots.txt.
	if r := rows[softBase]; r.withdrawn || r.status != 200 || !isProbe(r.probe) {
		t.Errorf("soft host: soft404s row %+v, want confirmed by a probe answering 200", r)
	}
	if n := softSite.count(isProbe); n != 1 {
		t.Errorf("soft host probed %d times, want 1", n)
	}
	if r, p := softSite.first("/robots.txt"), softSite.first(strings.TrimPrefix(rows[softBase].probe, softBase)); r < 0 || p < r {
		t.Error("soft host probed before its robots.txt was read")
	}
	// Only the first not-found page's suggestions are followed: it was
	// taken for a page before the second one completed the evidence.
	first := suggestions("/old/gone.html")
	softSite.each(func(uri string) {
		if strings.HasPrefix(uri, "/suggest/") && uri != first[0] && uri != first[1] {
			t.Errorf("soft host: %s fetched, a link found only on a soft 404", uri)
		}
	})
	if recorded[softBase+"/"] < 2 {
		t.Errorf("soft host: %d pages recorded soft 404s, want the second broken link and the suggestions", recorded[softBase+"/"])
	}
	// honest: the evidence is refuted by a real 404.
	if r := rows[honestBase]; !r.withdrawn || r.status != 404 || !isProbe(r.probe) {
		t.Errorf("honest host: soft404s row %+v, want withdrawn after a probe answering 404", r)
	}
	if n := honest.count(isProbe); n != 1 {
		t.Errorf("honest host probed %d times, want 1", n)
	}
	if n := recorded[honestBase+"/"]; n != 0 {
		t.Errorf("honest host: %d pages recorded soft 404s", n)
	}
	// shy: robots.txt forbids the probe; the evidence decides.
	if n := shy.count(isProbe); n != 0 {
		t.Errorf("shy host: probe fetched %d times against its robots.txt", n)
	}
	if r, ok := rows[shyBase]; !ok || r.withdrawn || r.probe != "" {
		t.Errorf("shy host: soft404s row %+v (present %v), want one made from the evidence alone", r, ok)
	}
	for _, s := range []*tinySite{softSite, honest, shy} {
		for _, p := range []string{"/a.html", "/b.html", "/contact.html"} {
			if n := s.count(func(uri string) bool { return uri == p }); n != 1 {
				t.Errorf("%s fetched %d times, want 1", p, n)
			}
		}
	}
	t.Logf("dup stats %+v; soft-404 pages recorded %v; soft404s %+v", st.Dup, recorded, rows)
}

// dirCopyWeb serves a site whose /copy/ copies /docs/ (a, b, c and d,
// linked from "/") and also holds /copy/extra, which /docs/ does not:
// "/next" links it, found after every copy in a breadth-first crawl.
func dirCopyWeb(uri string) (int, string) {
	docs := []string{"a", "b", "c", "d"}
	dir, name, _ := strings.Cut(strings.TrimPrefix(uri, "/"), "/")
	switch {
	case uri == "/":
		var links []string
		for _, d := range docs {
			links = append(links, "/docs/"+d)
		}
		for _, d := range docs {
			links = append(links, "/copy/"+d)
		}
		return 200, htmlPage("Home", prose(1, 80), append(links, "/next")...)
	case uri == "/next":
		return 200, htmlPage("Next", prose(2, 80), "/copy/extra")
	case (dir == "docs" || dir == "copy") && slices.Contains(docs, name):
		return 200, htmlPage(name, prose(uint64(name[0]), 120))
	case uri == "/copy/extra":
		return 200, htmlPage("extra", prose(99, 120))
	}
	return 404, htmlPage("Not found", "no such page")
}

// On dirCopyWeb, once the rule that sends the copy's URLs to the
// original's is learned, /copy/extra is skipped in favour of /docs/extra,
// which answers 404: it must then be fetched after all (Dup.Requeued),
// once.
func TestSkippedForAMissingCanonicalIsFetched(t *testing.T) {
	site, base := startTinySite(t, dirCopyWeb)
	cfg := tinyConfig([]string{base + "/"}, 1, 20)
	cfg.Strategy = "depth" // breadth-first: /copy/extra after every copy
	path := filepath.Join(t.TempDir(), "crawl.db")
	eng, release := openEngine(t, cfg, "127.0.0.1:1", path)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	st := eng.Stats()
	if st.Dup.Rules != 1 {
		t.Fatalf("%d rules in force, want the one sending /copy/ to /docs/; stats %+v", st.Dup.Rules, st.Dup)
	}
	for _, p := range []string{"/copy/extra", "/docs/extra"} {
		if n := site.count(func(uri string) bool { return uri == p }); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
	if why, ok := skipReasons(t, path)[base+"/copy/extra"]; ok {
		t.Errorf("/copy/extra left skipped (%q)", why)
	}
	if st.Dup.Requeued != 1 {
		t.Errorf("requeued %d, want 1: /copy/extra skipped, then queued again", st.Dup.Requeued)
	}
}
