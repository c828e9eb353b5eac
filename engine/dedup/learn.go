package dedup

import (
	"slices"
	"strings"
)

// Rules are learned as in DUST (Bar-Yossef, Keidar and Schonfeld, WWW
// 2007) and its successors (Dasgupta et al., KDD 2008; Koppula et al.,
// WSDM 2010): when a page duplicates another, the two URLs are aligned
// and every rewrite that turns one into the other (or both into one URL)
// becomes a candidate; a candidate whose evidence reaches Config.Support
// pairs, none contradicting it, becomes a rule. A pair of URLs that a
// candidate relates but whose pages differ contradicts it, for good: such
// a rewrite would lose content. A rule is withdrawn the same way, when a
// URL it rewrites turns out to hold other content than its canonical URL.
//
// Of the candidates one pair gives, the least general that the evidence
// supports wins: dropping a parameter only with the value seen
// (?print=1) until two values are seen (?sid=a, ?sid=b); swapping a path
// prefix (/docs-copy/ → /docs/) until the same segment rewrite is seen
// under two different parents (/a/1/print, /b/2/print). Parameter rules
// need their support on Config.Support different paths, so that one
// listing's pages (?page=2) never teach that a parameter is noise.

// candidate is a rewrite seen in at least one duplicate pair.
type candidate struct {
	key      uint64
	rule     Rule
	copies   []uint64 // distinct copy ids (up to maxEvidenceIDs)
	paths    []uint64 // parameter rules: distinct path keys, up to Support
	contexts []uint64 // segment rules: distinct parents of the run, up to 2
	values   []string // DropParam: distinct values dropped, up to 2
	items    bool     // DropParam: a pair was of listings of the same items whose texts differ (Detector.reordered)
	home     bool     // SwapHost: the home page is among the copies
	dirs     []int32  // SwapHost: distinct directories of the copies, up to 2
	under    string   // SwapHost: the deepest directory holding every copy
	contra   int      // pairs that contradicted it
	idle     int      // times Unproven told a copy of it to wait (see adds)
	awaited  int      // times Awaits told a copy of it to wait for its canonical URL
	active   *Rule    // the rule it became, while active
	rejected bool     // it would hide its own original
	// shapes are the keys of its rule's shape (priorKey, paramShapeKey),
	// set by newCandidate: the rule's rewrite does not change.
	shapes [2]uint64
}

// newCandidate returns the candidate of rule r (its rewrite only: no
// evidence yet) under key k.
func newCandidate(k uint64, r Rule) *candidate {
	c := &candidate{key: k, rule: r}
	c.shapes = [2]uint64{priorKey(&c.rule), paramShapeKey(&c.rule)}
	return c
}

// maxEvidenceIDs bounds the pairs kept per rule.
const maxEvidenceIDs = 16

// rewriteOf is one rewrite that relates a pair of URLs.
type rewriteOf struct {
	kind        RuleKind
	origin      string
	name, value string
	index       int
	from, to    string
	context     string // segment rules: the path before the run
	// sole reports that the rewrite alone relates the two URLs: only such
	// a rewrite is contradicted when their pages differ.
	sole bool
}

func (c *rewriteOf) key() uint64 {
	value := c.value
	if c.kind != DropParamValue {
		value = "" // DropParam's value is that of its copy, not part of the rule
	}
	return newHasher(keyRule).byte(byte(c.kind)).str(c.origin).byte(0).str(c.name).byte(0).str(value).byte(0).
		byte(byte(c.index)).byte(byte(c.index >> 8)).str(c.from).byte(0).str(c.to).sum()
}

// pathSegments splits a path into its segments, an index page as "": "/a/b/"
// and "/a/b/index.html" are [a b ""], "/a/b" is [a b].
func pathSegments(dst []string, dir, file string) []string {
	dst = segments(dst, dir)
	if indexNames[file] {
		file = ""
	}
	return append(dst, file)
}

