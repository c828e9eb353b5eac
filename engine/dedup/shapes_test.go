package dedup

import (
	"fmt"
	"strings"
	"testing"
)

// Index aliases and case-insensitive paths, on webs whose names no code
// of lidi knows: the index file is "welcome.jsp" or "Start.HTM", the
// paths are mixed case.
func TestIndexAndCaseShapes(t *testing.T) {
	t.Run("index alias", func(t *testing.T) {
		for _, name := range []string{"welcome.jsp", "Start.HTM", "index.html"} {
			w := newWeb("http://intranet.example", 33)
			var fs []fetch
			for i, dir := range []string{"/", "/people/", "/projects/alpha/", "/news/"} {
				f := w.page(dir, uint64(i), pageOpt{})
				fs = append(fs, f, w.page(dir+name, uint64(i), pageOpt{}))
			}
			d := New(Config{})
			rs := learned(crawl(d, fs))
			if len(rs) != 1 || rs[0].Kind != DropIndex || rs[0].Name != name || rs[0].Supports != DefaultMirrorEvidence {
				t.Fatalf("%s: learned %v, want drop index %s from %d pairs", name, rs, name, DefaultMirrorEvidence)
			}
			if c, _, _ := d.Canonical("http://intranet.example/other/" + name + "?x=1"); c != "http://intranet.example/other/?x=1" {
				t.Errorf("%s: Canonical = %s", name, c)
			}
			if c, _, covered := d.Canonical("http://intranet.example/other/" + name + "x"); covered {
				t.Errorf("%s: another file rewritten to %s", name, c)
			}
		}
	})
	t.Run("one directory's alias is no rule", func(t *testing.T) {
		w := newWeb("http://intranet.example", 34)
		var fs []fetch
		for i := range 4 {
			// The same directory under three names, and other pages.
			fs = append(fs, w.page("/docs/", 1, pageOpt{}), w.page(fmt.Sprintf("/docs/v%d.html", i), 1, pageOpt{}))
		}
		if rs := learned(crawl(New(Config{}), fs)); len(rs) > 0 {
			t.Errorf("learned %v from one directory", rs)
		}
	})
	t.Run("case", func(t *testing.T) {
		w := newWeb("https://www.shop.example", 35)
		var fs []fetch
		for i, p := range []string{"/Products/Widget-Blue.aspx", "/About/Team.aspx", "/products/", "/Support/FAQ.aspx"} {
			f := w.page(strings.ToLower(p), uint64(i), pageOpt{})
			fs = append(fs, f, w.page(p, uint64(i), pageOpt{}))
		}
		d := New(Config{})
		ds := crawl(d, fs)
		rs := learned(ds)
		if len(rs) != 1 || rs[0].Kind != FoldCase || rs[0].Supports != DefaultMirrorEvidence {
			t.Fatalf("learned %v, want fold-case from %d pairs", rs, DefaultMirrorEvidence)
		}
		if c, _, _ := d.Canonical("https://www.shop.example/Cart/View%2FAll.aspx?Item=B"); c != "https://www.shop.example/cart/view%2Fall.aspx?Item=B" {
			t.Errorf("Canonical = %s; the query and escapes keep their case", c)
		}
		// A page that differs from its lower-case spelling withdraws it.
		g := newWeb("https://www.shop.example", 36)
		d.Observe(pageOf("https://www.shop.example/legal/x.aspx", g.page("/legal/x.aspx", 1, pageOpt{}).body))
		if dec := d.Observe(pageOf("https://www.shop.example/Legal/X.aspx", g.page("/Legal/X.aspx", 2, pageOpt{}).body)); len(dec.Withdrawn) != 1 {
			t.Errorf("withdrawn %v, want fold-case", dec.Withdrawn)
		}
	})
	t.Run("case-sensitive host", func(t *testing.T) {
		// Two spellings, two pages: no rule.
		w := newWeb("http://unix.example", 37)
		var fs []fetch
		for i, p := range []string{"/Makefile", "/README", "/src/Main.c"} {
			fs = append(fs, w.page(strings.ToLower(p), uint64(2*i), pageOpt{}), w.page(p, uint64(2*i+1), pageOpt{}))
		}
		if rs := learned(crawl(New(Config{}), fs)); len(rs) > 0 {
			t.Errorf("learned %v", rs)
		}
	})
}

