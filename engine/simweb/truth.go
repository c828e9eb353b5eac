package simweb

import (
	"net/url"
	"strconv"
	"strings"
)

// Truth is the ground truth about one URL: what the server answers for it
// and which content it carries. Web.Truth computes it without rendering.
type Truth struct {
	// Status is what the server answers: 200, 301 (a directory asked for
	// without its final slash) or 404, or robots.txt's status for
	// /robots.txt; 0 for a host the web does not have. Options.ErrorRate's
	// random 5xx answers are not part of the truth.
	Status int
	// ContentType is the Content-Type header the server sends.
	ContentType string
	// Content identifies the content the URL carries: every copy of a page
	// (mirrors, loops, session and tracking parameters, print copies) has
	// the Content of the original. Base page p has PageContent(p); other
	// contents have IDs with the trap kind in the top byte and the site in
	// the next three. Zero means no content (404, 301, robots.txt).
	Content uint64
	// Genuine is false for junk that no index should keep: soft-404 pages,
	// calendar months outside the genuine range, binary files served as
	// HTML.
	Genuine bool
	// Trap is the trap the URL belongs to, TrapNone for an ordinary page.
	// When several apply (an alias host's print copy, say), it is the
	// first of: the junk kind (soft 404, binary, empty month); print copy,
	// directory mirror, loop, host mirror, session id, tracking; calendar,
	// deep chain, HTML as octet-stream.
	Trap TrapKind
	// Traps holds every trap kind the URL shows.
	Traps TrapSet
	// Page is the base page whose content the URL carries, or -1.
	Page int
	// Canonical is the URL, without port, of the original of the content:
	// the page as linked from its site without any trap. Empty without
	// content; for a soft 404, the URL itself.
	Canonical string
	// Location is where a 301 points, without port.
	Location string
	// Disallowed reports whether the site's robots.txt forbids the URL
	// (path and query) to crawlers it does not name.
	Disallowed bool
}

// PageContent returns the Content of base page p (see Truth.Content).
func PageContent(p int) uint64 { return uint64(p) + 1 }

// virtual is content that traps add: calendar months, deep chain pages,
// pages served as octet-stream and the pages they link to, soft-404 pages,
// binary files.
type virtual struct {
	kind  TrapKind
	local uint32 // month index; level<<partBits|part; report<<partBits|part; binary index; 0
}

// The local id of a deep chain page or an octet-stream report and its
// parts: level or report number, then the part number (0 for the level's
// or report's own page).
const (
	partBits = 16
	partMask = 1<<partBits - 1
)

func (v virtual) content(site int) uint64 {
	local := v.local
	if v.kind == TrapFacets {
		local &= facetContentMask // the order and view of a listing are not its content
	}
	return uint64(v.kind)<<56 | uint64(site)<<32 | uint64(local)
}

// Resolution contexts: how a URL's relative links resolve differently from
// the canonical URL of its content. ReachableUnique explores each content
// once per context.
const (
	ctxMirror uint8 = 1 << iota
	ctxLoop
	ctxPrint
	ctxAlias
)

// view is how a base page is rendered.
type view uint8

const (
	viewPlain     view = iota
	viewBanner         // a mirror copy with a banner line
	viewPrint          // a printer-friendly copy
	viewPrintBare      // a printer-friendly copy without navigation or footer
)

// resolution is what a path names on a site.
type resolution struct {
	status   int // 200, 301 or 404
	page     int32
	virt     virtual // when page < 0 and status is 200
	traps    TrapSet
	ctx      uint8
	view     view
	location string // path a 301 points to
}

