package dedup

import (
	"strings"
	"testing"
)

// A mirror holds a page its original does not: once the canonical URL a
// rule gives it answers 404, the rule no longer covers the mirror's URL,
// and only that one; a restart that restores the 404 keeps it so.
func TestNotFoundCanonicalUncovers(t *testing.T) {
	orig := newWeb("http://docs.example", 21)
	var fs []fetch
	files := []string{"intro.html", "a/one.html", "b/two.html", "c/three.html"}
	for i, f := range files {
		fs = append(fs, orig.page("/manual/"+f, uint64(i), pageOpt{}))
	}
	for i, f := range files {
		fs = append(fs, fetch{url: "http://mirror.example/pub/manual/" + f, body: orig.page("/manual/"+f, uint64(i), pageOpt{}).body})
	}
	d := New(Config{})
	if rules := learned(crawl(d, fs)); len(rules) == 0 {
		t.Fatal("no rule learned")
	}
	only := "http://mirror.example/pub/manual/d/only-here.html"
	other := "http://mirror.example/pub/manual/d/also.html"
	for _, u := range []string{only, other} {
		if _, _, covered := d.Canonical(u); !covered {
			t.Fatalf("%s not covered by the rule", u)
		}
	}
	canon, _, _ := d.Canonical(only)
	d.NotFound(ID(canon))
	if got, by, covered := d.Canonical(only); covered || got != only || by != nil {
		t.Errorf("after its canonical URL answered 404, Canonical(%s) = %q, %v, %v; want itself, uncovered", only, got, by, covered)
	}
	if _, _, covered := d.Canonical(other); !covered {
		t.Errorf("%s is no longer covered", other)
	}

	// The same after a restart, from the pages the store kept.
	r := New(Config{})
	for _, f := range fs {
		r.Restore(pageOf(f.url, f.body))
	}
	nf := pageOf(canon, []byte("<title>Not Found</title><p>The requested URL was not found on this server.</p>"))
	nf.Status = 404
	r.Restore(nf)
	for _, rule := range d.AllRules() {
		r.RestoreRule(rule)
	}
	if _, _, covered := r.Canonical(only); covered {
		t.Errorf("after a restart, %s is covered again", only)
	}
	if _, _, covered := r.Canonical(other); !covered {
		t.Errorf("after a restart, %s is not covered", other)
	}
}

// A replay that learns a stored swap the other way round (its pages came
// back in the other order) gives way to the stored rule: the two together
// would send URLs back and forth.
func TestRestoreRuleReplacesItsInverse(t *testing.T) {
	w := newWeb("http://docs.example", 22)
	var fs []fetch
	for i, f := range []string{"a.html", "b/b.html", "c/c.html", "d/d.html"} {
		o := w.page("/manual/"+f, uint64(i), pageOpt{})
		fs = append(fs, fetch{url: "http://docs.example/copy/" + f, body: o.body}, o) // the copy first
	}
	d := New(Config{})
	replayed := learned(crawl(d, fs))
	if len(replayed) != 1 || replayed[0].Kind != SwapPrefix || replayed[0].From != "/manual/" {
		t.Fatalf("replay learned %v, want /manual/ → /copy/", replayed)
	}
	stored := Rule{Kind: SwapPrefix, Origin: "http://docs.example", From: "/copy/", To: "/manual/", Supports: 3}
	d.RestoreRule(stored)
	rules := d.AllRules()
	if len(rules) != 1 || rules[0].Key() != stored.Key() || d.Stats().Rules != 1 {
		t.Fatalf("rules after restore %v (%d in force), want only the stored one", rules, d.Stats().Rules)
	}
	if got, _, covered := d.Canonical("http://docs.example/copy/e.html"); !covered || got != "http://docs.example/manual/e.html" {
		t.Errorf("Canonical = %q, %v", got, covered)
	}
}

