package dedup

import (
	"slices"
	"strings"
)

// Evidence shared across hosts. A shape of duplication (dropping
// ?utm_source, a printer-friendly /print/ copy, a session id, the order
// of a query) that one host shows, other hosts show too: once rules of
// one shape were learned on priorHosts origins, each from its own full
// evidence, and no pair anywhere contradicted the shape, the next origin
// needs one duplicate pair of it instead of Config.MirrorEvidence. The
// rule says so (Rule.Prior), and a pair that contradicts it withdraws it
// as any rule.
//
// Parameters that matter are kept out: a parameter name that any pair,
// on any origin, showed to change the page (?page=2 against ?page=3,
// ?id=) never has a prior, whatever else was learned of it.

// priorHosts is how many origins must have learned a shape before it
// needs one pair on the next.
const priorHosts = 3

// prior is what the crawl knows of one shape across origins.
type prior struct {
	origins      []string // origins that learned it, up to priorHosts
	contradicted bool     // a pair somewhere contradicted it
}

// priorKey identifies rule r's rewrite without its origin, or 0 for
// kinds that are one host's own (host swaps, number patterns).
func priorKey(r *Rule) uint64 {
	switch r.Kind {
	case SwapHost:
		// One host's own, but for the commonest alias of all: the www
		// twin (www.x.org for x.org, or the other way), the whole host.
		// Which way is each host's own choice (or the evidence's, see
		// original.go): that hosts answer on both names is the shape.
		if isWWWTwin(r) {
			return newHasher(keyPrior).byte(byte(r.Kind)).str("www-twin").sum()
		}
		return 0
	case NumberPattern:
		return 0
	case DropIndex:
		// The shape, not the name: which file a host serves as its
		// directories' index is its software's choice (index.php,
		// default.aspx, welcome.jsp), while serving one at all is what
		// other hosts proved. The one pair the next host needs shows
		// its name.
		return newHasher(keyPrior).byte(byte(r.Kind)).sum()
	}
	value := ""
	if r.Kind == DropParamValue {
		value = r.Value
	}
	return newHasher(keyPrior).byte(byte(r.Kind)).str(r.Name).byte(0).str(value).byte(0).
		byte(byte(r.Index)).str(r.From).byte(0).str(r.To).sum()
}

// isWWWTwin reports whether host swap r swaps a whole host for its www
// twin (www.x.org for x.org, or the other way).
func isWWWTwin(r *Rule) bool {
	if r.Kind != SwapHost || r.From != "" {
		return false
	}
	a, b := r.Origin, r.To
	ha, hb := a[strings.Index(a, "://")+3:], b[strings.Index(b, "://")+3:]
	return "www."+ha == hb || ha == "www."+hb
}

func isParamKind(k RuleKind) bool {
	return k == DropParam || k == DropParamValue || k == DropPathParam
}

// paramShapeKey identifies a parameter rule's kind alone (0 for other
// kinds), whatever the parameter's name: that one parameter (with one value, or
// any) gives the same page as the URL without it is a shape hosts share
// under names of their own (?print=1, ?view=printable, ?sid=, ?s=). Such
// a prior is weaker than one of the same name: the next origin needs
// shapePairs pairs of it, and drops the value it showed only (unless
// the pairs showed two values, or a listing's very items: see ready).
// A query parameter dropped with its value and one dropped whatever its
// value are one shape: which of the two a host's rule is depends on the
// values its pairs happened to show (a listing's sort order shown first
// under ?sort=price, one value, then under ?sort=newest).
func paramShapeKey(r *Rule) uint64 {
	if !isParamKind(r.Kind) {
		return 0
	}
	k := r.Kind
	if k == DropParamValue {
		k = DropParam
	}
	return newHasher(keyPrior).byte(byte(k)).byte(1).sum()
}

// shapePairs is what a parameter rule needs with a prior of its kind
// only: one pair, as with a prior of its name, since the rule it makes
// keeps the value the pair showed and any page that differs withdraws it.
const shapePairs = 1

// wwwTwinPairs is what a whole-host swap for the www twin needs, its
// home page among the pairs, without a prior.
const wwwTwinPairs = 2

