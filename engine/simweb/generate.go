package simweb

import (
	"cmp"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"time"

	"lidi/engine/rank"
)

// PageKind says what a page is. The kind decides how the server renders it;
// later kinds (pages that change over time, say) are meant to be added here
// and handled in render.go and Web.lookupPath. Crawler traps are not page
// kinds: they are served from outside the graph (see TrapKind).
type PageKind uint8

const (
	// KindIndex is a directory index page: its path ends in "/" and it
	// lists its directory's pages. Every site's home page is one.
	KindIndex PageKind = iota
	// KindArticle is a leaf page with a file name such as "name-1f.html".
	KindArticle
)

// String returns "index" or "article".
func (k PageKind) String() string {
	switch k {
	case KindIndex:
		return "index"
	case KindArticle:
		return "article"
	}
	return fmt.Sprintf("PageKind(%d)", k)
}

// Generation constants that shape the web; they are not options because
// they have no interesting alternative values yet.
const (
	dirFraction    = 0.3  // share of pages that are directory index pages
	maxDepth       = 200  // depth cap, so paths stay reasonable
	linkCountSigma = 0.8  // log standard deviation of content links per page
	popularityZipf = 1.0  // Zipf exponent of site popularity (external in-links)
	pagePopZipf    = 1.0  // Zipf exponent of page popularity within a site
	homeShare      = 0.5  // share of external links that go to a home page
	protectedSeeds = 10   // the most popular sites never close robots.txt
	localWindow    = 32   // reach of "nearby page" links, in page ids
	externalCap    = 0.95 // bound on the external share of content links
	drawTries      = 4    // draws for one content link before giving up
)

// page flag layout: low nibble PageKind, bits 4-5 the extension index.
const (
	flagKindMask = 0x0f
	flagExtShift = 4
)

var extensions = [...]string{".html", ".php", ".htm", ".aspx"}

// site is what the Web keeps per site.
type site struct {
	host       string
	name       string
	addr       netip.Addr
	popularity int32
	latency    time.Duration
	bandwidth  int64
	robots     robots
}

// Web is a generated synthetic web: sites, pages, the link graph and its
// PageRank. Page HTML is not stored; it is rendered on demand from the seed.
//
// A Web is made by Generate (the zero value is not usable); it is immutable
// and safe for concurrent use.
type Web struct {
	opt       Options
	vocab     *vocabulary
	sites     []site
	siteStart []int32 // pages of site s are siteStart[s] .. siteStart[s+1]-1
	popular   []int32 // sites, most linked first
	parent    []int32 // parent directory page; -1 for home pages
	depth     []uint8
	flags     []uint8
	graph     *rank.Graph
	pagerank  []float64
	hosts     map[string]int32
	addrs     []netip.Addr // distinct addresses in use, sorted
	traps     *trapIndex   // nil without Options.Traps
	changes   *Changes     // never nil; disabled without Options.Change
	stats     WebStats
}

// WebStats summarises a generated web.
type WebStats struct {
	Sites, Pages    int
	Links           int // edges of the graph (distinct links per page)
	ExternalLinks   int // links to another site
	Addresses       int // distinct addresses in use
	MaxDepth        int
	MaxSitePages    int
	DisallowedPages int // pages the "*" robots group forbids
	RobotsKinds     map[RobotsKind]int
	PageRankIters   int
	GenerateTime    time.Duration // wall time of Generate, PageRank included
	// Traps counts trap instances by kind (see Web.Traps), TrapSites the
	// sites with at least one; nil and 0 without Options.Traps.
	Traps     map[TrapKind]int
	TrapSites int
}

// spanLink is a link that keeps a site's home page reachable.
type spanLink struct{ from, to int32 }

// Generate builds the web described by opt. It is deterministic: the same
// options give the same web. The Web keeps about 30 bytes per page plus 4
// bytes per link (80 MB for a million pages); PageRank needs about as much
// again while it runs.
func Generate(opt Options) (*Web, error) {
	start := time.Now()
	opt = opt.withDefaults()
	if err := opt.validate(); err != nil {
		return nil, err
	}
	w := &Web{opt: opt, vocab: getVocabulary()}
	w.layOutSites()
	if err := w.layOutChanges(); err != nil {
		return nil, err
	}
	w.rankPopularity()
	w.describeSites()
	childStart, children := w.growTrees()
	kids := func(p int32) []int32 { return children[childStart[p]:childStart[p+1]] }
	w.writeRobots(kids)
	span := w.spanningLinks()
	if err := w.linkPages(kids, span); err != nil {
		return nil, err
	}
	w.layOutTraps(kids)
	childStart, children = nil, nil // let the GC take them before PageRank
	res, err := rank.PageRank(w.graph, rank.Options{Damping: 0.85})
	if err != nil {
		return nil, fmt.Errorf("simweb: %w", err)
	}
	w.pagerank = res.Scores
	w.stats.PageRankIters = res.Iterations
	w.countStats()
	w.stats.GenerateTime = time.Since(start)
	return w, nil
}

