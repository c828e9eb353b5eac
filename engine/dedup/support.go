package dedup

import (
	"slices"
	"strings"
)

// support records that the duplicate pair (dup, orig) supports each
// rewrite relating their URLs, and returns the rules it completes. items
// reports that the pair is of listings of the same items whose texts
// differ (Detector.reordered).
//
// A host swap is supported both ways: which of two mirrors' copies of a
// page came first is the order the crawl met them, and a crawl that
// visits both hosts at once meets copies on each; so a pair supports the
// swap of either host for the other, and the first direction that is
// ready (its host's home page a copy, or its copies many) is the rule.
//
// Two hosts that a host swap in force already relates are one site: a pair
// across them (www.x/a?sid=1 a copy of x/a, x a mirror of www.x) is
// aligned as if both were on the swap's host, so that what else tells
// the two URLs apart (the session id) is learned there.
func (d *Detector) support(dup, orig uint32, du *urlParts, items bool) []Rule {
	ou := d.parts(orig)
	pair := Pair{Copy: d.recs.at(dup).id, Original: d.recs.at(orig).id}
	var learned []Rule
	if a, b, ok := d.onSwappedHost(du, &ou); ok {
		d.alignments(&a, &b, func(rw *rewriteOf) {
			if rw.kind != SwapHost {
				if r := d.supportOne(rw, pair, &a, dup, items); r != nil {
					learned = append(learned, *r)
				}
			}
		})
		return d.withPooled(learned)
	}
	d.alignments(du, &ou, func(rw *rewriteOf) {
		if r := d.supportOne(rw, pair, du, dup, items); r != nil {
			learned = append(learned, *r)
		}
		if back, ok := bothWays(rw); ok {
			if r := d.supportOne(&back, Pair{Copy: pair.Original, Original: pair.Copy}, &ou, orig, items); r != nil {
				learned = append(learned, *r)
			}
		}
	})
	return d.withPooled(learned)
}

// bothWays returns the rewrite that undoes rw when a pair supports both:
// a host swap, and a swap of two sibling directories (neither holds the
// other: /manual/ and /manual-old/, not /print/ and /, nor a loop), which
// a crawl that meets both at once meets copies in each of. Which side
// the rule keeps is the evidence's choice (see choose), or arrival's.
func bothWays(rw *rewriteOf) (rewriteOf, bool) {
	switch {
	case rw.kind == SwapHost:
		return rw.reversed(), true
	case rw.kind == SwapPrefix && !strings.HasPrefix(rw.from, rw.to) && !strings.HasPrefix(rw.to, rw.from):
		return rewriteOf{kind: SwapPrefix, origin: rw.origin, from: rw.to, to: rw.from, sole: rw.sole}, true
	}
	return rewriteOf{}, false
}

// withPooled returns learned with the rules other origins' candidates
// became from the pooled evidence of this pair (see completePending).
func (d *Detector) withPooled(learned []Rule) []Rule {
	if len(d.pooled) > 0 {
		learned = append(learned, d.pooled...)
		d.pooled = d.pooled[:0]
	}
	return learned
}

// onSwappedHost returns URLs a and b moved onto one origin, when a whole-host
// swap in force rewrites the origin of one to the other's.
func (d *Detector) onSwappedHost(a, b *urlParts) (urlParts, urlParts, bool) {
	ao, bo := a.origin(), b.origin()
	if ao == bo {
		return urlParts{}, urlParts{}, false
	}
	if or := d.origins[bo]; or != nil && or.host != nil && or.host.To == ao {
		return *a, splitURL(ao + b.url()[b.originEnd:]), true
	}
	if or := d.origins[ao]; or != nil && or.host != nil && or.host.To == bo {
		return splitURL(bo + a.url()[a.originEnd:]), *b, true
	}
	return urlParts{}, urlParts{}, false
}