// priorOf returns how many other origins learned c's shape, if enough
// did and nothing contradicted it (0 otherwise), and whether they
// learned it under another parameter name (exact false).
func (d *Detector) priorOf(c *candidate) (n int, exact bool) {
	if len(d.priors) == 0 {
		return 0, false
	}
	if isParamKind(c.rule.Kind) && d.matters[c.rule.Name] {
		return 0, false
	}
	ks := c.shapes
	if n := d.priorFrom(ks[0], c.rule.Origin); n > 0 {
		return n, true
	}
	return d.priorFrom(ks[1], c.rule.Origin), false
}

// learnedElsewhere returns how many origins other than c's learned its
// shape from their own evidence, fewer than priorHosts, if nothing
// contradicted it (0 otherwise). Each lowers the pairs the next origin
// needs by one (see need): the first host of a shape pays the full
// evidence, the second one pair less, and from the third on the prior
// asks for one. The first hosts of a shape are met one after another
// (on lidi bench precision a shape's first rule is learned a second or
// more before its second origin has a pair), so evidence pooled at the
// same time rarely spares them; what one host proved does.
func (d *Detector) learnedElsewhere(c *candidate) int {
	if len(d.priors) == 0 || isWWWTwin(&c.rule) || isParamKind(c.rule.Kind) && d.matters[c.rule.Name] {
		return 0 // a www twin has evidence rules of its own (need)
	}
	for _, k := range c.shapes {
		p := d.priors[k]
		if k == 0 || p == nil || p.contradicted {
			continue
		}
		n := 0
		for _, o := range p.origins {
			if o != c.rule.Origin {
				n++
			}
		}
		if n > 0 {
			return n
		}
	}
	return 0
}

// priorFrom returns how many origins other than origin learned shape k,
// if enough did and nothing contradicted it.
func (d *Detector) priorFrom(k uint64, origin string) int {
	p := d.priors[k]
	if k == 0 || p == nil || p.contradicted || len(p.origins) < priorHosts {
		return 0
	}
	for _, o := range p.origins {
		if o == origin {
			return 0 // learned here already
		}
	}
	return len(p.origins)
}

// learnedShape records that rule r was learned on its origin, and
// reports whether that put a prior of its shape in force (its
// priorHosts-th origin).
func (d *Detector) learnedShape(r *Rule) (inForce bool) {
	for _, k := range [2]uint64{priorKey(r), paramShapeKey(r)} {
		if k == 0 {
			continue
		}
		p := d.priorAt(k)
		if len(p.origins) < priorHosts && !containsStr(p.origins, r.Origin) {
			p.origins = append(p.origins, strings.Clone(r.Origin))
			inForce = inForce || len(p.origins) == priorHosts && !p.contradicted
		}
	}
	return inForce
}

// Candidates waiting when a prior comes into force. The hosts that show a
// shape early meet it at about the same time: while the first ones pay
// their full evidence, the next have a pair or two already, and the
// prior, when it comes, asks them for one. So each candidate is kept under
// its shape from its first pair (waitingFor), and when a prior comes into
// force those that now have the evidence it asks for become rules at
// once (sweepWaiting), rather than at their next pair, which would be one
// more copy fetched: the second name of a host whose home page was its
// first pair, a second index alias, a second case.

// maxWaiting bounds the candidates kept per shape while they wait.
const maxWaiting = 64

// noteWaiting records candidate c, which got its first pair, under its
// shape.
func (d *Detector) noteWaiting(c *candidate) {
	k := poolKey(c)
	if k == 0 || c.rule.Supports != 1 {
		return
	}
	if d.waiting == nil {
		d.waiting = make(map[uint64][]*candidate)
	}
	ws := d.waiting[k]
	if len(ws) >= maxWaiting {
		// Keep those still waiting: a rule, a rejected or contradicted
		// candidate waits for nothing.
		ws = slices.DeleteFunc(ws, func(o *candidate) bool { return o.active != nil || o.rejected || o.contra > 0 })
		if len(ws) >= maxWaiting {
			d.waiting[k] = ws
			return
		}
	}
	d.waiting[k] = append(ws, c)
}

