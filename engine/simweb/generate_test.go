package simweb

import (
	"bytes"
	"math"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// midWeb is a web big enough to show its distributions.
var midWeb = Options{Seed: 7, Sites: 300, Pages: 30000}

func TestGenerateIsDeterministic(t *testing.T) {
	opt := Options{Seed: 42, Sites: 60, Pages: 3000}
	a, err := Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Generate(Options{Seed: 43, Sites: 60, Pages: 3000})
	if err != nil {
		t.Fatal(err)
	}
	edges := func(w *Web) [][2]int32 {
		var e [][2]int32
		for f, to := range w.Graph().Edges() {
			e = append(e, [2]int32{f, to})
		}
		return e
	}
	if !slices.Equal(edges(a), edges(b)) {
		t.Error("same seed, different graphs")
	}
	if !slices.Equal(a.PageRank(), b.PageRank()) {
		t.Error("same seed, different PageRank")
	}
	if slices.Equal(edges(a), edges(c)) {
		t.Error("different seeds, same graph")
	}
	for s := range a.NumSites() {
		if a.Site(s) != b.Site(s) {
			t.Fatalf("site %d differs: %+v vs %+v", s, a.Site(s), b.Site(s))
		}
		_, ra := a.RobotsTxt(s)
		_, rb := b.RobotsTxt(s)
		if !bytes.Equal(ra, rb) {
			t.Fatalf("robots.txt of site %d differs", s)
		}
	}
	differ := 0
	for p := 0; p < a.NumPages(); p += 97 {
		if a.Page(p) != b.Page(p) {
			t.Fatalf("page %d differs: %+v vs %+v", p, a.Page(p), b.Page(p))
		}
		ha, hb := a.AppendHTML(nil, p, 8080), b.AppendHTML(nil, p, 8080)
		if !bytes.Equal(ha, hb) {
			t.Fatalf("page %d renders differently", p)
		}
		if !bytes.Equal(ha, a.AppendHTML(nil, p, 8080)) {
			t.Fatalf("page %d renders differently the second time", p)
		}
		if !bytes.Equal(ha, c.AppendHTML(nil, p, 8080)) {
			differ++
		}
	}
	if differ == 0 {
		t.Error("different seeds render the same pages")
	}
}

func TestGenerateOptionsErrors(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
	}{
		{"negative sites", Options{Sites: -1}},
		{"fewer pages than sites", Options{Sites: 10, Pages: 5}},
		{"external share 1", Options{ExternalLinks: 1}},
		{"tiny page size", Options{PageSizeMedian: 10}},
		{"negative latency", Options{LatencyMedian: -1}},
		{"error rate above 1", Options{ErrorRate: 1.5}},
		{"negative bandwidth", Options{BandwidthMedian: -5}},
		{"too many links", Options{LinksPerPage: 5000}},
	}
	for _, tt := range tests {
		if _, err := Generate(tt.opt); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
}

func TestGenerateDefaults(t *testing.T) {
	w := testWeb(t, Options{Seed: 1, Sites: 10})
	if w.NumSites() != 10 || w.NumPages() != 10*DefaultPagesPerSite {
		t.Errorf("got %d sites, %d pages", w.NumSites(), w.NumPages())
	}
	o := w.Options()
	if o.LinksPerPage != DefaultLinksPerPage || o.PageSizeMedian != DefaultPageSizeMedian || o.Addresses != 3 {
		t.Errorf("defaults not applied: %+v", o)
	}
}

func TestSiteSizesAreHeavyTailed(t *testing.T) {
	w := testWeb(t, midWeb)
	sizes := make([]int, w.NumSites())
	total := 0
	for s := range sizes {
		sizes[s] = w.Site(s).Pages
		if sizes[s] < 1 {
			t.Fatalf("site %d has %d pages", s, sizes[s])
		}
		total += sizes[s]
	}
	if total != midWeb.Pages {
		t.Fatalf("sites hold %d pages, want %d", total, midWeb.Pages)
	}
	slices.Sort(sizes)
	median, largest := sizes[len(sizes)/2], sizes[len(sizes)-1]
	top := 0
	for _, n := range sizes[len(sizes)*9/10:] {
		top += n
	}
	t.Logf("site sizes: median %d, largest %d, top 10%% hold %.0f%%", median, largest, 100*float64(top)/float64(total))
	if largest < 20*median {
		t.Errorf("largest site %d pages, median %d: not heavy-tailed", largest, median)
	}
	if float64(top) < 0.4*float64(total) {
		t.Errorf("top 10%% of sites hold only %d of %d pages", top, total)
	}
}

func TestPagesFormDeepTrees(t *testing.T) {
	w := testWeb(t, midWeb)
	deep := 0
	for p := range w.NumPages() {
		pg := w.Page(p)
		if pg.Depth > 10 {
			deep++
		}
		segments := strings.Count(strings.TrimSuffix(pg.Path, "/"), "/")
		if pg.Depth != segments {
			t.Fatalf("page %d %q has depth %d", p, pg.Path, pg.Depth)
		}
		if (pg.Kind == KindIndex) != strings.HasSuffix(pg.Path, "/") {
			t.Fatalf("page %d %q is %v", p, pg.Path, pg.Kind)
		}
		if pg.Parent >= 0 {
			parent := w.Page(pg.Parent)
			if parent.Kind != KindIndex || !strings.HasPrefix(pg.Path, parent.Path) || parent.Site != pg.Site {
				t.Fatalf("page %q under %q", pg.Path, parent.Path)
			}
		} else if pg.Path != "/" || pg.ID != w.Site(pg.Site).HomePage {
			t.Fatalf("page %d without parent at %q", p, pg.Path)
		}
		if p%7 == 0 { // every page in a smaller web is checked below
			site := w.Site(pg.Site)
			if got, ok := w.Lookup(site.Host, pg.Path); !ok || got != p {
				t.Fatalf("Lookup(%q, %q) = %d, %v; want %d", site.Host, pg.Path, got, ok, p)
			}
		}
	}
	st := w.Stats()
	t.Logf("max depth %d, pages deeper than 10: %d", st.MaxDepth, deep)
	if deep == 0 {
		t.Error("no page deeper than 10")
	}
}

func TestLookupRejectsNonCanonicalPaths(t *testing.T) {
	w := testWeb(t, Options{Seed: 3, Sites: 20, Pages: 2000})
	var dir, leaf Page
	for p := range w.NumPages() {
		pg := w.Page(p)
		if pg.Depth >= 2 && pg.Kind == KindIndex && dir.Path == "" {
			dir = pg
		}
		if pg.Depth >= 2 && pg.Kind == KindArticle && leaf.Path == "" {
			leaf = pg
		}
	}
	host := w.Site(dir.Site).Host
	leafHost := w.Site(leaf.Site).Host
	if _, ok := w.Lookup(host, dir.Path); !ok {
		t.Fatalf("canonical %q not found", dir.Path)
	}
	bad := []struct{ host, path string }{
		{host, strings.TrimSuffix(dir.Path, "/")}, // answered with a redirect by the server
		{host, strings.ToUpper(dir.Path)},
		{host, dir.Path + "x"},
		{host, dir.Path + "index.html"},
		{host, "/nothing-1/"},
		{host, "/" + strings.SplitN(dir.Path, "/", 3)[2]}, // right segment, wrong directory
		{leafHost, strings.TrimSuffix(leaf.Path, ".html") + ".htmx"},
		{leafHost, leaf.Path + "/"},
		{"nosuch.test", "/"},
		{host, ""},
		{host, "relative"},
	}
	for _, b := range bad {
		if p, ok := w.Lookup(b.host, b.path); ok {
			t.Errorf("Lookup(%q, %q) found page %d", b.host, b.path, p)
		}
	}
	// A directory without its slash is a redirect to the canonical path.
	s, _ := w.SiteByHost(host)
	if p, redirect, ok := w.lookupPath(s, strings.TrimSuffix(dir.Path, "/"), nil); !ok || !redirect || int(p) != dir.ID {
		t.Errorf("directory without slash: page %d redirect %v ok %v", p, redirect, ok)
	}
}

func TestLinkStructure(t *testing.T) {
	w := testWeb(t, midWeb)
	g := w.Graph()
	st := w.Stats()
	in := make([]int, w.NumPages())
	external := 0
	homeFromOutside := make([]bool, w.NumSites())
	for from, to := range g.Edges() {
		if from == to {
			t.Fatalf("self-link on page %d", from)
		}
		in[to]++
		fs, ts := w.siteOf(from), w.siteOf(to)
		if fs != ts {
			external++
			if int(to) == w.Site(ts).HomePage {
				homeFromOutside[ts] = true
			}
		}
	}
	for p := range int32(w.NumPages()) {
		out := g.Out(p)
		seen := map[int32]bool{}
		for _, t2 := range out {
			if seen[t2] {
				t.Fatalf("page %d links twice to %d", p, t2)
			}
			seen[t2] = true
		}
	}
	frac := float64(external) / float64(g.NumEdges())
	t.Logf("%d links, %.1f per page, %.1f%% external", g.NumEdges(), float64(g.NumEdges())/float64(w.NumPages()), 100*frac)
	if external != st.ExternalLinks {
		t.Errorf("stats say %d external links, counted %d", st.ExternalLinks, external)
	}
	if frac < 0.08 || frac > 0.12 {
		t.Errorf("external share %.3f, want about 0.10", frac)
	}
	for s, ok := range homeFromOutside {
		if !ok && w.Site(s).Popularity != 0 {
			t.Errorf("home page of site %d has no link from another site", s)
		}
	}
	// Zipf-like in-degree: a few pages get a large share of the links.
	sorted := slices.Clone(in)
	sort.Sort(sort.Reverse(sort.IntSlice(sorted)))
	top := 0
	for _, d := range sorted[:len(sorted)/100] {
		top += d
	}
	mean := float64(g.NumEdges()) / float64(len(in))
	t.Logf("in-degree: max %d, mean %.1f, top 1%% of pages get %.0f%% of links", sorted[0], mean, 100*float64(top)/float64(g.NumEdges()))
	if float64(sorted[0]) < 50*mean {
		t.Errorf("max in-degree %d vs mean %.1f: not heavy-tailed", sorted[0], mean)
	}
	if float64(top) < 0.12*float64(g.NumEdges()) {
		t.Errorf("top 1%% of pages get %d of %d links", top, g.NumEdges())
	}
}

// TestPoliteCrawlReachesEverySite walks the graph from the first seed the
// way a crawler obeying robots.txt would: it never fetches a disallowed page,
// so it never sees that page's links.
func TestPoliteCrawlReachesEverySite(t *testing.T) {
	w := testWeb(t, midWeb)
	g := w.Graph()
	seed := w.Seeds(1)[0]
	seen := make([]bool, w.NumPages())
	queue := []int32{int32(seed)}
	seen[seed] = true
	fetched := 0
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if w.Page(int(p)).Disallowed {
			continue
		}
		fetched++
		for _, t2 := range g.Out(p) {
			if !seen[t2] {
				seen[t2] = true
				queue = append(queue, t2)
			}
		}
	}
	for s := range w.NumSites() {
		if !seen[w.Site(s).HomePage] {
			t.Errorf("site %d (%v) not reached", s, w.Site(s).Robots)
		}
	}
	allowed := w.NumPages() - w.Stats().DisallowedPages
	t.Logf("polite crawl fetched %d pages; %d pages are allowed", fetched, allowed)
	if fetched < allowed*9/10 {
		t.Errorf("polite crawl fetched %d of %d allowed pages", fetched, allowed)
	}
}

