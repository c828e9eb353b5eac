package dedup

import "strings"

// A soft 404 is a host's answer 200, with one and the same "not found"
// page, to URLs that do not exist. The detector recognises it from
// evidence rather than by probing: Config.MirrorEvidence - 1 URLs (at
// least two) of one origin with unrelated paths (other file names, so that no rewrite
// relates them) that answer the same page, titled alike and with texts
// (without the words of their URLs: Fingerprints.NoURL) within
// Soft404MaxHamming bits. One page under many unrelated
// names is what a probe for a URL that cannot exist would show; a
// genuine page is not served under names that share nothing. From then
// on every page of the origin with that title and a text that close is a
// soft 404, whatever its URL.
//
// Why a looser distance than for near-duplicates: what a soft-404 page
// shows besides the URL asked for (suggestions, the time) may vary a
// little, and on a page of a few dozen words a word moves the simhash by
// a few bits. The same title and an origin whose other pages did not
// match keep the looser test safe.

// Soft404MaxHamming is the largest distance between the NoURL simhashes
// of two answers of one soft-404 page.
const Soft404MaxHamming = 8

// Soft404Sig is an origin's soft-404 page, as the detector recognises it.
type Soft404Sig struct {
	Origin  string
	Title   uint64 // Fingerprints.Title of the page
	Simhash uint64 // Fingerprints.NoURL of its first answer
	Of      uint64 // id of the first URL that answered it
	OfURL   string
	// Evidence lists pairs of unrelated URLs that answered it.
	Evidence []Pair
}

type soft404State struct {
	sig    *Soft404Sig
	groups map[uint64][]uint32 // by title: pages that answered one page under unrelated URLs
}

// softMatch reports whether page p is its origin's soft-404 page.
func (d *Detector) softMatch(p *Page, u *urlParts) (*Soft404Sig, bool) {
	st := d.soft[u.origin()]
	if st == nil || st.sig == nil || p.Title != st.sig.Title {
		return nil, false
	}
	return st.sig, Hamming(p.NoURL, st.sig.Simhash) <= Soft404MaxHamming
}

// isSoft404 reports whether stored page i is its origin's soft-404 page.
func (d *Detector) isSoft404(i uint32) bool {
	if len(d.soft) == 0 {
		return false
	}
	r := &d.recs[i]
	u := d.parts(i)
	st := d.soft[u.origin()]
	return st != nil && st.sig != nil && r.title == st.sig.Title && Hamming(r.nourl, st.sig.Simhash) <= Soft404MaxHamming
}

// softEvidence looks for pages of p's origin with p's title and nearly
// its text under unrelated URLs, and returns the origin's soft-404
// signature when they reach Config.MirrorEvidence pages.
func (d *Detector) softEvidence(idx uint32, p *Page, u *urlParts) *Soft404Sig {
	if p.Title == 0 || d.evidenceMin == 0 || p.Simhash == 0 {
		return nil
	}
	var group []uint32
	var st *soft404State
	d.titles.each(titleKey(u, p.Title), func(i uint32) bool {
		if i == idx {
			return true
		}
		r := &d.recs[i]
		if r.title != p.Title || Hamming(r.nourl, p.NoURL) > Soft404MaxHamming {
			return true
		}
		o := d.parts(i)
		if o.origin() != u.origin() || sameFile(o.file(), u.file()) {
			return true
		}
		if st == nil {
			if st = d.soft[u.origin()]; st == nil {
				st = &soft404State{groups: make(map[uint64][]uint32)}
				d.soft[strings.Clone(u.origin())] = st
			}
			group = st.groups[p.Title]
		}
		if st.sig != nil {
			return false
		}
		for _, g := range [2]uint32{i, idx} {
			if !containsU32(group, g) && len(group) < maxEvidenceIDs {
				group = append(group, g)
			}
		}
		return true
	})
	if st == nil || st.sig != nil {
		return nil
	}
	st.groups[p.Title] = group
	if len(group) < max(d.evidenceMin-1, 2) {
		return nil
	}
	first := group[0]
	for _, g := range group {
		first = min(first, g)
	}
	sig := &Soft404Sig{Origin: strings.Clone(u.origin()), Title: p.Title, Simhash: d.recs[first].nourl, Of: d.recs[first].id, OfURL: d.urlOf(first)}
	for _, g := range group {
		if g != first {
			sig.Evidence = append(sig.Evidence, Pair{Copy: d.recs[g].id, Original: sig.Of})
		}
	}
	st.sig = sig
	st.groups = nil
	d.softSigs = append(d.softSigs, sig)
	d.stats.Soft404Host++
	out := *sig
	out.Evidence = append([]Pair(nil), sig.Evidence...)
	return &out
}

// RestoreSoft404 reinstates an origin's soft-404 signature kept by a
// store.
func (d *Detector) RestoreSoft404(sig Soft404Sig) {
	st := d.soft[sig.Origin]
	if st == nil {
		st = &soft404State{}
		d.soft[sig.Origin] = st
	}
	if st.sig != nil {
		return
	}
	c := sig
	c.Evidence = append([]Pair(nil), sig.Evidence...)
	st.sig = &c
	d.softSigs = append(d.softSigs, &c)
	d.stats.Soft404Host++
}

// Soft404s returns a copy of every soft-404 signature, in the order
// recognised.
func (d *Detector) Soft404s() []Soft404Sig {
	out := make([]Soft404Sig, len(d.softSigs))
	for i, s := range d.softSigs {
		out[i] = *s
		out[i].Evidence = append([]Pair(nil), s.Evidence...)
	}
	return out
}

func containsU32(s []uint32, x uint32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
