package dedup

import (
	"math"
	"strings"
)

// Kind is the verdict on one page.
type Kind uint8

const (
	// Unique: no page seen before has the same or nearly the same content.
	Unique Kind = iota
	// Exact: a page seen before has the same content digest.
	Exact
	// Near: a structural suspect has a simhash within Config.MaxHamming.
	Near
	// Skipped: the page was not examined (not a 2xx answer, or no body);
	// the detector keeps nothing of it.
	Skipped
)

func (k Kind) String() string {
	switch k {
	case Unique:
		return "unique"
	case Exact:
		return "exact"
	case Near:
		return "near"
	case Skipped:
		return "skipped"
	}
	return "kind(" + itoa(int(k)) + ")"
}

// Tests name how a duplicate was found (Decision.Test).
const (
	TestDigest            = "digest"               // same content digest, anywhere
	TestPathRepeat        = "path-repeat"          // /a/b/a/b/x against /a/b/x
	TestQueryVariant      = "query-variant"        // same path, other query
	TestSamePathOtherHost = "same-path-other-host" // same path on the www/bare twin, another scheme or host
	TestSameTail          = "same-tail"            // same last segment and query under another directory or host
	TestSameShape         = "same-shape"           // same path but for its numbers (/cal/2026/11/, /cal/2026/12/)
)

// Rules name why a label was given (Mirror.Rule).
const (
	RuleDirMirror   = "dir-mirror"   // a directory duplicates another one
	RuleHostMirror  = "host-mirror"  // a whole host duplicates another one
	RuleLoop        = "loop"         // a directory duplicates its own ancestor
	RuleSiblingTrap = "sibling-trap" // URLs differing only in numbers give the same page (calendars)
	RuleQueryParam  = "query-param"  // a query parameter never changes the page (session ids, tracking)
)

// Defaults for zero Config fields.
const (
	DefaultMaxHamming     = 3
	DefaultMirrorEvidence = 3
	DefaultMaxSuspects    = 32
	DefaultPerKey         = 8
)

// Config tunes a Detector. The zero value gives the defaults.
type Config struct {
	// MaxHamming is the largest Hamming distance between two simhashes
	// that makes pages near-duplicates. Zero means DefaultMaxHamming (3 of
	// 64 bits: more than 95% similarity); negative means the simhashes must
	// be equal.
	MaxHamming int
	// MirrorEvidence is the number of duplicate pages that must tie a
	// directory, a host, a URL pattern or a query parameter before it is
	// labelled. Zero means DefaultMirrorEvidence (3, as in LiDi); negative
	// means never label.
	MirrorEvidence int
	// MaxSuspects bounds the pages one page is compared with. Zero means
	// DefaultMaxSuspects; negative means no near-duplicate test (digests
	// only).
	MaxSuspects int
	// PerKey bounds the pages kept under one structural key (one tail, one
	// path, one shape): the first and the latest. Zero means DefaultPerKey.
	PerKey int
}

// Page is what the detector needs of a fetched page.
type Page struct {
	ID      uint64 // the page's id (fingerprint of its normalised URL)
	URL     string // the normalised URL
	Digest  uint64 // content digest of the body (engine.Digest); 0 for no body
	Simhash uint64 // Simhash(body); 0 for none
	Status  int    // HTTP status; 0 means unknown, taken as 200
}

// Decision is the verdict on one page.
type Decision struct {
	Kind Kind
	// Of and OfURL name the page this one duplicates (Exact and Near).
	Of    uint64
	OfURL string
	// Test is the test that found the duplicate: TestDigest for Exact,
	// the structural test of the suspect for Near.
	Test string
	// Distance is the Hamming distance between the simhashes and
	// Similarity 1 - Distance/64.
	Distance   int
	Similarity float64
	// Mirror is the label this observation created, or nil. One
	// observation creates at most one label.
	Mirror *Mirror
}

