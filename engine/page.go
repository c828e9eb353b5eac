package engine

import (
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/visit"
)

func (c *crawl) onPage(run *leaseRun, m *visit.PageResult, now time.Time) {
	s := run.site
	m.Record.Site = s.ID
	rec := m.Record
	delete(c.retries.tries, rec.URL)
	if m.Sitemap != nil {
		c.sitemapRead(s, m, now)
	}
	if run.planned > 0 {
		run.planned--
		c.leases.planned--
	}
	prio := 0.0
	for i := run.upTo; i < len(run.lease.URLs); i++ {
		if run.lease.URLs[i].ID == rec.URL {
			run.upTo, prio = i+1, run.lease.URLs[i].Priority
			break
		}
	}
	if rec.Status > 0 {
		c.seeds.answered = true
	} else if !c.seeds.answered && c.seeds.sites[s.ID] {
		// No answer, and nothing in the crawl has answered yet: the
		// seed stays queued, so a crawl run again once the network or
		// the server is back starts from it.
		c.f.Found(&s.Site, 1, prio, now)
		return
	}
	run.tracker.pages.Add(1)
	if dedup.IsProbe(m.URL) {
		c.probeAnswered(run, m, now)
		return
	}
	c.tally.fetches++
	if rec.Recrawl {
		c.tally.recrawls++
	}
	run.tracker.bytes.Add(rec.Length)
	run.tracker.url.Store(&m.URL)
	c.tally.bytes += rec.Length
	s.fetched++
	switch {
	case rec.Err != "":
		c.tally.errors++
	case rec.Status >= 400:
		c.tally.errors++
		c.tally.errKinds[visit.HTTPFailure(rec.Status)]++
	}
	switch {
	case rec.TypeCheck == fetch.TypeBinaryAsHTML:
		c.tally.skipped[record.SkipBinary]++ // download stopped at its first bytes
	case rec.Truncated:
		c.tally.errKinds[visit.FailureTruncated]++
	}
	c.batch.Pages = append(c.batch.Pages, rec)
	if c.rc != nil {
		c.recrawlPage(m)
	}
	if rec.Recrawl {
		c.recrawled(m, now)
		return
	}
	if !c.observe(run, m, now) {
		// A duplicate: its links are the original's, not followed again.
		c.tally.skipped[record.SkipDuplicate] += int64(len(m.Links))
		c.left(rec.URL, nil)
		c.pageLinks(rec.URL, m.URL, nil)
		return
	}
	// A page a rule learned while its lease ran covers is still new
	// content when observe says so: it stands for its canonical URL (see
	// dedup.Detector.Canonical), whose links are its own.
	if c.detect.linksHeld(rec.URL) {
		return // until a probe answers (see detect.go)
	}
	c.followLinks(m, now)
}

// probeAnswered takes the answer to lidi's own soft-404 probe (see probe):
// a question lidi asked, not a page of the crawl, so it is left out of
// the crawl's figures (pages, fetches, errors, bytes) and the store keeps
// it apart (record.URLProbed); duplicate detection takes it in. No link
// of a probe is followed.
func (c *crawl) probeAnswered(run *leaseRun, m *visit.PageResult, now time.Time) {
	m.Record.Probe = true
	c.batch.Pages = append(c.batch.Pages, m.Record)
	c.observe(run, m, now)
	c.left(m.Record.URL, nil)
	c.pageLinks(m.Record.URL, m.URL, nil)
}

// followLinks follows the links of a page fetched, new content.
func (c *crawl) followLinks(m *visit.PageResult, now time.Time) {
	rec := &m.Record
	c.tally.skipped[record.SkipScope] += int64(m.Skipped.Scope)
	c.tally.skipped[record.SkipNoFollow] += int64(m.Skipped.NoFollow)
	c.tally.skipped[record.SkipInvalid] += int64(m.Skipped.Invalid)
	hops := c.hops[rec.URL]
	delete(c.hops, rec.URL)
	follow := c.followBuf[:0]
	for i := range m.Links {
		f := &m.Links[i]
		if !f.Resolve() {
			c.tally.skipped[record.SkipInvalid]++
			continue
		}
		if f.ID == rec.URL {
			continue
		}
		c.batch.Links = append(c.batch.Links, record.Link{From: rec.URL, To: f.ID})
		if rec.Redirect != "" && f.URL == rec.Redirect {
			// A redirect's target stands in for the page: same depth, and
			// the chain is counted so that an endless one stops.
			if !c.web.has(f.ID) {
				if hops+1 > c.e.cfg.MaxRedirects {
					c.tally.skipped[record.SkipRedirectChain]++
					continue
				}
				c.hops[f.ID] = hops + 1
			}
			follow = append(follow, followed{*f, m.Depth})
			continue
		}
		follow = append(follow, followed{*f, m.Depth + 1})
	}
	if c.reprio.rp != nil {
		// The strategy learns the page's links before it is asked to
		// place any page first found there.
		c.reprio.links = c.reprio.links[:0]
		for _, f := range follow {
			c.reprio.links = append(c.reprio.links, f.ID)
		}
		c.left(rec.URL, c.reprio.links)
	}
	c.steps.mark(StepResults)
	for _, f := range follow {
		c.discover(f.FoundLink, f.depth, rec.URL, now)
	}
	c.steps.mark(StepDiscover)
	c.pageLinks(rec.URL, m.URL, follow)
	c.steps.mark(StepGraph)
	c.followBuf = follow[:0]
}

