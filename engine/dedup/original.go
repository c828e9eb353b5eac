package dedup

import (
	"strconv"
	"strings"
)

// Which of two copies is the original is decided by evidence, not by the
// order the crawl met them. By arrival, the copy of a pair is the page
// observed second; crawling a site and a blog that keeps a mirror of it at
// once, the mirror may well answer first, and a rule learned that way
// would keep the mirror and skip the source. What a researcher takes as
// the original:
//
//   - what the pages say: a mirroring tool's note in the copy ("Mirrored
//     from www.catb.org/... by HTTrack"), its <link rel="canonical"> or
//     HTTP Link header (RFC 6596), its og:url, naming the other copy;
//   - where the copies sit: one nested deeper than the other (a directory
//     of an unrelated site, /mirrors/gnu/, against /doc/);
//   - when they changed: the copy's Last-Modified later than the
//     original's by more than a day.
//
// A claim is only evidence here: it decides between two URLs whose pages
// were found to hold the same content, and never makes a rule or skips a
// URL by itself. A canonical URL on another site, or one whose page holds
// other content, relates no duplicate pair and changes nothing.
//
// The decision is taken twice. Page by page: when a page duplicates one
// observed before, and that one claims the newcomer as its origin, the
// newcomer is the original (Decision.Demoted names the page now known to
// be its copy). Rule by rule: when a directory or host swap has its
// evidence, the signals above weigh its direction (Rule.Choice); with
// none, arrival decides. A swap whose canonical side later shows more
// evidence of being the copy is reversed: the rule is withdrawn (the URLs
// it skipped are to be queued again), its inverse takes its place, and
// the pages fetched on the side now known to be the copy are returned as
// Demoted.

// Signal is a kind of evidence of which copy is the original.
type Signal uint8

const (
	// SignalMirrorNote: a mirroring tool's note in the copy names the
	// original's host or URL (Page.MirroredFrom).
	SignalMirrorNote Signal = iota
	// SignalCanonical: the copy's rel=canonical names the original
	// (Page.Canonical).
	SignalCanonical
	// SignalOGURL: the copy's og:url names the original (Page.OGURL).
	SignalOGURL
	// SignalNesting: the copy's directory is nested deeper than the
	// original's.
	SignalNesting
	// SignalLastModified: a pair's copy was last modified more than a day
	// after its original.
	SignalLastModified

	// NumSignals is one more than the largest Signal.
	NumSignals
)

var signalNames = [NumSignals]string{"mirror-note", "canonical", "og-url", "nesting", "last-modified"}

func (s Signal) String() string {
	if s < NumSignals {
		return signalNames[s]
	}
	return "signal(" + strconv.Itoa(int(s)) + ")"
}

// Choice records why a rule keeps the side it keeps: for each signal, the
// observations that its canonical side (To) is the original (For) and
// that the side it rewrites is (Against). Only directory and host swaps
// weigh evidence; other rules have no sides to choose.
type Choice struct {
	For, Against [NumSignals]int32
	// ByEvidence is false when no signal spoke: the page observed second
	// was taken as the copy.
	ByEvidence bool
	// Reversed is set on a rule that replaced its inverse when later
	// evidence overturned it, and on the inverse it replaced.
	Reversed bool
}

// Score is the evidence for the rule's direction minus the evidence
// against it.
func (c *Choice) Score() int {
	n := 0
	for s := range NumSignals {
		n += int(c.For[s]) - int(c.Against[s])
	}
	return n
}

// String describes the choice for a person and a store:
// "arrival", or "mirror-note 12:0 nesting 1:0 reversed".
func (c Choice) String() string {
	if !c.ByEvidence && !c.Reversed {
		return "arrival"
	}
	var b strings.Builder
	for s := range NumSignals {
		if c.For[s] == 0 && c.Against[s] == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.String() + " " + strconv.Itoa(int(c.For[s])) + ":" + strconv.Itoa(int(c.Against[s])))
	}
	if b.Len() == 0 {
		b.WriteString("arrival")
	}
	if c.Reversed {
		b.WriteString(" reversed")
	}
	return b.String()
}