// resolve finds what path (without query) names on site s, through the
// site's traps. It is the one place that decides what the server serves,
// so Truth, the server and ReachableUnique agree by construction.
func (w *Web) resolve(s int, path string) resolution {
	st := w.traps.site(s)
	if st == nil {
		p, redirect, ok := w.lookupPath(s, path, nil)
		switch {
		case !ok:
			return resolution{status: 404, page: -1}
		case redirect:
			return resolution{status: 301, page: -1, location: path + "/"}
		}
		return resolution{status: 200, page: p}
	}
	res := resolution{page: -1}
	if st.session == sessionJSESSIONID {
		if i := strings.Index(path, ";jsessionid="); i >= 0 {
			end := strings.IndexByte(path[i:], '/')
			if end < 0 {
				path = path[:i]
			} else {
				path = path[:i] + path[i+end:]
			}
			res.traps = res.traps.With(TrapSessionID)
		}
	}
	if st.caseFold {
		if lower, ok := lowerPath(path); ok {
			path = lower
			res.traps = res.traps.With(TrapCaseFold)
		}
	}
	if st.indexName != "" {
		if dir, ok := strings.CutSuffix(path, "/"+st.indexName); ok {
			path = dir + "/"
			res.traps = res.traps.With(TrapIndexAlias)
		}
	}
	orig := path
	if st.set.Has(TrapPrintCopy) {
		if path+"/" == printPrefix {
			res.status, res.location = 301, printPrefix
			return res
		}
		if inner, ok := strings.CutPrefix(path, printPrefix[:len(printPrefix)-1]); ok && strings.HasPrefix(inner, "/") {
			p, redirect, ok := w.lookupPath(s, inner, nil)
			if !ok {
				return w.notFound(st, res)
			}
			res.traps = res.traps.With(TrapPrintCopy)
			res.ctx |= ctxPrint
			res.view = viewPrint
			if redirect {
				res.status, res.location = 301, orig+"/"
				return res
			}
			res.status, res.page = 200, p
			return res
		}
	}
	if st.mirrorFrom != "" {
		if rest, ok := strings.CutPrefix(path, st.mirrorFrom); ok {
			path = st.mirrorTo + rest
			res.traps = res.traps.With(TrapDirMirror)
			res.ctx |= ctxMirror
			if st.mirrorBanner {
				res.view = viewBanner
			}
		} else if path+"/" == st.mirrorFrom {
			res.status, res.location = 301, st.mirrorFrom
			return res
		}
	}
	if st.loopDir >= 0 {
		// D/L/L/.../rest is D/rest, as through a symbolic link L -> ".".
		n := len(st.loopPath)
		for len(path) > n+len(st.loopSeg) && strings.HasPrefix(path, st.loopPath) &&
			strings.HasPrefix(path[n:], st.loopSeg) && path[n+len(st.loopSeg)] == '/' {
			path = st.loopPath + path[n+len(st.loopSeg)+1:]
			res.traps = res.traps.With(TrapLoop)
			res.ctx |= ctxLoop
		}
	}
	if p, redirect, ok := w.lookupPath(s, path, nil); ok {
		if redirect {
			res.status, res.location = 301, orig+"/"
			return res
		}
		res.status, res.page = 200, p
		return res
	}
	// Pages the traps add.
	virt, redirect, ok := st.lookupVirtual(path)
	switch {
	case !ok:
		return w.notFound(st, res)
	case redirect:
		res.status, res.location = 301, orig+"/"
		return res
	}
	res.status, res.virt = 200, virt
	res.traps = res.traps.With(virt.kind)
	if virt.kind == TrapHTMLAsOctet {
		if virt.local&partMask != 0 {
			// The pages an octet-stream page links to are ordinary pages.
			res.traps &^= 1 << TrapHTMLAsOctet
		}
	}
	return res
}

// resolveQuery is resolve for a path with its query: the pages traps
// address by their query (the catalogue, print copies behind a parameter)
// are resolved here; other queries change nothing.
func (w *Web) resolveQuery(s int, path, query string) resolution {
	st := w.traps.site(s)
	if st != nil && st.catPath != "" && path == st.catPath {
		if v, ok := st.parseCatalog(query); ok {
			return resolution{status: 200, page: -1, virt: v, traps: TrapSet(0).With(TrapParamOrder)}
		}
		return w.notFound(st, resolution{page: -1})
	}
	if st != nil && st.facets.root != "" && strings.HasPrefix(path, st.facets.root) {
		if v, ok := st.facets.parse(path, query); ok {
			return resolution{status: 200, page: -1, virt: v, traps: TrapSet(0).With(TrapFacets)}
		}
	}
	res := w.resolve(s, path)
	if st != nil && st.printParam != "" && res.status == 200 && res.page >= 0 && res.view == viewPlain && hasParam(query, st.printParam, st.printValue) {
		res.view = viewPrintBare
		res.traps = res.traps.With(TrapPrintParam)
	}
	return res
}

