package engine

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"lidi/engine/cputime"
	"lidi/engine/dedup"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// refilter applies what duplicate detection learned from a page of a
// running lease to the rest of that lease, as onHead would have had it
// known it then: the URLs a rule now covers, and the copies of a
// candidate rule beyond what its evidence still needs, are revoked (see
// visit.Feed). The robot returns them unfetched and they are decided
// again when the site's queue is next read (skipped under the rule, or
// fetched if it never came). Each URL is revoked once; URLs queued for a
// recrawl are left to the recrawler.
func (c *crawl) refilter(run *leaseRun) {
	det := c.e.det
	l := run.lease
	if det == nil || l.Feed == nil {
		return
	}
	var taken map[uint64]int // copies of a candidate left in the lease
	for i := run.upTo; i < len(l.URLs); i++ {
		q := &l.URLs[i]
		if q.Copy != nil || run.revoked != nil && run.revoked[i] {
			continue
		}
		if _, _, covered := det.Canonical(q.URL); !covered {
			cand, need, ok := det.Unproven(q.URL)
			if !ok {
				continue
			}
			if taken == nil {
				taken = make(map[uint64]int)
			}
			if taken[cand] < need {
				taken[cand]++
				continue
			}
		}
		c.revoke(run, i)
	}
}

// revoke revokes URL i of a running lease, once.
func (c *crawl) revoke(run *leaseRun, i int) {
	l := run.lease
	if l.URLs[i].Copy != nil || run.revoked != nil && run.revoked[i] {
		return
	}
	if run.revoked == nil {
		run.revoked = make([]bool, len(l.URLs))
	}
	run.revoked[i] = true
	l.Feed.Revoked <- l.URLs[i].ID // never blocks: it holds every URL of the lease
}

// ruleID is the ID under which the store keeps the URLs skipped under
// rule by (0 for none).
func ruleID(by *dedup.Rule) uint64 {
	if by == nil {
		return 0
	}
	return by.ID()
}

// ruleSkipped counts a URL of site s skipped under a rule (its ID, see
// ruleID), recorded in the store with the rule's ID, so that it is
// queued again if the rule is withdrawn, in this run or a later one.
//
// Which URLs a rule skipped is kept in the store alone, not in memory:
// the loop keeps a count per rule and site (what the frontier needs to
// visit the site again), and a withdrawal queues them again in the store
// by one UPDATE on an index of the rule-skipped rows. A URL list in
// memory cost 16 bytes a skip for all the crawl and had to be read back
// whole at every restart, for the sake of withdrawals, which are rare:
// `lidi bench precision` (seed 1) skips 8,368 of its 30,074 URLs under
// rules and withdraws none; the loop holds 68 counts instead, and the
// index takes 58 pages of the file. At 1M URLs the list would be some
// 280,000 skips, 4.5 MB, read back at each restart for nothing.
func (c *crawl) ruleSkipped(rule, id uint64, s *site, canon uint64, now time.Time) {
	c.dup.Pruned++
	c.probeUnanswered(id, now)
	if rule != 0 {
		c.countRuleSkips(rule, s.ID, 1)
	}
	if canon != 0 {
		c.awaitCanonical(canon, canonSkip{id: id, site: s, rule: rule})
	}
}

// awaitCanonical makes skip wait for the answer of its canonical URL,
// canon, unless that is fetched already: if it turns out not to exist,
// the skipped URL is fetched after all (see canonAnswered).
func (c *crawl) awaitCanonical(canon uint64, skip canonSkip) {
	if c.e.det.Observed(canon) {
		return
	}
	if c.awaitCanon == nil {
		c.awaitCanon = make(map[uint64][]canonSkip)
	}
	c.awaitCanon[canon] = append(c.awaitCanon[canon], skip)
}

// canonSkip is a URL skipped under a rule whose canonical URL is not
// fetched yet.
type canonSkip struct {
	id   uint64
	site *site
	rule uint64
}

// canonAnswered settles the URLs skipped in favour of URL id, which has
// answered status. When it does not exist (404 or 410), the detector
// covers no URL that rewrites to it from then on, and the URLs skipped in
// its favour are queued again, to be fetched for themselves: a mirror
// often holds pages its original no longer has. Any other answer keeps
// them skipped. After a restart, restoreDetection finds the skips that
// still wait.
func (c *crawl) canonAnswered(id uint64, status int, now time.Time) {
	if status != http.StatusNotFound && status != http.StatusGone {
		if len(c.awaitCanon) > 0 {
			delete(c.awaitCanon, id)
		}
		return
	}
	c.e.det.NotFound(id)
	skips := c.awaitCanon[id]
	delete(c.awaitCanon, id)
	for _, sk := range skips {
		c.batch.Unskips = append(c.batch.Unskips, sk.id)
		if sk.rule != 0 {
			c.countRuleSkips(sk.rule, sk.site.ID, -1)
		}
		c.dup.Pruned--
		c.dup.Requeued++
		c.enqueued(sk.site, 1, 0, now)
	}
}