// claimed reports whether pages' claims took part in the choice, or it
// was reversed.
func (c *Choice) claimed() bool {
	if c.Reversed {
		return true
	}
	for _, s := range [...]Signal{SignalMirrorNote, SignalCanonical, SignalOGURL} {
		if c.For[s] != 0 || c.Against[s] != 0 {
			return true
		}
	}
	return false
}

// ParseChoice reads a Choice written by String.
func ParseChoice(s string) (Choice, error) {
	var c Choice
	f := strings.Fields(s)
	for i := 0; i < len(f); i++ {
		switch f[i] {
		case "arrival":
			continue
		case "reversed":
			c.Reversed = true
			continue
		}
		sig := NumSignals
		for k, n := range signalNames {
			if n == f[i] {
				sig = Signal(k)
			}
		}
		if sig == NumSignals || i+1 >= len(f) {
			return Choice{}, &ChoiceError{Text: s}
		}
		a, b, ok := strings.Cut(f[i+1], ":")
		na, err1 := strconv.Atoi(a)
		nb, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil {
			return Choice{}, &ChoiceError{Text: s}
		}
		c.For[sig], c.Against[sig] = int32(na), int32(nb)
		c.ByEvidence = true
		i++
	}
	return c, nil
}

// ChoiceError is returned by ParseChoice for text String did not write.
type ChoiceError struct{ Text string }

func (e *ChoiceError) Error() string { return "dedup: not a rule's choice: " + strconv.Quote(e.Text) }

// Demotion names a page observed earlier as unique that is now known to
// be a copy of another URL (which may not be fetched yet).
type Demotion struct {
	Copy    uint64
	CopyURL string
	Of      uint64
	OfURL   string
	// Similarity is that of the two pages as compared (as in Decision),
	// or 0 when a rule's pairs vouch for them (a reversed swap).
	Similarity float64
}

// pageClaim is what a stored page claims as its origin: the first of a
// mirroring tool's note, its canonical URL and its og:url that names
// another URL.
type pageClaim struct {
	sig  Signal
	url  uint64 // ID of the URL named
	host uint64 // hostKey of the URL named
	// path is the path named, for claims within one host (a canonical
	// naming another directory of its own site); "" across hosts.
	path string
}

// hostKey hashes a URL's host name without its port and a leading
// "www.": a mirroring tool's note names the host as the world knows it
// ("www.catb.org"), whatever port or twin it is crawled on.
func hostKey(url string) uint64 {
	oe := originEnd(url)
	hs := strings.Index(url[:oe], "://")
	h := url[hs+3 : oe]
	if k := strings.LastIndexByte(h, ':'); k >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:k]
	}
	h = strings.TrimPrefix(strings.ToLower(h), "www.")
	return newHasher(keyHost).str(h).sum()
}

// claimOf returns what page p claims as its origin.
func claimOf(p *Page) (pageClaim, bool) {
	for _, c := range [...]struct {
		sig Signal
		url string
	}{{SignalMirrorNote, p.MirroredFrom}, {SignalCanonical, p.Canonical}, {SignalOGURL, p.OGURL}} {
		if c.url == "" || c.url == p.URL || !strings.Contains(c.url, "://") {
			continue
		}
		pc := pageClaim{sig: c.sig, url: ID(c.url), host: hostKey(c.url)}
		if pc.host == hostKey(p.URL) {
			pc.path = strings.Clone(c.url[originEnd(c.url):])
		}
		return pc, true
	}
	return pageClaim{}, false
}

// noteOrigin records an origin observed for the first time.
func (d *Detector) noteOrigin(origin string) {
	if d.originsByHost == nil {
		d.originsByHost = make(map[uint64]string)
	}
	if k := hostKey(origin); d.originsByHost[k] == "" {
		d.originsByHost[k] = origin
	}
}