// Mirror is a label: URLs at or under Prefix are not worth fetching
// because they duplicate what is at Of.
type Mirror struct {
	// Prefix is a URL prefix ending in '/' ("http://www.x.test:8080/a/b/a/b/",
	// or a whole host "http://www.x.test:8080/"), except for two rules:
	// RuleSiblingTrap, where it is a URL pattern in which '#' stands for any
	// run of digits ("http://x.test/cal/#/#/"), and RuleQueryParam, where it
	// is the origin's root and Param names the parameter.
	Prefix string
	// Of is the directory or host Prefix duplicates; for RuleSiblingTrap and
	// RuleQueryParam, the URL of the first page duplicated.
	Of string
	// Loop reports a directory that duplicates its own ancestor; Host a
	// whole host.
	Loop, Host bool
	// Param is the query parameter of a RuleQueryParam label.
	Param string
	// Evidence lists the ids of the duplicate pages that gave the label.
	Evidence []uint64
	// Rule is one of the Rule constants.
	Rule string
}

// Stats is a snapshot of a Detector's counters.
type Stats struct {
	Pages       int64 // pages observed and kept (Unique, Exact and Near)
	Unique      int64
	Exact       int64
	Near        int64
	Skipped     int64
	Comparisons int64 // simhash comparisons with suspects
	Mirrors     int   // directory and host mirror labels
	Loops       int   // loop labels
	Traps       int   // sibling-trap labels
	Params      int   // query-parameter labels
	Bytes       int64 // estimated memory in use
}

// Detector finds duplicate pages, mirrors and loops. It is meant to be
// owned by the crawl loop: it is not safe for concurrent use. The zero
// value is not usable; call New.
//
// Per page it keeps 32 bytes (id, simhash, digest, directory, file name)
// plus the file name and query in an arena, one copy of each directory,
// and four hash indexes of about 8 bytes each: digest, path on the site,
// last segment, and shape (only for URLs with digits).
type Detector struct {
	maxHamming  int
	evidenceMin int // 0: never label
	maxSuspects int
	perKey      int

	recs     []pageRec
	arena    stringArena
	dirIndex map[string]int32
	dirs     []dirRec

	digests, sitePaths, tails, shapes keyTable

	evidence map[string]*evidence
	labels   map[string]*Mirror // prefix labels (dir, host, loop) by Prefix
	origins  map[string]*originLabels
	all      []*Mirror

	stats Stats
	// scratch
	seen []uint32
	segs [2][]string
}

type pageRec struct {
	id, sim, digest uint64
	dir             uint32 // index in dirs; top bit set for a duplicate
	rest            uint32 // arena reference of the file name and query
}

const dupFlag = 1 << 31

type dirRec struct {
	head        string // "http://www.x.test:8080/a/b/"
	parent      int32  // -1 for the root
	unique, dup uint32 // pages observed at or under it
	originEnd   uint16
	hostStart   uint16
}

// originLabels are the labels of one origin, so that Pruned rejects most
// URLs with one map lookup.
type originLabels struct {
	prefixes int
	root     *Mirror
	shapes   map[uint64]*Mirror
	params   map[string]*Mirror
}

// New returns a Detector with cfg's zero fields set to the defaults.
func New(cfg Config) *Detector {
	d := &Detector{
		maxHamming:  cfg.MaxHamming,
		evidenceMin: cfg.MirrorEvidence,
		maxSuspects: cfg.MaxSuspects,
		perKey:      cfg.PerKey,
		dirIndex:    make(map[string]int32),
		evidence:    make(map[string]*evidence),
		labels:      make(map[string]*Mirror),
		origins:     make(map[string]*originLabels),
	}
	switch {
	case d.maxHamming == 0:
		d.maxHamming = DefaultMaxHamming
	case d.maxHamming < 0:
		d.maxHamming = 0
	case d.maxHamming > 64:
		d.maxHamming = 64
	}
	switch {
	case d.evidenceMin == 0:
		d.evidenceMin = DefaultMirrorEvidence
	case d.evidenceMin < 0:
		d.evidenceMin = 0
	}
	switch {
	case d.maxSuspects == 0:
		d.maxSuspects = DefaultMaxSuspects
	case d.maxSuspects < 0:
		d.maxSuspects = 0
	}
	if d.perKey <= 0 {
		d.perKey = DefaultPerKey
	}
	d.digests = newKeyTable(func(i uint32) uint64 { return digestKey(d.recs[i].digest) })
	d.sitePaths = newKeyTable(func(i uint32) uint64 { p := d.parts(i); return sitePathKey(&p) })
	d.tails = newKeyTable(func(i uint32) uint64 { p := d.parts(i); return tailKey(&p) })
	d.shapes = newKeyTable(func(i uint32) uint64 { p := d.parts(i); return shapeKey(&p) })
	return d
}