// layOutSites draws heavy-tailed site sizes and assigns page id ranges.
func (w *Web) layOutSites() {
	S, P := w.opt.Sites, w.opt.Pages
	r := newRNG(w.opt.Seed, tagSiteSize, 0)
	weights := make([]float64, S)
	sum := 0.0
	for i := range weights {
		weights[i] = r.pareto(w.opt.SiteSizeAlpha)
		sum += weights[i]
	}
	// One page each, the rest in proportion to the weights, the rounding
	// remainder to the largest fractional parts (ties by site id).
	extra := P - S
	sizes := make([]int, S)
	frac := make([]float64, S)
	assigned := 0
	for i, wt := range weights {
		share := float64(extra) * wt / sum
		sizes[i] = 1 + int(share)
		frac[i] = share - math.Floor(share)
		assigned += int(share)
	}
	order := make([]int32, S)
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := cmp.Compare(frac[b], frac[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	for i := 0; assigned < extra; i++ {
		sizes[order[i%S]]++
		assigned++
	}
	w.siteStart = make([]int32, S+1)
	for i, n := range sizes {
		w.siteStart[i+1] = w.siteStart[i] + int32(n)
	}
}

// rankPopularity orders sites by how much other sites link to them: bigger
// sites tend to be more popular, with lognormal noise.
func (w *Web) rankPopularity() {
	S := w.opt.Sites
	r := newRNG(w.opt.Seed, tagSitePop, 0)
	score := make([]float64, S)
	w.popular = make([]int32, S)
	for i := range S {
		score[i] = math.Sqrt(float64(w.sitePages(i))) * r.lognormal(1, 1)
		w.popular[i] = int32(i)
	}
	slices.SortFunc(w.popular, func(a, b int32) int {
		if c := cmp.Compare(score[b], score[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	w.sites = make([]site, S)
	for rank, s := range w.popular {
		w.sites[s].popularity = int32(rank)
	}
}

// addressFor maps an address index to 127.1.0.1, 127.1.0.2, ...: the last
// octet skips 0 and 255, and 127.0.0.0/16 is left to other services.
func addressFor(k int) netip.Addr {
	third := k / 254
	return netip.AddrFrom4([4]byte{127, byte(1 + third/256), byte(third % 256), byte(k%254 + 1)})
}

// describeSites draws host names, addresses and server behaviour.
func (w *Web) describeSites() {
	o := w.opt
	w.hosts = make(map[string]int32, o.Sites)
	used := make(map[netip.Addr]bool)
	for i := range w.sites {
		s := &w.sites[i]
		r := newRNG(o.Seed, tagSite, uint64(i))
		prefix := ""
		if r.chance(0.6) {
			prefix = "www."
		}
		s.host = fmt.Sprintf("%ssite%d.test", prefix, i)
		name := w.vocab.word(w.vocab.contentWord(&r))
		s.name = string(name[0]-'a'+'A') + string(name[1:])
		if r.chance(0.4) {
			s.name += " " + []string{"Press", "Online", "Group", "Net", "Journal", "Labs", "Club", "Times"}[r.intn(8)]
		}
		if o.LatencyMedian > 0 {
			s.latency = o.LatencyMedian
			if o.LatencySigma > 0 {
				s.latency = time.Duration(r.lognormal(float64(o.LatencyMedian), o.LatencySigma))
				s.latency = min(max(s.latency, o.LatencyMedian/20), o.LatencyMedian*20)
			}
		}
		if o.BandwidthMedian > 0 {
			s.bandwidth = o.BandwidthMedian
			if o.BandwidthSigma > 0 {
				s.bandwidth = int64(r.lognormal(float64(o.BandwidthMedian), o.BandwidthSigma))
			}
			s.bandwidth = max(s.bandwidth, 1024)
		}
		ar := newRNG(o.Seed, tagSiteAddr, uint64(i))
		s.addr = addressFor(ar.intn(o.Addresses))
		used[s.addr] = true
		w.hosts[s.host] = int32(i)
	}
	for a := range used {
		w.addrs = append(w.addrs, a)
	}
	slices.SortFunc(w.addrs, netip.Addr.Compare)
}

// growTrees lays out each site's pages as a directory tree: page j picks its
// parent uniformly among the directories made before it (a random recursive
// tree), which gives depths logarithmic in the site size, past 10 in big
// sites. It returns the children of every page in CSR form.
func (w *Web) growTrees() (childStart, children []int32) {
	P := w.opt.Pages
	w.parent = make([]int32, P)
	w.depth = make([]uint8, P)
	w.flags = make([]uint8, P)
	childStart = make([]int32, P+1)
	var dirs []int32
	for s := range w.sites {
		a, b := w.siteStart[s], w.siteStart[s+1]
		r := newRNG(w.opt.Seed, tagTree, uint64(s))
		w.parent[a] = -1
		w.flags[a] = uint8(KindIndex)
		dirs = append(dirs[:0], a)
		for p := a + 1; p < b; p++ {
			par := dirs[r.intn(len(dirs))]
			if w.depth[par] >= maxDepth {
				par = a
			}
			w.parent[p] = par
			w.depth[p] = w.depth[par] + 1
			childStart[par+1]++
			if r.chance(dirFraction) {
				w.flags[p] = uint8(KindIndex)
				dirs = append(dirs, p)
				continue
			}
			ext := 0 // .html 60%, .php 20%, .htm 10%, .aspx 10%
			switch x := r.intn(10); {
			case x >= 9:
				ext = 3
			case x >= 8:
				ext = 2
			case x >= 6:
				ext = 1
			}
			w.flags[p] = uint8(KindArticle) | uint8(ext)<<flagExtShift
		}
	}
	for p := range P {
		childStart[p+1] += childStart[p]
	}
	children = make([]int32, childStart[P])
	fill := make([]int32, P)
	for p := range int32(P) {
		if par := w.parent[p]; par >= 0 {
			children[childStart[par]+fill[par]] = p
			fill[par]++
		}
	}
	return childStart, children
}

// writeRobots draws every site's robots.txt.
func (w *Web) writeRobots(children func(int32) []int32) {
	var dirs []int32
	for s := range w.sites {
		r := newRNG(w.opt.Seed, tagRobots, uint64(s))
		kind := drawRobotsKind(&r)
		if w.sites[s].popularity < protectedSeeds && !kind.open() {
			kind = RobotsMissing // seeds must be crawlable
		}
		dirs = dirs[:0]
		for p := w.siteStart[s]; p < w.siteStart[s+1]; p++ {
			if w.kind(p) == KindIndex && w.depth[p] >= 1 && w.depth[p] <= 2 {
				dirs = append(dirs, p)
			}
		}
		w.sites[s].robots = w.buildRobots(s, kind, &r, dirs, children)
	}
}

// spanningLinks makes every site reachable from the most popular one: in
// popularity order, each site's home page gets a link from a page of a more
// popular site that a polite crawler can reach (its site's robots.txt allows
// the page and all its ancestors), preferring popular sources, as new sites
// get linked from portals and directories.
func (w *Web) spanningLinks() []spanLink {
	r := newRNG(w.opt.Seed, tagSpan, 0)
	var open []int32
	span := make([]spanLink, 0, len(w.sites))
	var buf []byte
	for k, s := range w.popular {
		if k > 0 && len(open) > 0 {
			src := open[r.zipfIndex(len(open), popularityZipf)]
			from := w.siteStart[src] // the home page is always reachable
			n := w.sitePages(int(src))
			for range 8 {
				p := w.siteStart[src] + int32(r.zipfIndex(n, pagePopZipf))
				if w.reachablePolitely(p, &buf) {
					from = p
					break
				}
			}
			span = append(span, spanLink{from, w.siteStart[s]})
		}
		if w.sites[s].robots.kind.open() {
			open = append(open, s)
		}
	}
	slices.SortStableFunc(span, func(a, b spanLink) int { return cmp.Compare(a.from, b.from) })
	return span
}

// reachablePolitely reports whether robots.txt allows p and every directory
// above it, so that a polite crawler can walk down to p from the home page.
func (w *Web) reachablePolitely(p int32, buf *[]byte) bool {
	rb := &w.sites[w.siteOf(p)].robots
	for q := p; q >= 0; q = w.parent[q] {
		*buf = w.appendPath((*buf)[:0], q)
		if rb.disallowed(string(*buf)) {
			return false
		}
	}
	return true
}

// linkPages draws every page's links and builds the graph. A page's links
// are, in order: its home page and parent directory (navigation), its
// directory listing, content links (inside the site or, with the external
// share, to other sites chosen by Zipf popularity), and spanning links.
// Links are distinct and never point to the page itself.
func (w *Web) linkPages(children func(int32) []int32, span []spanLink) error {
	o := w.opt
	P := o.Pages
	// Navigation links are all internal, so the content links carry a higher
	// external share to reach the target share over all links.
	nav := 0
	for p := range int32(P) {
		if par := w.parent[p]; par >= 0 {
			nav += 2 // the parent's listing of p, and p's link to its home page
			if w.parent[par] >= 0 {
				nav++ // p's link up to a parent that is not the home page
			}
		}
	}
	content := float64(P) * o.LinksPerPage
	pExt := min(o.ExternalLinks*(content+float64(nav))/content, externalCap)

	offsets := make([]int64, P+1)
	targets := make([]int32, 0, int(float64(P)*(o.LinksPerPage*1.05)+float64(nav)+float64(len(span))))
	seen := make([]int32, P) // seen[t] == p+1: p already links to t
	spanAt := 0
	S := len(w.sites)
	for s := range w.sites {
		a, b := w.siteStart[s], w.siteStart[s+1]
		n := int(b - a)
		for p := a; p < b; p++ {
			stamp := p + 1
			seen[p] = stamp
			add := func(t int32) bool {
				if seen[t] == stamp {
					return false
				}
				seen[t] = stamp
				targets = append(targets, t)
				return true
			}
			if p != a {
				add(a)
				if par := w.parent[p]; par != a {
					add(par)
				}
			}
			if w.kind(p) == KindIndex {
				for _, c := range children(p) {
					add(c)
				}
			}
			r := newRNG(o.Seed, tagLinks, uint64(p))
			k := int(math.Round(o.LinksPerPage * r.lognormal(math.Exp(-linkCountSigma*linkCountSigma/2), linkCountSigma)))
			k = min(k, int(20*o.LinksPerPage)+20)
			// A draw that hits the page's own site (for an external link)
			// or a page already linked is drawn again, a few times, so that
			// the page gets about k content links and the external share
			// stays near its target.
			for range k {
				if S > 1 && r.chance(pExt) {
					for range drawTries {
						ts := int(w.popular[r.zipfIndex(S, popularityZipf)])
						if ts == s {
							continue
						}
						t := w.siteStart[ts]
						if !r.chance(homeShare) {
							t += int32(r.zipfIndex(w.sitePages(ts), pagePopZipf))
						}
						if add(t) {
							break
						}
					}
					continue
				}
				if n == 1 {
					continue
				}
				for range drawTries {
					var local int
					switch m := r.intn(10); {
					case m < 4: // popular pages: near the top of the tree
						local = r.zipfIndex(n, pagePopZipf)
					case m < 7:
						local = r.intn(n)
					default: // nearby pages, often in the same directory
						local = int(p-a) + r.intn(2*localWindow+1) - localWindow
						local = min(max(local, 0), n-1)
					}
					if add(a + int32(local)) {
						break
					}
				}
			}
			for spanAt < len(span) && span[spanAt].from == p {
				add(span[spanAt].to)
				spanAt++
			}
			offsets[p+1] = int64(len(targets))
		}
	}
	if cap(targets)-len(targets) > len(targets)/16 {
		targets = slices.Clone(targets) // give the over-estimate back
	}
	g, err := rank.FromCSR(offsets, targets)
	if err != nil {
		return fmt.Errorf("simweb: %w", err)
	}
	w.graph = g
	return nil
}

// countStats fills the summary statistics.
func (w *Web) countStats() {
	st := &w.stats
	st.Sites, st.Pages = len(w.sites), w.opt.Pages
	st.Links = w.graph.NumEdges()
	st.Addresses = len(w.addrs)
	st.RobotsKinds = make(map[RobotsKind]int)
	var buf []byte
	for s := range w.sites {
		a, b := w.siteStart[s], w.siteStart[s+1]
		st.MaxSitePages = max(st.MaxSitePages, int(b-a))
		rb := &w.sites[s].robots
		st.RobotsKinds[rb.kind]++
		for p := a; p < b; p++ {
			st.MaxDepth = max(st.MaxDepth, int(w.depth[p]))
			for _, t := range w.graph.Out(p) {
				if t < a || t >= b {
					st.ExternalLinks++
				}
			}
			if len(rb.rules) > 0 || rb.kind == RobotsServerError {
				buf = w.appendPath(buf[:0], p)
				if rb.disallowed(string(buf)) {
					st.DisallowedPages++
				}
			}
		}
	}
}
