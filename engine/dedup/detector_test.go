package dedup

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The webs below have shapes of duplication that no code of lidi names:
// other parameter names, other path shapes, other hosts. The detector
// must learn their rules from the duplicate pages alone.

// fetch is one page the test crawler observes.
type fetch struct {
	url  string
	body []byte
}

// web builds pages of one site template.
type web struct {
	s    *site
	seed uint64
}

func newWeb(origin string, seed uint64) *web { return &web{s: newSite(origin, seed), seed: seed} }

// page is the article with content id n at path, as the site shows it.
func (w *web) page(path string, n uint64, opt pageOpt) fetch {
	_, body := w.s.article(path, w.seed*1000+n, 200+int(n%5)*40, opt)
	return fetch{url: w.s.origin + path, body: body}
}

// at is page f of w as another origin serves it.
func (w *web) at(origin string, f fetch) fetch {
	return fetch{url: origin + f.url[len(w.s.origin):], body: f.body}
}

// crawl observes the fetches in order and returns the decisions.
func crawl(d *Detector, fs []fetch) []Decision {
	var out []Decision
	for _, f := range fs {
		out = append(out, d.Observe(pageOf(f.url, f.body)))
	}
	return out
}

func learned(ds []Decision) []Rule {
	var out []Rule
	for _, d := range ds {
		out = append(out, d.Learned...)
	}
	return out
}