// alignments calls fn with each rewrite that relates URL a (the copy) to
// URL b (the original).
func (d *Detector) alignments(a, b *urlParts, fn func(c *rewriteOf)) {
	qa, _ := a.query()
	qb, _ := b.query()
	sameOrigin := a.origin() == b.origin()
	samePath := a.dirPath() == b.dirPath() && sameFile(a.file(), b.file())
	switch {
	case sameOrigin && qa == qb && a.dirPath() == b.dirPath() && (a.file() == "") != (b.file() == ""):
		// A directory and a file in it: the host serves that name as
		// the directory's index, whatever the name.
		name := a.file() + b.file()
		if !strings.ContainsAny(name, ";") {
			fn(&rewriteOf{kind: DropIndex, origin: a.origin(), name: name, sole: true})
		}
		return
	case sameOrigin && a.dirPath()+a.file() != b.dirPath()+b.file() && qa == qb && strings.EqualFold(a.dirPath()+a.file(), b.dirPath()+b.file()):
		// The same path but for the case of its letters.
		fn(&rewriteOf{kind: FoldCase, origin: a.origin(), sole: true})
		return
	case sameOrigin && samePath && qa != qb:
		if samePermutation(qa, qb) {
			fn(&rewriteOf{kind: SortParams, origin: a.origin(), sole: true})
			return
		}
		n := 0
		eachDifference(qa, qb, func(string, string, string) { n++ })
		eachDifference(qa, qb, func(name, va, vb string) {
			// The value a pair shows is that of the URL that has the
			// parameter: the copy is as often the URL without it (the
			// crawl met ?ref=nav before the page's own URL).
			value := va
			if va == absent {
				value = vb
			}
			fn(&rewriteOf{kind: DropParam, origin: a.origin(), name: name, value: value, sole: n == 1})
			switch {
			case vb == absent && !strings.Contains(va, "&"):
				fn(&rewriteOf{kind: DropParamValue, origin: a.origin(), name: name, value: va, sole: n == 1})
			case va == absent && !strings.Contains(vb, "&"):
				fn(&rewriteOf{kind: DropParamValue, origin: a.origin(), name: name, value: vb, sole: n == 1})
			}
		})
	case !sameOrigin && qa == qb && sameFile(a.file(), b.file()):
		d.alignHosts(a, b, fn)
	case sameOrigin && qa == qb && a.dirPath() == b.dirPath() && pathParams(a.file()) != pathParams(b.file()) &&
		sameFile(withoutPathParams(a.file()), withoutPathParams(b.file())):
		// The same file with other path parameters: compared as a query.
		pa := strings.ReplaceAll(pathParams(a.file()), ";", "&")
		pb := strings.ReplaceAll(pathParams(b.file()), ";", "&")
		n := 0
		eachDifference(pa, pb, func(string, string, string) { n++ })
		eachDifference(pa, pb, func(name, va, vb string) {
			if va == absent {
				va = vb // the value the other URL carries
			}
			fn(&rewriteOf{kind: DropPathParam, origin: a.origin(), name: name, value: va, sole: n == 1})
		})
	case sameOrigin && !samePath && qa == qb:
		d.alignPaths(a, b, fn)
	}
}

// alignPaths finds the run of segments in which two paths of one origin
// differ: the common start and end are left out; what is left of the
// copy is dropped (the original has nothing there) or replaced. Two
// different file names relate no paths (one page under many names is a
// soft 404, not a rewrite).
func (d *Detector) alignPaths(a, b *urlParts, fn func(c *rewriteOf)) {
	sa := pathSegments(d.segs[0][:0], a.dirPath(), a.file())
	sb := pathSegments(d.segs[1][:0], b.dirPath(), b.file())
	d.segs[0], d.segs[1] = sa, sb
	if len(sa) > maxRepeatSegments || len(sb) > maxRepeatSegments {
		return
	}
	p := 0
	for p < len(sa) && p < len(sb) && sa[p] == sb[p] {
		p++
	}
	s := 0
	for s < len(sa)-p && s < len(sb)-p && sa[len(sa)-1-s] == sb[len(sb)-1-s] {
		s++
	}
	ma, mb := sa[p:len(sa)-s], sb[p:len(sb)-s]
	if len(ma) == 0 && len(mb) == 0 {
		return
	}
	if s == 0 && len(ma) > 0 && len(mb) > 0 {
		return // other file names
	}
	path := a.dirPath() + a.file()
	other := b.dirPath() + b.file()
	ctx := path[:segmentOffset(path, p)]
	run := func(path string, segs []string) string {
		start := segmentOffset(path, p)
		end := start
		for range segs {
			end = segmentEnd(path, end)
		}
		return strings.TrimSuffix(path[start:end], "/")
	}
	switch {
	case len(mb) == 0:
		fn(&rewriteOf{kind: DropSegments, origin: a.origin(), index: p, from: run(path, ma), context: ctx, sole: true})
	case len(ma) == 0:
		// The copy is the shorter URL: the original's run is the one to
		// drop; both then meet at the copy's URL.
		fn(&rewriteOf{kind: DropSegments, origin: a.origin(), index: p, from: run(other, mb), context: ctx, sole: true})
		return
	default:
		fn(&rewriteOf{kind: ReplaceSegments, origin: a.origin(), index: p, from: run(path, ma), to: run(other, mb), context: ctx, sole: true})
	}
	if s > 0 {
		from := path[:segmentOffset(path, p+len(ma))]
		to := other[:segmentOffset(other, p+len(mb))]
		fn(&rewriteOf{kind: SwapPrefix, origin: a.origin(), from: from, to: to, sole: true})
	}
}

