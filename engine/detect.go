package engine

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	"lidi/engine/cputime"
	"lidi/engine/dedup"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// detection is duplicate detection as a crawl runs it: the detector, its
// figures, and the decisions that wait for an answer. Only the loop
// goroutine uses it, and it never touches the loop's state: what a decision
// asks of the loop (records to write, events, URLs queued again, held pages
// whose links are now decided) comes back in a verdict, which the loop
// applies (crawl.apply) at once. Its zero value, with det nil, is detection
// off: every method is then a no-op.
type detection struct {
	det   *dedup.Detector
	dup   DupStats
	clock cputime.Sampler // times the decisions (dup.Time), one in cputime.SampleEvery

	// How many URLs of each site are skipped under each rule in force (by
	// dedup.Rule.ID), queued again if it is withdrawn; URLs skipped in
	// favour of a canonical URL not fetched yet, by its ID (see
	// canonAnswered); pages whose links wait for a probe's answer, by the
	// probe's URL ID.
	ruleSkips  map[uint64]map[int64]int64
	awaitCanon map[uint64][]canonSkip
	held       map[uint64][]*visit.PageResult

	// scratch of canonicalFirst
	spellings []string
	variant   []bool
	moved     []record.QueuedURL
}

// verdict is what detection's decisions ask of the loop. Its zero value
// asks nothing.
type verdict struct {
	rec      record.Batch // records to write (Dups, Rules, Soft404s, Unskips, UnskipRules, Holds, Releases)
	events   []record.Event
	requeued []requeued // URLs of a site back in its queue
	settled  []settled  // held pages whose links are decided
}

// requeued counts URLs of a site back in its queue, at priority 0 until
// the site's next visit reads its true head.
type requeued struct {
	site int64
	n    int64
}

// settled is a held page whose links are decided: followed, or not when
// the page is a soft 404.
type settled struct {
	page    *visit.PageResult
	soft404 bool
}

func (v *verdict) empty() bool {
	return v.rec.Len() == 0 && len(v.events) == 0 && len(v.requeued) == 0 && len(v.settled) == 0
}

// on reports whether detection is on.
func (d *detection) on() bool { return d.det != nil }

// canonical reports whether a rule covers url, the canonical URL fetched
// instead ("" for none) and the rule; it counts the URL as covered. A
// rule that other hosts proved, whose canonical URL for url answered a
// page, is put in force on url's origin first (dedup.Detector.FromPrior)
// and recorded in v.
func (d *detection) canonical(url string, now time.Time, v *verdict) (covered bool, canon string, by *dedup.Rule) {
	if d.det == nil {
		return false, "", nil
	}
	canon, by, covered = d.det.Canonical(url)
	if !covered {
		if r, ok := d.det.FromPrior(url); ok {
			d.ruleChanged(r, now, v)
			canon, by, covered = d.det.Canonical(url)
		}
	}
	if covered {
		d.det.Covered(by)
	}
	return covered, canon, by
}

// ruleID is the ID under which the store keeps the URLs skipped under
// rule by (0 for none).
func ruleID(by *dedup.Rule) uint64 {
	if by == nil {
		return 0
	}
	return by.ID()
}

// ruleSkipped counts a URL of site skipped under a rule (its ID, see
// ruleID), recorded in the store with the rule's ID, so that it is
// queued again if the rule is withdrawn, in this run or a later one; canon
// is the ID of the canonical URL queued in its favour (0 for none).
//
// Which URLs a rule skipped is kept in the store alone, not in memory:
// detection keeps a count per rule and site (what the frontier needs to
// visit the site again), and a withdrawal queues them again in the store
// by one UPDATE on an index of the rule-skipped rows. A URL list in
// memory cost 16 bytes a skip for all the crawl and had to be read back
// whole at every restart, for the sake of withdrawals, which are rare:
// `lidi bench precision` (seed 1) skips 8,368 of its 30,074 URLs under
// rules and withdraws none; the loop holds 68 counts instead, and the
// index takes 58 pages of the file. At 1M URLs the list would be some
// 280,000 skips, 4.5 MB, read back at each restart for nothing.
func (d *detection) ruleSkipped(rule, id uint64, site int64, canon uint64, now time.Time, v *verdict) {
	d.dup.Pruned++
	d.probeUnanswered(id, now, v)
	if rule != 0 {
		d.countRuleSkips(rule, site, 1)
	}
	if canon != 0 {
		d.awaitCanonical(canon, canonSkip{id: id, site: site, rule: rule})
	}
}