func TestAddressesAreSharedLoopback(t *testing.T) {
	w := testWeb(t, midWeb)
	perAddr := map[netip.Addr]int{}
	for s := range w.NumSites() {
		a := w.Site(s).Addr
		if !a.Is4() || a.As4()[0] != 127 || a == netip.MustParseAddr("127.0.0.1") {
			t.Fatalf("site %d on %v", s, a)
		}
		perAddr[a]++
	}
	shared := 0
	for _, n := range perAddr {
		if n > 1 {
			shared++
		}
	}
	if len(perAddr) != len(w.Addresses()) || len(perAddr) < 10 || shared == 0 {
		t.Errorf("%d addresses (%d listed), %d shared", len(perAddr), len(w.Addresses()), shared)
	}
}

func TestAddressFor(t *testing.T) {
	tests := []struct {
		k    int
		want string
	}{
		{0, "127.1.0.1"}, {253, "127.1.0.254"}, {254, "127.1.1.1"}, {254 * 256, "127.2.0.1"},
		{maxAddresses - 1, "127.254.255.254"},
	}
	for _, tt := range tests {
		if got := addressFor(tt.k).String(); got != tt.want {
			t.Errorf("addressFor(%d) = %s, want %s", tt.k, got, tt.want)
		}
	}
}

