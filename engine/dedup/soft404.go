package dedup

import (
	"slices"
	"strings"
)

// A soft 404 is a host's answer 200, with one and the same "not found"
// page, to URLs that do not exist. The detector recognises it from
// evidence, then checks the evidence with a probe: Config.MirrorEvidence - 1 URLs (at
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

// The probe. When the evidence first shows a soft 404 on an origin, the
// detector asks the crawler (Decision.Probe) to fetch, once, a URL of the
// origin that cannot exist (ProbeURL: a name no site uses, in the
// directory of the page that completed the evidence) as it fetches any
// page: within robots.txt and politeness, in a visit of the site. Probing
// only where the evidence points costs one fetch per suspected host
// rather than one per host crawled. The answer (Probed) settles it: a
// 4xx is a real not-found answer, so the host does not serve soft 404s
// and the signature is withdrawn (two unrelated URLs that gave one page
// were copies, not a not-found page) and never made again from evidence;
// a 2xx is the host's not-found page itself: it confirms the signature,
// or replaces it when it is another page. Other answers (3xx, 5xx, no
// answer) and a probe robots.txt forbids leave the evidence to decide.

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
	// Probe is the id of the probe URL once answered (0 before), and
	// ProbeStatus the status it answered.
	Probe       uint64
	ProbeStatus int
	// Withdrawn: the probe showed the host does not answer missing URLs
	// with this page.
	Withdrawn bool
	// Prior, when not 0, is how many other origins' probes had confirmed
	// a page that spelled its own path as their not-found page: the
	// signature was put in force from such a page on that evidence,
	// without a probe of its own (see echoPrior).
	Prior int
}

type soft404State struct {
	sig    *Soft404Sig
	groups map[uint64][]uint32 // by title: pages that answered one page under unrelated URLs
	// pending is the signature the evidence made, until the probe
	// answers; sig is the one in force.
	pending *Soft404Sig
	echo    bool // pending is one page that spelled its own URL: only the probe can confirm it
	probe   bool // the probe was asked for
	// probeURL is the probe asked for, until it is answered or known
	// unanswered.
	probeURL string
	honest   bool // the probe answered a real not-found: no soft 404s here
}

// softMatch reports whether page p is its origin's soft-404 page.
func (d *Detector) softMatch(p *Page, u *urlParts) (*Soft404Sig, bool) {
	st := d.soft[u.origin()]
	if st == nil || st.sig == nil || p.Title != st.sig.Title {
		return nil, false
	}
	return st.sig, Hamming(p.NoURL, st.sig.Simhash) <= Soft404MaxHamming
}

// Soft404Match reports whether a page (its URL, Simhash, NoURL and Title
// are read) is its origin's soft-404 page under the signature in force,
// with the signature's first URL id and the distance.
func (d *Detector) Soft404Match(p Page) (of uint64, dist int, ok bool) {
	if p.NoURL == 0 {
		p.NoURL = p.Simhash
	}
	u := splitURL(p.URL)
	sig, ok := d.softMatch(&p, &u)
	if !ok {
		return 0, 0, false
	}
	return sig.Of, Hamming(p.NoURL, sig.Simhash), true
}

// isSoft404 reports whether stored page i is its origin's soft-404 page.
func (d *Detector) isSoft404(i uint32) bool {
	if len(d.soft) == 0 {
		return false
	}
	r := d.recs.at(i)
	u := d.parts(i)
	st := d.soft[u.origin()]
	return st != nil && st.sig != nil && r.title == title32(st.sig.Title) && Hamming(d.recs.nourl(i), st.sig.Simhash) <= Soft404MaxHamming
}