// Two directories of one host crawled at once, a copy and its original,
// under names no code of lidi knows: the crawl meets some pages first in
// the copy and some in the original, and each directory has pages the
// crawl has not met on the other side yet. The pages of a directory that
// are the originals of copies in the other are evidence of the mirror, not
// pages of its own; directories that merely share a few pages are no
// mirror.
func TestDirectoryMirrorRace(t *testing.T) {
	for _, tc := range []struct {
		name          string
		a, b          string // the directories
		shared, alone int    // pages in both, pages in each alone
		firstB        func(i int) bool
		want          bool // a swap of a and b is learned
	}{
		{"copy met first half the time", "/handbook/", "/handbook-2019-bak/", 10, 4, func(i int) bool { return i%2 == 1 }, true},
		{"copy met first mostly", "/kb/articles/", "/archive/kb-articles/", 10, 5, func(i int) bool { return i%3 != 0 }, true},
		{"original met first", "/guide/", "/guide_final/", 10, 4, func(int) bool { return false }, true},
		{"a few shared pages", "/legal/", "/about/", 3, 10, func(i int) bool { return i%2 == 1 }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWeb("http://wiki.example", 41)
			var fs []fetch
			for i := range tc.alone {
				fs = append(fs, w.page(fmt.Sprintf("%sown-a-%d.html", tc.a, i), uint64(100+i), pageOpt{}),
					w.page(fmt.Sprintf("%sown-b-%d.html", tc.b, i), uint64(200+i), pageOpt{}))
			}
			for i := range tc.shared {
				file := fmt.Sprintf("sub-%d/page-%d.html", i%3, i)
				a, b := w.page(tc.a+file, uint64(i), pageOpt{}), w.page(tc.b+file, uint64(i), pageOpt{})
				if tc.firstB(i) {
					a, b = b, a
				}
				fs = append(fs, a, b)
			}
			d := New(Config{})
			var swaps []Rule
			for _, r := range learned(crawl(d, fs)) {
				if r.Kind == SwapPrefix {
					swaps = append(swaps, r)
				}
			}
			if !tc.want {
				if len(swaps) > 0 {
					t.Fatalf("learned %v", swaps)
				}
				return
			}
			if len(swaps) != 1 || !(swaps[0].From == tc.a && swaps[0].To == tc.b || swaps[0].From == tc.b && swaps[0].To == tc.a) {
				t.Fatalf("learned %v, want a swap of %s and %s", swaps, tc.a, tc.b)
			}
			r := swaps[0]
			if c, _, _ := d.Canonical("http://wiki.example" + r.From + "sub-9/new.html"); c != "http://wiki.example"+r.To+"sub-9/new.html" {
				t.Errorf("Canonical = %s", c)
			}
		})
	}
}

// A pair that differs by two rewrites (a directory's index file under a
// tracking parameter: /c/default.asp a copy of /c/?src=nav) may be the one
// that completes one of them: that rule alone does not bring the pair
// together, which is no reason to refuse it for good; the next pair that
// differs by it alone makes it a rule. The parameter's name is one no code
// of lidi knows.
func TestRuleCompletedByPairOfTwoRewrites(t *testing.T) {
	w := newWeb("http://lab.example", 43)
	fs := []fetch{
		w.page("/a/", 1, pageOpt{}), w.page("/a/?src=menu", 1, pageOpt{}),
		w.page("/b/", 2, pageOpt{}), w.page("/b/?src=footer", 2, pageOpt{}),
		w.page("/c/?src=nav", 3, pageOpt{}), w.page("/c/default.asp", 3, pageOpt{}),
		w.page("/d/", 4, pageOpt{}), w.page("/d/?src=side", 4, pageOpt{}),
	}
	d := New(Config{})
	rs := learned(crawl(d, fs))
	if len(rs) != 1 || rs[0].Kind != DropParam || rs[0].Name != "src" {
		t.Fatalf("learned %v, want drop-param src", rs)
	}
	if c, _, _ := d.Canonical("http://lab.example/e/x.html?src=top"); c != "http://lab.example/e/x.html" {
		t.Errorf("Canonical = %s", c)
	}
	if c, _, covered := d.Canonical("http://lab.example/e/x.html?id=7"); covered {
		t.Errorf("another parameter dropped: %s", c)
	}
}