// noteClaim keeps what stored page i at u claims, if anything, and
// returns the URLs of the original to fetch first (Decision.Prefer).
func (d *Detector) noteClaim(i uint32, p *Page, u *urlParts) []string {
	c, ok := claimOf(p)
	if !ok {
		return nil
	}
	if d.claims == nil {
		d.claims = make(map[uint32]pageClaim)
		d.claimsByOrigin = make(map[string][]uint32)
	}
	d.claims[i] = c
	o := d.dirHead(int32(d.recs.at(i).dir &^ dupFlag))[:u.originEnd]
	if len(d.claimsByOrigin[o]) < maxClaimsScanned {
		d.claimsByOrigin[o] = append(d.claimsByOrigin[o], i)
	}
	if c.sig == SignalMirrorNote && c.path == "" {
		d.noteMirrored(o, u.dirPath())
	}
	if d.recs.at(i).dir&dupFlag != 0 {
		return nil // a copy of a page observed: the evidence is in
	}
	named := p.Canonical
	switch c.sig {
	case SignalMirrorNote:
		named = p.MirroredFrom
	case SignalOGURL:
		named = p.OGURL
	}
	out := make([]string, 0, 2)
	if o := d.originsByHost[c.host]; c.sig == SignalMirrorNote && o != "" && o != u.origin() {
		// A note names the host as the world knows it: the crawl
		// reaches it under the origin observed there (another port,
		// the www twin). And it names the path it copied, which the
		// original's host may serve under another (/~esr/jargon/ is
		// /jargon/): the page's own path there is the other likely twin.
		named = o + named[originEnd(named):]
		if own := o + p.URL[u.originEnd:]; own != named && !d.Observed(ID(own)) {
			out = append(out, own)
		}
	}
	if !d.Observed(ID(named)) {
		out = append(out, named)
	}
	return out
}

// maxClaimsScanned bounds the claims kept for each origin, which a
// decision on a rule reads.
const maxClaimsScanned = 4096

// claims reports whether stored page i claims url, of host key host, as
// its origin: by its URL, or by its host when url is on another host
// (a mirroring tool's note names the path it copied, which the mirror's
// original may serve under another: /~esr/jargon/ is /jargon/).
func (d *Detector) claimsURL(i uint32, url string) (Signal, bool) {
	c, ok := d.claims[i]
	if !ok {
		return 0, false
	}
	if c.url == ID(url) {
		return c.sig, true
	}
	return c.sig, c.path == "" && c.host == hostKey(url) && c.host != hostKey(d.urlOf(i))
}

// pageOriginal reports whether page p, found to duplicate stored page
// orig, is rather its original: orig claims p, and p does not claim orig.
func (d *Detector) pageOriginal(p *Page, orig uint32) bool {
	if len(d.claims) == 0 {
		return false
	}
	if _, ok := d.claimsURL(orig, p.URL); !ok {
		return false
	}
	if c, ok := claimOf(p); ok {
		ou := d.urlOf(orig)
		if c.url == ID(ou) || c.path == "" && c.host == hostKey(ou) {
			return false // each names the other: no evidence
		}
	}
	return true
}

// demote marks stored page i, observed as unique, a copy.
func (d *Detector) demote(i uint32) {
	r := d.recs.at(i)
	if r.dir&dupFlag != 0 {
		return
	}
	r.dir |= dupFlag
	for k := int32(r.dir &^ dupFlag); k >= 0; k = d.dirs.at(k).parent {
		d.dirs.at(k).unique--
		d.dirs.at(k).dup++
	}
	d.stats.Unique--
	d.stats.Near++
}

// sides returns the side a swap rewrites and the side it keeps, each as
// an origin and a directory.
func sides(r *Rule) (fromOrigin, fromDir, toOrigin, toDir string) {
	switch r.Kind {
	case SwapPrefix:
		return r.Origin, r.From, r.Origin, r.To
	case SwapHost:
		if r.From == "" {
			return r.Origin, "/", r.To, "/"
		}
		oe := originEnd(r.To)
		return r.Origin, r.From, r.To[:oe], r.To[oe:]
	}
	return "", "", "", ""
}

// choosable reports whether rule r has two sides to choose between.
func choosable(r *Rule) bool {
	return (r.Kind == SwapHost || r.Kind == SwapPrefix) && !r.Loop()
}

// lastModifiedSlack is how much later a copy must have changed than its
// original to count: a site's own pages are often regenerated together.
const lastModifiedSlack = 24 * 60 * 60