// supportOne records that pair, whose copy is stored page cp at cu,
// supports rewrite rw, and returns the rule it completes, if any. items
// reports that the pair is of listings of the same items whose texts
// differ (Detector.reordered).
func (d *Detector) supportOne(rw *rewriteOf, pair Pair, cu *urlParts, cp uint32, items bool) *Rule {
	k := rw.key()
	c := d.cands[k]
	if c == nil {
		if len(d.cands) >= maxCandidates {
			return nil
		}
		r := Rule{Kind: rw.kind, Origin: strings.Clone(rw.origin), Name: strings.Clone(rw.name), Index: rw.index, From: strings.Clone(rw.from), To: strings.Clone(rw.to)}
		if rw.kind == DropParamValue {
			r.Value = strings.Clone(rw.value)
		}
		c = newCandidate(k, r)
		d.cands[k] = c
		d.candOrigins[c.rule.Origin]++
		if rw.kind != SwapHost {
			d.candList[c.rule.Origin] = append(d.candList[c.rule.Origin], c)
		} else {
			d.hostCands[c.rule.Origin] = append(d.hostCands[c.rule.Origin], c)
			d.compareTwins(c)
		}
	}
	if c.active != nil || c.rejected || c.contra > 0 || slices.Contains(c.copies, pair.Copy) {
		return nil
	}
	if d.otherWayActive(c) {
		return nil // the other way is the rule
	}
	if len(c.copies) < maxEvidenceIDs {
		c.copies = append(c.copies, pair.Copy)
	}
	c.rule.Supports++
	if len(c.rule.Support) < maxEvidenceIDs {
		c.rule.Support = append(c.rule.Support, pair)
	}
	switch rw.kind {
	case DropIndex, FoldCase, DropParam, DropParamValue, SortParams, DropPathParam:
		// Evidence on as many paths: one page's aliases are no rule.
		if pk := evidencePath(rw.kind, cu); !slices.Contains(c.paths, pk) && len(c.paths) < d.evidenceMin {
			c.paths = append(c.paths, pk)
		}
		if (rw.kind == DropParam || rw.kind == DropPathParam) && len(c.values) < 2 && !slices.Contains(c.values, rw.value) {
			c.values = append(c.values, strings.Clone(rw.value))
		}
		c.items = c.items || items && rw.kind == DropParam
	case DropSegments, ReplaceSegments:
		if ck := newHasher(keyRule).str(rw.context).sum(); len(c.contexts) < 2 && !slices.Contains(c.contexts, ck) {
			c.contexts = append(c.contexts, ck)
		}
	case SwapHost:
		if cu.dirPath() == hostDir(rw.from) && (cu.rest == "" || indexNames[cu.rest]) {
			c.home = true
		}
		if dir := int32(d.recs.at(cp).dir &^ dupFlag); len(c.dirs) < 2 && !slices.Contains(c.dirs, dir) {
			c.dirs = append(c.dirs, dir)
		}
		c.under = commonDir(c.under, cu.dirPath())
	}
	d.notePending(c)
	d.noteWaiting(c)
	if !d.ready(c) {
		return nil
	}
	r := d.activateChosen(c, pair)
	if r != nil && r.Prior > 0 && r.Supports <= pooledPairs {
		d.completePending(c)
	}
	return r
}

// evidencePath returns the key of the path a copy at u gives evidence
// on for a rule of kind k, which needs its evidence on several paths.
func evidencePath(k RuleKind, u *urlParts) uint64 {
	switch k {
	case DropIndex:
		return sitePathKeyOfPath(u, strings.ToLower(u.dirPath()))
	case FoldCase:
		return sitePathKeyOfPath(u, strings.ToLower(u.dirPath()+u.file()))
	case DropPathParam:
		return sitePathKeyOfPath(u, u.dirPath()+withoutPathParams(u.file()))
	}
	return sitePathKey(u)
}

// commonDir returns the deepest directory path holding both a ("" for
// none yet) and b.
func commonDir(a, b string) string {
	if a == "" {
		return strings.Clone(b)
	}
	n := 0
	for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
		if a[i] == '/' {
			n = i + 1
		}
	}
	return a[:n]
}

// hostDir is the directory a host swap covers: its From, or the whole
// host.
func hostDir(from string) string {
	if from == "" {
		return "/"
	}
	return from
}
