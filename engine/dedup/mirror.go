package dedup

import (
	"strconv"
	"strings"
)

// evidence accumulates the duplicates that tie one thing (a directory, a
// host, a URL pattern, a query parameter) to another.
type evidence struct {
	rule     string
	n        int      // distinct duplicate pages
	ids      []uint64 // their ids, the first few
	prefix   string   // what would be labelled
	of       string   // what it duplicates
	home     bool     // host rule: the host's home page is among the duplicates
	dirs     []int32  // host rule: distinct directories of the duplicates (up to 2)
	paths    []uint64 // parameter rule: distinct paths (up to MirrorEvidence)
	counter  int      // parameter rule: pages the parameter alone told apart
	labelled bool
}

// maxEvidenceIDs bounds the ids kept per evidence record.
const maxEvidenceIDs = 16

func (e *evidence) addID(id uint64) bool {
	for _, x := range e.ids {
		if x == id {
			return false
		}
	}
	e.n++
	if len(e.ids) < maxEvidenceIDs {
		e.ids = append(e.ids, id)
	}
	return true
}

func (d *Detector) record(key, rule string) *evidence {
	e := d.evidence[key]
	if e == nil {
		e = &evidence{rule: rule}
		d.evidence[key] = e
	}
	return e
}

// tie records what the duplicate page dup (URL du) of page orig says about
// their directories, hosts, URL patterns and query parameters, and returns
// the label it completes, if any.
//
// The two URLs are related as follows (directories as segment lists):
//
//   - Same origin and path, other query: the query parameters that differ
//     do not matter (RuleQueryParam evidence).
//   - Same file name (index.html and the directory itself count as one):
//     strip the directory segments the two have in common at the end,
//     while neither directory is an ancestor of the other on one origin
//     (/docs-copy/guide/ and /docs/guide/ become /docs-copy/ and /docs/).
//     What is left is the copy and the copied: a directory under its own
//     ancestor is a loop (/a/b/a/b/ of /a/b/; /print/ of /), two roots of
//     different origins are a host mirror, anything else a directory
//     mirror. Different file names (a soft 404 answering many URLs with
//     one page) tie no directories.
//   - Same origin and same path shape but for numbers: a sibling trap
//     (calendars), as well as whatever the rules above say.
func (d *Detector) tie(dup, orig uint32, du *urlParts) *Mirror {
	ou := d.parts(orig)
	id := d.recs[dup].id
	sameOrigin := du.origin() == ou.origin()
	var label *Mirror
	if sameOrigin && du.dirPath() == ou.dirPath() && du.file() == ou.file() {
		qa, _ := du.query()
		qb, _ := ou.query()
		pathKey := sitePathKey(du)
		eachDifference(qa, qb, func(name string) {
			e := d.paramEvidence(du.origin(), name)
			if !e.addID(id) {
				return
			}
			if e.of == "" {
				e.of, e.prefix = ou.url(), du.origin()+"/"
			}
			if !containsU64(e.paths, pathKey) && len(e.paths) < d.evidenceMin {
				e.paths = append(e.paths, pathKey)
			}
			if label == nil && !e.labelled && len(e.paths) >= d.evidenceMin && e.counter == 0 {
				label = d.label(e, &Mirror{Prefix: du.origin() + "/", Of: e.of, Param: name, Rule: RuleQueryParam})
			}
		})
	} else if sameFile(du.file(), ou.file()) {
		label = d.tieDirs(dup, du, &ou, sameOrigin, id)
	}
	if label == nil && sameOrigin && shapeKey(du) == shapeKey(&ou) && hasDigit(du) {
		label = d.tieShape(du, &ou, id)
	}
	return label
}

func (d *Detector) tieDirs(dup uint32, du, ou *urlParts, sameOrigin bool, id uint64) *Mirror {
	ds := segments(d.segs[0][:0], du.dirPath())
	os := segments(d.segs[1][:0], ou.dirPath())
	d.segs[0], d.segs[1] = ds, os
	for len(ds) > 0 && len(os) > 0 && ds[len(ds)-1] == os[len(os)-1] &&
		!(sameOrigin && (isPrefixRun(os, ds) || isPrefixRun(ds, os))) {
		ds, os = ds[:len(ds)-1], os[:len(os)-1]
	}
	switch {
	case sameOrigin && len(ds) == len(os):
		return nil // the same place (/a/ and /a/index.html)
	case sameOrigin && isPrefixRun(os, ds):
		return d.tieLoop(du.origin(), ds, os, id)
	case sameOrigin && isPrefixRun(ds, os):
		// The original is the deeper copy (it was fetched first): the
		// loop is still the deeper directory.
		return d.tieLoop(du.origin(), os, ds, id)
	case !sameOrigin && len(ds) == 0 && len(os) == 0:
		return d.tieHost(dup, du, ou, id)
	}
	prefix := du.origin() + joinPath(ds, true)
	of := ou.origin() + joinPath(os, true)
	e := d.record("dir\x00"+prefix+"\x00"+of, RuleDirMirror)
	if !e.addID(id) || e.labelled || e.n < d.evidenceMin {
		return nil
	}
	if u, dp := d.dirCounts(prefix); dp < u {
		return nil // the directory has more unique pages than copies
	}
	e.prefix, e.of = prefix, of
	return d.label(e, &Mirror{Prefix: prefix, Of: of, Rule: RuleDirMirror})
}