// choose weighs the evidence for swap r's direction.
func (d *Detector) choose(r *Rule) Choice {
	var c Choice
	fo, fd, to, td := sides(r)
	// What the pages of each side claim.
	count := func(origin, dir, otherOrigin, otherDir string, tally *[NumSignals]int32) {
		for _, i := range d.claimsByOrigin[origin] {
			u := d.parts(i)
			if !strings.HasPrefix(u.dirPath(), dir) {
				continue
			}
			cl := d.claims[i]
			switch {
			case cl.path != "" && origin == otherOrigin:
				if strings.HasPrefix(cl.path, otherDir) && !strings.HasPrefix(cl.path, dir) {
					tally[cl.sig]++
				}
			case cl.path == "" && origin != otherOrigin && cl.host == hostKey(otherOrigin) && cl.host != hostKey(origin):
				tally[cl.sig]++
			}
		}
	}
	count(fo, fd, to, td, &c.For)
	count(to, td, fo, fd, &c.Against)
	// Where they sit.
	df, dt := strings.Count(fd, "/"), strings.Count(td, "/")
	switch {
	case df > dt:
		c.For[SignalNesting]++
	case dt > df:
		c.Against[SignalNesting]++
	}
	// When they changed, for the pairs kept.
	for _, p := range r.Support {
		ci, ok1 := d.pageByID(p.Copy)
		oi, ok2 := d.pageByID(p.Original)
		if !ok1 || !ok2 {
			continue
		}
		lc, lo := int64(d.recs.at(ci).lm), int64(d.recs.at(oi).lm)
		if lc == 0 || lo == 0 {
			continue
		}
		// The page on the side r rewrites changed later: it is the copy.
		if !strings.HasPrefix(d.urlOf(ci), fo+fd) {
			lc, lo = lo, lc
		}
		switch {
		case lc > lo+lastModifiedSlack:
			c.For[SignalLastModified]++
		case lo > lc+lastModifiedSlack:
			c.Against[SignalLastModified]++
		}
	}
	for s := range NumSignals {
		if c.For[s] != 0 || c.Against[s] != 0 {
			c.ByEvidence = true
		}
	}
	return c
}

// reverseMargin is how much more evidence against a swap in force than for
// it reverses it: reversing queues again what it skipped.
const reverseMargin = 2

// inverseCandidate returns the candidate of the swap that undoes c's,
// made with c's evidence (each pair the other way) if new.
func (d *Detector) inverseCandidate(c *candidate) *candidate {
	inv, ok := inverse(&c.rule)
	if !ok {
		return nil
	}
	rw := rewriteOf{kind: inv.Kind, origin: inv.Origin, from: inv.From, to: inv.To}
	k := rw.key()
	if ic := d.cands[k]; ic != nil {
		return ic
	}
	if len(d.cands) >= maxCandidates {
		return nil
	}
	ic := newCandidate(k, Rule{Kind: inv.Kind, Origin: strings.Clone(inv.Origin), From: strings.Clone(inv.From), To: strings.Clone(inv.To)})
	for _, p := range c.rule.Support {
		ic.rule.Support = append(ic.rule.Support, Pair{Copy: p.Original, Original: p.Copy})
		ic.copies = append(ic.copies, p.Original)
	}
	ic.rule.Supports = c.rule.Supports
	d.cands[k] = ic
	d.candOrigins[ic.rule.Origin]++
	if ic.rule.Kind == SwapHost {
		d.hostCands[ic.rule.Origin] = append(d.hostCands[ic.rule.Origin], ic)
	} else {
		d.candList[ic.rule.Origin] = append(d.candList[ic.rule.Origin], ic)
	}
	return ic
}

// activateChosen activates ready candidate c, or its inverse when the
// evidence says c's canonical side is the copy.
func (d *Detector) activateChosen(c *candidate, pair Pair) *Rule {
	if !choosable(&c.rule) {
		return d.activate(c, pair)
	}
	ch := d.choose(&c.rule)
	if ch.Score() < 0 {
		if ic := d.inverseCandidate(c); ic != nil && ic.active == nil && !ic.rejected && ic.contra == 0 {
			c.rejected = true // the evidence says it would keep the copy
			if ic.rule.Supports < c.rule.Supports {
				ic.rule.Supports = c.rule.Supports
			}
			if ic.rule.Kind == SwapHost && !d.ready(ic) {
				// The other host's swap has the evidence of its own shape
				// to gather (a directory, not the whole host): its own
				// pairs make it a rule when they do.
				return nil
			}
			ic.rule.Choice = d.choose(&ic.rule)
			return d.activate(ic, Pair{Copy: pair.Original, Original: pair.Copy})
		}
	}
	c.rule.Choice = ch
	return d.activate(c, pair)
}

