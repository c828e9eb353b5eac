package dedup

import (
	"fmt"
	"testing"
)

// A shape learned on three hosts from full evidence needs one pair on the
// next; a parameter that a pair anywhere showed to matter never does.
// The parameter and path names are ones no code of lidi names.
func TestPriorAcrossHosts(t *testing.T) {
	var n uint64
	// noisy serves three pages of a site, each also under ?name=value
	// with two values: full evidence that the parameter is noise.
	noisy := func(origin, name string, seed uint64) []fetch {
		w := newWeb(origin, seed)
		var fs []fetch
		for i, p := range []string{"/a.html", "/b/c.html", "/d/"} {
			n++
			f := w.page(p, n, pageOpt{})
			fs = append(fs, f, w.page(p+fmt.Sprintf("?%s=v%d", name, i%2), n, pageOpt{}))
		}
		return fs
	}
	t.Run("one pair after three hosts", func(t *testing.T) {
		d := New(Config{})
		for k := range 3 {
			for _, r := range learned(crawl(d, noisy(fmt.Sprintf("http://shop%d.example", k), "campaign", uint64(60+k)))) {
				if r.Prior != 0 {
					t.Errorf("%v learned with a prior on one of the first hosts", r.String())
				}
			}
		}
		w := newWeb("https://fourth.example.org", 70)
		f := w.page("/x/y.html", 99, pageOpt{})
		ds := crawl(d, []fetch{f, w.page("/x/y.html?campaign=spring", 99, pageOpt{})})
		rs := learned(ds)
		if len(rs) != 1 || rs[0].Kind != DropParam || rs[0].Name != "campaign" || rs[0].Prior != priorHosts || rs[0].Supports != 1 {
			t.Fatalf("learned %v from one pair, want drop ?campaign with a prior of %d hosts", rs, priorHosts)
		}
		if c, _, _ := d.Canonical("https://fourth.example.org/other?campaign=x&q=1"); c != "https://fourth.example.org/other?q=1" {
			t.Errorf("Canonical = %s", c)
		}
		// A page that differs withdraws it as any rule.
		g := newWeb("https://fourth.example.org", 71)
		d.Observe(pageOf(g.page("/z.html", 500, pageOpt{}).url, g.page("/z.html", 500, pageOpt{}).body))
		other := g.page("/z.html?campaign=q", 501, pageOpt{})
		if dec := d.Observe(pageOf(other.url, other.body)); len(dec.Withdrawn) != 1 {
			t.Errorf("withdrawn %v, want the rule learned from the prior", dec.Withdrawn)
		}
	})
	t.Run("a parameter that matters somewhere", func(t *testing.T) {
		d := New(Config{})
		for k := range 3 {
			crawl(d, noisy(fmt.Sprintf("http://blog%d.example", k), "p", uint64(80+k)))
		}
		// On a forum, ?p is the page of a thread.
		forum := newWeb("http://forum.example", 90)
		crawl(d, []fetch{forum.page("/t/1?p=2", 1, pageOpt{}), forum.page("/t/1?p=3", 2, pageOpt{})})
		w := newWeb("http://fifth.example", 91)
		rs := learned(crawl(d, []fetch{w.page("/a.html", 3, pageOpt{}), w.page("/a.html?p=1", 3, pageOpt{})}))
		for _, r := range rs {
			if r.Name == "p" && r.Kind == DropParam {
				t.Errorf("learned %v from one pair after ?p was shown to matter", r.String())
			}
		}
	})
}

// The www twin is the one host alias with a prior: three hosts that
// answer on both names make the fourth's first pair enough.
func TestPriorWWWTwin(t *testing.T) {
	d := New(Config{})
	for k := range 4 {
		host := fmt.Sprintf("site%d.example", k)
		w := newWeb("http://www."+host, uint64(100+k))
		var fs []fetch
		for i, p := range []string{"/", "/a.html", "/b/c.html"} {
			f := w.page(p, uint64(i), pageOpt{})
			fs = append(fs, f, w.at("http://"+host, f))
		}
		rs := learned(crawl(d, fs))
		if len(rs) != 1 || rs[0].Kind != SwapHost || rs[0].From != "" {
			t.Fatalf("%s: learned %v, want the whole host swapped", host, rs)
		}
		want := 0
		if k == 3 {
			want = priorHosts
		}
		if rs[0].Prior != want || k == 3 && rs[0].Supports != 1 {
			t.Errorf("%s: %v from %d pairs, prior %d; want prior %d", host, rs[0].String(), rs[0].Supports, rs[0].Prior, want)
		}
	}
}