// softEvidence looks for pages of p's origin with p's title and nearly
// its text under unrelated URLs. When they reach Config.MirrorEvidence
// pages it returns the origin's soft-404 signature, or, the first time,
// keeps it pending and reports that the origin is to be probed (see
// Probed): until the probe answers, pages are decided as if there were
// none.
func (d *Detector) softEvidence(idx uint32, p *Page, u *urlParts) (*Soft404Sig, bool) {
	if p.Title == 0 || d.evidenceMin == 0 || p.Simhash == 0 {
		return nil, false
	}
	if st := d.soft[u.origin()]; st != nil && (st.honest || st.sig != nil || st.pending != nil) {
		return nil, false
	}
	// The pages of the origin alike, those whose files a rewrite may
	// relate to p's first: a page that one of those is related to as
	// well is a third name of it (the home page as /, /welcome.jsp and
	// /mirror/), not a not-found page under an unrelated URL.
	var alike, related [maxAlike]uint32
	na, nr := 0, 0
	d.titles.each(titleKey(originHash(u.origin()), uint64(title32(p.Title))), func(i uint32) bool {
		if i == idx {
			return true
		}
		r := d.recs.at(i)
		if r.title != title32(p.Title) || Hamming(d.recs.nourl(i), p.NoURL) > Soft404MaxHamming {
			return true
		}
		o := d.parts(i)
		switch {
		case o.origin() != u.origin():
		case relatedFiles(&o, u):
			if nr < maxAlike {
				related[nr], nr = i, nr+1
			}
		case na < maxAlike:
			alike[na], na = i, na+1
		}
		return true
	})
	var group []uint32
	var st *soft404State
	for _, i := range alike[:na] {
		o := d.parts(i)
		if slices.ContainsFunc(related[:nr], func(k uint32) bool { r := d.parts(k); return relatedFiles(&r, &o) }) {
			continue
		}
		if st == nil {
			if st = d.soft[u.origin()]; st == nil {
				st = &soft404State{}
				d.soft[strings.Clone(u.origin())] = st
			}
			if st.groups == nil {
				st.groups = make(map[uint64][]uint32)
			}
			group = st.groups[p.Title]
		}
		for _, g := range [2]uint32{i, idx} {
			if !slices.Contains(group, g) && len(group) < maxEvidenceIDs {
				group = append(group, g)
			}
		}
	}
	if st == nil {
		return nil, false
	}
	st.groups[p.Title] = group
	if len(group) < max(d.evidenceMin-1, 2) {
		return nil, false
	}
	first := group[0]
	for _, g := range group {
		first = min(first, g)
	}
	sig := &Soft404Sig{Origin: strings.Clone(u.origin()), Title: p.Title, Simhash: d.recs.nourl(first), Of: d.recs.at(first).id, OfURL: d.urlOf(first)}
	for _, g := range group {
		if g != first {
			sig.Evidence = append(sig.Evidence, Pair{Copy: d.recs.at(g).id, Original: sig.Of})
		}
	}
	st.groups = nil
	if !st.probe {
		st.probe, st.pending = true, sig
		return nil, true
	}
	d.setSoft404(st, sig)
	return sig.clone(), false
}

// maxAlike bounds the pages softEvidence weighs: the title index keeps
// Config.PerKey pages a key (DefaultPerKey).
const maxAlike = 2 * DefaultPerKey

// relatedFiles reports whether a rewrite may relate the files of two URLs
// of one origin, so that one page answering both is no sign of a soft
// 404: the same file (path parameters left out, index names alike), a
// directory and a file in it (the name the host serves as its index,
// whatever it is), or one file spelled in other cases (a host that
// ignores them).
func relatedFiles(a, b *urlParts) bool {
	fa, fb := withoutPathParams(a.file()), withoutPathParams(b.file())
	if sameFile(fa, fb) || strings.EqualFold(fa, fb) {
		return true
	}
	return (fa == "") != (fb == "") && strings.EqualFold(a.dirPath(), b.dirPath())
}

// A page that spells out its own URL path is the first sign of a soft 404
// that one page can give: a not-found page commonly says which URL was not
// found ("Sorry, the page /a/b.html does not exist"), while a genuine page
// rarely has the words of its whole path in a row in its text. Such a
// page is not enough to decide (a page may quote its path in a
// breadcrumb), but it is enough to ask the probe at once, rather than
// after a second not-found page, and to hold the page's links until the
// answer: the links a not-found page suggests are most of what a soft-404
// host costs. Only the probe's answer can confirm it; an unanswered probe
// leaves no signature (see ProbeUnanswered).

// echoMinWords is the fewest words a URL path must have for a page that
// spells it to count as echoing it: one or two words (/about/,
// /news.html) turn up in texts by chance.
const echoMinWords = 3

// echoes reports whether page p spells its own URL path in its text (its
// NoURL simhash, the text without that run of words, differs from its
// Simhash), a path of at least echoMinWords words.
func echoes(p *Page, u *urlParts) bool {
	if p.NoURL == p.Simhash || p.Title == 0 || p.Simhash == 0 {
		return false
	}
	path := u.dirPath() + u.file()
	n := 0
	for i := 0; i < len(path); i++ {
		if fold[path[i]] != 0 && (i == 0 || fold[path[i-1]] == 0) {
			n++
		}
	}
	return n >= echoMinWords
}

// The echo sign across hosts. Each probe that a page spelling its path
// asked for says whether the sign was right: a 2xx answering that very
// page (the host's not-found page, confirmed), or a 4xx, or a 2xx with
// another page (the page was a genuine one). Once the sign was confirmed
// on priorHosts origins and never found wrong anywhere, a page spelling
// its path on the next origin is that origin's not-found page without a
// probe of its own (Soft404Sig.Prior): the probe would cost a fetch per
// soft-404 host to confirm what other hosts showed. A single page found
// genuine anywhere ends the prior for the crawl, and a host probed
// before (or that answered a real 404) is never taken on the prior.