var hrefRE = regexp.MustCompile(`<a href="([^"]*)"`)

// TestRenderedLinksAreTheGraph checks that every page's anchors resolve to
// exactly its out-edges, whatever form (relative, host-relative, absolute,
// scheme-relative) each href takes.
func TestRenderedLinksAreTheGraph(t *testing.T) {
	w := testWeb(t, Options{Seed: 5, Sites: 40, Pages: 4000})
	const port = 8123
	forms := map[string]int{}
	for p := range w.NumPages() {
		base, err := url.Parse(string(w.appendURL(nil, int32(p), port)))
		if err != nil {
			t.Fatal(err)
		}
		html := w.AppendHTML(nil, p, port)
		var got []int32
		for _, m := range hrefRE.FindAllSubmatch(html, -1) {
			href := string(m[1])
			switch {
			case strings.HasPrefix(href, "http://"):
				forms["absolute"]++
			case strings.HasPrefix(href, "//"):
				forms["scheme-relative"]++
			case strings.HasPrefix(href, "/"):
				forms["host-relative"]++
			default:
				forms["relative"]++
			}
			ref, err := url.Parse(href)
			if err != nil {
				t.Fatalf("page %d: bad href %q", p, href)
			}
			u := base.ResolveReference(ref)
			if u.Port() != "8123" {
				t.Fatalf("page %d: href %q resolves to %v", p, href, u)
			}
			target, ok := w.Lookup(u.Hostname(), u.Path)
			if !ok {
				t.Fatalf("page %d %s: href %q resolves to %v, no such page", p, base, href, u)
			}
			got = append(got, int32(target))
		}
		want := w.Graph().Out(int32(p))
		if !slices.Equal(got, want) {
			t.Fatalf("page %d: anchors lead to %v, graph has %v", p, got, want)
		}
	}
	t.Logf("href forms: %v", forms)
	for _, f := range []string{"absolute", "scheme-relative", "host-relative", "relative"} {
		if forms[f] == 0 {
			t.Errorf("no %s hrefs", f)
		}
	}
}

