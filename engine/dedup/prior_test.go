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
			checkFirstHosts(t, k, learned(crawl(d, noisy(fmt.Sprintf("http://shop%d.example", k), "campaign", uint64(60+k)))))
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

// twins serves three pages of w (its home page first), each also on its
// twin origin.
func twins(w *web, twin string) []fetch {
	var fs []fetch
	for i, p := range []string{"/", "/a.html", "/b/c.html"} {
		f := w.page(p, uint64(i), pageOpt{})
		fs = append(fs, f, w.at(twin, f))
	}
	return fs
}

// The www twin is the one host alias with a prior: three hosts that
// answer on both names make the fourth's first pair enough.
func TestPriorWWWTwin(t *testing.T) {
	d := New(Config{})
	for k := range 4 {
		host := fmt.Sprintf("site%d.example", k)
		w := newWeb("http://www."+host, uint64(100+k))
		rs := learned(crawl(d, twins(w, "http://"+host)))
		if len(rs) != 1 || rs[0].Kind != SwapHost || rs[0].From != "" {
			t.Fatalf("%s: learned %v, want the whole host swapped", host, rs)
		}
		want, pairs := 0, wwwTwinPairs
		switch k {
		case priorHosts - 1:
			want, pairs = k, wwwTwinPairs-1 // pooled: its home page pair
		case priorHosts:
			want, pairs = priorHosts, 1
		}
		if rs[0].Prior != want || rs[0].Supports != pairs {
			t.Errorf("%s: %v from %d pairs, prior %d; want prior %d from %d pairs", host, rs[0].String(), rs[0].Supports, rs[0].Prior, want, pairs)
		}
	}
	// With the prior, a pair of pages other than the home page is enough;
	// a twin observed that differs withdraws the swap.
	w := newWeb("http://www.site9.example", 109)
	f := w.page("/deep/a.html", 1, pageOpt{})
	rs := learned(crawl(d, []fetch{f, w.at("http://site9.example", f)}))
	if len(rs) != 1 || rs[0].Kind != SwapHost || rs[0].Prior != priorHosts {
		t.Fatalf("site9.example: learned %v from one pair of a page not the home page, want the host swapped", rs)
	}
	g := w.page("/other.html", 2, pageOpt{})
	h := w.at("http://site9.example", w.page("/other.html", 3, pageOpt{}))
	if ds := crawl(d, []fetch{g, h}); len(ds[0].Withdrawn)+len(ds[1].Withdrawn) != 1 {
		t.Errorf("twins that differ withdrew %v and %v, want the swap", ds[0].Withdrawn, ds[1].Withdrawn)
	}
}

// The www twin needs its home page and one more pair, without a prior;
// another alias, or a twin whose pages differ, needs more.
func TestWWWTwinEvidence(t *testing.T) {
	twins := func(d *Detector, a, b string, seed uint64, differ bool) []Rule {
		w := newWeb(a, seed)
		var fs []fetch
		for i, p := range []string{"/", "/a.html", "/b/c.html"} {
			f := w.page(p, uint64(i), pageOpt{})
			g := w.at(b, f)
			if differ && i == 1 {
				g = w.at(b, w.page(p, 50, pageOpt{}))
			}
			fs = append(fs, f, g)
		}
		if differ {
			return learned(crawl(d, fs)) // two pairs besides the pages that differ
		}
		return learned(crawl(d, fs[:2*wwwTwinPairs]))
	}
	if rs := twins(New(Config{}), "http://www.one.example", "http://one.example", 120, false); len(rs) != 1 || rs[0].Kind != SwapHost || rs[0].Supports != wwwTwinPairs {
		t.Errorf("www twin: learned %v, want the host swapped after %d pairs", rs, wwwTwinPairs)
	}
	if rs := twins(New(Config{}), "http://one.example", "http://mirror.example", 121, false); len(rs) > 0 {
		t.Errorf("another alias: learned %v from %d pairs", rs, wwwTwinPairs)
	}
	if rs := twins(New(Config{}), "http://www.two.example", "http://two.example", 122, true); len(rs) > 0 {
		t.Errorf("twins whose pages differ: learned %v", rs)
	}
}

