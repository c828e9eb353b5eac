package dedup

import (
	"slices"
	"strings"
)

// Rules taken from other hosts' proof, with no pair of their own. Once
// one rewrite, the very same but for its origin (drop ?utm_source, drop
// ?print=1, sort the query, /print/ → /, fold the path's case, drop the
// index file welcome.jsp), was learned on vouchHosts origins from
// evidence of their own and no pair anywhere contradicted it, a
// prior asks the next origin for one duplicate pair (prior.go): one
// copy fetched on every host. The canonical spelling can be asked
// first instead (DUST's validation by sampling, in one fetch that the
// crawl needs anyway): a URL the rewrite would change waits for its
// canonical URL (Awaits), which is fetched ahead as a probe; once that
// answers a page (2xx, not the host's soft 404) the rule is put in force
// on the origin (FromPrior) with no pair, its Prior saying how many
// origins vouched for it. A canonical URL that answers 404 or 410 (or
// is the host's not-found page) declines the rule on that origin: the
// copy is fetched, and its pair decides as before.
//
// Only a rewrite proven under the same name is taken so, never one of
// the kind under another name (a shop's ?orderby proves nothing of
// another's ?sort), never a parameter a pair anywhere showed to matter
// (?page=2, ?id=), nor a directory or host swap's other shapes, a
// segment rewrite or a number pattern. A rule taken so is withdrawn as
// any rule when a page at a URL it rewrites differs from its canonical
// page, and that withdrawal contradicts the rewrite everywhere: no
// origin takes it from the prior again.

// vouchHosts is how many origins must have learned a rewrite from their
// own pairs before another origin takes it with none; a rewrite with a
// name (an index file's, a parameter's) needs namedVouchHosts under
// that name, with its shape whatever the name proven on priorHosts.
const (
	vouchHosts      = priorHosts
	namedVouchHosts = 2
)

// maxVouchWaits bounds how many times copies on one origin wait for the
// canonical URL of one vouched rewrite (see Awaits), so that a canonical
// URL that never answers (disallowed, out of scope, failing) holds
// nothing back for good.
const maxVouchWaits = 8

// vouch is one rewrite, without its origin, and the origins that
// learned it from pairs of their own.
type vouch struct {
	rule         Rule     // the rewrite; Origin, evidence and counts unset
	key          uint64   // rule.Key() hashed, for the origins' records
	origins      []string // up to vouchHosts
	contradicted bool     // a pair somewhere contradicted it
	listed       bool     // in Detector.vouched
}

// vouchOrigin is what one origin did with one vouched rewrite.
type vouchOrigin struct {
	waits    int  // copies that waited for the canonical URL
	declined bool // the canonical URL answered that it does not exist, or the soft 404
}

// vouchKey identifies rule r's rewrite without its origin for the kinds
// a prior may put in force with no pair (0 for the others): the index
// file by its name, the rest as priorKey does.
func vouchKey(r *Rule) uint64 {
	switch r.Kind {
	case DropParam, DropParamValue, DropPathParam, SortParams, FoldCase, SwapPrefix:
		return priorKey(r)
	case DropIndex:
		return newHasher(keyPrior).byte(byte(r.Kind)).str(r.Name).byte(0).byte(1).sum()
	}
	return 0
}

// learnedVouch records that rule r was learned on its origin from pairs
// of its own.
func (d *Detector) learnedVouch(r *Rule) {
	k := vouchKey(r)
	if k == 0 || r.Supports == 0 {
		return
	}
	v := d.vouchOf(k, r)
	if len(v.origins) >= vouchHosts || containsStr(v.origins, r.Origin) {
		return
	}
	v.origins = append(v.origins, strings.Clone(r.Origin))
	if !v.listed && !v.contradicted && len(v.origins) >= v.hostsNeeded() {
		v.listed = true
		d.vouched = append(d.vouched, v)
	}
}

// vouchOf returns the record of rule r's rewrite, whose vouchKey is k,
// made if new.
func (d *Detector) vouchOf(k uint64, r *Rule) *vouch {
	if d.vouches == nil {
		d.vouches = make(map[uint64]*vouch)
	}
	v := d.vouches[k]
	if v == nil {
		v = &vouch{rule: Rule{Kind: r.Kind, Name: strings.Clone(r.Name), Value: strings.Clone(r.Value), Index: r.Index,
			From: strings.Clone(r.From), To: strings.Clone(r.To)}}
		v.key = newHasher(keyPrior).str(v.rule.Key()).sum()
		d.vouches[k] = v
	}
	return v
}

