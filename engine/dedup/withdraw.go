package dedup

// contradict records that the pages at URLs a and b (ids ia and ib) hold
// different content: every candidate relating them is contradicted for
// good, and an active rule relating them is withdrawn (returned).
func (d *Detector) contradict(a, b *urlParts, ia, ib uint64) []Rule {
	d.noteMatters(a, b)
	if d.candOrigins[a.origin()] == 0 && d.candOrigins[b.origin()] == 0 {
		return nil
	}
	var out []Rule
	note := func(rw *rewriteOf) {
		if !rw.sole {
			return
		}
		c := d.cands[rw.key()]
		if c == nil {
			return
		}
		c.contra++
		d.contradictedShape(c)
		if c.active != nil {
			out = append(out, d.withdraw(c.active, Pair{Copy: ia, Original: ib}))
		}
	}
	if ma, mb, ok := d.onSwappedHost(a, b); ok {
		// As support aligns them: on the swap's host.
		d.alignments(&ma, &mb, note)
		d.alignments(&mb, &ma, note)
	}
	d.alignments(a, b, note)
	d.alignments(b, a, note)
	return out
}

// withdraw deactivates rule r, contradicted by pair, and returns a copy.
func (d *Detector) withdraw(r *Rule, pair Pair) Rule {
	r.Contradictions = append(r.Contradictions, pair)
	d.retire(r)
	found := false
	for _, c := range d.cands {
		if c.active == r {
			c.active = nil
			c.contra++
			d.contradictedShape(c)
			found = true
		}
	}
	if !found {
		// A rule with no candidate kept (the table of candidates was
		// full): its rewrite is contradicted everywhere all the same.
		d.contradictedVouch(r)
	}
	w := *r
	w.Support = append([]Pair(nil), r.Support...)
	w.Contradictions = append([]Pair(nil), r.Contradictions...)
	return w
}

// retire takes rule r out of force, withdrawn, and counts it.
func (d *Detector) retire(r *Rule) {
	r.Withdrawn = true
	d.removeRule(r)
	d.withdrawn = append(d.withdrawn, r)
	// The representatives it gave no longer hold.
	for id, rp := range d.reps {
		if rp.rule == r {
			delete(d.reps, id)
		}
	}
	d.stats.Rules--
	d.stats.RulesByKind[r.Kind]--
	d.stats.Withdrawn++
	d.stats.WithdrawnByKind[r.Kind]++
}