// checkFirstHosts checks the rules the k-th host of a shape learned
// (from 0), the hosts crawled one after the other: each host before
// lowers the pairs the next needs by one, so the first needs full
// evidence (3 pairs) and has no prior, the second 2 pairs with one host
// vouching, the third 1 pair with two (its first rule: a later pair may
// make a more general one, ?p whatever its value after ?p=1).
func checkFirstHosts(t *testing.T, k int, rs []Rule) {
	t.Helper()
	if len(rs) == 0 {
		t.Fatalf("host %d learned nothing", k)
	}
	if r, want := rs[0], [...]int{3, 2, 1}[k]; r.Prior != k || r.Supports != want {
		t.Errorf("%v learned from %d pairs with %d hosts vouching, want %d and %d", r.String(), r.Supports, r.Prior, want, k)
	}
}

// What other hosts proved is the shape, whatever their names: the file a
// host serves as its directories' index (one name per host, none that
// lidi's code knows), a printer-friendly parameter named each host's own
// way. The next host needs one pair of an index alias or of a parameter
// no other host named (with that value only); a parameter that a pair
// anywhere showed to matter gets no prior; and none of these pairs is
// taken for a soft-404 page answering unrelated names.
func TestPriorShapeAcrossNames(t *testing.T) {
	t.Run("index names", func(t *testing.T) {
		d := New(Config{})
		for k, name := range []string{"welcome.jsp", "Start.HTM", "home.asp", "portada.php"} {
			w := newWeb(fmt.Sprintf("http://intranet%d.example", k), uint64(200+k))
			var fs []fetch
			for i, dir := range []string{"/", "/people/", "/projects/alpha/"} {
				f := w.page(dir, uint64(i), pageOpt{})
				fs = append(fs, f, w.page(dir+name, uint64(i), pageOpt{}))
			}
			ds := crawl(d, fs)
			for _, dec := range ds {
				if dec.Probe != "" {
					t.Errorf("%s: probe %s asked for an index alias", name, dec.Probe)
				}
			}
			rs := learned(ds)
			// Each host before lowers the pairs by one; from the
			// third on, one pair.
			want, supports := k, [...]int{3, 2, 1, 1}[k]
			if len(rs) != 1 || rs[0].Kind != DropIndex || rs[0].Name != name || rs[0].Prior != want || rs[0].Supports != supports {
				t.Fatalf("%s: learned %v, want drop index %s from %d pairs with a prior of %d", name, rs, name, supports, want)
			}
		}
	})
	// printable serves pages at paths, each also under ?name=value.
	printable := func(origin, name, value string, seed uint64, paths ...string) []fetch {
		w := newWeb(origin, seed)
		var fs []fetch
		for i, p := range paths {
			f := w.page(p, uint64(i), pageOpt{})
			fs = append(fs, f, w.page(p+"?"+name+"="+value, uint64(i), pageOpt{}))
		}
		return fs
	}
	three := []string{"/a.html", "/b/c.html", "/d/"}
	t.Run("parameter names", func(t *testing.T) {
		d := New(Config{})
		for k, nv := range [][2]string{{"imprimir", "si"}, {"druck", "1"}, {"printable", "yes"}} {
			checkFirstHosts(t, k, learned(crawl(d, printable(fmt.Sprintf("http://news%d.example", k), nv[0], nv[1], uint64(300+k), three...))))
		}
		fs := printable("http://fourth.example", "vista", "impresion", 310, "/x.html", "/y/z.html")
		rs := learned(crawl(d, fs[:2*shapePairs]))
		if len(rs) != 1 || rs[0].Kind != DropParamValue || rs[0].Name != "vista" || rs[0].Value != "impresion" || rs[0].Prior != priorHosts || rs[0].Supports != shapePairs {
			t.Fatalf("learned %v, want drop ?vista=impresion from %d pairs with a prior", rs, shapePairs)
		}
		if c, _, covered := d.Canonical("http://fourth.example/q.html?vista=lista"); covered {
			t.Errorf("another value of ?vista dropped: %s", c)
		}
	})
	t.Run("a parameter that matters on one host", func(t *testing.T) {
		// On a shop, ?ver=1 is one page's own default and another's
		// other content: ver matters. That says nothing of other
		// names: the shape whatever the name is still learned, and
		// shared, as before.
		d := New(Config{})
		shop := newWeb("http://shop.example", 340)
		ds := crawl(d, []fetch{shop.page("/list/", 1, pageOpt{}), shop.page("/list/?ver=1", 1, pageOpt{}),
			shop.page("/item/", 2, pageOpt{}), shop.page("/item/?ver=1", 3, pageOpt{})})
		if len(learned(ds)) != 0 || !d.matters["ver"] {
			t.Fatalf("after a pair and a contradiction of ?ver=1: learned %v, matters %v", learned(ds), d.matters)
		}
		for k, nv := range [][2]string{{"imprimir", "si"}, {"druck", "1"}, {"printable", "yes"}} {
			checkFirstHosts(t, k, learned(crawl(d, printable(fmt.Sprintf("http://news%d.example", k), nv[0], nv[1], uint64(341+k), three...))))
		}
		fs := printable("http://fourth.example", "vista", "impresion", 345, "/x.html", "/y/z.html")
		if rs := learned(crawl(d, fs[:2*shapePairs])); len(rs) != 1 || rs[0].Name != "vista" || rs[0].Prior != priorHosts {
			t.Fatalf("learned %v, want drop ?vista=impresion from %d pairs with a prior", rs, shapePairs)
		}
		fs = printable("http://fifth.example", "ver", "1", 346, "/x.html", "/y/z.html")
		if rs := learned(crawl(d, fs)); len(rs) > 0 {
			t.Errorf("learned %v from two pairs of ?ver, which matters", rs)
		}
	})
	t.Run("parameters that matter", func(t *testing.T) {
		d := New(Config{})
		for k, nv := range [][2]string{{"imprimir", "si"}, {"druck", "1"}, {"printable", "yes"}} {
			crawl(d, printable(fmt.Sprintf("http://news%d.example", k), nv[0], nv[1], uint64(320+k), three...))
		}
		// A forum's pages and a shop's items: ?pagina and ?id matter.
		forum := newWeb("http://forum.example", 330)
		crawl(d, []fetch{forum.page("/t/1?pagina=2", 1, pageOpt{}), forum.page("/t/1?pagina=3", 2, pageOpt{}),
			forum.page("/item?id=7", 3, pageOpt{}), forum.page("/item?id=8", 4, pageOpt{})})
		for _, nv := range [][2]string{{"pagina", "1"}, {"id", "7"}} {
			fs := printable("http://fifth.example", nv[0], nv[1], 331, "/x.html", "/y/z.html")
			if rs := learned(crawl(d, fs)); len(rs) > 0 {
				t.Errorf("learned %v from two pairs of ?%s, which matters", rs, nv[0])
			}
		}
	})
}