// alignHosts relates the same file on two hosts: the whole host swapped
// for the other when the paths are equal, and one directory of the copy's
// host for the other host's at each of the first maxHostLevels levels of
// the directories the two paths end with alike. A host may mirror another
// whole, or hold a mirror in one directory ("/mirrors/gnu/" of one host
// is "/doc/" of another) beside pages of its own: which level is the
// mirror is left to the evidence (see ready).
func (d *Detector) alignHosts(a, b *urlParts, fn func(c *rewriteOf)) {
	sa := segments(d.segs[0][:0], a.dirPath())
	sb := segments(d.segs[1][:0], b.dirPath())
	d.segs[0], d.segs[1] = sa, sb
	s := 0
	for s < len(sa) && s < len(sb) && sa[len(sa)-1-s] == sb[len(sb)-1-s] {
		s++
	}
	pa, pb := len(sa)-s, len(sb)-s // segments before the common end
	if pa == 0 && pb == 0 {
		fn(&rewriteOf{kind: SwapHost, origin: a.origin(), to: b.origin(), sole: true})
	}
	da, db := a.dirPath(), b.dirPath()
	for k := 0; k <= min(s, maxHostLevels); k++ {
		if k == 0 && pa == 0 && pb == 0 {
			continue // the whole host
		}
		from := da[:segmentOffset(da, pa+k)]
		to := db[:segmentOffset(db, pb+k)]
		fn(&rewriteOf{kind: SwapHost, origin: a.origin(), from: from, to: b.origin() + to, sole: true})
	}
}

// maxHostLevels bounds the directories a pair of pages on two hosts
// relates, so that a pair makes at most maxHostLevels+1 candidates.
const maxHostLevels = 3

// reversed returns the host swap the other way: b's directory for a's.
func (c *rewriteOf) reversed() rewriteOf {
	if c.from == "" {
		return rewriteOf{kind: SwapHost, origin: c.to, to: c.origin, sole: c.sole}
	}
	oe := originEnd(c.to)
	return rewriteOf{kind: SwapHost, origin: c.to[:oe], from: c.to[oe:], to: c.origin + c.from, sole: c.sole}
}

// segmentOffset returns where segment i of path begins, or len(path).
func segmentOffset(path string, i int) int {
	if start, ok := segmentStart(path, i); ok {
		return start
	}
	return len(path)
}

// segmentEnd returns the index past the segment starting at start and its
// slash.
func segmentEnd(path string, start int) int {
	if k := strings.IndexByte(path[start:], '/'); k >= 0 {
		return start + k + 1
	}
	return len(path)
}

// Two hosts' pages at one path are compared only when they are suspects of
// one another (the www/bare twins are, by path), so a host swap could
// gather copies while a path that differs on the two hosts went unseen.
// Once a swap is a candidate, every page it would rewrite whose twin (the
// page at the URL it rewrites to) was observed is compared with it: the
// ones observed before the candidate (compareTwins) and each one observed
// after (checkTwins). Twins that differ contradict the swap, which would
// lose one of them.