// sweepWaiting makes rules of the candidates waiting under c's shape that
// the prior just put in force makes ready; they are reported with the
// decision's rules (Detector.pooled).
func (d *Detector) sweepWaiting(c *candidate) {
	k := poolKey(c)
	ws := d.waiting[k]
	d.waiting[k] = nil // each is made a rule or left to its next pair, once
	for _, o := range ws {
		if o == c || o.active != nil || o.rejected || o.contra > 0 || len(o.rule.Support) == 0 || d.otherWayActive(o) || !d.ready(o) {
			continue
		}
		if r := d.activateChosen(o, o.rule.Support[len(o.rule.Support)-1]); r != nil {
			d.pooled = append(d.pooled, *r)
		}
	}
}

// otherWayActive reports whether candidate c is a swap whose other way is
// the rule (a pair across two hosts, or two sibling directories,
// supports both: see bothWays).
func (d *Detector) otherWayActive(c *candidate) bool {
	rw := rewriteOf{kind: c.rule.Kind, origin: c.rule.Origin, from: c.rule.From, to: c.rule.To}
	back, ok := bothWays(&rw)
	if !ok {
		return false
	}
	b := d.cands[back.key()]
	return b != nil && b.active != nil
}

// contradictedShape records that a pair contradicted a rewrite of c's
// shape: it has no prior from then on, and a parameter it drops is one
// that matters (the shape of its kind whatever the name keeps its prior
// for other names).
func (d *Detector) contradictedShape(c *candidate) {
	d.contradictedVouch(&c.rule)
	if isParamKind(c.rule.Kind) {
		if d.matters == nil {
			d.matters = make(map[string]bool)
		}
		d.matters[strings.Clone(c.rule.Name)] = true
	}
	for i, k := range c.shapes {
		// A parameter's contradiction is of its name (now one that
		// matters) and value, not of the shape whatever the name:
		// priorOf and pooledOf leave the names that matter out of that
		// one. One ?page=2 anywhere ended it for every parameter of
		// its kind, and the hosts after paid their full evidence.
		switch {
		case k == 0:
		case i == 0 || !isParamKind(c.rule.Kind):
			d.priorAt(k).contradicted = true
		case c.active != nil:
			// Its rule is withdrawn: its origin no longer vouches.
			p := d.priorAt(k)
			p.origins = slices.DeleteFunc(p.origins, func(o string) bool { return o == c.rule.Origin })
		}
	}
}

// priorAt returns the prior of shape k, made if new.
func (d *Detector) priorAt(k uint64) *prior { return entry(&d.priors, k) }

// entry returns the value of key k in *m, made (with *m) if new.
func entry[V any](m *map[uint64]*V, k uint64) *V {
	if *m == nil {
		*m = make(map[uint64]*V)
	}
	v := (*m)[k]
	if v == nil {
		v = new(V)
		(*m)[k] = v
	}
	return v
}