// The first hosts of a shape, met at once before any has learned it,
// pool their evidence: three hosts with two pairs each learn the rule
// each, the first two as soon as the third has its second pair. A
// parameter shown to matter is never pooled.
func TestPriorPooled(t *testing.T) {
	// interleaved serves the pages of origins, each also under
	// ?name=value, one path of each origin in turn.
	interleaved := func(name string, seed uint64, paths int, origins ...string) []fetch {
		var fs []fetch
		ws := make([]*web, len(origins))
		for k, o := range origins {
			ws[k] = newWeb(o, seed+uint64(k))
		}
		for i := range paths {
			for k, w := range ws {
				p := fmt.Sprintf("/s%d/p%d.html", k, i)
				f := w.page(p, uint64(100*k+i), pageOpt{})
				fs = append(fs, f, w.page(p+"?"+name+"=on", uint64(100*k+i), pageOpt{}))
			}
		}
		return fs
	}
	origins := []string{"http://alpha.example", "http://beta.example", "http://gamma.example"}
	t.Run("three hosts at once", func(t *testing.T) {
		d := New(Config{})
		rs := learned(crawl(d, interleaved("kiosk", 400, pooledPairs, origins...)))
		if len(rs) != len(origins) {
			t.Fatalf("learned %v, want a rule on each of %d hosts", rs, len(origins))
		}
		for _, r := range rs {
			if r.Kind != DropParamValue || r.Name != "kiosk" || r.Supports != pooledPairs || r.Prior != priorHosts-1 {
				t.Errorf("learned %v from %d pairs, prior %d; want drop ?kiosk=on from %d pairs pooled with %d hosts", r.String(), r.Supports, r.Prior, pooledPairs, priorHosts-1)
			}
		}
	})
	t.Run("two hosts are not enough", func(t *testing.T) {
		d := New(Config{})
		if rs := learned(crawl(d, interleaved("kiosk", 410, pooledPairs, origins[:2]...))); len(rs) > 0 {
			t.Errorf("learned %v from %d pairs on two hosts", rs, pooledPairs)
		}
		// Weighing the pool, as every pair a candidate gets does,
		// allocates nothing.
		var c *candidate
		for _, x := range d.cands {
			if x.rule.Origin == origins[0] && x.rule.Supports == pooledPairs {
				c = x
			}
		}
		if c == nil {
			t.Fatal("no candidate pooled")
		}
		if n := testing.AllocsPerRun(100, func() { d.need(c) }); n != 0 {
			t.Errorf("need allocates %v times", n)
		}
	})
	t.Run("a parameter that matters", func(t *testing.T) {
		d := New(Config{})
		forum := newWeb("http://forum.example", 420)
		crawl(d, []fetch{forum.page("/t/1?kiosk=2", 1, pageOpt{}), forum.page("/t/1?kiosk=3", 2, pageOpt{})})
		if rs := learned(crawl(d, interleaved("kiosk", 421, pooledPairs, origins...))); len(rs) > 0 {
			t.Errorf("learned %v from pooled pairs of ?kiosk, which matters", rs)
		}
	})
}