// awaitCanonical makes skip wait for the answer of its canonical URL,
// canon, unless that is fetched already: if it turns out not to exist,
// the skipped URL is fetched after all (see canonAnswered).
func (d *detection) awaitCanonical(canon uint64, skip canonSkip) {
	if d.det.Observed(canon) {
		return
	}
	if d.awaitCanon == nil {
		d.awaitCanon = make(map[uint64][]canonSkip)
	}
	d.awaitCanon[canon] = append(d.awaitCanon[canon], skip)
}

// canonSkip is a URL skipped under a rule whose canonical URL is not
// fetched yet.
type canonSkip struct {
	id   uint64
	site int64
	rule uint64
}

// canonAnswered settles the URLs skipped in favour of URL id, which has
// answered status. When it does not exist (404 or 410), the detector
// covers no URL that rewrites to it from then on, and the URLs skipped in
// its favour are queued again, to be fetched for themselves: a mirror
// often holds pages its original no longer has. Any other answer keeps
// them skipped. After a restart, restore finds the skips that still wait.
func (d *detection) canonAnswered(id uint64, status int, v *verdict) {
	if d.det == nil {
		return
	}
	if status != http.StatusNotFound && status != http.StatusGone {
		if len(d.awaitCanon) > 0 {
			delete(d.awaitCanon, id)
		}
		return
	}
	d.det.NotFound(id)
	skips := d.awaitCanon[id]
	delete(d.awaitCanon, id)
	for _, sk := range skips {
		v.rec.Unskips = append(v.rec.Unskips, sk.id)
		if sk.rule != 0 {
			d.countRuleSkips(sk.rule, sk.site, -1)
		}
		d.dup.Pruned--
		d.dup.Requeued++
		v.requeued = append(v.requeued, requeued{site: sk.site, n: 1})
	}
}

// countRuleSkips adds n to the URLs of site skipped under rule.
func (d *detection) countRuleSkips(rule uint64, site int64, n int64) {
	if d.ruleSkips == nil {
		d.ruleSkips = make(map[uint64]map[int64]int64)
	}
	bySite := d.ruleSkips[rule]
	if bySite == nil {
		bySite = make(map[int64]int64, 1)
		d.ruleSkips[rule] = bySite
	}
	bySite[site] += n
}

// ruleChanged records a rule learned or withdrawn and tells the console.
// What is queued under a new rule is exchanged for its canonical URL as
// each URL's turn comes, not at once in the store: the canonical URL may
// not be known yet.
//
// The URLs skipped under a rule just withdrawn were pruned on a rewrite
// now known to lose content: the store moves them back to its queue
// (Batch.UnskipRules, after the batch's skips, so none made before the
// withdrawal is missed); they are decided again when their site's queue is
// next read, so one that another rule covers is skipped again under that
// rule. Their priority is the one they were queued with; the site's head
// is taken to be the best (0) until its next visit reads it.
func (d *detection) ruleChanged(r dedup.Rule, now time.Time, v *verdict) {
	v.rec.Rules = append(v.rec.Rules, record.RuleRecord{Rule: r, Time: now})
	kind, text := record.EventRule, fmt.Sprintf("rule learned: %s (%d duplicate pairs)", r.String(), r.Supports)
	if r.Supports == 0 && r.Prior > 0 {
		text = fmt.Sprintf("rule learned: %s (no duplicate pair here: %d other hosts learned it from their own, and its canonical URL answered first)", r.String(), r.Prior)
	}
	if r.Withdrawn {
		why := "a URL it rewrites holds other content"
		if r.Choice.Reversed {
			why = "reversed: later evidence says the other copy is the original"
		}
		kind, text = record.EventRuleWithdrawn, fmt.Sprintf("rule withdrawn: %s (%s)", r.String(), why)
		id := r.ID()
		v.rec.UnskipRules = append(v.rec.UnskipRules, id)
		for site, n := range d.ruleSkips[id] {
			d.dup.Pruned -= n
			d.dup.Requeued += n
			v.requeued = append(v.requeued, requeued{site: site, n: n})
		}
		delete(d.ruleSkips, id)
	}
	v.events = append(v.events, record.Event{Time: now, Kind: kind, Text: text})
	d.noteRecent(r)
}

