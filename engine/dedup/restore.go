package dedup

import "slices"

// Restore rebuilds the detector's state after a restart: it observes the
// page again and forgets the verdict. Restore the pages a store kept in
// the order they were first observed, then call RestoreRule and
// RestoreSoft404 for what it kept; the detector then decides as it would
// have without the restart. Rules that the replay recreates are not
// duplicated.
func (d *Detector) Restore(p Page) {
	if p.Status == 404 || p.Status == 410 { // not found, gone
		d.NotFound(p.ID)
	}
	if IsProbe(p.URL) {
		d.Probed(p)
		return
	}
	d.Observe(p)
}

// RestoreRule reinstates a rule kept by a store (a withdrawn one stays
// withdrawn). A rule with the same Key already in place is left as it is.
func (d *Detector) RestoreRule(r Rule) {
	key := r.Key()
	for _, o := range d.all {
		if o.Key() == key {
			if r.Withdrawn {
				d.withdraw(o, firstPair(r.Contradictions))
			}
			return
		}
	}
	if r.Withdrawn {
		// A withdrawal contradicts the rewrite everywhere (vouch.go);
		// a rule taken from the prior with no pair is not recreated by
		// the replay, so its withdrawal would be forgotten.
		d.contradictedVouch(&r)
		return
	}
	// The replay may have learned the same swap the other way round: two
	// pages fetched within one millisecond come back in either order, and
	// the copy of a pair is the one observed second. The stored rule is the
	// one the crawl acted on (its URLs were skipped under it), and the two
	// together would send URLs back and forth: the replay's gives way.
	if inv, ok := inverse(&r); ok {
		for _, o := range slices.Clone(d.all) {
			if o.Key() == inv.Key() {
				d.removeRule(o)
				for _, c := range d.cands {
					if c.active == o {
						c.active = nil
					}
				}
				d.stats.Rules--
				d.stats.RulesByKind[o.Kind]--
			}
		}
	}
	c := r
	c.Support = append([]Pair(nil), r.Support...)
	c.Contradictions = nil
	d.addRule(&c)
	d.stats.Rules++
	if vouchKey(&c) != 0 {
		// As takeVouched keeps it: a pair that contradicts the rule
		// after the restart finds it through its candidate.
		t := c
		t.Support = nil
		d.candidateOf(t).active = &c
	}
	d.stats.RulesByKind[c.Kind]++
}

// inverse returns the swap that undoes r (a prefix or host swap), for
// the rule that would send r's canonical URLs back to the URLs it
// rewrites.
func inverse(r *Rule) (Rule, bool) {
	switch r.Kind {
	case SwapPrefix:
		return Rule{Kind: SwapPrefix, Origin: r.Origin, From: r.To, To: r.From}, true
	case SwapHost:
		rw := rewriteOf{kind: SwapHost, origin: r.Origin, from: r.From, to: r.To}
		back := rw.reversed()
		return Rule{Kind: SwapHost, Origin: back.origin, From: back.from, To: back.to}, true
	}
	return Rule{}, false
}

func firstPair(ps []Pair) Pair {
	if len(ps) > 0 {
		return ps[0]
	}
	return Pair{}
}
