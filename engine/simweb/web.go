package simweb

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"lidi/engine/rank"
)

// Site describes one simulated site (one host name).
type Site struct {
	ID   int
	Host string // such as "www.site42.test" or "site42.test"
	// Name is the site's display name, used in page titles.
	Name string
	// Addr is the loopback address the host resolves to; several sites may
	// share it.
	Addr netip.Addr
	// HomePage is the page id of "/"; the site's pages are HomePage ..
	// HomePage+Pages-1.
	HomePage, Pages int
	// Popularity is the site's rank by external in-links, 0 for the most
	// linked site (the first seed).
	Popularity int
	Robots     RobotsKind
	// CrawlDelay is the Crawl-delay its robots.txt asks of every crawler, or 0.
	CrawlDelay time.Duration
	// Latency and Bandwidth (bytes per second, 0 for unlimited) are how the
	// server answers for this site.
	Latency   time.Duration
	Bandwidth int64
}

// Page describes one page.
type Page struct {
	ID   int
	Site int
	// Path is the URL path, such as "/" or "/seman-4/tolo-1f.html".
	Path string
	// Depth is the number of directories between the page and its site's
	// home page: 0 for home pages.
	Depth int
	Kind  PageKind
	// Parent is the directory page above it, or -1 for a home page.
	Parent int
	// Disallowed reports whether the site's robots.txt forbids the page to
	// every crawler it does not name.
	Disallowed bool
}

// Options returns the options the web was generated with, defaults filled in.
func (w *Web) Options() Options { return w.opt }

// NumSites returns the number of sites.
func (w *Web) NumSites() int { return len(w.sites) }

// NumPages returns the number of pages.
func (w *Web) NumPages() int { return len(w.parent) }

// Stats returns summary statistics of the web.
func (w *Web) Stats() WebStats {
	st := w.stats
	st.RobotsKinds = make(map[RobotsKind]int, len(w.stats.RobotsKinds))
	for k, v := range w.stats.RobotsKinds {
		st.RobotsKinds[k] = v
	}
	if w.stats.Traps != nil {
		st.Traps = make(map[TrapKind]int, len(w.stats.Traps))
		for k, v := range w.stats.Traps {
			st.Traps[k] = v
		}
	}
	return st
}

// Graph returns the link graph: node i is page i, and the out-edges of a
// page are its distinct links in the order they appear in its HTML.
func (w *Web) Graph() *rank.Graph { return w.graph }

// PageRank returns every page's PageRank (damping 0.85, dangling pages
// spread uniformly, L1 residual under 1e-9), summing to 1. The slice is
// shared and must not be modified.
func (w *Web) PageRank() []float64 { return w.pagerank }

// Addresses returns the distinct addresses the sites use, in order.
func (w *Web) Addresses() []netip.Addr { return append([]netip.Addr(nil), w.addrs...) }

// Site returns site i.
func (w *Web) Site(i int) Site {
	s := &w.sites[i]
	return Site{
		ID:         i,
		Host:       s.host,
		Name:       s.name,
		Addr:       s.addr,
		HomePage:   int(w.siteStart[i]),
		Pages:      w.sitePages(i),
		Popularity: int(s.popularity),
		Robots:     s.robots.kind,
		CrawlDelay: s.robots.crawlDelay,
		Latency:    s.latency,
		Bandwidth:  s.bandwidth,
	}
}

// SiteByHost returns the site id of a host name, which must be lower case
// and without a port.
func (w *Web) SiteByHost(host string) (int, bool) {
	s, ok := w.hosts[host]
	return int(s), ok
}

// Page returns page i.
func (w *Web) Page(i int) Page {
	p := int32(i)
	s := w.siteOf(p)
	path := string(w.appendPath(nil, p))
	return Page{
		ID:         i,
		Site:       s,
		Path:       path,
		Depth:      int(w.depth[p]),
		Kind:       w.kind(p),
		Parent:     int(w.parent[p]),
		Disallowed: w.sites[s].robots.disallowed(path),
	}
}

// URL returns the page's canonical URL without a port, such as
// "http://www.site42.test/seman-4/". Server.URL gives the URL to fetch.
func (w *Web) URL(page int) string {
	return string(w.appendURL(nil, int32(page), 0))
}

// Seeds returns the home pages of the n most popular sites, most popular
// first. Every site's home page is reachable from the first one through
// pages that robots.txt allows.
func (w *Web) Seeds(n int) []int {
	n = min(max(n, 0), len(w.popular))
	seeds := make([]int, n)
	for i := range seeds {
		seeds[i] = int(w.siteStart[w.popular[i]])
	}
	return seeds
}

// Lookup returns the page a host and path name. The host must be lower case
// without a port; the path must not carry a query.
func (w *Web) Lookup(host, path string) (page int, ok bool) {
	s, ok := w.hosts[host]
	if !ok {
		return 0, false
	}
	p, redirect, ok := w.lookupPath(int(s), path, nil)
	return int(p), ok && !redirect
}