// parts returns the URL of stored page i, split.
func (d *Detector) parts(i uint32) urlParts {
	r := &d.recs[i]
	dr := &d.dirs[r.dir&^dupFlag]
	return urlParts{head: dr.head, rest: d.arena.get(r.rest), originEnd: int(dr.originEnd), hostStart: int(dr.hostStart)}
}

func (d *Detector) urlOf(i uint32) string { p := d.parts(i); return p.url() }

// Observe examines a fetched page, remembers it, and returns whether it
// duplicates a page observed before. The crawler should follow no link of
// a duplicate. Exact duplicates are found by digest wherever they are;
// near-duplicates only among the suspects the URL's structure names:
// the path with its repeated segments collapsed, the same path under
// another query or on the www/bare twin host, the same last segment
// under another directory or host, and the same path but for its numbers.
//
// Each duplicate is evidence that the duplicate's directory (or host, URL
// pattern, query parameter) copies the original's; when the evidence
// reaches Config.MirrorEvidence pages and the guards hold (see the package
// documentation), Observe labels it and returns the label in
// Decision.Mirror, once. Pruned then reports the URLs it covers.
//
// Observing the same page (same id and digest) again returns Unique and
// changes nothing.
func (d *Detector) Observe(p Page) Decision {
	if p.Status != 0 && (p.Status < 200 || p.Status > 299) || p.Digest == 0 {
		d.stats.Skipped++
		return Decision{Kind: Skipped}
	}
	u := splitURL(p.URL)
	s := search{d: d, p: &p, u: &u, exact: -1, best: -1, exactStruct: -1, bestDist: math.MaxInt, budget: d.maxSuspects}
	if i, ok := d.digests.first(digestKey(p.Digest), func(i uint32) bool { return d.recs[i].digest == p.Digest }); ok {
		if d.recs[i].id == p.ID {
			return Decision{Kind: Unique}
		}
		s.exact = int64(i)
	}
	s.run()

	dec := Decision{Kind: Unique}
	orig := int64(-1)
	switch {
	case s.exact >= 0:
		orig = s.exact
		if s.exactStruct >= 0 {
			orig = s.exactStruct
		}
		dec.Kind, dec.Test = Exact, TestDigest
		dec.Distance = Hamming(p.Simhash, d.recs[orig].sim)
	case s.best >= 0:
		orig = s.best
		dec.Kind, dec.Test, dec.Distance = Near, s.bestTest, s.bestDist
	}
	if orig >= 0 {
		dec.Of = d.recs[orig].id
		dec.OfURL = d.urlOf(uint32(orig))
		dec.Similarity = 1 - float64(dec.Distance)/64
	}

	idx, stored := d.add(&p, &u, dec.Kind != Unique, s.exact < 0)
	switch dec.Kind {
	case Unique:
		d.stats.Unique++
	case Exact:
		d.stats.Exact++
	case Near:
		d.stats.Near++
	}
	if stored && orig >= 0 && d.evidenceMin > 0 {
		dec.Mirror = d.tie(idx, uint32(orig), &u)
	}
	return dec
}

// Restore rebuilds the detector's state after a restart: it observes the
// page again and forgets the verdict. Restore the pages a store kept in
// the order they were first observed, then call RestoreMirror for the
// labels it kept; the detector then decides as it would have without the
// restart. Labels that the replay recreates are not duplicated.
func (d *Detector) Restore(p Page) { d.Observe(p) }

