package dedup

import (
	"slices"
	"testing"
)

// Which URLs of a batch are variants of another of its URLs: each
// spelling a rule would keep, with names no code of lidi knows where the
// shape allows it, and URLs whose plainer spelling is not in the batch,
// or that only look alike, left in place.
func TestVariants(t *testing.T) {
	const o = "http://v.example"
	for _, tc := range []struct {
		name    string
		urls    []string
		variant []bool
	}{
		{"query after the plain URL", []string{o + "/a?ref=nav", o + "/a"}, []bool{true, false}},
		{"one parameter of two", []string{o + "/list?cat=2&vue=grille", o + "/list?cat=2", o + "/list?vue=grille&cat=2"}, []bool{true, false, true}},
		{"path case", []string{o + "/Docs/Guide.HTML", o + "/docs/guide.html"}, []bool{true, false}},
		{"path case keeps the query's", []string{o + "/Docs/?Q=A", o + "/docs/?q=a"}, []bool{false, false}},
		{"index file", []string{o + "/docs/index.php", o + "/docs/", o + "/docs/default.aspx"}, []bool{true, false, true}},
		{"a file of the directory is no index", []string{o + "/docs/guide.html", o + "/docs/"}, []bool{false, false}},
		{"plainer spelling not in the batch", []string{o + "/a?ref=nav", o + "/B/", o + "/c/index.html"}, []bool{false, false, false}},
		{"another origin's plain URL", []string{o + "/a?ref=nav", "http://w.example/a"}, []bool{false, false}},
		{"one URL", []string{o + "/a?ref=nav"}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := New(Config{}).Variants(tc.urls, nil)
			if !slices.Equal(got, tc.variant) {
				t.Errorf("Variants(%q) = %v, want %v", tc.urls, got, tc.variant)
			}
		})
	}

	// An index name and a rewrite learned from evidence, with names no
	// code of lidi knows: welcome.jsp once a host's rule dropped it (on
	// any host), the /druck/ copy of a page once a pair proposed it.
	d := New(Config{})
	w := newWeb("http://idx.example", 91)
	var fs []fetch
	for i, dir := range []string{"/", "/people/", "/projects/", "/news/"} {
		fs = append(fs, w.page(dir, uint64(i), pageOpt{}), w.page(dir+"welcome.jsp", uint64(i), pageOpt{}))
	}
	if rs := learned(crawl(d, fs)); len(rs) != 1 || rs[0].Kind != DropIndex {
		t.Fatalf("learned %v, want welcome.jsp dropped", rs)
	}
	p := newWeb("http://print.example", 92)
	crawl(d, []fetch{p.page("/story/one.html", 1, pageOpt{}), p.page("/druck/story/one.html", 1, pageOpt{})})
	batch := []string{
		o + "/team/welcome.jsp", o + "/team/",
		"http://print.example/druck/story/two.html", "http://print.example/story/two.html",
		"http://print.example/druck/other.html", // its plain spelling is not in the batch
	}
	if got, want := d.Variants(batch, nil), []bool{true, false, true, false, false}; !slices.Equal(got, want) {
		t.Errorf("Variants(%q) = %v, want %v", batch, got, want)
	}
}

func TestWithoutParam(t *testing.T) {
	for _, tc := range []struct {
		q    string
		k    int
		want string
	}{
		{"a=1&b=2&c=3", 0, "b=2&c=3"},
		{"a=1&b=2&c=3", 1, "a=1&c=3"},
		{"a=1&&b=2", 1, "a=1"},
		{"a=1", 0, ""},
	} {
		if got := withoutParam(tc.q, tc.k); got != tc.want {
			t.Errorf("withoutParam(%q, %d) = %q, want %q", tc.q, tc.k, got, tc.want)
		}
	}
}

// A copy waits for its canonical URL while a candidate of a kind whose
// canonical side is its rewrite's is pending and that URL was not
// fetched; not once it was fetched or answered 404, not for a directory
// swap (which side is the copy is evidence's to say), and not for ever.
func TestAwaits(t *testing.T) {
	d := New(Config{})
	// awaits reports what d.Awaits asked to wait for, every wait granted.
	awaits := func(url string) (canon string, ok bool) {
		ok = d.Awaits(url, func(c string) bool { canon = c; return true })
		return canon, ok
	}
	w := newWeb("http://aw.example", 93)
	crawl(d, []fetch{w.page("/a.html", 1, pageOpt{}), w.page("/a.html?ref=nav", 1, pageOpt{}),
		w.page("/story/one.html", 2, pageOpt{}), w.page("/druck/story/one.html", 2, pageOpt{})})
	if canon, ok := awaits("http://aw.example/b.html?ref=nav"); !ok || canon != "http://aw.example/b.html" {
		t.Errorf("Awaits = %q, %v; want the plain URL", canon, ok)
	}
	if _, ok := awaits("http://aw.example/a.html?ref=nav"); ok {
		t.Error("a copy whose canonical URL was fetched waits")
	}
	if canon, ok := awaits("http://aw.example/druck/story/two.html"); ok {
		t.Errorf("a directory swap's copy waits for %s", canon)
	}
	d.NotFound(ID("http://aw.example/c.html"))
	if _, ok := awaits("http://aw.example/c.html?ref=nav"); ok {
		t.Error("a copy waits for a canonical URL that answered 404")
	}
	// Each of the two candidates (?ref=nav dropped, ?ref dropped) makes
	// its copies wait maxIdle times at most.
	waited, last := 0, false
	for range 4 * maxIdle {
		_, last = awaits("http://aw.example/d.html?ref=nav")
		if last {
			waited++
		}
	}
	if last || waited > 2*maxIdle {
		t.Errorf("copies waited %d times, still waiting %v; want at most %d", waited, last, 2*maxIdle)
	}
}

// A wait the crawl does not take (its canonical URL is queued already,
// out of scope, disallowed) costs the candidate none of its waits.
func TestAwaitsCountsOnlyWaitsTaken(t *testing.T) {
	d := New(Config{})
	w := newWeb("http://aw.example", 93)
	crawl(d, []fetch{w.page("/a.html", 1, pageOpt{}), w.page("/a.html?ref=nav", 1, pageOpt{})})
	asked := 0
	for range 200 {
		if d.Awaits("http://aw.example/e.html?ref=nav", func(string) bool { asked++; return false }) {
			t.Fatal("a copy waits when the crawl said it does not")
		}
	}
	if asked != 200 {
		t.Fatalf("asked %d times of 200", asked)
	}
	if !d.Awaits("http://aw.example/e.html?ref=nav", func(string) bool { return true }) {
		t.Error("the waits not taken used up the candidate's")
	}
}
