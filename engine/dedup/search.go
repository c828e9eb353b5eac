package dedup

import "strings"

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
	withdrawn   []Rule
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
	if s.p.Items != 0 && d.items.len() > 0 {
		// A listing of the same items under another query, before the
		// path's other pages contradict what tells them apart.
		s.lookup(&d.sitePaths, sitePathKey(u), TestSameItems)
	}
	s.lookup(&d.sitePaths, sitePathKey(u), "")
	if lower, ok := lowerASCII(u.dirPath() + u.file()); ok {
		// The same path in lower case: the host may ignore case.
		s.lookup(&d.sitePaths, sitePathKeyOfPath(u, lower), "")
	}
	if f := u.file(); strings.IndexByte(f, ';') >= 0 {
		// The same file without its path parameters (";sid=…").
		s.lookup(&d.sitePaths, sitePathKeyOfPath(u, u.dirPath()+withoutPathParams(f)), "")
	}
	s.lookup(&d.tails, tailKey(u), TestSameTail)
	if hasDigit(u) {
		s.lookup(&d.shapes, shapeKey(u), TestSameShape)
	}
	// (d) Pages of the site whose main text agrees on one quarter of its
	// bits: two simhashes within 3 bits agree on at least one of four
	// 16-bit bands, so this finds every near-duplicate of the site
	// whatever its URL (a copy behind a rewrite no structure above names).
	if s.p.Main != 0 && s.exact < 0 {
		site := siteHash(u.hostPort())
		for k := range d.bands {
			s.lookup(&d.bands[k], bandKey(site, k, s.p.Main), TestSameText)
		}
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
	r := d.recs.at(i)
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
	if test == TestSameItems {
		if dist, ok := d.sameItems(s.p, i); ok {
			if s.best < 0 {
				s.best, s.bestDist, s.bestTest = int64(i), dist, TestSameItems
			}
			return true
		}
		d.seen = d.seen[:len(d.seen)-1] // compared again as any suspect
		s.budget++
		d.stats.Comparisons--
		return true
	}
	dist, ok := d.near(s.p, r)
	switch {
	case ok:
		if dist < s.bestDist {
			if Hamming(s.p.Simhash, r.sim) > d.maxHamming {
				test = TestMainText
			}
			s.best, s.bestDist, s.bestTest = int64(i), dist, test
		}
	case d.evidenceMin > 0 && !d.isSoft404(i):
		// Two URLs that a rewrite relates but whose pages differ: that
		// rewrite would lose one of them.
		o := d.parts(i)
		s.withdrawn = append(s.withdrawn, d.contradict(s.u, &o, s.p.ID, r.id)...)
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