// observe runs duplicate detection on a fetched page, before any of its
// links is followed, and reports whether the page is new content.
func (c *crawl) observe(run *leaseRun, m *visit.PageResult, now time.Time) bool {
	d := &c.detect
	if !d.on() {
		return true
	}
	rec := &m.Record
	if dedup.IsProbe(m.URL) {
		d.probed(m, now, &c.verdict)
		c.apply(now)
		return false // no link of a probe is followed
	}
	d.canonAnswered(rec.URL, rec.Status, &c.verdict)
	c.apply(now)
	if rec.Digest == 0 || rec.Status < 200 || rec.Status >= 300 {
		return true
	}
	c.steps.mark(StepResults)
	t := d.clock.Start()
	dec := d.observe(m, now, &c.verdict)
	c.apply(now)
	c.prefer(dec.Prefer, m, now)
	if len(dec.Learned) > 0 || dec.Kind == dedup.Exact || dec.Kind == dedup.Near {
		c.steps.mark(StepDetect)
		c.refilter(run) // what was learned spares the rest of the lease
		c.refilterOthers(run, dec.Learned)
		c.steps.mark(StepRefilter)
	}
	d.dup.Time += t.Elapsed() + m.Detect
	c.apply(now)
	if dec.Probe != "" {
		if sig := c.probe(run, dec.Probe, m, dec.Kind == dedup.Unique, now); sig != nil && dec.Kind == dedup.Unique {
			// No probe to wait for: the evidence decides, and this page
			// completed it.
			dec.Kind, dec.Test, dec.Of, dec.Similarity = dedup.Soft404, dedup.TestSoft404, sig.Of, 1-float64(dedup.Hamming(rec.NoURLSimhash, sig.Simhash))/64
		}
	}
	if dec.Await != "" && dec.Kind == dedup.Unique {
		d.hold(dedup.ID(dec.Await), m, &c.verdict)
	}
	unique := d.judge(&dec, rec, now, &c.verdict)
	c.apply(now)
	c.steps.mark(StepDetect)
	return unique
}

// apply does what detection's decisions ask of the loop (c.verdict): their
// records go to the batch and their events to the log, the URLs queued
// again to their sites' queues, and held pages whose links are decided are
// followed or dropped. Following links may make detection decide again:
// those verdicts are applied in turn.
func (c *crawl) apply(now time.Time) {
	for !c.verdict.empty() {
		v := c.verdict
		c.verdict = verdict{}
		c.batch.Append(&v.rec)
		for _, ev := range v.events {
			c.e.event(ev)
		}
		for _, r := range v.requeued {
			if s := c.sites[r.site]; s != nil {
				c.enqueued(s, r.n, 0, now)
			}
		}
		for _, p := range v.settled {
			if p.soft404 {
				c.tally.skipped[record.SkipDuplicate] += int64(len(p.page.Links))
				c.left(p.page.Record.URL, nil)
				c.pageLinks(p.page.Record.URL, p.page.URL, nil)
				continue
			}
			c.followLinks(p.page, now)
		}
	}
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
	id, ok := c.queueFirst(url, m.Depth, m.Record.URL, now)
	if !ok {
		sig := c.detect.probeUnanswered(dedup.ID(url), now, &c.verdict)
		c.apply(now)
		return sig
	}
	c.cut(run)
	if hold {
		c.detect.hold(id, m, &c.verdict)
		c.apply(now)
	}
	return nil
}

// followed is a link of a fetched page that the crawl follows.
type followed struct {
	visit.FoundLink
	depth int
}