func TestRulesLearnedFromEvidence(t *testing.T) {
	type canon struct {
		url, want string // want == url: not covered; "" covered without a canonical URL
	}
	tests := []struct {
		name  string
		pages func() []fetch
		rule  Rule // Kind, Name, Value, Index, From, To that must be learned
		// within, when not 0, is the most pairs the rule may take.
		within int
		canon  []canon
	}{
		{
			name: "session id under an unknown name",
			pages: func() []fetch {
				w := newWeb("http://shop.example:8081", 11)
				var fs []fetch
				for i, p := range []string{"/cart", "/help/faq.php", "/catalog/list.php", "/about.php"} {
					fs = append(fs, w.page(p, uint64(i), pageOpt{}))
					fs = append(fs, w.page(p+fmt.Sprintf("?zq=%08x", 0xa11ce+i), uint64(i), pageOpt{linkQuery: "?zq=1"}))
				}
				return fs
			},
			rule: Rule{Kind: DropParam, Name: "zq"},
			canon: []canon{
				{"http://shop.example:8081/new.php?zq=77aa", "http://shop.example:8081/new.php"},
				{"http://shop.example:8081/new.php?zq=77aa&item=3", "http://shop.example:8081/new.php?item=3"},
				{"http://shop.example:8081/new.php?item=3", "http://shop.example:8081/new.php?item=3"},
				{"http://other.example/new.php?zq=77aa", "http://other.example/new.php?zq=77aa"},
			},
		},
		{
			// The crawl meets the tracked links first: in every pair the
			// copy is the page's own URL, and the values are the
			// originals'.
			name: "a tracking parameter met before the pages' own URLs",
			pages: func() []fetch {
				w := newWeb("https://mag.example", 19)
				var fs []fetch
				for i, p := range []string{"/issues/12/", "/columns/letters.asp", "/", "/subscribe.asp"} {
					from := []string{"rss", "mail", "home", "rss"}[i]
					fs = append(fs, w.page(p+"?came_from="+from, uint64(i), pageOpt{linkQuery: "?came_from=" + from}))
					fs = append(fs, w.page(p, uint64(i), pageOpt{}))
				}
				return fs
			},
			rule:   Rule{Kind: DropParam, Name: "came_from"},
			within: DefaultMirrorEvidence,
			canon: []canon{
				{"https://mag.example/issues/13/?came_from=web", "https://mag.example/issues/13/"},
				{"https://mag.example/issues/13/?page=2&came_from=rss", "https://mag.example/issues/13/?page=2"},
			},
		},
		{
			// Once the backup host is known to be the intranet's mirror,
			// a page of one with a token is a copy of the other's page
			// without: the token is learned on the site, whichever name
			// the pages came under.
			name: "a token on two names of one site",
			pages: func() []fetch {
				w := newWeb("https://intranet.example.com", 20)
				backup := "https://intranet-backup.example.com"
				at := w.at
				var fs []fetch
				for i, p := range []string{"/", "/a/1.html", "/b/2.html"} {
					fs = append(fs, w.page(p, uint64(i), pageOpt{}))
				}
				for i, p := range []string{"/d/4.html", "/e/5.html", "/f/6.html"} {
					fs = append(fs, at(backup, w.page(p, uint64(10+i), pageOpt{})))
				}
				for i, p := range []string{"/", "/a/1.html", "/b/2.html"} {
					fs = append(fs, at(backup, w.page(p, uint64(i), pageOpt{})))
				}
				for i, p := range []string{"/d/4.html", "/e/5.html", "/f/6.html"} {
					f := w.page(p, uint64(10+i), pageOpt{}) // the server ignores the token
					fs = append(fs, fetch{url: f.url + "?tok=" + strconv.Itoa(0xa1+i), body: f.body})
				}
				return fs
			},
			rule:   Rule{Kind: DropParam, Name: "tok"},
			within: DefaultMirrorEvidence,
			canon: []canon{
				{"https://intranet.example.com/g/7.html?tok=z9", "https://intranet.example.com/g/7.html"},
				{"https://intranet-backup.example.com/g/7.html?tok=z9", "https://intranet.example.com/g/7.html"},
				{"https://intranet.example.com/g/7.html?id=3", "https://intranet.example.com/g/7.html?id=3"},
			},
		},
		{
			name: "session id as a path parameter under an unknown name",
			pages: func() []fetch {
				w := newWeb("http://portal.example", 18)
				var fs []fetch
				for i, p := range []string{"/", "/account/login.do", "/news/list.do", "/help"} {
					fs = append(fs, w.page(p, uint64(i), pageOpt{}))
					fs = append(fs, w.page(p+fmt.Sprintf(";zx=%08X", 0xbeef0+i), uint64(i), pageOpt{linkQuery: ";zx=1"}))
				}
				return fs
			},
			rule: Rule{Kind: DropPathParam, Name: "zx"},
			canon: []canon{
				{"http://portal.example/new.do;zx=77AA", "http://portal.example/new.do"},
				{"http://portal.example/new.do;zx=77AA?item=3", "http://portal.example/new.do?item=3"},
				{"http://portal.example/new.do;lang=de;zx=77AA", "http://portal.example/new.do;lang=de"},
				{"http://portal.example/a;zx=1/new.do", "http://portal.example/a;zx=1/new.do"},
				{"http://portal.example/new.do;lang=de", "http://portal.example/new.do;lang=de"},
				{"http://other.example/new.do;zx=77AA", "http://other.example/new.do;zx=77AA"},
			},
		},
		{
			name: "printer-friendly copy behind a parameter, without the template",
			pages: func() []fetch {
				w := newWeb("https://news.example", 12)
				var fs []fetch
				for i := range 4 {
					p := fmt.Sprintf("/stories/%d.html", 100+i)
					fs = append(fs, w.page(p, uint64(i), pageOpt{}))
					fs = append(fs, w.page(p+"?output=printable", uint64(i), pageOpt{noTemplate: true, extra: "Printed from News on 2 March 2025"}))
				}
				return fs
			},
			rule: Rule{Kind: DropParamValue, Name: "output", Value: "printable"},
			canon: []canon{
				{"https://news.example/stories/999.html?output=printable", "https://news.example/stories/999.html"},
				{"https://news.example/stories/999.html?output=json", "https://news.example/stories/999.html?output=json"},
			},
		},
		{
			name: "parameters in another order, where every parameter matters",
			pages: func() []fetch {
				w := newWeb("http://www.store.example", 13)
				var fs []fetch
				n := uint64(0)
				for _, p := range []string{"/browse", "/search", "/offers"} {
					for _, q := range [][2]string{{"cat=4", "pg=1"}, {"cat=4", "pg=2"}, {"cat=9", "pg=1"}} {
						n++
						fs = append(fs, w.page(p+"?"+q[0]+"&"+q[1], n, pageOpt{}))
						fs = append(fs, w.page(p+"?"+q[1]+"&"+q[0], n, pageOpt{}))
					}
				}
				return fs
			},
			rule: Rule{Kind: SortParams},
			canon: []canon{
				{"http://www.store.example/new?pg=7&cat=2", "http://www.store.example/new?cat=2&pg=7"},
				{"http://www.store.example/browse?cat=4&pg=3", "http://www.store.example/browse?cat=4&pg=3"},
			},
		},
		{
			name: "a suffix segment under every item",
			pages: func() []fetch {
				w := newWeb("http://blog.example", 14)
				var fs []fetch
				for i := range 4 {
					p := fmt.Sprintf("/p/%d-some-title", 7000+i*13)
					fs = append(fs, w.page(p, uint64(i), pageOpt{}))
					fs = append(fs, w.page(p+"/amp", uint64(i), pageOpt{noTemplate: true}))
				}
				return fs
			},
			rule: Rule{Kind: DropSegments, Index: 2, From: "amp"},
			canon: []canon{
				{"http://blog.example/p/1-new/amp", "http://blog.example/p/1-new"},
				{"http://blog.example/p/1-new/comments", "http://blog.example/p/1-new/comments"},
			},
		},
		{
			name: "a renamed directory",
			pages: func() []fetch {
				w := newWeb("http://univ.example", 15)
				var fs []fetch
				for i, f := range []string{"intro.htm", "ch1/a.htm", "ch2/b.htm", "ch3/c.htm"} {
					fs = append(fs, w.page("/handbook/"+f, uint64(i), pageOpt{}))
				}
				for i, f := range []string{"intro.htm", "ch1/a.htm", "ch2/b.htm", "ch3/c.htm"} {
					fs = append(fs, w.page("/hb_2019_final/"+f, uint64(i), pageOpt{}))
				}
				return fs
			},
			rule: Rule{Kind: SwapPrefix, From: "/hb_2019_final/", To: "/handbook/"},
			canon: []canon{
				{"http://univ.example/hb_2019_final/ch9/z.htm", "http://univ.example/handbook/ch9/z.htm"},
				{"http://univ.example/handbook/ch9/z.htm", "http://univ.example/handbook/ch9/z.htm"},
			},
		},
		{
			name: "a host that mirrors another",
			pages: func() []fetch {
				w := newWeb("http://static-7.cdn.example", 16)
				var fs []fetch
				for i, p := range []string{"/", "/a/x.html", "/b/y.html", "/c/z.html"} {
					o := w.page(p, uint64(i), pageOpt{})
					fs = append(fs, fetch{url: "https://origin.example" + p, body: o.body}, o)
				}
				return fs
			},
			rule: Rule{Kind: SwapHost, To: "https://origin.example"},
			canon: []canon{
				{"http://static-7.cdn.example/d/w.html?k=1", "https://origin.example/d/w.html?k=1"},
			},
		},
		{
			name: "a directory of a host that mirrors another host's directory",
			pages: func() []fetch {
				w := newWeb("https://www.gnu.example", 19)
				own := newWeb("http://people.example", 20)
				var fs []fetch
				for i, p := range []string{"/", "/~ann/", "/~bob/notes.html", "/~bob/cv.html"} {
					fs = append(fs, own.page(p, uint64(i), pageOpt{}))
				}
				files := []string{"intro.html", "ch1/a.html", "ch2/b.html", "ch3/c.html"}
				for i, f := range files {
					fs = append(fs, w.page("/software/manual/"+f, uint64(i), pageOpt{}))
				}
				for i, f := range files {
					o := w.page("/software/manual/"+f, uint64(i), pageOpt{})
					fs = append(fs, fetch{url: "http://people.example/mirrors/gnu-manual/" + f, body: o.body})
				}
				return fs
			},
			rule: Rule{Kind: SwapHost, From: "/mirrors/gnu-manual/"},
			canon: []canon{
				{"http://people.example/mirrors/gnu-manual/ch9/z.html?v=2", "https://www.gnu.example/software/manual/ch9/z.html?v=2"},
				{"http://people.example/~ann/new.html", "http://people.example/~ann/new.html"},
				{"http://people.example/mirrors/other/x.html", "http://people.example/mirrors/other/x.html"},
			},
		},
		{
			name: "a loop through a link to the directory itself",
			pages: func() []fetch {
				w := newWeb("http://wiki.example", 17)
				var fs []fetch
				for i, f := range []string{"", "x.html", "y.html", "z.html"} {
					fs = append(fs, w.page("/kb/topics/"+f, uint64(i), pageOpt{}))
				}
				for i, f := range []string{"", "x.html", "y.html", "z.html"} {
					fs = append(fs, w.page("/kb/topics/this-dir/"+f, uint64(i), pageOpt{}))
				}
				return fs
			},
			rule: Rule{Kind: SwapPrefix, From: "/kb/topics/this-dir/", To: "/kb/topics/"},
			canon: []canon{
				{"http://wiki.example/kb/topics/this-dir/this-dir/this-dir/w.html", "http://wiki.example/kb/topics/w.html"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New(Config{})
			rules := learned(crawl(d, tt.pages()))
			var got *Rule
			for i, r := range rules {
				if r.Kind == tt.rule.Kind && r.Name == tt.rule.Name && r.Value == tt.rule.Value && r.From == tt.rule.From &&
					(tt.rule.Kind == SwapHost || r.To == tt.rule.To) && r.Index == tt.rule.Index {
					got = &rules[i]
				}
			}
			if got == nil {
				t.Fatalf("rule %v not learned; learned %v", tt.rule.String(), rules)
			}
			if got.Supports < DefaultMirrorEvidence || len(got.Support) != got.Supports {
				t.Errorf("rule %v has %d supports (%d kept)", got, got.Supports, len(got.Support))
			}
			if tt.within > 0 && got.Supports > tt.within {
				t.Errorf("rule %v learned after %d pairs, want at most %d", got, got.Supports, tt.within)
			}
			for _, c := range tt.canon {
				canon, by, covered := d.Canonical(c.url)
				if canon != c.want || covered != (c.want != c.url) {
					t.Errorf("Canonical(%s) = %q (by %v), %v; want %q", c.url, canon, by, covered, c.want)
				}
			}
		})
	}
}

// A host swap is learned from pages observed on both hosts: two mirrors
// crawled at once each hold originals of the other's copies, which count
// for the swap; a path whose pages differ on the two hosts counts against
// it, whenever it was observed.
func TestHostSwapEvidence(t *testing.T) {
	w := newWeb("https://docs.example.net", 31)
	mirror := "http://mirror.example.org:8080"
	own := newWeb(mirror, 32) // the mirror host's own pages, when it is another site
	at := w.at
	page := func(path string, n uint64) fetch { return w.page(path, n, pageOpt{}) }
	shared := []fetch{page("/legal/privacy.html", 1), page("/legal/terms.html", 2), page("/help/cookies.html", 3)}
	tests := []struct {
		name  string
		pages []fetch
		swap  bool // a host swap between the two hosts is learned
	}{
		{"two mirrors crawled at once", []fetch{
			page("/guide/a.html", 1), at(mirror, page("/guide/b.html", 2)),
			page("/api/c.html", 3), at(mirror, page("/api/d.html", 4)),
			at(mirror, page("/guide/a.html", 1)), page("/guide/b.html", 2),
			at(mirror, page("/api/c.html", 3)), page("/api/d.html", 4),
		}, true},
		{"two sites that share legal pages, the other's home page seen first", []fetch{
			page("/", 10), page("/guide/a.html", 11), own.page("/", 20, pageOpt{}), shared[0], shared[1], shared[2],
			at(mirror, shared[0]), at(mirror, shared[1]), at(mirror, shared[2]),
		}, false},
		{"two sites that share legal pages, the other's home page seen after the first copy", []fetch{
			page("/", 10), page("/guide/a.html", 11), shared[0], shared[1], shared[2],
			at(mirror, shared[0]), own.page("/", 20, pageOpt{}), at(mirror, shared[1]), at(mirror, shared[2]),
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New(Config{})
			ds := crawl(d, tt.pages)
			var swap *Rule
			for _, r := range learned(ds) {
				if r.Kind == SwapHost {
					swap = &r
				}
			}
			if (swap != nil) != tt.swap {
				t.Fatalf("host swap learned: %v, want %v", swap, tt.swap)
			}
			if swap == nil {
				return
			}
			if swap.Supports > DefaultMirrorEvidence {
				t.Errorf("%v learned after %d pairs, want %d", swap, swap.Supports, DefaultMirrorEvidence)
			}
			for _, o := range []string{w.s.origin, mirror} {
				if got, _, _ := d.Canonical(o + "/api/e.html"); got != swap.To+"/api/e.html" {
					t.Errorf("Canonical(%s/api/e.html) = %s, want it on %s", o, got, swap.To)
				}
			}
		})
	}
}

// Parameters that matter (the page of a listing, the id of an item) are
// never dropped, however many copies the site also serves.
func TestParamsThatMatterAreKept(t *testing.T) {
	w := newWeb("http://forum.example", 21)
	var fs []fetch
	n := uint64(0)
	for _, p := range []string{"/list", "/thread", "/member"} {
		// Page 1 is also served without ?page: the value-specific rule
		// may learn that, never that page does not matter.
		n++
		fs = append(fs, w.page(p, n, pageOpt{}), w.page(p+"?page=1", n, pageOpt{}))
		for k := 2; k <= 4; k++ {
			n++
			fs = append(fs, w.page(p+fmt.Sprintf("?page=%d", k), n, pageOpt{}))
		}
		for id := 1; id <= 3; id++ {
			n++
			fs = append(fs, w.page(p+fmt.Sprintf("?id=%d", id), n, pageOpt{}))
			fs = append(fs, w.page(p+fmt.Sprintf("?id=%d&from=feed", id), n, pageOpt{}))
			fs = append(fs, w.page(p+fmt.Sprintf("?from=mail&id=%d", id), n, pageOpt{}))
		}
	}
	d := New(Config{})
	rules := learned(crawl(d, fs))
	for _, r := range rules {
		if r.Name == "page" && r.Kind == DropParam || r.Name == "id" {
			t.Errorf("learned %v", &r)
		}
	}
	for _, u := range []string{"/list?page=2", "/thread?page=9", "/member?id=77", "/new?id=5", "/new?page=3", "/list?id=3&page=2"} {
		canon, _, _ := d.Canonical("http://forum.example" + u)
		if !strings.Contains(canon, strings.Split(strings.Split(u, "?")[1], "&")[0]) {
			t.Errorf("Canonical(%s) = %s: a parameter that matters was dropped", u, canon)
		}
	}
	if c, _, _ := d.Canonical("http://forum.example/new?id=5&from=rss"); c != "http://forum.example/new?id=5" {
		t.Errorf("the tracking parameter was not learned: %s", c)
	}
	if c, _, _ := d.Canonical("http://forum.example/other?page=1"); c != "http://forum.example/other" {
		t.Errorf("page=1 alone was not learned: %s", c)
	}
}

// A rule is withdrawn when a URL it rewrites holds other content than its
// canonical URL; a candidate contradicted once never becomes a rule.
func TestRuleWithdrawnAndContradicted(t *testing.T) {
	w := newWeb("http://cms.example", 31)
	var fs []fetch
	for i, p := range []string{"/a", "/b", "/c"} {
		fs = append(fs, w.page(p, uint64(i), pageOpt{}), w.page(p+"?v=1", uint64(i), pageOpt{}), w.page(p+"?v=2", uint64(i), pageOpt{}))
	}
	d := New(Config{})
	rules := learned(crawl(d, fs))
	if !slices.ContainsFunc(rules, func(r Rule) bool { return r.Kind == DropParam && r.Name == "v" }) {
		t.Fatalf("learned %v, want drop ?v", rules)
	}
	// /d?v=3 turns out to differ from /d: the rule would have lost it.
	ds := crawl(d, []fetch{w.page("/d", 50, pageOpt{}), w.page("/d?v=3", 51, pageOpt{})})
	if len(ds[1].Withdrawn) != 1 || ds[1].Withdrawn[0].Name != "v" || !ds[1].Withdrawn[0].Withdrawn || len(ds[1].Withdrawn[0].Contradictions) != 1 {
		t.Fatalf("withdrawn %+v", ds[1].Withdrawn)
	}
	if c, _, covered := d.Canonical("http://cms.example/e?v=9"); covered {
		t.Errorf("a withdrawn rule still rewrites: %s", c)
	}
	if s := d.Stats(); s.Rules != 0 || s.Withdrawn != 1 {
		t.Errorf("stats %d rules, %d withdrawn", s.Rules, s.Withdrawn)
	}
	// More support does not bring it back.
	ds = crawl(d, []fetch{w.page("/f", 60, pageOpt{}), w.page("/f?v=7", 60, pageOpt{}), w.page("/g", 61, pageOpt{}), w.page("/g?v=8", 61, pageOpt{})})
	if r := learned(ds); len(r) > 0 {
		t.Errorf("relearned %v", r)
	}
}

// Soft 404s are recognised from evidence, checked by a probe: the
// second not-found page under an unrelated name asks for the probe, whose
// answer decides.
// A soft-404 host whose not-found page does not say which URL was asked
// for: two unrelated URLs that give one page are the evidence, and the
// probe checks it.
func TestSoft404Recognised(t *testing.T) {
	w := newWeb("http://old.example", 41)
	notFound := func(path string) fetch {
		words := strings.Fields("Sorry, the page you asked for was not found on this server. It may have moved. Try the search box or go back to the home page.")
		return fetch{url: w.s.origin + path, body: w.s.render(path, "Page not found", words, pageOpt{})}
	}
	tests := []struct {
		name   string
		answer func(probe string) *Page // nil: never answered (robots.txt forbids it)
		soft   bool                     // the host is then taken to serve soft 404s
	}{
		{"probe answers the not-found page", func(u string) *Page { p := pageOf(u, notFound(u[len(w.s.origin):]).body); return &p }, true},
		{"probe answers a real 404", func(u string) *Page {
			p := pageOf(u, []byte("<html><title>404</title>nothing here</html>"))
			p.Status = 404
			return &p
		}, false},
		{"probe answers 503: the evidence decides", func(u string) *Page {
			p := pageOf(u, []byte("busy"))
			p.Status = 503
			return &p
		}, true},
		{"probe never answered: the evidence decides", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := []fetch{w.page("/", 1, pageOpt{}), w.page("/news/today.html", 2, pageOpt{}),
				notFound("/archive-2019.html"), w.page("/news/yesterday.html", 3, pageOpt{}), notFound("/x/y/draft.htm")}
			d := New(Config{})
			ds := crawl(d, fs)
			probe := ds[4].Probe
			if ds[4].Kind == Soft404 || ds[4].Soft404 != nil || probe == "" || !IsProbe(probe) || IsProbe(fs[4].url) {
				t.Fatalf("second not-found page: %+v, want a probe asked for and no verdict yet", ds[4])
			}
			if !strings.HasPrefix(probe, w.s.origin+"/x/y/") || !strings.HasSuffix(probe, ".htm") {
				t.Errorf("probe %s, want in /x/y/ with the page's extension", probe)
			}
			if tt.answer == nil {
				if sig := d.ProbeUnanswered(ID(probe)); sig == nil || sig.Probe != 0 {
					t.Fatalf("unanswered probe: signature %+v", sig)
				}
			} else {
				dec := d.Probed(*tt.answer(probe))
				if tt.soft != (d.Stats().Soft404Host == 1) {
					t.Fatalf("after the probe's answer: %+v; stats %+v", dec, d.Stats())
				}
				if a := tt.answer(probe); a.Status == 200 && (dec.Kind != Soft404 || dec.Soft404 == nil || dec.Soft404.Probe != a.ID || len(dec.Soft404.Evidence) != 1) {
					t.Errorf("probe answered the not-found page: %+v", dec)
				}
				if a := tt.answer(probe); a.Status == 404 && (dec.Soft404Withdrawn == nil || !dec.Soft404Withdrawn.Withdrawn || dec.Soft404Withdrawn.ProbeStatus != 404) {
					t.Errorf("probe answered 404: %+v", dec)
				}
			}
			for _, p := range []string{"/lost/item/", "/deeper/still/missing.php", "/a.html"} {
				dec := d.Observe(pageOf(w.s.origin+p, notFound(p).body))
				if (dec.Kind == Soft404) != tt.soft || dec.Probe != "" {
					t.Errorf("%s: %v (probe %q), soft-404 host %v", p, dec.Kind, dec.Probe, tt.soft)
				}
			}
			if dec := d.Observe(pageOf(w.s.origin+"/news/later.html", w.page("/news/later.html", 4, pageOpt{}).body)); dec.Kind != Unique {
				t.Errorf("a genuine page after the soft 404: %v", dec.Kind)
			}
			if n := len(d.Rules()); n != 0 {
				t.Errorf("%d rules learned from soft 404s", n)
			}
		})
	}
}