// A host that has a pair of a shape when the shape's prior comes into
// force (its third host learned it) needs no more: its candidate becomes
// a rule then, with the decision that put the prior in force, not at its
// next pair, which would be one more copy fetched.
func TestPriorCompletesWaiting(t *testing.T) {
	d := New(Config{})
	// The waiting host: a page (not its home page) answered on both
	// names, one pair.
	wait := newWeb("http://www.early.example", 120)
	f := wait.page("/about/team.html", 1, pageOpt{})
	if rs := learned(crawl(d, []fetch{f, wait.at("http://early.example", f)})); len(rs) != 0 {
		t.Fatalf("learned %v from one pair", rs)
	}
	var last []Rule
	for k := range priorHosts {
		host := fmt.Sprintf("twin%d.example", k)
		last = learned(crawl(d, twins(newWeb("http://www."+host, uint64(130+k)), "http://"+host)))
	}
	var got *Rule
	for i, r := range last {
		if r.Origin == "http://early.example" || r.Origin == "http://www.early.example" {
			got = &last[i]
		}
	}
	if got == nil || got.Kind != SwapHost || got.Prior != priorHosts || got.Supports != 1 {
		t.Fatalf("rules learned with the third host's: %v; want early.example's twin swapped from its one pair, with a prior of %d", last, priorHosts)
	}
	if c, _, covered := d.Canonical("http://early.example/news/"); !covered || c != "http://www.early.example/news/" {
		t.Errorf("Canonical = %s, %v", c, covered)
	}
}

// A www twin's home page pair is its pooled evidence when other hosts
// show theirs at once; a host counts once, whichever of its names its
// swap would keep (it is a candidate both ways).
func TestPriorPooledWWWTwin(t *testing.T) {
	d := New(Config{})
	homePair := func(host string, seed uint64) []Rule {
		w := newWeb("http://www."+host, seed)
		home := w.page("/", 1, pageOpt{})
		return learned(crawl(d, []fetch{home, w.at("http://"+host, home)}))
	}
	for k := range priorHosts - 1 {
		if rs := homePair(fmt.Sprintf("pool%d.example", k), uint64(150+k)); len(rs) != 0 {
			t.Fatalf("host %d: learned %v from its home page pair with %d other hosts showing theirs", k, rs, k)
		}
	}
	rs := homePair("pool9.example", 159)
	hosts := map[uint64]bool{}
	for _, r := range rs {
		if r.Kind != SwapHost || r.Supports != 1 || r.Prior < priorHosts-1 {
			t.Errorf("learned %v, want www-twin swaps from their home page pair, pooled", r.String())
		}
		hosts[hostKey(r.Origin)] = true
	}
	if len(hosts) != priorHosts || len(rs) != priorHosts {
		t.Fatalf("learned %v, want one swap on each of the %d hosts", rs, priorHosts)
	}
}