// RestoreMirror reinstates a label kept by a store. A label with the same
// Rule, Prefix and Param already in place is left as it is.
func (d *Detector) RestoreMirror(m Mirror) {
	if d.hasLabel(&m) {
		return
	}
	c := m
	c.Evidence = append([]uint64(nil), m.Evidence...)
	d.addLabel(&c)
}

// Labels returns a copy of every label, in the order they were given.
func (d *Detector) Labels() []Mirror {
	out := make([]Mirror, len(d.all))
	for i, m := range d.all {
		out[i] = *m
		out[i].Evidence = append([]uint64(nil), m.Evidence...)
	}
	return out
}

// Stats returns a snapshot of the counters.
func (d *Detector) Stats() Stats {
	s := d.stats
	s.Pages = s.Unique + s.Exact + s.Near
	s.Bytes = d.bytes()
	return s
}

func (d *Detector) bytes() int64 {
	const (
		dirRecBytes   = 40
		dirIndexBytes = 40 // string header, value and control byte of a map slot, at ~70% load
		evidenceBytes = 256
		labelBytes    = 256
	)
	n := int64(cap(d.recs))*32 + int64(d.arena.bytes())
	n += int64(cap(d.dirs))*dirRecBytes + int64(len(d.dirIndex))*dirIndexBytes
	n += int64(d.digests.bytes() + d.sitePaths.bytes() + d.tails.bytes() + d.shapes.bytes())
	n += int64(len(d.evidence))*evidenceBytes + int64(len(d.all))*labelBytes
	return n
}

// add stores page p and indexes it. newDigest is false when its digest is
// already indexed. It reports false when the detector is full (2^31 pages
// or 4 GiB of URLs) and no longer stores pages.
func (d *Detector) add(p *Page, u *urlParts, dup, newDigest bool) (uint32, bool) {
	if len(d.recs) >= dupFlag-1 {
		return 0, false
	}
	dir, ok := d.internDir(u.head, u.originEnd, u.hostStart)
	if !ok {
		return 0, false
	}
	rest, ok := d.arena.add(u.rest)
	if !ok {
		return 0, false
	}
	flag := uint32(0)
	if dup {
		flag = dupFlag
	}
	idx := uint32(len(d.recs))
	d.recs = append(d.recs, pageRec{id: p.ID, sim: p.Simhash, digest: p.Digest, dir: uint32(dir) | flag, rest: rest})
	if newDigest {
		d.digests.insert(digestKey(p.Digest), idx, 1)
	}
	d.sitePaths.insert(sitePathKey(u), idx, d.perKey)
	d.tails.insert(tailKey(u), idx, d.perKey)
	if hasDigit(u) {
		d.shapes.insert(shapeKey(u), idx, d.perKey)
	}
	for k := dir; k >= 0; k = d.dirs[k].parent {
		if dup {
			d.dirs[k].dup++
		} else {
			d.dirs[k].unique++
		}
	}
	return idx, true
}

// internDir returns the index of directory head, adding it and its
// ancestors if new.
func (d *Detector) internDir(head string, originEnd, hostStart int) (int32, bool) {
	if k, ok := d.dirIndex[head]; ok {
		return k, true
	}
	parent := int32(-1)
	if len(head) > originEnd+1 {
		ph := head[:strings.LastIndexByte(head[:len(head)-1], '/')+1]
		var ok bool
		if parent, ok = d.internDir(ph, originEnd, hostStart); !ok {
			return 0, false
		}
	}
	ref, ok := d.arena.add(head)
	if !ok || originEnd > math.MaxUint16 {
		return 0, false
	}
	s := d.arena.get(ref)
	k := int32(len(d.dirs))
	d.dirs = append(d.dirs, dirRec{head: s, parent: parent, originEnd: uint16(originEnd), hostStart: uint16(hostStart)})
	d.dirIndex[s] = k
	return k, true
}