// noteRecent puts rule r first in Dup.Recent, in a new slice: snapshots
// of the figures share the old one.
func (d *detection) noteRecent(r dedup.Rule) {
	r.Support, r.Contradictions = nil, nil
	old := d.dup.Recent[:min(len(d.dup.Recent), RecentRules-1)]
	d.dup.Recent = append(append(make([]dedup.Rule, 0, len(old)+1), r), old...)
}

// hold keeps the links of page m until probe is answered (see release),
// in memory and in the store (Batch.Holds), so that a crawl stopped before
// the answer decides them when it runs again.
func (d *detection) hold(probe uint64, m *visit.PageResult, v *verdict) {
	d.keepHeld(probe, m)
	h := record.HeldLinks{Probe: probe, Page: m.Record.URL, Links: make([]string, len(m.Links))}
	for i := range m.Links {
		h.Links[i] = m.Links[i].URL
	}
	v.rec.Holds = append(v.rec.Holds, h)
}

// keepHeld keeps page m, whose links wait for probe, in memory.
func (d *detection) keepHeld(probe uint64, m *visit.PageResult) {
	if d.held == nil {
		d.held = make(map[uint64][]*visit.PageResult)
	}
	d.held[probe] = append(d.held[probe], m)
}

// linksHeld reports whether the links of page id wait for a probe's
// answer.
func (d *detection) linksHeld(id uint64) bool {
	for _, ms := range d.held {
		for _, m := range ms {
			if m.Record.URL == id {
				return true
			}
		}
	}
	return false
}

// release settles the pages whose links waited for probe, once the
// soft-404 signature is decided: a soft 404 under it is recorded as one
// and its links are not followed; otherwise they are followed now.
func (d *detection) release(probe uint64, now time.Time, v *verdict) {
	ms, ok := d.held[probe]
	if !ok {
		return
	}
	delete(d.held, probe)
	v.rec.Releases = append(v.rec.Releases, probe)
	for _, m := range ms {
		rec := &m.Record
		of, dist, soft := d.det.Soft404Match(dedup.Page{URL: m.URL, Simhash: rec.Simhash, NoURL: rec.NoURLSimhash, Title: rec.TitleHash})
		if soft {
			d.dup.Soft404++
			v.rec.Dups = append(v.rec.Dups, record.DupRecord{URL: rec.URL, Of: of, Kind: dedup.Soft404, Test: dedup.TestSoft404, Similarity: 1 - float64(dist)/64, Time: now})
		}
		v.settled = append(v.settled, settled{page: m, soft404: soft})
	}
}

// probeUnanswered tells duplicate detection that URL id will not be
// fetched; when it is a probe, the soft-404 signature the evidence made
// is put in force and recorded, and returned.
func (d *detection) probeUnanswered(id uint64, now time.Time, v *verdict) *dedup.Soft404Sig {
	if d.det == nil {
		return nil
	}
	sig := d.det.ProbeUnanswered(id)
	if sig != nil {
		d.soft404(sig, now, v)
	}
	d.release(id, now, v)
	return sig
}