// tieLoop records that directory deep (under origin) duplicates its
// ancestor anc. All the depths of one loop (/a/b/a/b/, /a/b/a/b/a/b/)
// count as one: the key is the deep directory with its repeated runs
// collapsed and the primitive run that repeats.
func (d *Detector) tieLoop(origin string, deep, anc []string, id uint64) *Mirror {
	run := primitiveRoot(deep[len(anc):])
	base := collapseAll(append([]string(nil), deep...))
	key := "loop\x00" + origin + joinPath(base, true) + "\x00" + joinPath(run, true)
	e := d.record(key, RuleLoop)
	prefix := origin + joinPath(deep, true)
	if e.prefix == "" || len(prefix) < len(e.prefix) {
		e.prefix, e.of = prefix, origin+joinPath(anc, true)
	}
	if !e.addID(id) || e.labelled || e.n < d.evidenceMin {
		return nil
	}
	if u, dp := d.dirCounts(e.prefix); dp < u {
		return nil
	}
	return d.label(e, &Mirror{Prefix: e.prefix, Of: e.of, Loop: true, Rule: RuleLoop})
}

// tieHost records that a page of one host duplicates the page at the same
// path of another. A host is labelled when its home page is among the
// duplicates, or when the duplicates span two directories and outnumber
// the host's unique pages two to one: sites that merely share a few pages
// (legal notices) keep their own home page and their own content.
func (d *Detector) tieHost(dup uint32, du, ou *urlParts, id uint64) *Mirror {
	prefix, of := du.origin()+"/", ou.origin()+"/"
	e := d.record("host\x00"+prefix+"\x00"+of, RuleHostMirror)
	if !e.addID(id) {
		return nil
	}
	e.prefix, e.of = prefix, of
	if du.dirPath() == "/" && (du.rest == "" || indexNames[du.rest]) {
		e.home = true
	}
	dir := int32(d.recs[dup].dir &^ dupFlag)
	if len(e.dirs) < 2 && !containsI32(e.dirs, dir) {
		e.dirs = append(e.dirs, dir)
	}
	if e.labelled || e.n < d.evidenceMin {
		return nil
	}
	if !e.home {
		u, dp := d.dirCounts(prefix)
		if len(e.dirs) < 2 || dp < 2*u {
			return nil
		}
	}
	return d.label(e, &Mirror{Prefix: prefix, Of: of, Host: true, Rule: RuleHostMirror})
}

// tieShape records that two URLs of one origin that differ only in their
// numbers give the same page. The pattern is labelled when, among the
// pages its index keeps (the first and the latest), duplicates outnumber
// unique pages two to one: a calendar's months are all alike, while a
// series of articles (/article/12, /article/13) with a few soft 404s
// among them is mostly unique.
func (d *Detector) tieShape(du, ou *urlParts, id uint64) *Mirror {
	pattern := shapePattern(du.url())
	e := d.record("shape\x00"+pattern, RuleSiblingTrap)
	if e.of == "" {
		e.prefix, e.of = pattern, ou.url()
	}
	if !e.addID(id) || e.labelled || e.n < d.evidenceMin {
		return nil
	}
	var unique, dup int
	d.shapes.each(shapeKey(du), func(i uint32) bool {
		if d.recs[i].dir&dupFlag != 0 {
			dup++
		} else {
			unique++
		}
		return true
	})
	if dup < 2*unique {
		return nil
	}
	return d.label(e, &Mirror{Prefix: pattern, Of: e.of, Rule: RuleSiblingTrap})
}

func (d *Detector) paramEvidence(origin, name string) *evidence {
	return d.record("param\x00"+origin+"\x00"+name, RuleQueryParam)
}