// A not-found page that says which URL was asked for (as many do) is
// reason enough to probe its host at once: the page's links wait for the
// answer (they are the suggestions of a not-found page), and so do those
// of the pages like it fetched meanwhile. Only the probe's answer decides:
// a page that quotes its own path (a breadcrumb) on a host that answers
// real 404s loses nothing, and an unanswered probe leaves no signature.
func TestSoft404Echo(t *testing.T) {
	w := newWeb("https://shop.example.org", 43)
	oops := func(path string) fetch {
		words := strings.Fields("We looked everywhere but " + path + " could not be located. Browse our departments or contact support.")
		return fetch{url: w.s.origin + path, body: w.s.render(path, "Oops", words, pageOpt{})}
	}
	// A genuine page whose trail spells its path: /kb/setup/first-steps.
	trail := func(path string, n uint64) fetch {
		_, body := w.s.article(path, 900+n, 240, pageOpt{extra: "You are in kb setup first steps"})
		return fetch{url: w.s.origin + path, body: body}
	}
	answer := func(u string, status int) Page {
		if status != 200 {
			p := pageOf(u, []byte("<html><title>Not Found</title>no such page</html>"))
			p.Status = status
			return p
		}
		return pageOf(u, oops(u[len(w.s.origin):]).body)
	}
	tests := []struct {
		name   string
		status int  // the probe's answer; 0: never answered
		soft   bool // the pages held for the answer are soft 404s
		later  bool // a third not-found page is one (without an answer, the evidence decides)
	}{
		{"probe answers the not-found page", 200, true, true},
		{"probe answers 404", 404, false, false},
		{"probe answers 503", 503, false, true},
		{"probe never answered", 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New(Config{})
			crawl(d, []fetch{w.page("/", 1, pageOpt{}), w.page("/aisle/7/lamps.php", 2, pageOpt{})})
			first := d.Observe(pageOf(oops("/aisle/7/brass-lamp-2011.php").url, oops("/aisle/7/brass-lamp-2011.php").body))
			if first.Kind != Unique || first.Probe == "" || !strings.HasPrefix(first.Probe, w.s.origin+"/aisle/7/") {
				t.Fatalf("first not-found page: %+v, want a probe in its directory and no verdict yet", first)
			}
			second := d.Observe(pageOf(oops("/clearance-winter.php").url, oops("/clearance-winter.php").body))
			if second.Kind != Unique || second.Probe != "" || second.Await != first.Probe {
				t.Fatalf("not-found page fetched before the answer: %+v, want it to await %s", second, first.Probe)
			}
			if dec := d.Observe(pageOf(w.page("/aisle/9/rugs.php", 3, pageOpt{}).url, w.page("/aisle/9/rugs.php", 3, pageOpt{}).body)); dec.Await != "" || dec.Kind != Unique {
				t.Errorf("a genuine page while the probe is out: %+v", dec)
			}
			if tt.status == 0 {
				if sig := d.ProbeUnanswered(ID(first.Probe)); sig != nil {
					t.Errorf("unanswered probe put %+v in force on one page's word", sig)
				}
			} else {
				dec := d.Probed(answer(first.Probe, tt.status))
				if dec.Soft404Withdrawn != nil {
					t.Errorf("the probe withdrew %+v, but nothing was in force", dec.Soft404Withdrawn)
				}
				if tt.soft && (dec.Kind != Soft404 || dec.Soft404 == nil || dec.Soft404.Of != ID(oops("/aisle/7/brass-lamp-2011.php").url)) {
					t.Errorf("probe answered the not-found page: %+v", dec)
				}
			}
			for _, f := range []fetch{oops("/aisle/7/brass-lamp-2011.php"), oops("/clearance-winter.php")} {
				if _, _, soft := d.Soft404Match(pageOf(f.url, f.body)); soft != tt.soft {
					t.Errorf("%s held for the answer: soft 404 %v, want %v", f.url, soft, tt.soft)
				}
			}
			if dec := d.Observe(pageOf(oops("/gift/cards/").url, oops("/gift/cards/").body)); (dec.Kind == Soft404) != tt.later || dec.Await != "" || dec.Probe != "" {
				t.Errorf("a not-found page after the answer: %+v", dec)
			}
			if dec := d.Observe(pageOf(trail("/kb/setup/first-steps", 1).url, trail("/kb/setup/first-steps", 1).body)); dec.Kind != Unique || dec.Probe != "" || dec.Await != "" {
				t.Errorf("a genuine page that spells its path, host probed: %+v", dec)
			}
		})
	}

	// A genuine page that spells its path on a host not probed yet asks
	// for the probe; a real 404 answers it and its links are followed.
	d := New(Config{})
	f := trail("/kb/setup/first-steps", 1)
	dec := d.Observe(pageOf(f.url, f.body))
	if dec.Kind != Unique || dec.Probe == "" {
		t.Fatalf("a page that spells its path: %+v, want a probe", dec)
	}
	if d.Probed(answer(dec.Probe, 404)); d.Stats().Soft404Host != 0 {
		t.Error("a host that answers real 404s has a soft-404 signature")
	}
	if _, _, soft := d.Soft404Match(pageOf(f.url, f.body)); soft {
		t.Error("the page that spelled its path is a soft 404")
	}
	// Paths of one or two words turn up in texts by chance: no probe.
	d = New(Config{})
	for i, p := range []string{"/about", "/steps.html"} {
		_, body := w.s.article(p, 950+uint64(i), 240, pageOpt{extra: "about our steps html"})
		if dec := d.Observe(pageOf(w.s.origin+p, body)); dec.Probe != "" {
			t.Errorf("%s: a probe asked for a short path found in the text", p)
		}
	}
}