// A page fetched on a host before the host was found to be its twin's
// alias, under a parameter its twin's rules drop only later, stands for
// its canonical URL once both rules are in force: the page is not fetched
// again. Names no code of lidi knows.
func TestCopyStandsForCanonicalThroughRules(t *testing.T) {
	const a, b = "http://docs.example", "http://www.docs.example"
	w := newWeb(a, 45)
	fs := []fetch{
		w.page("/", 1, pageOpt{}), w.at(b, w.page("/", 1, pageOpt{})),
		w.at(b, w.page("/guide.html?visit=1", 2, pageOpt{})),
		w.page("/intro.html", 3, pageOpt{}), w.at(b, w.page("/intro.html", 3, pageOpt{})),
	}
	for i := range 3 {
		p := fmt.Sprintf("/p%d.html", i)
		fs = append(fs, w.page(p, uint64(10+i), pageOpt{}), w.page(fmt.Sprintf("%s?visit=%d", p, 20+i), uint64(10+i), pageOpt{}))
	}
	d := New(Config{})
	var kinds []RuleKind
	for _, r := range learned(crawl(d, fs)) {
		kinds = append(kinds, r.Kind)
		if r.Kind == SwapHost && (r.Origin != b || r.To != a) {
			t.Fatalf("learned %v, want %s swapped for %s", r, b, a)
		}
	}
	if len(kinds) != 2 || kinds[0] != SwapHost || kinds[1] != DropParam {
		t.Fatalf("learned %v, want a host swap, then drop-param visit", kinds)
	}
	if c, _, covered := d.Canonical(a + "/guide.html"); !covered || c != b+"/guide.html?visit=1" {
		t.Errorf("Canonical(%s/guide.html) = %s, %v; want the copy fetched before, %s/guide.html?visit=1", a, c, covered, b)
	}
	if c, _, covered := d.Canonical(a + "/other.html"); covered {
		t.Errorf("Canonical(%s/other.html) = %s, covered", a, c)
	}
}

// Two sibling directories met at once hold copies each of the other's
// pages: each pair supports the swap either way, and 3 pairs in all make
// the rule, whichever side their copies were met on.
func TestDirectoryMirrorBothWays(t *testing.T) {
	w := newWeb("http://docs.example", 43)
	var fs []fetch
	for i, copyInOld := range []bool{false, true, false} {
		file := fmt.Sprintf("part-%d/page.html", i)
		a, b := w.page("/manual/"+file, uint64(i), pageOpt{}), w.page("/manual-1999/"+file, uint64(i), pageOpt{})
		if copyInOld {
			fs = append(fs, a, b)
		} else {
			fs = append(fs, b, a)
		}
	}
	d := New(Config{})
	rs := learned(crawl(d, fs))
	if len(rs) != 1 || rs[0].Kind != SwapPrefix || rs[0].Supports != DefaultMirrorEvidence {
		t.Fatalf("learned %v from %d pairs met on both sides, want one directory swap", rs, len(fs)/2)
	}
	canon, _, _ := d.Canonical("http://docs.example" + rs[0].From + "part-9/other.html")
	if canon != "http://docs.example"+rs[0].To+"part-9/other.html" {
		t.Errorf("Canonical = %s", canon)
	}
	if _, _, covered := d.Canonical("http://docs.example" + rs[0].To + "part-9/other.html"); covered {
		t.Errorf("both ways in force: %v", d.Rules())
	}
}