// hasParam reports whether query has name=value.
func hasParam(query, name, value string) bool {
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		if n, v, _ := strings.Cut(kv, "="); n == name && v == value {
			return true
		}
	}
	return false
}

// notFound answers a path that names nothing: a soft 404 or a 404.
func (w *Web) notFound(st *siteTraps, res resolution) resolution {
	if st.set.Has(TrapSoft404) {
		res.status, res.page, res.virt = 200, -1, virtual{kind: TrapSoft404}
		res.traps = res.traps.With(TrapSoft404)
		res.view = viewPlain
		return res
	}
	return resolution{status: 404, page: -1, traps: res.traps}
}

// genuine reports whether virtual content v of site s is genuine.
func (w *Web) genuine(s int, v virtual) bool {
	switch v.kind {
	case TrapCalendar:
		st := w.traps.sites[s]
		return int32(v.local) >= st.calFirst && int32(v.local) <= st.calLast
	case TrapDeepChain, TrapHTMLAsOctet, TrapParamOrder, TrapFacets:
		return true
	}
	return false
}

// appendVirtualPath appends the canonical path of virtual content v of
// site s.
func (w *Web) appendVirtualPath(dst []byte, s int, v virtual) []byte {
	st := w.traps.sites[s]
	switch v.kind {
	case TrapCalendar:
		return appendMonthPath(dst, st.calRoot, int32(v.local))
	case TrapDeepChain:
		dst = append(dst, st.deepRoot...)
		for l := 1; l <= int(v.local>>partBits); l++ {
			dst = strconv.AppendInt(dst, int64(l), 10)
			dst = append(dst, '/')
		}
		if part := v.local & partMask; part > 0 {
			dst = append(dst, "part-"...)
			dst = strconv.AppendInt(dst, int64(part), 10)
			dst = append(dst, ".html"...)
		}
		return dst
	case TrapHTMLAsOctet:
		dst = append(dst, "/export/report-"...)
		dst = strconv.AppendInt(dst, int64(v.local>>partBits), 10)
		if part := v.local & partMask; part > 0 {
			dst = append(dst, "/part-"...)
			dst = strconv.AppendInt(dst, int64(part), 10)
		}
		return append(dst, ".html"...)
	case TrapBinaryAsHTML:
		return append(dst, st.binaries[v.local].path...)
	case TrapParamOrder:
		return st.appendCatalogHref(dst, int(v.local>>8), int(v.local&0xff), true)
	case TrapFacets:
		return st.facets.appendHref(dst, v, true)
	}
	return dst
}

// appendCatalogHref appends the catalogue's URL path and query for a
// category and page, the category first or not.
func (st *siteTraps) appendCatalogHref(dst []byte, cat, page int, catFirst bool) []byte {
	dst = append(dst, st.catPath...)
	dst = append(dst, '?')
	a, b := st.catName, st.pageName
	x, y := cat, page
	if !catFirst {
		a, b, x, y = b, a, y, x
	}
	dst = append(dst, a...)
	dst = append(dst, '=')
	dst = strconv.AppendInt(dst, int64(x), 10)
	dst = append(dst, '&')
	dst = append(dst, b...)
	dst = append(dst, '=')
	return strconv.AppendInt(dst, int64(y), 10)
}

// Content types the server sends.
const (
	typeHTML   = "text/html; charset=utf-8"
	typeBinary = "text/html"
	typeOctet  = "application/octet-stream"
	typePlain  = "text/plain; charset=utf-8"
)