// A web without duplication: no duplicate, no rule, no soft 404, and
// every URL is its own canonical URL.
func TestNoDuplication(t *testing.T) {
	d := New(Config{})
	var fs []fetch
	for h := range 5 {
		w := newWeb(fmt.Sprintf("http://site%d.example", h), uint64(50+h))
		for i := range 60 {
			p := []string{"/", fmt.Sprintf("/a/%d.html", i), fmt.Sprintf("/b/%d/", i), fmt.Sprintf("/list?page=%d", i), fmt.Sprintf("/item?id=%d&sort=new", i)}[i%5]
			if i < 5 {
				p = []string{"/", "/index.html", "/about.html", "/a/", "/b/"}[i]
			}
			fs = append(fs, w.page(p, uint64(i), pageOpt{}))
		}
	}
	for i, dec := range crawl(d, fs) {
		if dec.Kind != Unique && !(dec.Kind == Exact && strings.HasSuffix(fs[i].url, "/index.html")) {
			t.Errorf("%s: %v of %s", fs[i].url, dec.Kind, dec.OfURL)
		}
	}
	if rs := d.Rules(); len(rs) > 0 {
		t.Errorf("rules %v", rs)
	}
	for _, f := range fs {
		if c, _, covered := d.Canonical(f.url); covered {
			t.Errorf("Canonical(%s) = %s", f.url, c)
		}
	}
}