func TestPageSizesSpreadLikeHTML(t *testing.T) {
	w := testWeb(t, midWeb)
	var sizes []int
	for p := 0; p < w.NumPages(); p += 13 {
		sizes = append(sizes, len(w.Render(p)))
	}
	slices.Sort(sizes)
	median := sizes[len(sizes)/2]
	t.Logf("sizes: min %d, median %d, p99 %d, max %d", sizes[0], median, sizes[len(sizes)*99/100], sizes[len(sizes)-1])
	if math.Abs(float64(median)/DefaultPageSizeMedian-1) > 0.2 {
		t.Errorf("median size %d, want about %d", median, DefaultPageSizeMedian)
	}
	if sizes[0] < minPageSize || sizes[len(sizes)-1] < 100_000 {
		t.Errorf("sizes from %d to %d", sizes[0], sizes[len(sizes)-1])
	}
	// Pages differ in their words, not just their links: the text of two
	// pages shares few 4-word sequences.
	shingles := func(b []byte) map[string]bool {
		words := strings.Fields(string(b))
		m := map[string]bool{}
		for i := 0; i+4 <= len(words); i++ {
			m[strings.Join(words[i:i+4], " ")] = true
		}
		return m
	}
	a, b := shingles(w.Render(100)), shingles(w.Render(101))
	common := 0
	for k := range a {
		if b[k] {
			common++
		}
	}
	if jac := float64(common) / float64(len(a)+len(b)-common); jac > 0.1 {
		t.Errorf("pages 100 and 101 share %.0f%% of their 4-word shingles", 100*jac)
	}
}

func TestWordFrequenciesFollowZipf(t *testing.T) {
	v := getVocabulary()
	r := newRNG(1, tagText, 0)
	counts := make([]int, vocabSize)
	const n = 1_000_000
	for range n {
		counts[v.draw(&r)]++
	}
	// Under Zipf's law with exponent 1, rank 1 is drawn about twice as often
	// as rank 2 and ten times as often as rank 10.
	for _, k := range []int{1, 9} {
		ratio := float64(counts[0]) / float64(counts[k])
		if math.Abs(ratio/float64(k+1)-1) > 0.1 {
			t.Errorf("count(rank 1)/count(rank %d) = %.2f, want %d", k+1, ratio, k+1)
		}
	}
	h := 0.0
	for i := range vocabSize {
		h += 1 / float64(i+1)
	}
	if got, want := float64(counts[0])/n, 1/h; math.Abs(got/want-1) > 0.05 {
		t.Errorf("rank 1 frequency %.4f, want %.4f", got, want)
	}

	// The table Render uses must draw the same distribution.
	index := map[string]int{}
	for i := range vocabSize {
		index[string(v.word(i))] = i
	}
	fast := make([]int, vocabSize)
	buf := make([]byte, 32)
	for range n {
		x := r.next()
		l := v.fast.appendWord(buf, 0, uint32(x))
		if buf[l-1] != ' ' {
			t.Fatalf("word %q without its space", buf[:l])
		}
		i, ok := index[string(buf[:l-1])]
		if !ok {
			t.Fatalf("drew %q, not a word", buf[:l-1])
		}
		fast[i]++
	}
	for _, k := range []int{0, 1, 9, 99} {
		if math.Abs(float64(fast[k])/float64(counts[k])-1) > 0.1 {
			t.Errorf("rank %d: text table drew %d, alias table %d", k+1, fast[k], counts[k])
		}
	}
}