// dirCounts returns the unique and duplicate pages observed at or under a
// directory prefix.
func (d *Detector) dirCounts(prefix string) (unique, dup uint32) {
	if k, ok := d.dirIndex[prefix]; ok {
		return d.dirs[k].unique, d.dirs[k].dup
	}
	return 0, 0
}

// search collects the structural suspects of one page and compares their
// simhashes.
type search struct {
	d           *Detector
	p           *Page
	u           *urlParts
	budget      int
	exact       int64 // first page with the same digest, or -1
	exactStruct int64 // a suspect with the same digest, or -1
	best        int64 // nearest suspect within MaxHamming, or -1
	bestDist    int
	bestTest    string
}

func (s *search) run() {
	d := s.d
	d.seen = d.seen[:0]
	if s.budget == 0 {
		return
	}
	u := s.u

	// (a) A path that repeats segments: compare with the path collapsed
	// once and collapsed fully.
	segs := segments(d.segs[0][:0], u.dirPath())
	isDir := u.file() == ""
	if !isDir {
		segs = append(segs, u.file())
	}
	d.segs[0] = segs
	if len(segs) >= 2 {
		work := append(d.segs[1][:0], segs...)
		d.segs[1] = work
		if once, ok := collapseOnce(work); ok {
			path := joinPath(once, isDir)
			s.lookup(&d.sitePaths, sitePathKeyOfPath(u, path), TestPathRepeat)
			if all := collapseAll(once); len(all) < len(once) {
				s.lookup(&d.sitePaths, sitePathKeyOfPath(u, joinPath(all, isDir)), TestPathRepeat)
			}
		}
	}
	// (b) and (c): the same path under another query, scheme or www twin;
	// the same last segment elsewhere; the same path but for its numbers.
	s.lookup(&d.sitePaths, sitePathKey(u), "")
	s.lookup(&d.tails, tailKey(u), TestSameTail)
	if hasDigit(u) {
		s.lookup(&d.shapes, shapeKey(u), TestSameShape)
	}
}

func (s *search) lookup(t *keyTable, key uint64, test string) {
	t.each(key, func(i uint32) bool { return s.consider(i, test) })
}

// consider compares suspect i; it returns false when the budget is spent.
func (s *search) consider(i uint32, test string) bool {
	if s.budget <= 0 {
		return false
	}
	d := s.d
	for _, j := range d.seen {
		if j == i {
			return true
		}
	}
	d.seen = append(d.seen, i)
	r := &d.recs[i]
	if r.id == s.p.ID {
		return true
	}
	s.budget--
	d.stats.Comparisons++
	if test == "" || test == TestSameTail {
		test = s.relationTest(i, test)
	}
	if s.exact >= 0 {
		if r.digest == s.p.Digest && s.exactStruct < 0 {
			s.exactStruct = int64(i)
		}
		return true
	}
	if s.p.Simhash == 0 || r.sim == 0 {
		return true
	}
	dist := Hamming(s.p.Simhash, r.sim)
	switch {
	case dist <= d.maxHamming:
		if dist < s.bestDist {
			s.best, s.bestDist, s.bestTest = int64(i), dist, test
		}
	case test == TestQueryVariant && d.evidenceMin > 0:
		// Two queries of one path with different pages: a parameter that
		// alone tells them apart matters, and must never be dropped.
		o := d.parts(i)
		qa, _ := s.u.query()
		qb, _ := o.query()
		if name, ok := singleDifference(qa, qb); ok {
			d.paramEvidence(s.u.origin(), name).counter++
		}
	}
	return true
}

// relationTest names the test of a suspect found by path or by tail from
// how its URL relates to the page's.
func (s *search) relationTest(i uint32, test string) string {
	o := s.d.parts(i)
	samePath := o.dirPath() == s.u.dirPath() && o.file() == s.u.file()
	switch {
	case samePath && o.origin() == s.u.origin():
		return TestQueryVariant
	case samePath:
		return TestSamePathOtherHost
	case test == "":
		return TestQueryVariant // www twin with another path cannot share the key; keep a name
	}
	return test
}