// countRuleSkips adds n to the URLs of site skipped under rule.
func (c *crawl) countRuleSkips(rule uint64, site int64, n int64) {
	if c.ruleSkips == nil {
		c.ruleSkips = make(map[uint64]map[int64]int64)
	}
	bySite := c.ruleSkips[rule]
	if bySite == nil {
		bySite = make(map[int64]int64, 1)
		c.ruleSkips[rule] = bySite
	}
	bySite[site] += n
}

// requeueWithdrawn queues again the URLs skipped under rule r, just
// withdrawn: they were pruned on a rewrite now known to lose content. The
// store moves them back to its queue (Batch.UnskipRules, after the
// batch's skips, so none made before the withdrawal is missed); they are
// decided again when their site's queue is next read, so one that
// another rule covers is skipped again under that rule. Their priority
// is the one they were queued with; the site's head is taken to be the
// best (0) until its next visit reads it.
func (c *crawl) requeueWithdrawn(r *dedup.Rule, now time.Time) {
	id := r.ID()
	c.batch.UnskipRules = append(c.batch.UnskipRules, id)
	for siteID, n := range c.ruleSkips[id] {
		c.dup.Pruned -= n
		c.dup.Requeued += n
		if s := c.sites[siteID]; s != nil {
			c.enqueued(s, n, 0, now)
		}
	}
	delete(c.ruleSkips, id)
}

// probePriority puts a probe ahead of the URLs discovered in its site's
// queue (the strategies' priorities are depths, 0 and up, or minus a
// PageRank, -1 and up), so that the site's next visit answers it first.
const probePriority = -2

// probe queues the probe duplicate detection asked for (see
// dedup.ProbeURL) on the site of page m: a URL that cannot exist, fetched
// once as any URL of the site, in one of its visits, so that robots.txt
// and the politeness delay apply to it as to any page. The rest of the
// lease that fetched m is cut short (revoked: see visit.Feed), so that the
// probe is answered before more of the site's pages are judged without
// it, and with hold, m's links wait for the answer (m completed the
// evidence: if the host serves soft 404s, m is one). When the probe
// cannot be queued (out of scope, known already, covered by a rule), the
// evidence decides and the signature it put in force is returned.
func (c *crawl) probe(run *leaseRun, url string, m *visit.PageResult, hold bool, now time.Time) *dedup.Soft404Sig {
	f, ok := c.e.inScope(url, m.Depth)
	n := len(c.batch.URLs)
	if ok {
		c.discover(f, m.Depth, m.Record.URL, now)
	}
	if len(c.batch.URLs) != n+1 || c.batch.URLs[n].ID != f.ID || c.batch.URLs[n].State != record.URLQueued {
		return c.probeUnanswered(dedup.ID(url), now)
	}
	rec := &c.batch.URLs[n]
	rec.Priority = probePriority
	s := c.sites[rec.Site]
	if p := s.leasing; p != nil {
		p.sincePrio = min(p.sincePrio, probePriority)
	}
	c.f.Found(&s.Site, 0, probePriority, now)
	c.cut(run)
	if hold {
		c.hold(f.ID, m)
	}
	return nil
}

// hold keeps the links of page m until probe id is answered (see
// release), in memory and in the store (Batch.Holds), so that a crawl
// stopped before the answer decides them when it runs again.
func (c *crawl) hold(probe uint64, m *visit.PageResult) {
	c.keepHeld(probe, m)
	h := record.HeldLinks{Probe: probe, Page: m.Record.URL, Links: make([]string, len(m.Links))}
	for i := range m.Links {
		h.Links[i] = m.Links[i].URL
	}
	c.batch.Holds = append(c.batch.Holds, h)
}

// keepHeld keeps page m, whose links wait for probe, in memory.
func (c *crawl) keepHeld(probe uint64, m *visit.PageResult) {
	if c.held == nil {
		c.held = make(map[uint64][]*visit.PageResult)
	}
	c.held[probe] = append(c.held[probe], m)
}

// linksHeld reports whether the links of page id wait for a probe's
// answer.
func (c *crawl) linksHeld(id uint64) bool {
	for _, ms := range c.held {
		for _, m := range ms {
			if m.Record.URL == id {
				return true
			}
		}
	}
	return false
}

// release settles the pages whose links waited for probe id, once the
// soft-404 signature is decided: a soft 404 under it is recorded as one
// and its links are not followed; otherwise they are followed now.
func (c *crawl) release(probe uint64, now time.Time) {
	ms, ok := c.held[probe]
	if !ok {
		return
	}
	delete(c.held, probe)
	c.batch.Releases = append(c.batch.Releases, probe)
	for _, m := range ms {
		rec := &m.Record
		if of, dist, soft := c.e.det.Soft404Match(dedup.Page{URL: m.URL, Simhash: rec.Simhash, NoURL: rec.NoURLSimhash, Title: rec.TitleHash}); soft {
			c.dup.Soft404++
			c.batch.Dups = append(c.batch.Dups, record.DupRecord{URL: rec.URL, Of: of, Kind: dedup.Soft404, Test: dedup.TestSoft404, Similarity: 1 - float64(dist)/64, Time: now})
			c.skipped[record.SkipDuplicate] += int64(len(m.Links))
			c.left(rec.URL, nil)
			c.pageLinks(rec.URL, m.URL, nil)
			continue
		}
		c.followLinks(m, now)
	}
}

