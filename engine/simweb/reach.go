package simweb

import (
	"bytes"
	"html"
	"iter"
	"net/url"
	"strings"
)

// Reach is the denominator of a crawl's recall: the genuine content a
// polite crawler can reach from the seeds, and how many links away. It is
// made by Web.ReachableUnique; it is immutable and safe for concurrent use.
type Reach struct {
	// Unique is the number of genuine content classes reachable.
	Unique int
	// BeyondDepth10 is how many of them lie more than ten links from every
	// seed: what a crawler limited to depth 10 cannot get.
	BeyondDepth10 int
	// MaxDistance is the largest link distance of a reachable content.
	MaxDistance int
	// States is the number of (content, context) states the exploration
	// expanded; see Web.ReachableUnique.
	States int

	pageDist []int32          // by base page: link distance, or -1
	virtDist map[uint64]int32 // contents traps add
}

// Contains reports whether a genuine content class (Truth.Content) is
// reachable.
func (r *Reach) Contains(content uint64) bool { return r.Distance(content) >= 0 }

// Distance returns the least number of links between a seed and a URL
// carrying content, or -1 if the content is not reachable (or not genuine).
func (r *Reach) Distance(content uint64) int {
	if content == 0 {
		return -1
	}
	if content <= uint64(len(r.pageDist)) {
		return int(r.pageDist[content-1])
	}
	if d, ok := r.virtDist[content]; ok {
		return int(d)
	}
	return -1
}

// Beyond returns how many reachable contents lie more than depth links
// from every seed.
func (r *Reach) Beyond(depth int) int {
	n := 0
	for _, d := range r.All() {
		if d > depth {
			n++
		}
	}
	return n
}

// All yields every reachable content class with its link distance: base
// pages in id order, then the contents traps add in no particular order.
func (r *Reach) All() iter.Seq2[uint64, int] {
	return func(yield func(uint64, int) bool) {
		for p, d := range r.pageDist {
			if d >= 0 && !yield(PageContent(p), int(d)) {
				return
			}
		}
		for c, d := range r.virtDist {
			if !yield(c, int(d)) {
				return
			}
		}
	}
}

// reachKey is a state of the exploration: a content seen in a context in
// which its relative links resolve differently (a mirror, a loop, a print
// copy, an alias host).
type reachKey struct {
	content uint64
	ctx     uint8
}

// reachItem is a state waiting to be expanded, with a URL that shows it.
type reachItem struct {
	site        int32
	alias       bool
	path, query string
}

// ReachableUnique returns the genuine content reachable from the seed pages
// (page ids, such as Seeds returns) by following links a polite crawler
// may follow (robots.txt's "*" group, the ground truth of Disallowed, is
// obeyed), to unlimited depth.
//
// Traps make the URL space endless, so the exploration is a breadth-first
// search over states rather than URLs: a state is a content class together
// with the context its URL puts it in (canonical, or under a directory
// mirror, a loop, a print copy, an alias host, or a combination), because
// only the context changes where a copy's relative links lead. A URL whose
// state was already seen is not expanded again: a loop's levels beyond the
// first and a page's session-id variants add nothing. URLs that are not
// genuine (soft 404s, empty calendar months, binary files) are neither
// counted nor expanded; by construction no genuine content is reachable
// only through them. A content's distance is the fewest links from a
// seed to any URL carrying it, as a breadth-first crawler would count
// depth; redirects do not count as links.
//
// Ordinary pages of sites without traps are expanded from the link graph;
// every other state is rendered and its anchors parsed, so the result is
// what the server serves. It takes about a second per 100,000 pages and
// memory of a few bytes per page; the result is safe for concurrent use.
func (w *Web) ReachableUnique(seeds []int) *Reach {
	P := w.NumPages()
	r := &Reach{pageDist: make([]int32, P), virtDist: make(map[uint64]int32)}
	for i := range r.pageDist {
		r.pageDist[i] = -1
	}
	x := reachExplorer{w: w, reach: r, seen: make(map[reachKey]bool), pageSeen: make([]uint64, (P+63)/64)}
	for _, p := range seeds {
		if p < 0 || p >= P {
			continue
		}
		s := w.siteOf(int32(p))
		x.push(s, false, string(w.appendPath(nil, int32(p))), "", 0)
	}
	for level := int32(0); len(x.next) > 0 || len(x.nextItems) > 0; level++ {
		cur, items := x.next, x.nextItems
		x.next, x.nextItems = nil, nil
		for _, p := range cur {
			x.expandPage(p, level)
		}
		for _, it := range items {
			x.expandRendered(int(it.site), it.alias, it.path, it.query, level)
		}
		r.States += len(cur) + len(items)
	}
	for _, d := range r.All() {
		r.Unique++
		r.MaxDistance = max(r.MaxDistance, d)
		if d > 10 {
			r.BeyondDepth10++
		}
	}
	return r
}

type reachExplorer struct {
	w         *Web
	reach     *Reach
	seen      map[reachKey]bool
	pageSeen  []uint64    // canonical states of base pages
	next      []int32     // canonical base pages of the next level
	nextItems []reachItem // other states of the next level
	buf, body []byte
}