func containsStr(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// need returns the pairs candidate c needs before it is a rule.
func (d *Detector) need(c *candidate) int {
	switch n, exact := d.priorOf(c); {
	case n == 0 && c.home && isWWWTwin(&c.rule):
		// The commonest alias of all (crawlers since Heritrix strip
		// "www." by default): a host whose home page its www twin
		// answers alike needs one more pair, and its twins observed
		// are compared with it all the same (compareTwins). Pooled,
		// it needs one pair less, as other shapes do: the home page
		// pair, shown by other hosts at once.
		if d.pooledOf(c) > 0 {
			return min(wwwTwinPairs-1, d.evidenceMin)
		}
		return min(wwwTwinPairs, d.evidenceMin)
	case n == 0:
		need := d.evidenceMin
		if d.pooledOf(c) > 0 {
			need = min(pooledPairs, need)
		}
		if k := d.learnedElsewhere(c); k > 0 {
			need = min(need, max(d.evidenceMin-k, 1))
		}
		return need
	case exact:
		return 1
	default:
		return min(shapePairs, d.evidenceMin)
	}
}

// noteMatters records the parameter that alone tells apart two URLs of
// one path whose pages differ: it matters (see priorOf).
func (d *Detector) noteMatters(a, b *urlParts) {
	qa, _ := a.query()
	qb, _ := b.query()
	if qa == qb || a.origin() != b.origin() || a.dirPath() != b.dirPath() || a.file() != b.file() {
		return
	}
	n, name := 0, ""
	eachDifference(qa, qb, func(nm, _, _ string) { n, name = n+1, nm })
	if n != 1 || d.matters[name] {
		return
	}
	if d.matters == nil {
		d.matters = make(map[string]bool)
	}
	d.matters[strings.Clone(name)] = true
}

// Evidence pooled across origins. Early in a crawl the first origins of a
// shape meet it at the same time, before any has learned it: each would
// pay Config.MirrorEvidence pairs, and none would be a prior for the
// others. So a shape that priorHosts origins show at once, each with
// pooledPairs pairs and none contradicted (learned there, or a candidate
// still waiting), needs pooledPairs on each: priorHosts*pooledPairs pairs
// on as many origins instead of priorHosts*MirrorEvidence. The rule says
// how many other origins vouched for it (Rule.Prior). A parameter shown
// to matter anywhere is never pooled (priorOf's rule).

// pooledPairs is what a candidate needs while its shape is pooled.
const pooledPairs = 2

// maxPending bounds the candidates kept per shape for pooling: once
// priorHosts origins learned it, the prior applies instead.
const maxPending = 16

// poolKey returns the shape candidate c is pooled under (0 for none):
// a parameter rule's kind whatever its name, another kind's rewrite.
func poolKey(c *candidate) uint64 {
	ks := c.shapes
	if isParamKind(c.rule.Kind) {
		return ks[1]
	}
	return ks[0]
}

// notePending records that candidate c reached pooledPairs pairs, or
// for a www twin its home page pair (see pooledNeed).
func (d *Detector) notePending(c *candidate) {
	k := poolKey(c)
	if k == 0 || c.rule.Supports != pooledPairs && !(c.home && isWWWTwin(&c.rule)) || len(d.pending[k]) >= maxPending || slices.Contains(d.pending[k], c) {
		return
	}
	if d.pending == nil {
		d.pending = make(map[uint64][]*candidate)
	}
	d.pending[k] = append(d.pending[k], c)
}

// pooledOf returns how many origins other than c's show its shape with
// pooledPairs pairs or more, if priorHosts-1 do and nothing contradicted
// the shape (0 otherwise).
func (d *Detector) pooledOf(c *candidate) int {
	k := poolKey(c)
	cs := d.pending[k]
	if k == 0 || len(cs) == 0 || isParamKind(c.rule.Kind) && d.matters[c.rule.Name] {
		return 0
	}
	// Distinct origins, on the stack: this runs for every pair a
	// candidate gets (need). A www twin's two names are one host: its
	// swap is a candidate both ways.
	twin := isWWWTwin(&c.rule)
	site := func(origin string) uint64 {
		if twin {
			return hostKey(origin)
		}
		return newHasher(keyHost).str(origin).sum()
	}
	own := site(c.rule.Origin)
	var buf [priorHosts + maxPending]uint64
	others := buf[:0]
	if p := d.priors[k]; p != nil {
		if p.contradicted {
			return 0
		}
		for _, o := range p.origins {
			if h := site(o); h != own && !slices.Contains(others, h) {
				others = append(others, h)
			}
		}
	}
	for _, o := range cs {
		h := site(o.rule.Origin)
		if h == own || o.rejected || o.contra > 0 || slices.Contains(others, h) {
			continue
		}
		if isParamKind(o.rule.Kind) && d.matters[o.rule.Name] {
			continue
		}
		others = append(others, h)
	}
	if len(others) < priorHosts-1 {
		return 0
	}
	return len(others)
}

// completePending makes rules of the candidates waiting under c's shape
// on other origins that the pooled evidence now makes ready, once c
// became a rule from it; they are reported with the next decision's
// rules (Detector.pooled).
func (d *Detector) completePending(c *candidate) {
	for _, o := range d.pending[poolKey(c)] {
		if o == c || o.active != nil || o.rejected || o.contra > 0 || len(o.rule.Support) == 0 || d.otherWayActive(o) || !d.ready(o) {
			continue
		}
		if r := d.activateChosen(o, o.rule.Support[len(o.rule.Support)-1]); r != nil {
			d.pooled = append(d.pooled, *r)
		}
	}
}