// label gives the label m, with e's evidence, unless it would hide the
// page it duplicates or is already hidden.
func (d *Detector) label(e *evidence, m *Mirror) *Mirror {
	if m.Rule != RuleQueryParam && m.Rule != RuleSiblingTrap {
		if pruned, _ := d.Pruned(m.Of); pruned {
			return nil // its original is hidden: labelling both would lose them
		}
		if pruned, _ := d.Pruned(m.Prefix); pruned {
			e.labelled = true
			return nil
		}
		if strings.HasPrefix(m.Of, m.Prefix) {
			return nil
		}
		for _, o := range d.all {
			if o.Rule != RuleQueryParam && o.Rule != RuleSiblingTrap && strings.HasPrefix(o.Of, m.Prefix) {
				return nil // would hide the original of an earlier label
			}
		}
	}
	e.labelled = true
	m.Evidence = append([]uint64(nil), e.ids...)
	d.addLabel(m)
	c := *m
	c.Evidence = append([]uint64(nil), m.Evidence...)
	return &c
}

func (d *Detector) hasLabel(m *Mirror) bool {
	for _, o := range d.all {
		if o.Rule == m.Rule && o.Prefix == m.Prefix && o.Param == m.Param {
			return true
		}
	}
	return false
}

func (d *Detector) addLabel(m *Mirror) {
	p := splitURL(m.Prefix)
	ol := d.origins[p.origin()]
	if ol == nil {
		ol = &originLabels{}
		d.origins[p.origin()] = ol
	}
	switch m.Rule {
	case RuleQueryParam:
		if ol.params == nil {
			ol.params = make(map[string]*Mirror)
		}
		ol.params[m.Param] = m
		d.stats.Params++
	case RuleSiblingTrap:
		if ol.shapes == nil {
			ol.shapes = make(map[uint64]*Mirror)
		}
		ol.shapes[shapeKey(&p)] = m
		d.stats.Traps++
	default:
		d.labels[m.Prefix] = m
		ol.prefixes++
		if p.dirPath() == "/" {
			ol.root = m
		}
		if m.Loop {
			d.stats.Loops++
		} else {
			d.stats.Mirrors++
		}
	}
	d.all = append(d.all, m)
}

// Pruned reports whether url (normalised) is covered by a label: at or
// under a mirror or loop prefix, matching a sibling-trap pattern, or
// differing only in labelled query parameters from a URL already observed
// (with them, without them, or with other values). The crawler should drop
// such a URL. The *Mirror returned is the detector's own: do not modify
// it. Pruned does not allocate.
func (d *Detector) Pruned(url string) (bool, *Mirror) {
	if len(d.origins) == 0 {
		return false, nil
	}
	hs := strings.Index(url, "://")
	if hs < 0 {
		hs = 0
	} else {
		hs += 3
	}
	oe := len(url)
	if k := strings.IndexAny(url[hs:], "/?"); k >= 0 {
		oe = hs + k
	}
	ol := d.origins[url[:oe]]
	if ol == nil {
		return false, nil
	}
	if ol.root != nil {
		return true, ol.root
	}
	if ol.prefixes > 0 {
		for i := oe; i < len(url) && url[i] != '?'; i++ {
			if url[i] == '/' {
				if m := d.labels[url[:i+1]]; m != nil {
					return true, m
				}
			}
		}
	}
	if len(ol.shapes) == 0 && len(ol.params) == 0 || oe == len(url) || url[oe] != '/' {
		return false, nil
	}
	u := splitURL(url)
	if len(ol.shapes) > 0 && hasDigit(&u) {
		if m := ol.shapes[shapeKey(&u)]; m != nil {
			return true, m
		}
	}
	if len(ol.params) > 0 {
		// A variant of this URL that differs only in labelled parameters
		// (with them, without them, or with other values) was observed:
		// its content is known.
		q, _ := u.query()
		var hit *Mirror
		d.sitePaths.each(sitePathKey(&u), func(i uint32) bool {
			o := d.parts(i)
			if o.origin() != u.origin() || o.dirPath() != u.dirPath() || o.file() != u.file() {
				return true
			}
			oq, _ := o.query()
			if oq == q || !equalWithout(q, oq, ol.params) {
				return true
			}
			hit = labelledParam(q, ol.params)
			if hit == nil {
				hit = labelledParam(oq, ol.params)
			}
			return hit == nil
		})
		if hit != nil {
			return true, hit
		}
	}
	return false, nil
}

// Original returns the URL that url, pruned by label m, copies: url with
// m's prefix replaced by the directory or host it mirrors, so that a crawler
// led to a mirror can fetch the original instead. It reports false for
// labels that are patterns (sibling traps, query parameters) and for URLs
// not under m's prefix.
func Original(url string, m *Mirror) (string, bool) {
	if m == nil || m.Rule == RuleSiblingTrap || m.Rule == RuleQueryParam || !strings.HasPrefix(url, m.Prefix) {
		return "", false
	}
	return m.Of + url[len(m.Prefix):], true
}