// reconsider weighs again the swaps in force whose canonical side holds
// page p (stored as idx), which claims another URL as its origin; one the
// evidence now says keeps the copy is reversed. It returns the rules
// withdrawn and learned, and the pages demoted.
func (d *Detector) reconsider(p *Page, u *urlParts) (withdrawn, learned []Rule, demoted []Demotion) {
	if _, ok := claimOf(p); !ok {
		return nil, nil, nil
	}
	for _, r := range d.all {
		if !choosable(r) {
			continue
		}
		_, _, to, td := sides(r)
		if to != u.origin() || !strings.HasPrefix(u.dirPath(), td) {
			continue
		}
		ch := d.choose(r)
		r.Choice.For, r.Choice.Against = ch.For, ch.Against
		if ch.Score() > -reverseMargin {
			continue
		}
		w, l, dm := d.reverse(r)
		if l == nil {
			continue
		}
		withdrawn = append(withdrawn, w)
		learned = append(learned, *l)
		demoted = append(demoted, dm...)
		break // d.all changed
	}
	return withdrawn, learned, demoted
}

// reverse replaces swap r, in force, with its inverse: r is withdrawn
// (without a contradiction: its pairs hold; their direction was wrong),
// and the pages observed on r's canonical side, now the copies, are
// demoted.
func (d *Detector) reverse(r *Rule) (Rule, *Rule, []Demotion) {
	var c *candidate
	for _, x := range d.cands {
		if x.active == r {
			c = x
			break
		}
	}
	if c == nil {
		return Rule{}, nil, nil
	}
	ic := d.inverseCandidate(c)
	if ic == nil || ic.active != nil || ic.contra > 0 {
		return Rule{}, nil, nil
	}
	ic.rejected = false
	r.Choice.Reversed = true
	d.retire(r)
	c.active, c.rejected = nil, true
	if ic.rule.Supports < r.Supports {
		ic.rule.Supports = r.Supports
	}
	ic.rule.Choice = d.choose(&ic.rule)
	ic.rule.Choice.Reversed = true
	pair := firstPair(ic.rule.Support)
	nr := d.activate(ic, pair)
	if nr == nil {
		// It cannot take r's place (it would hide its own original):
		// r stands.
		r.Withdrawn, r.Choice.Reversed = false, false
		d.withdrawn = d.withdrawn[:len(d.withdrawn)-1]
		d.addRule(r)
		c.active, c.rejected = r, false
		d.stats.Rules++
		d.stats.RulesByKind[r.Kind]++
		d.stats.Withdrawn--
		d.stats.WithdrawnByKind[r.Kind]--
		return Rule{}, nil, nil
	}
	var demoted []Demotion
	fo, fd, _, _ := sides(&ic.rule)
	for _, i := range d.byOrigin[fo] {
		u := d.parts(i)
		if !strings.HasPrefix(u.dirPath(), fd) || d.recs.at(i).dir&dupFlag != 0 {
			continue
		}
		url := u.url()
		orig, ok := ic.active.Rewrite(url)
		if !ok {
			continue
		}
		d.demote(i)
		demoted = append(demoted, Demotion{Copy: d.recs.at(i).id, CopyURL: url, Of: ID(orig), OfURL: orig})
	}
	w := *r
	w.Support = append([]Pair(nil), r.Support...)
	return w, nr, demoted
}

// A page whose mirroring tool's note names another host is a copy whose
// original the crawl may reach, and so are its neighbours, likely: until
// a swap of their directory is learned, a visit of their site takes one
// of them at a time (Unproven), while the originals they name are fetched
// first (Decision.Prefer). Without it a mirror answering first is crawled
// at full speed until the first pairs are in. Bounded: after
// maxMirroredWait such pages without a rule (the original is out of
// scope, or gone), they are crawled as any page.

// maxMirroredWait bounds the pages a mirrored directory is held back for.
const maxMirroredWait = 64

// minListingItems is the fewest links to other pages that make a page a
// listing (Page.Items).
const minListingItems = 5