// push follows a link to (site, path, query), found at the given level.
func (x *reachExplorer) push(s int, alias bool, path, query string, level int32) {
	w := x.w
	rb := &w.sites[s].robots
	target := path
	if query != "" {
		target += "?" + query
	}
	if path == "/robots.txt" || rb.disallowed(target) {
		return
	}
	res := w.resolveQuery(s, path, query)
	if res.status == 301 {
		path, query = res.location, ""
		if rb.disallowed(path) {
			return
		}
		res = w.resolve(s, path)
	}
	if res.status != 200 {
		return
	}
	var content uint64
	if res.page >= 0 {
		content = PageContent(int(res.page))
	} else {
		if !w.genuine(s, res.virt) {
			return
		}
		content = res.virt.content(s)
	}
	ctx := res.ctx
	if alias {
		ctx |= ctxAlias
	}
	if ctx == 0 && res.page >= 0 {
		x.pushPage(res.page, level)
		return
	}
	key := reachKey{content, ctx}
	if x.seen[key] {
		return
	}
	x.seen[key] = true
	if res.page >= 0 {
		if x.reach.pageDist[res.page] < 0 {
			x.reach.pageDist[res.page] = level
		}
	} else if _, ok := x.reach.virtDist[content]; !ok {
		x.reach.virtDist[content] = level
	}
	x.nextItems = append(x.nextItems, reachItem{site: int32(s), alias: alias, path: path, query: query})
}

// pushPage records base page p at its canonical URL, reached at level.
func (x *reachExplorer) pushPage(p int32, level int32) {
	if x.pageSeen[p/64]&(1<<(p%64)) != 0 {
		return
	}
	x.pageSeen[p/64] |= 1 << (p % 64)
	if x.reach.pageDist[p] < 0 {
		x.reach.pageDist[p] = level
	}
	x.next = append(x.next, p)
}

// expandPage follows the links of base page p at its canonical URL: the
// graph's out-edges, some with session ids or tracking parameters (which
// change only what robots.txt says of them), and the links traps add.
func (x *reachExplorer) expandPage(p int32, level int32) {
	w := x.w
	s := w.siteOf(p)
	if w.traps != nil {
		x.expandTrapLinks(p, s, level)
	}
	a, b := w.siteStart[s], w.siteStart[s+1]
	for _, t := range w.graph.Out(p) {
		ts := s
		if t < a || t >= b {
			ts = w.siteOf(t)
		}
		rb := &w.sites[ts].robots
		if rb.kind == RobotsServerError {
			continue
		}
		x.buf = x.buf[:0]
		check := len(rb.rules) > 0
		if w.traps != nil && w.traps.sites[ts] != nil {
			x.buf = w.appendPathIn(x.buf, t, ts)
			n := len(x.buf)
			x.buf = w.appendLinkParams(x.buf, p, t, s, ts, false)
			check = check || len(x.buf) > n
		}
		if check {
			if len(x.buf) == 0 {
				x.buf = w.appendPathIn(x.buf, t, ts)
			}
			if rb.disallowed(string(x.buf)) {
				continue
			}
		}
		x.pushPage(t, level+1)
	}
}

// expandTrapLinks follows the links traps add to base page p of site s at
// its canonical URL (see renderer.trapLinks and renderer.loopLink).
func (x *reachExplorer) expandTrapLinks(p int32, s int, level int32) {
	w := x.w
	for _, l := range w.traps.extra[p] {
		path, query, _ := strings.Cut(l.path, "?")
		if l.site < 0 {
			x.push(s, false, path, query, level+1)
		} else {
			x.push(int(l.site), l.alias, path, query, level+1)
		}
	}
	st := w.traps.sites[s]
	if st == nil {
		return
	}
	if st.set.Has(TrapPrintCopy) || st.loopDir == p {
		path := string(w.appendPath(nil, p))
		if st.set.Has(TrapPrintCopy) {
			x.push(s, false, "/print"+path, "", level+1)
		}
		if st.loopDir == p {
			x.push(s, false, path+st.loopSeg+"/", "", level+1)
		}
	}
	if st.printParam != "" {
		x.push(s, false, string(w.appendPath(nil, p)), st.printParam+"="+st.printValue, level+1)
	}
	if st.indexName != "" || st.caseFold {
		path := w.appendPath(nil, p)
		if st.indexName != "" && path[len(path)-1] == '/' {
			x.push(s, false, string(path)+st.indexName, "", level+1)
		}
		if st.caseFold && hasLower(path) {
			x.push(s, false, string(appendTitleCase(nil, path)), "", level+1)
		}
	}
}

// expandRendered renders the URL (site, path) as the server would and
// follows the links in its anchors.
func (x *reachExplorer) expandRendered(s int, alias bool, path, query string, level int32) {
	w := x.w
	res := w.resolveQuery(s, path, query)
	switch {
	case res.status != 200:
		return
	case res.page >= 0:
		x.body = w.appendPage(x.body[:0], res.page, 0, res.view)
	case res.virt.kind == TrapBinaryAsHTML:
		return
	default:
		x.body = w.appendVirtual(x.body[:0], s, res.virt, path)
	}
	host := w.sites[s].host
	if alias {
		host = w.traps.sites[s].alias
	}
	base := &url.URL{Scheme: "http", Host: host}
	base.Path, _ = url.PathUnescape(path)
	base.RawPath = path
	body := x.body
	for {
		i := bytes.Index(body, []byte(`href="`))
		if i < 0 {
			break
		}
		body = body[i+6:]
		j := bytes.IndexByte(body, '"')
		if j < 0 {
			break
		}
		href := string(body[:j])
		body = body[j+1:]
		if strings.Contains(href, "&") {
			href = html.UnescapeString(href)
		}
		ref, err := url.Parse(href)
		if err != nil {
			continue
		}
		u := base.ResolveReference(ref)
		h := canonicalHost(u.Host)
		ts, ok := w.hosts[h]
		if !ok {
			continue
		}
		x.push(int(ts), h != w.sites[ts].host, u.EscapedPath(), u.RawQuery, level+1)
	}
}