// Canonical returns url without the query parameters labelled irrelevant
// on its origin (RuleQueryParam), so that variants of one page meet in the
// crawler's seen-URL set; it returns url itself, without allocating, when
// there is nothing to remove.
func (d *Detector) Canonical(url string) string {
	q := strings.IndexByte(url, '?')
	if q < 0 || len(d.origins) == 0 {
		return url
	}
	u := splitURL(url)
	ol := d.origins[u.origin()]
	if ol == nil || len(ol.params) == 0 {
		return url
	}
	drop := false
	eachParam(url[q+1:], func(name, _ string) bool {
		drop = ol.params[name] != nil
		return !drop
	})
	if !drop {
		return url
	}
	var b strings.Builder
	b.Grow(len(url))
	b.WriteString(url[:q])
	first := true
	for rest := url[q+1:]; rest != ""; {
		var p string
		p, rest, _ = strings.Cut(rest, "&")
		name, _, _ := strings.Cut(p, "=")
		if p == "" || ol.params[name] != nil {
			continue
		}
		if first {
			b.WriteByte('?')
			first = false
		} else {
			b.WriteByte('&')
		}
		b.WriteString(p)
	}
	return b.String()
}

// labelledParam returns the label of the first parameter of query q that
// params holds, or nil.
func labelledParam(q string, params map[string]*Mirror) *Mirror {
	var hit *Mirror
	eachParam(q, func(name, _ string) bool {
		hit = params[name]
		return hit == nil
	})
	return hit
}

// eachParam calls fn with each name=value of a query until fn returns
// false.
func eachParam(q string, fn func(name, value string) bool) {
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if p == "" {
			continue
		}
		name, value, _ := strings.Cut(p, "=")
		if !fn(name, value) {
			return
		}
	}
}

// maxParams bounds the parameters compared between two queries.
const maxParams = 32

type param struct{ name, value string }

func parseParams(dst []param, q string) ([]param, bool) {
	ok := true
	eachParam(q, func(name, value string) bool {
		if len(dst) == maxParams {
			ok = false
			return false
		}
		dst = append(dst, param{name, value})
		return true
	})
	return dst, ok
}

// eachDifference calls fn once with each parameter name whose values
// differ between two queries (present in one only, or with other values).
func eachDifference(qa, qb string, fn func(name string)) {
	var ba, bb [maxParams]param
	a, okA := parseParams(ba[:0], qa)
	b, okB := parseParams(bb[:0], qb)
	if !okA || !okB {
		return
	}
	var done [2 * maxParams]string
	nd := 0
	check := func(x, y []param) {
		for _, p := range x {
			if valuesOf(x, p.name) == valuesOf(y, p.name) {
				continue
			}
			seen := false
			for _, n := range done[:nd] {
				seen = seen || n == p.name
			}
			if !seen {
				done[nd] = p.name
				nd++
				fn(p.name)
			}
		}
	}
	check(a, b)
	check(b, a)
}

// valuesOf returns a comparable summary of the values of name in ps: its
// values joined in order, or "\x00" when absent.
func valuesOf(ps []param, name string) string {
	out, n := "", 0
	for _, p := range ps {
		if p.name == name {
			if n == 0 {
				out = p.value
			} else {
				out += "&" + p.value
			}
			n++
		}
	}
	if n == 0 {
		return "\x00"
	}
	return out
}

// singleDifference returns the one parameter whose values differ between
// two queries, if exactly one does.
func singleDifference(qa, qb string) (string, bool) {
	var name string
	n := 0
	eachDifference(qa, qb, func(s string) { name = s; n++ })
	return name, n == 1
}

// equalWithout reports whether two queries are equal once the parameters
// in drop are removed from both.
func equalWithout(qa, qb string, drop map[string]*Mirror) bool {
	next := func(q string) (string, string) {
		for q != "" {
			var p string
			p, q, _ = strings.Cut(q, "&")
			name, _, _ := strings.Cut(p, "=")
			if p != "" && drop[name] == nil {
				return p, q
			}
		}
		return "", ""
	}
	for {
		var pa, pb string
		pa, qa = next(qa)
		pb, qb = next(qb)
		if pa != pb {
			return false
		}
		if pa == "" {
			return true
		}
	}
}

func isPrefixRun(prefix, s []string) bool {
	return len(prefix) <= len(s) && equalRuns(prefix, s[:len(prefix)])
}

func containsU64(s []uint64, x uint64) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func containsI32(s []int32, x int32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

func itoa(i int) string { return strconv.Itoa(i) }