// maxTwinScan bounds the pages compareTwins reads: a site's first pages
// (its home page and the pages it links first) are the likeliest to be
// observed on both hosts.
const maxTwinScan = 256

// compareTwins compares the pages of new host-swap candidate c's origin
// observed so far with their twins.
func (d *Detector) compareTwins(c *candidate) {
	pages := d.byOrigin[c.rule.Origin]
	for _, i := range pages[:min(len(pages), maxTwinScan)] {
		if c.contra > 0 {
			return
		}
		d.checkTwin(i, &c.rule)
	}
}

// checkTwins compares stored page idx with its twins under the host-swap
// candidates of its origin, and returns the rules withdrawn.
func (d *Detector) checkTwins(idx uint32, u *urlParts) []Rule {
	var out []Rule
	for _, c := range d.hostCands[u.origin()] {
		if c.contra == 0 {
			out = append(out, d.checkTwin(idx, &c.rule)...)
		}
	}
	return out
}

// checkTwin compares stored page i with the page observed at the URL host
// swap r rewrites its URL to, if any.
func (d *Detector) checkTwin(i uint32, r *Rule) []Rule {
	u := d.parts(i)
	twin, ok := r.Rewrite(u.url())
	if !ok {
		return nil
	}
	j, ok := d.lookupURL(twin)
	if !ok {
		return nil
	}
	rec := d.recs.at(i)
	p := Page{Digest: rec.digest, Simhash: rec.sim, Main: rec.main}
	if d.sameContent(&p, j) || d.isSoft404(i) || d.isSoft404(j) {
		return nil
	}
	o := d.parts(j)
	return d.contradict(&u, &o, rec.id, d.recs.at(j).id)
}

// maxCandidates bounds the candidates kept; past it no new one is made.
const maxCandidates = 1 << 16

// ready reports whether candidate c has the evidence a rule needs.
func (d *Detector) ready(c *candidate) bool {
	r := &c.rule
	need := d.need(c)
	if d.evidenceMin == 0 || r.Supports < need {
		return false
	}
	prior := need < d.evidenceMin
	switch r.Kind {
	case DropParam, DropPathParam:
		// Only a parameter seen with two values is noise whatever its
		// value; with one, DropParamValue is the rule (for a query),
		// unless other hosts dropped this very parameter whatever its
		// value, or, with a prior of the kind, the pair showed a
		// listing's very items under it: a parameter that leaves the
		// items alone orders or presents them, whatever the value (the
		// next page of a listing, other items, contradicts it).
		_, exact := d.priorOf(c)
		return len(c.paths) >= need && (len(c.values) >= 2 || prior && (exact || c.items))
	case DropParamValue, DropIndex, FoldCase:
		return len(c.paths) >= need
	case SortParams:
		// Pairs on one path suffice: the order of parameters hardly ever
		// matters, and pages that differ by it contradict the rule.
		return true
	case DropSegments, ReplaceSegments:
		// Under one parent the prefix swap says the same, less generally
		// (pooled evidence is about the swap's shape, not this one's).
		p, _ := d.priorOf(c)
		return len(c.contexts) >= 2 || p > 0
	case SwapPrefix:
		// The directory must hold more copies than pages of its own. A
		// page of it that is the original of a copy under To counts as
		// a copy: two directories crawled at once each hold originals
		// of the other's copies, evidence of the mirror, not against it.
		u, dp := d.dirCounts(r.Origin + r.From)
		back := rewriteOf{kind: SwapPrefix, origin: r.Origin, from: r.To, to: r.From}
		if ic := d.cands[back.key()]; ic != nil && ic.contra == 0 {
			paired := min(uint32(ic.rule.Supports), u)
			u, dp = u-paired, dp+paired
		}
		return dp >= u
	case SwapHost:
		// A host (or one directory of it) is a mirror when its home page
		// is among the copies, or its pages with a twin on the other
		// host span two directories and outnumber its other pages two
		// to one: sites that merely share a few pages (legal notices)
		// keep their own home page and their own content. A host whose
		// mirror is one of its directories is not a mirror as a whole,
		// but that directory is. A page with a twin is a copy or the
		// original of a copy (Supports counts both ways): two mirrors
		// crawled at once each hold originals of the other's copies,
		// and those are evidence of the mirror, not against it. Twins
		// that differ contradict the swap (see compareTwins).
		if c.home {
			return true
		}
		if p, _ := d.priorOf(c); p > 0 && isWWWTwin(r) {
			// Other hosts proved the shape; this one's twins observed
			// are compared all the same (compareTwins), and one that
			// differs withdraws it.
			return true
		}
		if r.From == "" && c.under != "/" {
			// Every copy is in one directory, and the host has pages of
			// its own outside it: that directory is the mirror, not the
			// host (its own swap says so, less generally).
			all, _ := d.dirCounts(r.Origin + "/")
			in, _ := d.dirCounts(r.Origin + c.under)
			if all > in {
				return false
			}
		}
		u, dp := d.dirCounts(r.Origin + hostDir(r.From))
		others := max(int(u)+int(dp)-r.Supports, 0)
		return len(c.dirs) >= 2 && r.Supports >= 2*others
	}
	return false
}

