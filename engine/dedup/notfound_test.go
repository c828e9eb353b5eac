package dedup

import "testing"

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