func contentType(res resolution) string {
	switch {
	case res.status != 200:
		if res.status == 301 {
			return typePlain
		}
		return typeHTML
	case res.page >= 0:
		return typeHTML
	case res.virt.kind == TrapBinaryAsHTML:
		return typeBinary
	case res.virt.kind == TrapHTMLAsOctet && res.virt.local&partMask == 0:
		return typeOctet
	}
	return typeHTML
}

// Truth returns the ground truth about a URL such as
// "http://site7.test:8080/calendar/2100/01/?sid=1" (the port is ignored):
// what the server answers and which content that is. It parses the URL and
// resolves its path as the server does, without rendering; it is safe for
// concurrent use.
func (w *Web) Truth(rawURL string) Truth {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return Truth{Page: -1}
	}
	host := canonicalHost(u.Host)
	id, ok := w.hosts[host]
	if !ok {
		return Truth{Page: -1}
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return w.truthAt(int(id), host, path, u.RawQuery)
}

func (w *Web) truthAt(s int, host, path, query string) Truth {
	t := Truth{Page: -1}
	rb := &w.sites[s].robots
	target := path
	if query != "" {
		target += "?" + query
	}
	t.Disallowed = rb.disallowed(target)
	if path == "/robots.txt" {
		t.Status = rb.status
		t.ContentType = typeHTML
		if rb.status == 200 {
			t.ContentType = typePlain
		}
		return t
	}
	res := w.resolveQuery(s, path, query)
	t.Status = res.status
	t.ContentType = contentType(res)
	t.Traps = res.traps | queryTraps(w.traps.site(s), query)
	if host != w.sites[s].host {
		t.Traps = t.Traps.With(TrapHostMirror)
	}
	switch res.status {
	case 301:
		t.Location = w.scheme() + "://" + host + res.location
	case 200:
		if res.page >= 0 {
			t.Page = int(res.page)
			t.Content = PageContent(t.Page)
			t.Genuine = true
			t.Canonical = w.URL(t.Page)
		} else {
			t.Content = res.virt.content(s)
			t.Genuine = w.genuine(s, res.virt)
			if res.virt.kind == TrapSoft404 {
				t.Canonical = w.scheme() + "://" + host + path
			} else {
				t.Canonical = string(w.appendVirtualPath(w.appendOrigin(nil, s, 0), s, res.virt))
			}
		}
	}
	t.Trap = primaryTrap(t.Traps, t.Genuine || t.Status != 200)
	return t
}

// junkKinds, copyKinds and featureKinds are the precedence of Truth.Trap.
var (
	junkKinds    = []TrapKind{TrapSoft404, TrapBinaryAsHTML, TrapCalendar}
	copyKinds    = []TrapKind{TrapPrintCopy, TrapPrintParam, TrapIndexAlias, TrapCaseFold, TrapDirMirror, TrapLoop, TrapHostMirror, TrapSessionID, TrapTracking}
	featureKinds = []TrapKind{TrapCalendar, TrapDeepChain, TrapHTMLAsOctet, TrapParamOrder, TrapFacets}
)

func primaryTrap(set TrapSet, genuine bool) TrapKind {
	if !genuine {
		for _, k := range junkKinds {
			if set.Has(k) {
				return k
			}
		}
	}
	for _, k := range copyKinds {
		if set.Has(k) {
			return k
		}
	}
	for _, k := range featureKinds {
		if set.Has(k) {
			return k
		}
	}
	return TrapNone
}

// queryTraps returns the trap kinds a query shows: session ids and
// tracking parameters. st may be nil.
func queryTraps(st *siteTraps, query string) TrapSet {
	var set TrapSet
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.EqualFold(name, "sid"), strings.EqualFold(name, "phpsessid"), strings.EqualFold(name, "jsessionid"):
			set = set.With(TrapSessionID)
		case name == "s" && st != nil && st.session == sessionHex:
			set = set.With(TrapSessionID)
		case len(name) > 4 && strings.EqualFold(name[:4], "utm_"), name == "ref", name == "gclid", name == "fbclid":
			set = set.With(TrapTracking)
		}
	}
	return set
}