// Disallowed reports whether site's robots.txt forbids path (which may carry
// a "?query") to crawlers it does not name, by the RFC 9309 rules.
func (w *Web) Disallowed(site int, path string) bool {
	return w.sites[site].robots.disallowed(path)
}

// RobotsTxt returns what the server answers for site's /robots.txt.
func (w *Web) RobotsTxt(site int) (status int, body []byte) {
	rb := &w.sites[site].robots
	return rb.status, append([]byte(nil), rb.body...)
}

func (w *Web) kind(p int32) PageKind { return PageKind(w.flags[p] & flagKindMask) }

func (w *Web) sitePages(s int) int { return int(w.siteStart[s+1] - w.siteStart[s]) }

// siteOf returns the site of page p.
func (w *Web) siteOf(p int32) int {
	return sort.Search(len(w.sites), func(s int) bool { return w.siteStart[s+1] > p })
}

// appendSegment appends the last path segment of page p (local id local):
// "word-id/" for directories, "word-id.ext" for articles. The base-36 local
// id makes names unique within a site and lets the server parse them back.
func (w *Web) appendSegment(dst []byte, p, local int32) []byte {
	word := len(functionWords) + int(mix(w.opt.Seed, tagName, uint64(p))%2000)
	dst = append(dst, w.vocab.word(word)...)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, int64(local), 36)
	f := w.flags[p]
	if PageKind(f&flagKindMask) == KindIndex {
		return append(dst, '/')
	}
	return append(dst, extensions[f>>flagExtShift]...)
}

// appendPath appends the URL path of page p.
func (w *Web) appendPath(dst []byte, p int32) []byte {
	if w.parent[p] < 0 {
		return append(dst, '/')
	}
	return w.appendPathIn(dst, p, int(w.siteOf(p)))
}

// appendPathIn is appendPath for a page known to belong to site s.
func (w *Web) appendPathIn(dst []byte, p int32, s int) []byte {
	dst = append(dst, '/')
	if w.parent[p] < 0 {
		return dst
	}
	a := w.siteStart[s]
	var stack [maxDepth + 1]int32
	n := 0
	for q := p; w.parent[q] >= 0; q = w.parent[q] {
		stack[n] = q
		n++
	}
	for i := n - 1; i >= 0; i-- {
		dst = w.appendSegment(dst, stack[i], stack[i]-a)
	}
	return dst
}

// appendOrigin appends the origin of site s: see appendHostOrigin.
func (w *Web) appendOrigin(dst []byte, s int, port int) []byte {
	return w.appendHostOrigin(dst, w.sites[s].host, port)
}

// appendHostOrigin appends "http://host" ("https://host" on a TLS web) and
// ":port" unless port is 0 or the scheme's default.
func (w *Web) appendHostOrigin(dst []byte, host string, port int) []byte {
	dst = append(dst, w.scheme()...)
	dst = append(dst, "://"...)
	dst = append(dst, host...)
	if port != 0 && port != w.defaultPort() {
		dst = append(dst, ':')
		dst = strconv.AppendInt(dst, int64(port), 10)
	}
	return dst
}

// scheme is the web's URL scheme: "https" on a TLS web, else "http".
func (w *Web) scheme() string {
	if w.opt.TLS {
		return "https"
	}
	return "http"
}

func (w *Web) defaultPort() int {
	if w.opt.TLS {
		return 443
	}
	return 80
}

func (w *Web) appendURL(dst []byte, p int32, port int) []byte {
	return w.appendPath(w.appendOrigin(dst, w.siteOf(p), port), p)
}

// lookupPath finds the page of site s at path. redirect is true when path
// names a directory without its final slash (the server answers 301, as
// Apache does). scratch, if not nil, is reused for building paths.
func (w *Web) lookupPath(s int, path string, scratch *[]byte) (p int32, redirect, ok bool) {
	a := w.siteStart[s]
	if path == "/" {
		return a, false, true
	}
	if len(path) < 2 || path[0] != '/' {
		return 0, false, false
	}
	seg := path[strings.LastIndexByte(path[:len(path)-1], '/')+1:]
	seg = strings.TrimSuffix(seg, "/")
	if dot := strings.LastIndexByte(seg, '.'); dot >= 0 {
		seg = seg[:dot]
	}
	dash := strings.LastIndexByte(seg, '-')
	if dash < 0 {
		return 0, false, false
	}
	local, err := strconv.ParseUint(seg[dash+1:], 36, 31)
	if err != nil || local == 0 || local >= uint64(w.sitePages(s)) {
		return 0, false, false
	}
	p = a + int32(local)
	var buf []byte
	if scratch != nil {
		buf = (*scratch)[:0]
	}
	buf = w.appendPath(buf, p)
	if scratch != nil {
		*scratch = buf
	}
	switch {
	case string(buf) == path:
		return p, false, true
	case len(buf) == len(path)+1 && buf[len(path)] == '/' && string(buf[:len(path)]) == path:
		return p, true, true
	}
	return 0, false, false
}