// hostsNeeded is how many origins must have learned v's rewrite: fewer
// for a name (an index file's, a parameter's) than for a shape without
// one, since the shape whatever the name must be proven too (shapeProven).
func (v *vouch) hostsNeeded() int {
	if v.rule.Kind == DropIndex || isParamKind(v.rule.Kind) {
		return namedVouchHosts
	}
	return vouchHosts
}

// shapeProven reports whether the shape of v's rewrite whatever its name
// (dropping an index file, a parameter of its kind) is proven on origins
// other than origin, when v has a name.
func (d *Detector) shapeProven(v *vouch, origin string) bool {
	switch r := &v.rule; {
	case r.Kind == DropIndex:
		return d.priorFrom(priorKey(r), origin) > 0
	case isParamKind(r.Kind):
		return d.priorFrom(paramShapeKey(r), origin) > 0
	}
	return true
}

// contradictedVouch records that a pair contradicted rule r's rewrite
// (on r's origin): no origin takes it from the prior from then on, even
// once other origins learn it (so the record is made if new).
func (d *Detector) contradictedVouch(r *Rule) {
	k := vouchKey(r)
	if k == 0 {
		return
	}
	v := d.vouchOf(k, r)
	if v.contradicted {
		return
	}
	v.contradicted = true
	if v.listed {
		d.vouched = slices.DeleteFunc(d.vouched, func(o *vouch) bool { return o == v })
	}
}

// vouchFor returns the vouched rewrite that would change url on its
// origin (origin), the canonical URL it leads to with the rules in force
// there, and the key of the origin's record of it (vouchAt; the record
// is made only when the origin does something with the rewrite, not for
// every host merely looked at). ok is false when none applies.
func (d *Detector) vouchFor(url, origin string) (v *vouch, canon string, st uint64, ok bool) {
	for _, v := range d.vouched {
		if !v.applies(url, len(origin)) || containsStr(v.origins, origin) {
			continue
		}
		r := &v.rule
		if isParamKind(r.Kind) && d.matters[r.Name] {
			continue
		}
		if !d.shapeProven(v, origin) {
			continue
		}
		rw := rewriteOf{kind: r.Kind, origin: origin, name: r.Name, value: r.Value, index: r.Index, from: r.From, to: r.To}
		if c := d.cands[rw.key()]; c != nil && (c.active != nil || c.rejected || c.contra > 0) {
			continue
		}
		st := vouchAtKey(origin, v)
		if o := d.vouchOrigins[st]; o != nil && o.declined {
			continue
		}
		t := *r
		t.Origin = origin
		next, changed := t.Rewrite(url)
		if !changed || next == "" || next == url {
			continue
		}
		if c, _, covered := d.rewrite(next); covered && c != "" {
			next = c
		}
		return v, next, st, true
	}
	return nil, "", 0, false
}

// applies reports cheaply whether v's rewrite may change url (its origin
// ends at oe); Rule.Rewrite decides.
func (v *vouch) applies(url string, oe int) bool {
	path := url[oe:]
	q := strings.IndexByte(path, '?')
	query := ""
	if q >= 0 {
		path, query = path[:q], path[q+1:]
	}
	r := &v.rule
	switch r.Kind {
	case DropParam, DropParamValue:
		return strings.Contains(query, r.Name)
	case SortParams:
		return strings.IndexByte(query, '&') >= 0
	case DropPathParam:
		return strings.IndexByte(path, ';') >= 0 && strings.Contains(path, r.Name)
	case SwapPrefix:
		return strings.HasPrefix(path, r.From)
	case DropIndex:
		// A directory's index file, not a script given arguments
		// (/index.php?cat=2 is not /?cat=2 on every host).
		return q < 0 && strings.HasSuffix(path, "/"+r.Name)
	case FoldCase:
		for i := 0; i < len(path); i++ {
			if c := path[i]; 'A' <= c && c <= 'Z' {
				return true
			}
		}
	}
	return false
}

// vouchAtKey is the key of origin's record of vouched rewrite v.
func vouchAtKey(origin string, v *vouch) uint64 {
	return newHasher(keyPrior).str(origin).byte(0).u64(v.key).sum()
}