// echoPrior is what the crawl knows of the echo sign across origins.
type echoPrior struct {
	confirmed []string // origins whose probe confirmed it, up to priorHosts
	refuted   bool     // a probe showed a page that spelled its path to be genuine
}

// echoPriorOf returns how many origins other than origin confirmed the
// echo sign, if enough did and none refuted it (0 otherwise).
func (d *Detector) echoPriorOf(origin string) int {
	e := &d.echo
	if e.refuted || len(e.confirmed) < priorHosts || containsStr(e.confirmed, origin) {
		return 0
	}
	return len(e.confirmed)
}

// softEcho asks for the probe of the origin of page idx when the page
// echoes its URL (see echoes) and the origin has not been probed: the
// page is then the signature pending the probe's answer. With the echo
// sign's prior (echoPriorOf), the page's signature is put in force at
// once instead, and returned.
func (d *Detector) softEcho(idx uint32, p *Page, u *urlParts) (*Soft404Sig, bool) {
	if d.evidenceMin == 0 || !echoes(p, u) {
		return nil, false
	}
	st := d.soft[u.origin()]
	if st != nil && (st.probe || st.honest || st.sig != nil || st.pending != nil) {
		return nil, false
	}
	if st == nil {
		st = &soft404State{}
		d.soft[strings.Clone(u.origin())] = st
	}
	sig := &Soft404Sig{Origin: strings.Clone(u.origin()), Title: p.Title, Simhash: p.NoURL, Of: p.ID, OfURL: d.urlOf(idx)}
	if n := d.echoPriorOf(u.origin()); n > 0 {
		sig.Prior = n
		st.probe = true // none is asked for: the prior stands for it
		d.setSoft404(st, sig)
		return sig.clone(), false
	}
	st.probe, st.echo = true, true
	st.pending = sig
	return nil, true
}

// echoAnswered records what a probe that a page spelling its path asked
// for said of the sign.
func (d *Detector) echoAnswered(origin string, confirmed bool) {
	e := &d.echo
	if !confirmed {
		e.refuted = true
		return
	}
	if len(e.confirmed) < priorHosts && !containsStr(e.confirmed, origin) {
		e.confirmed = append(e.confirmed, strings.Clone(origin))
	}
}

// softAwait returns the probe whose answer decides page p: the one asked
// for on p's origin and not answered yet, when p matches the signature
// pending that answer. Until the answer, such a page is probably one
// more not-found page, whose links (the suggestions such pages offer are
// often more missing URLs) are better held than followed.
func (d *Detector) softAwait(p *Page, u *urlParts) string {
	st := d.soft[u.origin()]
	if st == nil || st.pending == nil || st.probeURL == "" || p.Title != st.pending.Title || Hamming(p.NoURL, st.pending.Simhash) > Soft404MaxHamming {
		return ""
	}
	return st.probeURL
}

// setSoft404 puts sig in force on its origin.
func (d *Detector) setSoft404(st *soft404State, sig *Soft404Sig) {
	st.sig, st.pending, st.echo = sig, nil, false
	d.softSigs = append(d.softSigs, sig)
	d.stats.Soft404Host++
}

func (s *Soft404Sig) clone() *Soft404Sig {
	out := *s
	out.Evidence = append([]Pair(nil), s.Evidence...)
	return &out
}

// probePrefix starts the file name of a probe URL.
const probePrefix = "lidi-no-such-page-"

// ProbeURL returns the URL of the probe for the origin of page url: in
// its directory, a name made of probePrefix and a hash of the origin (so
// that IsProbe knows it without state), with the page's extension.
func ProbeURL(url string) string {
	u := splitURL(url)
	name := withoutPathParams(u.file())
	ext := ""
	if k := strings.LastIndexByte(name, '.'); k > 0 {
		ext = name[k:]
	}
	return u.head + probeName(u.origin()) + ext
}

func probeName(origin string) string {
	const hexDigits = "0123456789abcdef"
	h := newHasher(keyProbe).str(origin).sum()
	b := []byte(probePrefix + "0000000000000000")
	for i := range 16 {
		b[len(probePrefix)+i] = hexDigits[h>>(60-4*i)&0xf]
	}
	return string(b)
}

// IsProbe reports whether url is a probe URL (see ProbeURL).
func IsProbe(url string) bool {
	if !strings.Contains(url, probePrefix) {
		return false
	}
	u := splitURL(url)
	return strings.HasPrefix(u.file(), probeName(u.origin()))
}