// soft404 records a soft-404 signature put in force, and tells the
// console.
func (d *detection) soft404(sig *dedup.Soft404Sig, now time.Time, v *verdict) {
	v.rec.Soft404s = append(v.rec.Soft404s, record.Soft404Record{Sig: *sig, Time: now})
	how := "its probe (a URL that cannot exist) unanswered"
	if sig.Probe != 0 {
		how = fmt.Sprintf("its probe (a URL that cannot exist) answered %d", sig.ProbeStatus)
	}
	text := fmt.Sprintf("%s answers URLs that do not exist with one page (%d URLs; %s), recorded as soft 404s", sig.Origin, len(sig.Evidence)+1, how)
	v.events = append(v.events, record.Event{Time: now, Kind: record.EventSoft404, Text: text})
	d.counts()
}

// probed takes the answer to a probe: it confirms, replaces or withdraws
// the host's soft-404 signature (see dedup.Detector.Probed). No link of a
// probe is followed.
func (d *detection) probed(m *visit.PageResult, now time.Time, v *verdict) {
	rec := &m.Record
	t := d.clock.Start()
	dec := d.det.Probed(pageOf(m))
	d.dup.Time += t.Elapsed() + m.Detect
	if w := dec.Soft404Withdrawn; w != nil {
		v.rec.Soft404s = append(v.rec.Soft404s, record.Soft404Record{Sig: *w, Time: now})
		text := fmt.Sprintf("%s: not a soft-404 host: a URL that cannot exist answered %d (%d URLs with one page were copies)", w.Origin, w.ProbeStatus, len(w.Evidence)+1)
		v.events = append(v.events, record.Event{Time: now, Kind: record.EventSoft404, Text: text})
	}
	if s := dec.Soft404; s != nil {
		d.soft404(s, now, v)
	}
	if dec.Kind == dedup.Soft404 {
		d.dup.Soft404++
		v.rec.Dups = append(v.rec.Dups, record.DupRecord{URL: rec.URL, Of: dec.Of, Kind: dec.Kind, Test: dec.Test, Similarity: dec.Similarity, Time: now})
	}
	d.counts()
	d.release(rec.URL, now, v)
}

// observe runs duplicate detection on a page fetched (2xx, with a body),
// recording the rules it learned or withdrew and the soft-404 signature it
// put in force; judge records its kind once the loop has done what the
// decision asks (a probe, held links).
func (d *detection) observe(m *visit.PageResult, now time.Time, v *verdict) dedup.Decision {
	p := pageOf(m)
	p.Claims = m.Claims // what the page says of its origin
	dec := d.det.Observe(p)
	d.demoted(dec.Demoted, now, v)
	for _, r := range dec.Learned {
		d.ruleChanged(r, now, v)
	}
	for _, r := range dec.Withdrawn {
		d.ruleChanged(r, now, v)
	}
	if dec.Soft404 != nil {
		v.rec.Soft404s = append(v.rec.Soft404s, record.Soft404Record{Sig: *dec.Soft404, Time: now})
		text := fmt.Sprintf("%s answers URLs that do not exist with one page (%d URLs), recorded as soft 404s", dec.Soft404.Origin, len(dec.Soft404.Evidence)+1)
		if n := dec.Soft404.Prior; n > 0 {
			text = fmt.Sprintf("%s answers URLs that do not exist with one page, recorded as soft 404s: its page spelled the URL asked for, as %d other hosts' not-found pages did (their probes confirmed it)", dec.Soft404.Origin, n)
		}
		v.events = append(v.events, record.Event{Time: now, Kind: record.EventSoft404, Text: text})
	}
	return dec
}

// judge counts a page's decision and records it when the page is a copy;
// it reports whether the page is new content.
func (d *detection) judge(dec *dedup.Decision, rec *record.PageRecord, now time.Time, v *verdict) bool {
	if len(dec.Learned) > 0 || len(dec.Withdrawn) > 0 || dec.Soft404 != nil {
		d.counts()
	}
	switch dec.Kind {
	case dedup.Exact:
		d.dup.Exact++
	case dedup.Near:
		d.dup.Near++
	case dedup.Soft404:
		// Not a genuine page: its links, found only here, are not
		// followed.
		d.dup.Soft404++
	default:
		return true
	}
	v.rec.Dups = append(v.rec.Dups, record.DupRecord{URL: rec.URL, Of: dec.Of, Kind: dec.Kind, Test: dec.Test, Similarity: dec.Similarity, Time: now})
	return false
}