// activate makes candidate c a rule, unless with it the pair that
// completed it would no longer meet at one URL (the rule would hide its
// own original, or chain into a cycle).
func (d *Detector) activate(c *candidate, pair Pair) *Rule {
	r := &c.rule
	copyURL, origURL := d.urlByID(pair.Copy), d.urlByID(pair.Original)
	if _, _, covered := d.rewrite(copyURL); covered {
		return nil // a rule in force already covers the copy
	}
	rule := new(Rule)
	*rule = *r
	rule.Support = append([]Pair(nil), r.Support...)
	d.addRule(rule)
	cc, _, _ := d.rewrite(copyURL)
	co, _, _ := d.rewrite(origURL)
	if cc != co || co == "" {
		d.removeRule(rule)
		// The rule would hide its own original, or chain into a cycle:
		// never a rule. Unless the pair differs by another rewrite too
		// (an index alias under a tracking parameter), not a rule yet:
		// then the rule merely cannot bring them together alone, and a
		// pair that differs by it alone decides.
		c.rejected = co == "" || d.rewritesRelating(copyURL, origURL) <= 1
		return nil
	}
	c.active = rule
	if p, _ := d.priorOf(c); p > 0 && c.rule.Supports < d.evidenceMin {
		rule.Prior = p
	} else if p := d.pooledOf(c); p > 0 && c.rule.Supports < d.evidenceMin {
		rule.Prior = p
	} else if p := d.learnedElsewhere(c); p > 0 && c.rule.Supports < d.evidenceMin {
		rule.Prior = p
	}
	inForce := d.learnedShape(rule)
	d.learnedVouch(rule)
	if rule.Kind == SwapHost && rule.From == "" {
		d.transferRules(rule)
	}
	d.noteReps(rule.Origin)
	d.stats.Rules++
	d.stats.RulesByKind[rule.Kind]++
	if inForce {
		d.sweepWaiting(c)
	}
	out := *rule
	out.Support = append([]Pair(nil), rule.Support...)
	return &out
}

// transferRules puts the rules in force on the origin that whole-host
// swap r rewrites onto its canonical origin as well: the two names are
// one site, and once r is in force no URL of its origin reaches that
// origin's own rules (r sends it to the other first). A shop's sort
// parameter learned under one name holds under the other. Each rule
// moved is reported with the decision's rules (Detector.pooled) and is
// withdrawn as any rule; host swaps and number patterns stay their
// origin's own.
func (d *Detector) transferRules(r *Rule) {
	or := d.origins[r.Origin]
	if or == nil {
		return
	}
	to := r.To[:originEnd(r.To)]
	n := len(d.pooled)
	defer func() {
		if len(d.pooled) > n {
			d.noteReps(to)
		}
	}()
	for _, o := range slices.Concat(or.paths, or.params) {
		if o.Kind == SwapHost || o.Kind == NumberPattern {
			continue
		}
		rw := rewriteOf{kind: o.Kind, origin: to, name: o.Name, value: o.Value, index: o.Index, from: o.From, to: o.To}
		k := rw.key()
		c := d.cands[k]
		if c == nil {
			if len(d.cands) >= maxCandidates {
				return
			}
			nr := *o
			nr.Origin, nr.Support, nr.Contradictions, nr.Covered = strings.Clone(to), nil, nil, 0
			c = newCandidate(k, nr)
			d.cands[k] = c
			d.candOrigins[to]++
			d.candList[to] = append(d.candList[to], c)
		}
		if c.active != nil || c.rejected || c.contra > 0 {
			continue
		}
		moved := new(Rule)
		*moved = *o
		moved.Origin, moved.Support, moved.Contradictions, moved.Covered = c.rule.Origin, append([]Pair(nil), o.Support...), nil, 0
		d.addRule(moved)
		c.active = moved
		d.stats.Rules++
		d.stats.RulesByKind[moved.Kind]++
		out := *moved
		out.Support = append([]Pair(nil), moved.Support...)
		d.pooled = append(d.pooled, out)
	}
}