// Probed takes the answer to a probe (see ProbeURL), whatever its status,
// and returns the decision on it. A 4xx refutes the signature the
// evidence made (Decision.Soft404Withdrawn), and the origin is not taken
// for a soft-404 host again. A 2xx is the host's not-found page: the
// decision is Soft404 and Decision.Soft404 the signature in force,
// confirmed or, when the answer is another page, made from it. Any other
// answer leaves the evidence to decide: its signature is put in force. A
// crawler follows no link of a probe.
func (d *Detector) Probed(p Page) Decision {
	u := splitURL(p.URL)
	origin := u.origin()
	st := d.soft[origin]
	if st == nil {
		st = &soft404State{}
		d.soft[strings.Clone(origin)] = st
	}
	st.probe, st.probeURL = true, ""
	delete(d.probes, p.ID)
	d.stats.Probes++
	dec := Decision{Kind: Skipped}
	echo := st.echo && st.pending != nil // the probe answers for a page that spelled its path
	refute := func() {
		old := st.pending
		if st.echo {
			old = nil // one page that spelled its URL: nothing was claimed
		}
		st.pending, st.echo = nil, false
		if old == nil && st.sig != nil {
			old = st.sig
			st.sig = nil
			d.softSigs = slices.DeleteFunc(d.softSigs, func(s *Soft404Sig) bool { return s == old })
			d.stats.Soft404Host--
		}
		if old != nil {
			old.Probe, old.ProbeStatus, old.Withdrawn = p.ID, p.Status, true
			d.stats.Soft404Refuted++
			dec.Soft404Withdrawn = old.clone()
		}
	}
	switch {
	case p.Status >= 400 && p.Status < 500:
		// A real not-found answer: what the evidence took for the
		// not-found page is not one.
		st.honest = true
		st.groups = nil
		if echo {
			d.echoAnswered(origin, false)
		}
		refute()
		return dec
	case p.Status < 200 || p.Status >= 300 || p.Digest == 0:
		// No answer to go by: the evidence decides; a page that spelled
		// its URL is no evidence on its own.
		if st.echo {
			st.pending, st.echo = nil, false
			return dec
		}
		if sig := st.pending; sig != nil {
			sig.Probe, sig.ProbeStatus = p.ID, p.Status
			d.setSoft404(st, sig)
			dec.Soft404 = sig.clone()
		}
		return dec
	}
	if p.NoURL == 0 {
		p.NoURL = p.Simhash
	}
	if p.Main == 0 {
		p.Main = p.Simhash
	}
	sig := st.pending
	if sig == nil {
		sig = st.sig
	}
	if sig != nil && p.Title == sig.Title && Hamming(p.NoURL, sig.Simhash) <= Soft404MaxHamming {
		sig.Probe, sig.ProbeStatus = p.ID, p.Status
		if echo {
			d.echoAnswered(origin, true)
		}
		if st.pending != nil {
			d.setSoft404(st, sig)
		}
	} else {
		// The host answers missing URLs with another page: that one is
		// its not-found page.
		if echo {
			d.echoAnswered(origin, false)
		}
		refute()
		sig = &Soft404Sig{Origin: strings.Clone(origin), Title: p.Title, Simhash: p.NoURL, Of: p.ID, OfURL: strings.Clone(p.URL), Probe: p.ID, ProbeStatus: p.Status}
		d.setSoft404(st, sig)
	}
	st.groups = nil
	d.add(&p, &u, true, d.newDigest(&p))
	d.stats.Soft404++
	dec.Kind, dec.Test, dec.Of, dec.OfURL = Soft404, TestSoft404, sig.Of, sig.OfURL
	dec.Distance = Hamming(p.NoURL, sig.Simhash)
	dec.Similarity = 1 - float64(dec.Distance)/64
	dec.Soft404 = sig.clone()
	return dec
}

// ProbeUnanswered reports that a URL will not be fetched (robots.txt
// forbids it, or a rule covers it). When it is a probe asked for, the
// evidence decides: the signature it made is returned, in force. Other
// URLs cost a map lookup.
func (d *Detector) ProbeUnanswered(id uint64) *Soft404Sig {
	origin, ok := d.probes[id]
	if !ok {
		return nil
	}
	delete(d.probes, id)
	st := d.soft[origin]
	if st != nil {
		st.probeURL = ""
	}
	if st == nil || st.pending == nil {
		return nil
	}
	if st.echo {
		// A page that spelled its URL is no evidence on its own.
		st.pending, st.echo = nil, false
		return nil
	}
	sig := st.pending
	d.setSoft404(st, sig)
	return sig.clone()
}

// RestoreSoft404 reinstates an origin's soft-404 signature kept by a
// store.
func (d *Detector) RestoreSoft404(sig Soft404Sig) {
	st := d.soft[sig.Origin]
	if st == nil {
		st = &soft404State{}
		d.soft[sig.Origin] = st
	}
	st.probe = st.probe || sig.Probe != 0
	if sig.Withdrawn {
		st.honest = st.honest || sig.ProbeStatus >= 400
		return
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