// pageOf is what the detector is told of a page fetched.
func pageOf(m *visit.PageResult) dedup.Page {
	rec := &m.Record
	return dedup.Page{ID: rec.URL, URL: m.URL, Digest: rec.Digest, Simhash: rec.Simhash, Main: rec.MainSimhash, NoURL: rec.NoURLSimhash, Title: rec.TitleHash, Status: rec.Status}
}

// counts copies the detector's rule and soft-404 counts into the figures.
func (d *detection) counts() {
	s := d.det.Stats()
	d.dup.Rules, d.dup.Withdrawn, d.dup.Soft404Hosts = int64(s.Rules), int64(s.Withdrawn), int64(s.Soft404Host)
	for k := range s.RulesByKind {
		d.dup.Learned[k] = int64(s.RulesByKind[k] + s.WithdrawnByKind[k])
	}
}

// restore takes back detection's state from the store at the start of a
// run: the fingerprints of every page fetched, the rules and soft 404s
// recorded, how many URLs each rule skipped, by site (they count in
// Dup.Pruned, as the rules count in Dup.Rules), those of them whose
// canonical URL has not answered yet, the pages whose links wait for a
// probe, and how many pages were found duplicate (record.DupCounter), so
// that the figures go on from where they stopped. Such a probe is queued
// still: the batch that queued it held the page's links, and the one that
// takes its answer (or skips it) lets them go. So the probe is fetched at its site's next visit, and its answer
// decides the links as it would have before the restart. known reports
// whether a site ID is one of the crawl's.
func (d *detection) restore(ctx context.Context, store record.Store, known func(site int64) bool) error {
	if d.det == nil {
		return nil
	}
	err := store.Fingerprints(ctx, func(p record.FetchedPage) {
		d.det.Restore(dedup.Page{ID: p.URL, URL: p.Addr, Digest: p.Digest, Simhash: p.Simhash, Main: p.Main, NoURL: p.NoURL, Title: p.Title, Status: p.Status})
	})
	if err != nil {
		return fmt.Errorf("engine: loading fingerprints: %w", err)
	}
	rs, err := store.Rules(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading rules: %w", err)
	}
	for _, r := range rs {
		d.det.RestoreRule(r.Rule)
		d.noteRecent(r.Rule)
	}
	ss, err := store.Soft404s(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading soft 404s: %w", err)
	}
	for _, s := range ss {
		d.det.RestoreSoft404(s.Sig)
	}
	err = store.RuleSkipped(ctx, func(u record.RuleSkippedURL) {
		d.countRuleSkips(u.Rule, u.Site, 1)
		d.dup.Pruned++
		// Its canonical URL, computed again with the restored rules.
		canon, _, covered := d.det.Canonical(u.URL)
		if covered && canon != "" && known(u.Site) {
			d.awaitCanonical(dedup.ID(canon), canonSkip{id: u.ID, site: u.Site, rule: u.Rule})
		}
	})
	if err != nil {
		return fmt.Errorf("engine: loading rule skips: %w", err)
	}
	held, err := store.Held(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading held links: %w", err)
	}
	for _, h := range held {
		m := &visit.PageResult{URL: h.URL, Depth: h.Depth, Links: make([]visit.FoundLink, len(h.Links)),
			Record: record.PageRecord{URL: h.Page, Redirect: h.Redirect, Simhash: h.Simhash, NoURLSimhash: h.NoURL, TitleHash: h.Title}}
		for i, u := range h.Links {
			m.Links[i].URL = u
		}
		d.keepHeld(h.Probe, m)
	}
	if dc, ok := store.(record.DupCounter); ok {
		// The pages found duplicate in earlier runs, as the rules above.
		c, err := dc.DupCounts(ctx)
		if err != nil {
			return fmt.Errorf("engine: loading duplicate counts: %w", err)
		}
		d.dup.Exact, d.dup.Near, d.dup.Soft404 = c.Exact, c.Near, c.Soft404
	}
	d.counts()
	return nil
}

