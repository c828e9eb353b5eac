package dedup

import "strings"

// Which spelling to fetch first. Two URLs of one batch (a lease: one
// site's next pages) are often two spellings of one page: /a and
// /a?ref=nav, /docs/ and /docs/index.php, /docs/guide.html and
// /Docs/Guide.html. Fetched in the order the site linked them, the
// variant may answer first: it is then the page kept, and the canonical
// spelling is recorded as its copy, so the crawl keeps the spelling a
// rule would rewrite away. Fetched canonical first, the evidence comes
// from the canonical side (the page kept is at the spelling a rule
// keeps), and the variants come last, when a rule their pairs completed
// may spare the rest of them (Unproven, and the engine's revocations).

// Variants marks in variant (reset, grown to len(urls)) the URLs of a
// batch that are likely variants of another URL of the same batch: one
// of the spellings a rule would keep instead of it is also in the batch.
// Those spellings are the URL without its query, without one of its
// parameters (up to maxVariantParams), with its path in lower case,
// without an index file name (a common one, or one a rule learned on
// any origin), and the URL as a rewrite not yet learned on its origin
// would rewrite it (a candidate with a pair and no contradiction).
// It only orders: nothing is skipped for it, and a variant that turns
// out to be a page of its own is fetched all the same.
//
// Variants reads the detector; like the detector's other methods it is
// not safe for concurrent use.
func (d *Detector) Variants(urls []string, variant []bool) []bool {
	variant = append(variant[:0], make([]bool, len(urls))...)
	if len(urls) < 2 {
		return variant
	}
	in := make(map[uint64]struct{}, len(urls))
	for _, u := range urls {
		in[ID(u)] = struct{}{}
	}
	has := func(self, spelling string) bool {
		if spelling == self {
			return false
		}
		_, ok := in[ID(spelling)]
		return ok
	}
	for i, u := range urls {
		variant[i] = d.plainerIn(u, has)
	}
	return variant
}

// maxVariantParams bounds the parameters Variants drops one at a time.
const maxVariantParams = 8

// plainerIn reports whether has(url, s) holds for a spelling s a rule
// would keep instead of url (see Variants).
func (d *Detector) plainerIn(url string, has func(self, spelling string) bool) bool {
	oe := originEnd(url)
	path, query, hasQuery := strings.Cut(url[oe:], "?")
	if hasQuery {
		if has(url, url[:oe]+path) {
			return true
		}
		n := 0
		found := false
		eachParam(query, func(name, value string) bool {
			n++
			if n > maxVariantParams {
				return false
			}
			if has(url, withQuery(url[:oe]+path, withoutParam(query, n-1))) {
				found = true
				return false
			}
			return true
		})
		if found {
			return true
		}
	}
	if lower, ok := lowerASCII(path); ok && has(url, withQuery(url[:oe]+lower, query)) {
		return true
	}
	slash := strings.LastIndexByte(path, '/')
	if file := path[slash+1:]; file != "" && (indexNames[file] || d.indexNames[file]) {
		if has(url, withQuery(url[:oe]+path[:slash+1], query)) {
			return true
		}
	}
	for _, c := range d.candList[url[:oe]] {
		if !c.pending() {
			continue
		}
		if canon, ok := c.rule.Rewrite(url); ok && canon != "" && has(url, canon) {
			return true
		}
	}
	return false
}

// withoutParam returns query without its parameter number k (from 0,
// empty parameters not counted, as eachParam reads them).
func withoutParam(query string, k int) string {
	var b strings.Builder
	b.Grow(len(query))
	i := 0
	for q := query; q != ""; {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if p == "" {
			continue
		}
		if i != k {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(p)
		}
		i++
	}
	return b.String()
}

// maxIndexNames bounds the index file names learned from rules.
const maxIndexNames = 64

// noteIndexName records the file name a drop-index rule learned (on any
// origin) as one that Variants reads as a directory's index.
func (d *Detector) noteIndexName(name string) {
	if name == "" || indexNames[name] || d.indexNames[name] || len(d.indexNames) >= maxIndexNames {
		return
	}
	if d.indexNames == nil {
		d.indexNames = make(map[string]bool)
	}
	d.indexNames[name] = true
}

// Awaits reports whether url is a copy a candidate rewrite of its origin
// (supported by a pair, never contradicted, not yet a rule) would send to
// canon, a URL not fetched yet, and that waits for it: wait is asked
// whether it does (the crawl queues canon ahead of it, or has already in
// the same visit) and only a wait it confirms counts. Fetched now, url
// would be kept as the original and bring the candidate no pair, as the
// pages of a site that links only its tracked spellings (?ref=nav) from
// the pages met first. A crawler that fetches canon first (finding it, if
// the site has not linked it yet) gets the evidence from the canonical
// side: the page kept is at canon, and url, fetched after, is the pair,
// or is spared by the rule the candidate has become meanwhile. canon that
// answered 404 or 410 (NotFound) is never awaited, and a candidate's
// copies wait at most maxIdle times in all, so that what the rule never
// comes to cover is fetched in the end. Only the kinds whose canonical
// side is the rewrite's by construction wait: a parameter, path parameter
// or index file dropped, a path's case folded. A copy also waits for the
// canonical URL of a rewrite other origins proved (vouch.go), at most
// maxVouchWaits times an origin and rewrite, whether wait queued it or
// the crawl knows it already: once it answers a page, FromPrior puts the
// rule in force and the copy is never fetched.
func (d *Detector) Awaits(url string, wait func(canon string) bool) bool {
	for _, c := range d.candList[url[:originEnd(url)]] {
		if !c.pending() || c.awaited >= maxIdle {
			continue
		}
		switch c.rule.Kind {
		case DropParam, DropParamValue, DropPathParam, DropIndex, FoldCase:
		default:
			// Which side is the copy is decided by evidence for the
			// kinds with two (directory and host swaps: original.go);
			// segment rewrites need their own pairs under two parents.
			continue
		}
		canon, ok := c.rule.Rewrite(url)
		if !ok || canon == "" || canon == url {
			continue
		}
		id := ID(canon)
		if _, missing := d.missing[id]; missing || d.Observed(id) {
			continue
		}
		if !wait(canon) {
			return false
		}
		c.awaited++
		return true
	}
	return d.awaitsVouched(url, wait)
}