func TestRuleRewrite(t *testing.T) {
	tests := []struct {
		r    Rule
		url  string
		want string
		ok   bool
	}{
		{Rule{Kind: DropParam, Origin: "http://x.test", Name: "sid"}, "http://x.test/a?b=1&sid=9&c=2", "http://x.test/a?b=1&c=2", true},
		{Rule{Kind: DropParam, Origin: "http://x.test", Name: "sid"}, "http://x.test/a?sid=9", "http://x.test/a", true},
		{Rule{Kind: DropParam, Origin: "http://x.test", Name: "sid"}, "http://x.test/a?sids=9", "", false},
		{Rule{Kind: DropParamValue, Origin: "http://x.test", Name: "p", Value: "1"}, "http://x.test/a?p=2", "", false},
		{Rule{Kind: SortParams, Origin: "http://x.test"}, "http://x.test/a?b=1&a=2", "http://x.test/a?a=2&b=1", true},
		{Rule{Kind: SortParams, Origin: "http://x.test"}, "http://x.test/a?a=2&b=1", "", false},
		{Rule{Kind: DropSegments, Origin: "http://x.test", Index: 1, From: "amp"}, "http://x.test/p/amp/", "http://x.test/p/", true},
		{Rule{Kind: DropSegments, Origin: "http://x.test", Index: 1, From: "amp"}, "http://x.test/p/amp", "http://x.test/p", true},
		{Rule{Kind: DropSegments, Origin: "http://x.test", Index: 0, From: "amp"}, "http://x.test/amp", "http://x.test/", true},
		{Rule{Kind: DropSegments, Origin: "http://x.test", Index: 1, From: "amp"}, "http://x.test/p/ampx", "", false},
		{Rule{Kind: ReplaceSegments, Origin: "http://x.test", Index: 0, From: "old", To: "new"}, "http://x.test/old/a.html?q", "http://x.test/new/a.html?q", true},
		{Rule{Kind: SwapPrefix, Origin: "http://x.test", From: "/print/", To: "/"}, "http://x.test/print/a/b", "http://x.test/a/b", true},
		{Rule{Kind: SwapHost, Origin: "http://x.test", To: "https://www.x.test"}, "http://x.test/a?b", "https://www.x.test/a?b", true},
		{Rule{Kind: SwapHost, Origin: "http://x.test", To: "https://www.x.test"}, "http://x.test:81/a", "", false},
		{Rule{Kind: NumberPattern, Origin: "http://x.test", From: "http://x.test/cal/#/#/"}, "http://x.test/cal/2031/07/", "", true},
	}
	for _, tt := range tests {
		got, ok := tt.r.Rewrite(tt.url)
		if got != tt.want || ok != tt.ok {
			t.Errorf("%v.Rewrite(%s) = %q, %v; want %q, %v", &tt.r, tt.url, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRuleKindNames(t *testing.T) {
	for _, k := range RuleKinds() {
		got, err := ParseRuleKind(k.String())
		if err != nil || got != k {
			t.Errorf("ParseRuleKind(%q) = %v, %v", k, got, err)
		}
	}
	if _, err := ParseRuleKind("bogus"); err == nil {
		t.Error("an unknown kind parsed")
	}
}

// Restoring pages and rules gives the detector that was stopped.
func TestRestore(t *testing.T) {
	w := newWeb("http://r.example", 61)
	var fs []fetch
	for i, p := range []string{"/a", "/b", "/c", "/d"} {
		fs = append(fs, w.page(p, uint64(i), pageOpt{}), w.page(p+"?tok=x"+p[1:], uint64(i), pageOpt{}), w.page(p+"?tok=y", uint64(i), pageOpt{}))
	}
	d := New(Config{})
	crawl(d, fs)
	want := d.Rules()
	r := New(Config{})
	for _, f := range fs {
		r.Restore(pageOf(f.url, f.body))
	}
	for _, rule := range want {
		r.RestoreRule(rule)
	}
	got := r.Rules()
	key := func(r Rule) string { return r.Key() }
	if !slices.Equal(mapSlice(got, key), mapSlice(want, key)) {
		t.Errorf("restored %v, want %v", got, want)
	}
}

func mapSlice[T, U any](s []T, f func(T) U) []U {
	out := make([]U, len(s))
	for i, x := range s {
		out[i] = f(x)
	}
	return out
}

// A copy fetched before the rule was learned stands for its canonical
// URL: the crawler, which knows the copy, fetches neither again.
func TestCanonicalPrefersObservedCopy(t *testing.T) {
	w := newWeb("http://app.example", 71)
	var fs []fetch
	for i, p := range []string{"/a", "/b", "/c"} {
		fs = append(fs, w.page(p, uint64(i), pageOpt{}), w.page(p+"?tk=1"+p[1:], uint64(i), pageOpt{}), w.page(p+"?tk=2", uint64(i), pageOpt{}))
	}
	// Only the copy of /d was fetched, before the rule.
	fs = append([]fetch{w.page("/d?tk=9", 9, pageOpt{})}, fs...)
	d := New(Config{})
	crawl(d, fs)
	for _, tt := range []struct{ url, want string }{
		{"http://app.example/d", "http://app.example/d?tk=9"},
		{"http://app.example/d?tk=5", "http://app.example/d?tk=9"},
		{"http://app.example/d?tk=9", "http://app.example/d?tk=9"},
		{"http://app.example/e?tk=5", "http://app.example/e"},
	} {
		got, _, covered := d.Canonical(tt.url)
		if got != tt.want || covered != (tt.want != tt.url) {
			t.Errorf("Canonical(%s) = %s, %v; want %s", tt.url, got, covered, tt.want)
		}
	}
}

// A candidate rewrite with support but not yet a rule is reported by
// Unproven with the copies it still needs; a rule, or no candidate, is not.
func TestUnproven(t *testing.T) {
	w := newWeb("http://u.example", 81)
	d := New(Config{})
	crawl(d, []fetch{w.page("/a", 1, pageOpt{}), w.page("/a?zz=1", 1, pageOpt{})})
	if _, need, ok := d.Unproven("http://u.example/b?zz=7"); !ok || need != DefaultMirrorEvidence-1 {
		t.Errorf("Unproven = %d, %v; want %d, true", need, ok, DefaultMirrorEvidence-1)
	}
	if _, _, ok := d.Unproven("http://u.example/b?yy=7"); ok {
		t.Error("a URL no candidate covers is unproven")
	}
	// Another copy on the path that gave the pair brings no evidence the
	// candidate lacks (it needs other paths): it waits, but not for ever.
	idle := 0
	for range maxIdle + 1 {
		if _, need, ok := d.Unproven("http://u.example/a?zz=2&q=1"); ok && need == 0 {
			idle++
		}
	}
	if idle != maxIdle {
		t.Errorf("a copy on a path already seen waited %d times, want %d", idle, maxIdle)
	}
	crawl(d, []fetch{w.page("/b", 2, pageOpt{}), w.page("/b?zz=2", 2, pageOpt{}), w.page("/c", 3, pageOpt{}), w.page("/c?zz=3", 3, pageOpt{})})
	if _, _, ok := d.Unproven("http://u.example/d?zz=7"); ok {
		t.Error("a URL a rule covers is unproven")
	}
}