// vouchAt returns the origin's record whose key is k (vouchAtKey), made
// if new.
func (d *Detector) vouchAt(k uint64) *vouchOrigin { return entry(&d.vouchOrigins, k) }

// FromPrior puts in force on url's origin the rule of a rewrite that
// other origins proved from their own pairs (see vouch.go), when that
// rewrite changes url and its canonical URL answered a page: url is a
// copy, and the crawler skips it as under any rule (Canonical covers it
// from now on). It returns a copy of the rule, with no pairs and Prior
// the origins that vouched for it, for the crawler to record; ok is
// false when no rule was put in force. A canonical URL that answered 404
// or 410, or the host's soft 404, declines the rewrite on that origin.
func (d *Detector) FromPrior(url string) (r Rule, ok bool) {
	if len(d.vouched) == 0 || d.evidenceMin == 0 {
		return Rule{}, false
	}
	origin := url[:originEnd(url)]
	for range len(d.vouched) {
		v, canon, st, found := d.vouchFor(url, origin)
		if !found {
			return Rule{}, false
		}
		id := ID(canon)
		if _, missing := d.missing[id]; missing {
			d.vouchAt(st).declined = true
			continue
		}
		i, observed := d.pageByID(id)
		if !observed {
			return Rule{}, false // Awaits asks for it first
		}
		if d.isSoft404(i) {
			d.vouchAt(st).declined = true
			continue
		}
		if d.recs.at(i).dir&dupFlag != 0 {
			// It answered a copy of another page (a host that ignores
			// the query answers /?cat=2 with its home page): it is not
			// shown to be a page of its own, and url's own pair decides.
			return Rule{}, false
		}
		return d.takeVouched(v, origin), true
	}
	return Rule{}, false
}

// takeVouched puts v's rewrite in force on origin with no pair.
func (d *Detector) takeVouched(v *vouch, origin string) Rule {
	t := v.rule
	t.Origin = origin
	c := d.candidateOf(t)
	rule := new(Rule)
	*rule = c.rule
	rule.Support, rule.Supports, rule.Contradictions, rule.Covered = nil, 0, nil, 0
	rule.Prior = len(v.origins)
	d.addRule(rule)
	c.active = rule
	d.noteReps(rule.Origin)
	d.stats.Rules++
	d.stats.RulesByKind[rule.Kind]++
	return *rule
}

// candidateOf returns the candidate of rule t's rewrite on its origin,
// made (and kept, while there is room) if new: a rule in force with no
// pair of its own (taken from the prior, or restored) is kept as a
// candidate so that a pair that contradicts it finds and withdraws it.
func (d *Detector) candidateOf(t Rule) *candidate {
	rw := rewriteOf{kind: t.Kind, origin: t.Origin, name: t.Name, value: t.Value, index: t.Index, from: t.From, to: t.To}
	k := rw.key()
	c := d.cands[k]
	if c == nil {
		t.Origin = strings.Clone(t.Origin)
		c = newCandidate(k, t)
		if len(d.cands) < maxCandidates {
			d.cands[k] = c
			d.candOrigins[c.rule.Origin]++
			d.candList[c.rule.Origin] = append(d.candList[c.rule.Origin], c)
		}
	}
	return c
}

// awaitsVouched reports whether url waits for the canonical URL of a
// vouched rewrite (see Awaits and FromPrior): a URL not fetched yet,
// asked for through wait, or one the crawl knows and has not fetched
// (later in this visit, or queued), at most maxVouchWaits times an
// origin and rewrite.
func (d *Detector) awaitsVouched(url string, wait func(canon string) bool) bool {
	if len(d.vouched) == 0 || d.evidenceMin == 0 {
		return false
	}
	origin := url[:originEnd(url)]
	_, canon, st, ok := d.vouchFor(url, origin)
	if !ok {
		return false
	}
	if o := d.vouchOrigins[st]; o != nil && o.waits >= maxVouchWaits {
		return false
	}
	id := ID(canon)
	if _, missing := d.missing[id]; missing {
		d.vouchAt(st).declined = true
		return false
	}
	if d.Observed(id) {
		return false // FromPrior decides
	}
	wait(canon)
	d.vouchAt(st).waits++
	return true
}