// Once a host swap makes two names one site, what was learned under the
// name it rewrites holds under the other: a print parameter learned on
// www.news.example drops it on news.example too, where the swap sends
// every URL, with no pair there.
func TestSwapCarriesRules(t *testing.T) {
	d := New(Config{})
	w := newWeb("http://www.news.example", 170)
	var fs []fetch
	for i, p := range []string{"/a.html", "/b/c.html", "/d/"} {
		fs = append(fs, w.page(p, uint64(i), pageOpt{}), w.page(p+"?imprimir=si", uint64(i), pageOpt{}))
	}
	if rs := learned(crawl(d, fs)); len(rs) != 1 || rs[0].Origin != "http://www.news.example" {
		t.Fatalf("learned %v, want the print parameter on www.news.example", rs)
	}
	// The home page and one more on both names, the bare name first:
	// the swap keeps it.
	var ts []fetch
	for i, p := range []string{"/", "/e.html"} {
		f := w.page(p, uint64(10+i), pageOpt{})
		ts = append(ts, w.at("http://news.example", f), f)
	}
	rs := learned(crawl(d, ts))
	var swap, moved bool
	for _, r := range rs {
		swap = swap || r.Kind == SwapHost && r.Origin == "http://www.news.example" && r.To == "http://news.example"
		moved = moved || r.Kind == DropParamValue && r.Origin == "http://news.example" && r.Name == "imprimir"
	}
	if !swap || !moved {
		t.Fatalf("learned %v, want www.news.example swapped for news.example and its print parameter carried there", rs)
	}
	for _, u := range []string{"http://news.example/f.html?imprimir=si", "http://www.news.example/f.html?imprimir=si"} {
		if c, _, _ := d.Canonical(u); c != "http://news.example/f.html" {
			t.Errorf("Canonical(%s) = %s, want http://news.example/f.html", u, c)
		}
	}
}

// What one host proved lowers the next host's evidence by a pair, but
// not once a pair anywhere contradicted the shape: an index alias whose
// page differs from its directory's (a host whose "home.asp" is twice
// its directory and then a page of its own) leaves the next host to its
// full evidence.
func TestPriorFromOneHost(t *testing.T) {
	aliases := func(origin, name string, seed uint64, dirs ...string) []fetch {
		w := newWeb(origin, seed)
		var fs []fetch
		for i, dir := range dirs {
			fs = append(fs, w.page(dir, uint64(i), pageOpt{}), w.page(dir+name, uint64(i), pageOpt{}))
		}
		return fs
	}
	for _, contradicted := range []bool{false, true} {
		d := New(Config{})
		if rs := learned(crawl(d, aliases("http://one.example", "welcome.jsp", 400, "/", "/a/", "/b/"))); len(rs) != 1 || rs[0].Supports != 3 || rs[0].Prior != 0 {
			t.Fatalf("first host: learned %v, want drop-index from 3 pairs", rs)
		}
		if contradicted {
			// Learned from 2 pairs there, then withdrawn.
			w := newWeb("http://other.example", 401)
			ds := crawl(d, []fetch{w.page("/x/", 1, pageOpt{}), w.page("/x/home.asp", 1, pageOpt{}),
				w.page("/z/", 2, pageOpt{}), w.page("/z/home.asp", 2, pageOpt{}),
				w.page("/y/", 3, pageOpt{}), w.page("/y/home.asp", 4, pageOpt{})})
			var withdrawn []Rule
			for _, dec := range ds {
				withdrawn = append(withdrawn, dec.Withdrawn...)
			}
			if rs := learned(ds); len(rs) != 1 || rs[0].Supports != 2 || len(withdrawn) != 1 {
				t.Fatalf("other host: learned %v, withdrawn %v; want drop-index home.asp from 2 pairs, then withdrawn", rs, withdrawn)
			}
		}
		rs := learned(crawl(d, aliases("http://two.example", "Start.HTM", 402, "/", "/c/")))
		switch {
		case !contradicted && (len(rs) != 1 || rs[0].Supports != 2 || rs[0].Prior != 1):
			t.Errorf("second host: learned %v from 2 pairs, want drop-index Start.HTM with one host vouching", rs)
		case contradicted && len(rs) != 0:
			t.Errorf("second host, the shape contradicted elsewhere: learned %v from 2 pairs", rs)
		}
	}
}