// rewritesRelating counts the rewrites that relate the URLs of a pair.
func (d *Detector) rewritesRelating(copyURL, origURL string) int {
	cu, ou := splitURL(copyURL), splitURL(origURL)
	n := 0
	d.alignments(&cu, &ou, func(*rewriteOf) { n++ })
	return n
}

func (d *Detector) addRule(r *Rule) {
	or := d.origins[r.Origin]
	if or == nil {
		or = &originRules{}
		d.origins[r.Origin] = or
	}
	switch {
	case r.Kind == SwapHost && r.From == "":
		if or.host != nil {
			d.unswap(or.host)
		}
		or.host = r
		to := r.To[:originEnd(r.To)]
		if d.swappedTo == nil {
			d.swappedTo = make(map[string][]string)
		}
		d.swappedTo[to] = append(d.swappedTo[to], r.Origin)
	case r.Kind == DropParam, r.Kind == DropParamValue, r.Kind == SortParams:
		or.params = append(or.params, r)
	case r.Kind == DropIndex:
		d.noteIndexName(r.Name)
		or.paths = append(or.paths, r)
	case r.Kind == NumberPattern:
		if or.shapes == nil {
			or.shapes = make(map[uint64]*Rule)
		}
		u := splitURL(r.From)
		or.shapes[shapeKey(&u)] = r
	default:
		or.paths = append(or.paths, r)
	}
	d.all = append(d.all, r)
}

func (d *Detector) removeRule(r *Rule) {
	or := d.origins[r.Origin]
	if or == nil {
		return
	}
	switch {
	case r.Kind == SwapHost && r.From == "":
		if or.host == r {
			or.host = nil
			d.unswap(r)
		}
	case r.Kind == DropParam, r.Kind == DropParamValue, r.Kind == SortParams:
		or.params = removePtr(or.params, r)
	case r.Kind == NumberPattern:
		u := splitURL(r.From)
		if or.shapes[shapeKey(&u)] == r {
			delete(or.shapes, shapeKey(&u))
		}
	default:
		or.paths = removePtr(or.paths, r)
	}
	if or.host == nil && len(or.params) == 0 && len(or.paths) == 0 && len(or.shapes) == 0 {
		delete(d.origins, r.Origin)
	}
	d.all = removePtr(d.all, r)
}

// unswap takes whole-host swap r out of swappedTo.
func (d *Detector) unswap(r *Rule) {
	to := r.To[:originEnd(r.To)]
	os := d.swappedTo[to]
	for i, o := range os {
		if o == r.Origin {
			os = append(os[:i], os[i+1:]...)
			break
		}
	}
	if len(os) == 0 {
		delete(d.swappedTo, to)
	} else {
		d.swappedTo[to] = os
	}
}

func removePtr(s []*Rule, r *Rule) []*Rule {
	for i, x := range s {
		if x == r {
			return append(s[:i], s[i+1:]...)
		}
	}
	return s
}