// probeUnanswered tells duplicate detection that URL id will not be
// fetched; when it is a probe, the soft-404 signature the evidence made
// is put in force and recorded.
func (c *crawl) probeUnanswered(id uint64, now time.Time) *dedup.Soft404Sig {
	if c.e.det == nil {
		return nil
	}
	sig := c.e.det.ProbeUnanswered(id)
	if sig != nil {
		c.soft404(sig, now)
	}
	c.release(id, now)
	return sig
}

// soft404 records a soft-404 signature put in force, and tells the
// console.
func (c *crawl) soft404(sig *dedup.Soft404Sig, now time.Time) {
	c.batch.Soft404s = append(c.batch.Soft404s, record.Soft404Record{Sig: *sig, Time: now})
	how := "its probe (a URL that cannot exist) unanswered"
	if sig.Probe != 0 {
		how = fmt.Sprintf("its probe (a URL that cannot exist) answered %d", sig.ProbeStatus)
	}
	text := fmt.Sprintf("%s answers URLs that do not exist with one page (%d URLs; %s), recorded as soft 404s", sig.Origin, len(sig.Evidence)+1, how)
	c.e.event(record.Event{Time: now, Kind: record.EventSoft404, Text: text})
	c.dupCounts()
}

// cut revokes the URLs of a running lease not reported yet (see
// visit.Feed): they return to the site's queue.
func (c *crawl) cut(run *leaseRun) {
	l := run.lease
	if l.Feed == nil {
		return
	}
	for i := run.upTo; i < len(l.URLs); i++ {
		c.revoke(run, i)
	}
}

// probed takes the answer to a probe: it confirms, replaces or withdraws
// the host's soft-404 signature (see dedup.Detector.Probed). No link of a
// probe is followed: it reports false.
func (c *crawl) probed(m *visit.PageResult, now time.Time) bool {
	e := c.e
	rec := &m.Record
	t := cputime.Start()
	d := e.det.Probed(dedup.Page{ID: rec.URL, URL: m.URL, Digest: rec.Digest, Simhash: rec.Simhash, Main: rec.MainSimhash, NoURL: rec.NoURLSimhash, Title: rec.TitleHash, Status: rec.Status})
	c.dup.Time += t.Elapsed() + m.Detect
	if w := d.Soft404Withdrawn; w != nil {
		c.batch.Soft404s = append(c.batch.Soft404s, record.Soft404Record{Sig: *w, Time: now})
		text := fmt.Sprintf("%s: not a soft-404 host: a URL that cannot exist answered %d (%d URLs with one page were copies)", w.Origin, w.ProbeStatus, len(w.Evidence)+1)
		e.event(record.Event{Time: now, Kind: record.EventSoft404, Text: text})
	}
	if s := d.Soft404; s != nil {
		c.soft404(s, now)
	}
	if d.Kind == dedup.Soft404 {
		c.dup.Soft404++
		c.batch.Dups = append(c.batch.Dups, record.DupRecord{URL: rec.URL, Of: d.Of, Kind: d.Kind, Test: d.Test, Similarity: d.Similarity, Time: now})
	}
	c.dupCounts()
	c.release(rec.URL, now)
	return false
}

// restoreDetection takes back what the loop keeps of duplicate
// detection's decisions from the store, once the detector is restored:
// how many URLs each rule skipped, by site (they count in Dup.Pruned,
// as the rules count in Dup.Rules), those of them whose canonical URL has
// not answered yet, and the pages whose links wait for a probe. Such a probe is queued still: the batch that queued it held the
// page's links, and the one that takes its answer (or skips it) lets
// them go. So the probe is fetched at its site's next visit, and its
// answer decides the links as it would have before the restart.
func (c *crawl) restoreDetection(ctx context.Context) error {
	err := c.e.store.RuleSkipped(ctx, func(u record.RuleSkippedURL) {
		c.countRuleSkips(u.Rule, u.Site, 1)
		c.dup.Pruned++
		// Its canonical URL, computed again with the restored rules.
		canon, _, covered := c.e.det.Canonical(u.URL)
		if s := c.sites[u.Site]; covered && canon != "" && s != nil {
			c.awaitCanonical(dedup.ID(canon), canonSkip{id: u.ID, site: s, rule: u.Rule})
		}
	})
	if err != nil {
		return fmt.Errorf("engine: loading rule skips: %w", err)
	}
	held, err := c.e.store.Held(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading held links: %w", err)
	}
	for _, h := range held {
		m := &visit.PageResult{URL: h.URL, Depth: h.Depth, Links: make([]visit.FoundLink, len(h.Links)),
			Record: record.PageRecord{URL: h.Page, Redirect: h.Redirect, Simhash: h.Simhash, NoURLSimhash: h.NoURL, TitleHash: h.Title}}
		for i, u := range h.Links {
			m.Links[i].URL = u
		}
		c.keepHeld(h.Probe, m)
	}
	return nil
}