// canonicalFirst orders a lease's URLs so that those that are likely
// variants of another of its URLs (dedup.Detector.Variants: /a?ref=nav
// and /a, /Docs/ and /docs/) come after every other, each part in its
// order: the canonical spelling answers first, so it is the page kept,
// and the variants' pairs come when the rest of the lease can still be
// spared by the rule they complete. It only orders the lease.
func (d *detection) canonicalFirst(urls []record.QueuedURL) {
	if d.det == nil || len(urls) < 2 {
		return
	}
	t := d.clock.Start()
	d.spellings = d.spellings[:0]
	for i := range urls {
		d.spellings = append(d.spellings, urls[i].URL)
	}
	d.variant = d.det.Variants(d.spellings, d.variant)
	if slices.Contains(d.variant, true) {
		d.moved = d.moved[:0]
		k := 0
		for i := range urls {
			if d.variant[i] {
				d.moved = append(d.moved, urls[i])
				continue
			}
			urls[k] = urls[i]
			k++
		}
		copy(urls[k:], d.moved)
		clear(d.moved)
	}
	clear(d.spellings) // the lease's strings are not kept alive here
	d.dup.Time += t.Elapsed()
}

// awaitsCanonical reports whether q, a URL of a visit being handed out,
// waits for the site's next visit: it is a copy that a candidate rewrite
// would send to a canonical URL the crawl has not met yet
// (dedup.Detector.Awaits), which is queued now ahead of the site's other
// URLs, as a probe is, so that it answers first and q comes after it:
// the candidate's pair, or spared by the rule it has become. A canonical
// URL known already (queued, fetched, skipped) is left to its turn and q
// is fetched as it comes, but for one queued ahead for another spelling
// of the same visit (visit, the canonical URLs queued so): q waits too.
func (c *crawl) awaitsCanonical(q record.QueuedURL, now time.Time, visit *map[string]bool) bool {
	if !c.detect.on() {
		return false
	}
	return c.detect.det.Awaits(q.URL, func(canon string) bool {
		if (*visit)[canon] {
			return true // queued ahead for another spelling of this visit
		}
		if _, queued := c.queueFirst(canon, q.Depth, q.ID, now); !queued {
			return false
		}
		if *visit == nil {
			*visit = make(map[string]bool)
		}
		(*visit)[canon] = true
		return true
	})
}

// refilterOthers applies rules learned of origins other than run's (the
// other side of a host swap, rules of other hosts completed by pooled
// evidence) to the leases running there: the URLs not reported yet that
// one of those rules rewrites, and that the detector now covers, are
// revoked, as refilter does in run's own lease. Only the learned rules are
// tried, on the leases of their origins: a full refilter of each (every
// URL against every candidate of its site) made one page's decision the
// loop's longest wake-up at 1,000,000 URLs.
func (c *crawl) refilterOthers(run *leaseRun, learned []dedup.Rule) {
	det := c.detect.det
	if len(learned) == 0 || det == nil {
		return // most duplicates teach nothing new: no lease to look at
	}
	for _, o := range c.leases.runs {
		l := o.lease
		if o == run || l.Feed == nil {
			continue
		}
		for k := range learned {
			r := &learned[k]
			if r.Origin != l.Key { // a lease's Key is its site's origin, as a rule's Origin is
				continue
			}
			for i := o.upTo; i < len(l.URLs); i++ {
				q := &l.URLs[i]
				if q.Copy != nil || o.revoked != nil && o.revoked[i] {
					continue
				}
				if _, ok := r.Rewrite(q.URL); !ok {
					continue
				}
				if _, _, covered := det.Canonical(q.URL); covered {
					c.revoke(o, i)
				}
			}
		}
	}
}