// tieShape records that two URLs of one origin that differ only in their
// numbers give the same page. The pattern becomes a NumberPattern rule
// when, among the pages its index keeps (the first and the latest),
// copies outnumber unique pages two to one: a calendar's months are all
// alike, while a series of articles (/article/12, /article/13) with a few
// soft 404s among them is mostly unique. Unlike a rewrite, it is not
// withdrawn by one page that differs: a calendar has months with events.
func (d *Detector) tieShape(du, ou *urlParts, pair Pair) *Rule {
	pattern := shapePattern(du.url())
	k := newHasher(keyRule).byte(byte(NumberPattern)).str(pattern).sum()
	c := d.cands[k]
	if c == nil {
		c = newCandidate(0, Rule{Kind: NumberPattern, Origin: strings.Clone(du.origin()), From: pattern})
		d.cands[k] = c
		d.candOrigins[c.rule.Origin]++
	}
	if c.active != nil || c.rejected || slices.Contains(c.copies, pair.Copy) {
		return nil
	}
	if len(c.copies) < maxEvidenceIDs {
		c.copies = append(c.copies, pair.Copy)
	}
	c.rule.Supports++
	if len(c.rule.Support) < maxEvidenceIDs {
		c.rule.Support = append(c.rule.Support, pair)
	}
	if d.evidenceMin == 0 || c.rule.Supports < d.evidenceMin {
		return nil
	}
	var unique, dup int
	d.shapes.each(shapeKey(du), func(i uint32) bool {
		if d.recs.at(i).dir&dupFlag != 0 {
			dup++
		} else {
			unique++
		}
		return true
	})
	if dup < 2*unique {
		return nil
	}
	return d.activate(c, pair)
}

// checkRules withdraws the rule that rewrites page p's URL to one
// observed with different content: the rewrite would lose p.
func (d *Detector) checkRules(p *Page) []Rule {
	canon, by, covered := d.rewrite(p.URL)
	if !covered || canon == "" || by.Kind == NumberPattern {
		return nil
	}
	i, ok := d.lookupURL(canon)
	if !ok || d.recs.at(i).id == p.ID || d.sameContent(p, i) {
		return nil
	}
	return []Rule{d.withdraw(by, Pair{Copy: p.ID, Original: d.recs.at(i).id})}
}

// pending reports whether c is a candidate rewrite not yet a rule that
// has a pair and no contradiction: one the crawl may act on before it is
// learned (Unproven, Variants, Awaits).
func (c *candidate) pending() bool {
	return c.active == nil && !c.rejected && c.contra == 0 && c.rule.Supports > 0
}

// Unproven reports whether a candidate rewrite that is not yet a rule
// (supported, never contradicted) covers url, the candidate, and how
// many more copies it needs. A crawler that hands out URLs in batches
// takes no more copies of one candidate in a batch than it needs: the
// rest wait for the next batch, when the rule may cover them. Need is 0
// for a copy that would bring no evidence the candidate lacks (its path
// already supports a rule that needs other paths, as another order of a
// listing already seen to be one): it waits, up to maxIdle times a
// candidate, so that what the rule never comes to cover is fetched in
// the end. Host swaps are left out: they would hold back a whole host.
func (d *Detector) Unproven(url string) (cand uint64, need int, ok bool) {
	cs := d.candList[url[:originEnd(url)]]
	for _, c := range cs {
		if !c.pending() {
			continue
		}
		if _, ok := c.rule.Rewrite(url); !ok {
			continue
		}
		n := d.need(c)
		if c.idle < maxIdle && !d.adds(c, url, n) {
			c.idle++
			return c.key, 0, true
		}
		return c.key, max(1, n-c.rule.Supports), true
	}
	if len(d.mirrored) > 0 {
		if key, ok := d.unprovenMirror(url); ok {
			return key, 1, true
		}
	}
	return 0, 0, false
}

// maxIdle bounds how many times Unproven tells a candidate's copies that
// bring nothing to wait.
const maxIdle = 64

// adds reports whether a copy at url would bring candidate c, which needs
// need pairs, evidence it lacks: a path of its own while the candidate
// lacks paths, or, for a parameter seen with one value, another value.
func (d *Detector) adds(c *candidate, url string, need int) bool {
	switch c.rule.Kind {
	case DropIndex, FoldCase, DropParam, DropParamValue, DropPathParam:
	default:
		return true
	}
	u := splitURL(url)
	if len(c.paths) < need {
		return !slices.Contains(c.paths, evidencePath(c.rule.Kind, &u))
	}
	if c.rule.Kind == DropParam && len(c.values) < 2 {
		q, _ := u.query()
		seen := true
		eachParam(q, func(name, value string) bool {
			if name == c.rule.Name {
				seen = slices.Contains(c.values, value)
				return false
			}
			return true
		})
		return !seen
	}
	return true
}