// The echo sign (a not-found page spells the path asked for) confirmed
// by the probes of three hosts, and found wrong on none, is a prior: the
// next host's page that spells its path is its not-found page without a
// probe of its own. A page found genuine on any host (its probe answered
// 404, or another page) ends the prior; a host probed before is never
// taken on it. The words are none lidi's code knows.
func TestSoft404EchoPrior(t *testing.T) {
	hosts := []string{"http://a.example", "https://b.example.org", "http://c.example:8080", "http://d.example", "http://e.example"}
	oops := func(origin, path string, seed uint64) Page {
		w := newWeb(origin, seed)
		words := strings.Fields("Hmm, " + path + " is not something we have. Try the catalogue or write to us.")
		return pageOf(origin+path, w.s.render(path, "Lost", words, pageOpt{}))
	}
	paths := []string{"/shop/old-brass-lamp.php", "/news/2019/summer-sale.html", "/kb/setup/first-steps/"}
	// probeHost observes a not-found page on host i, which asks for the
	// probe, and answers it with status (200: the not-found page).
	probeHost := func(t *testing.T, d *Detector, i, status int) {
		t.Helper()
		dec := d.Observe(oops(hosts[i], paths[i%len(paths)], uint64(i)))
		if dec.Probe == "" || dec.Kind != Unique {
			t.Fatalf("%s: %+v, want a probe", hosts[i], dec)
		}
		a := oops(hosts[i], dec.Probe[len(hosts[i]):], uint64(i))
		if status != 200 {
			a = pageOf(dec.Probe, []byte("<html><title>Not Found</title>no such page</html>"))
			a.Status = status
		}
		d.Probed(a)
	}
	tests := []struct {
		name    string
		answers []int // the probes' answers on the first hosts
		prior   bool  // the next host's not-found page is one at once
	}{
		{"confirmed on three hosts", []int{200, 200, 200}, true},
		{"confirmed on two hosts", []int{200, 200}, false},
		{"found genuine on one host", []int{200, 404, 200, 200}, false},
		{"the probe answered another page on one host", []int{-1, 200, 200, 200}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := New(Config{})
			for i, st := range tt.answers {
				if st == -1 {
					// The host's not-found page is another page: the page
					// that spelled its path was a genuine one.
					dec := d.Observe(oops(hosts[i], paths[0], uint64(i)))
					other := pageOf(dec.Probe, newWeb(hosts[i], 99).page("/x", 1, pageOpt{}).body)
					d.Probed(other)
					continue
				}
				probeHost(t, d, i, st)
			}
			next := hosts[len(hosts)-1]
			dec := d.Observe(oops(next, "/archive/winter-catalogue.html", 7))
			if got := dec.Kind == Soft404 && dec.Probe == "" && dec.Soft404 != nil && dec.Soft404.Prior >= 3; got != tt.prior {
				t.Fatalf("not-found page on the next host: %+v (signature %+v), want soft 404 on the prior %v", dec, dec.Soft404, tt.prior)
			}
			if !tt.prior && dec.Probe == "" {
				t.Errorf("without the prior no probe was asked for: %+v", dec)
			}
			later := d.Observe(oops(next, "/gift/cards/red-ribbon.php", 7))
			if (later.Kind == Soft404) != tt.prior {
				t.Errorf("a second not-found page on the next host: %v, want soft 404 %v", later.Kind, tt.prior)
			}
		})
	}
}

// Three names of one page (the home page at /, its index file and a
// mirror directory's copy) are no soft-404 evidence: the index file and
// the copy share nothing, but each is a name of / as well, once / is
// observed (before it, they are two unrelated URLs that answer one page,
// and the probe decides). TestSoft404Recognised checks that two
// not-found pages under unrelated names still are.
func TestSoft404NotThreeNamesOfOnePage(t *testing.T) {
	w := newWeb("http://intranet.example", 47)
	home := w.page("/", 1, pageOpt{})
	for _, order := range [][]string{{"/", "/start.jsp", "/copy/"}, {"/start.jsp", "/", "/copy/"}, {"/copy/", "/", "/start.jsp"}} {
		d := New(Config{})
		crawl(d, []fetch{w.page("/news/a.html", 2, pageOpt{}), w.page("/news/b.html", 3, pageOpt{})})
		for _, p := range order {
			if dec := d.Observe(pageOf(w.s.origin+p, home.body)); dec.Probe != "" || dec.Kind == Soft404 {
				t.Errorf("order %v: %s asked for a probe (%s) or is a soft 404: %v", order, p, dec.Probe, dec.Kind)
			}
		}
	}
}
