package engine

import (
	"net/url"
	"time"

	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/recrawl"
	"lidi/engine/visit"
)

// Running a recrawl task (SARSS 2.1) in the loop. A task starts from its
// seeds: the channel's entry page, then the inter-site URLs, those of it
// that pages of other channels link to. Each page it fetches leads it on
// to the page's links within the channel, at one more link from a seed:
//
//   - a link goes to the task only if one of the task's filters matches it,
//     within its maximum depth and while it has taken fewer URLs than its
//     page limit (recrawl.Task.PageLimit, from the expected page count);
//   - a page that has not changed (a 304, the same bytes, or a new page
//     whose digest is in the task's Pageseen) is not expanded anew:
//     the task follows the links its copy had, to the copies they lead to;
//   - a changed page's new links within the channel are the pages the
//     recrawl discovers: queued at once, ahead of the crawl's own;
//   - a link into another channel the crawl has copies of is an inter-site
//     URL: not fetched now, but a seed of that channel's next recrawl;
//   - a link to a channel the crawl has no copy of yet is left to the
//     crawl, which discovers it as it discovers any URL.
//
// The links a task page does not follow are withheld from the crawl's
// discovery, so that the task's bounds hold. The task ends when every URL
// it took has been fetched (or skipped); the Manager then hears how it
// went, with the digests of its pages, the next task's Pageseen.

// rtask is a recrawl task of a channel in progress.
type rtask struct {
	t       recrawl.Task
	manager bool // from the Manager (else a warm-up probe)
	limit   int  // t.PageLimit(): 0 for none
	taken   int  // URLs taken
	// depth is SARSS's URLseen: every URL the task took, at its distance
	// in links from a seed, and refused for the URLs it will not take.
	depth   map[uint64]int
	left    map[uint64]bool // taken, not fetched yet
	digests []recrawl.Digest
	changed bool
	failed  bool
	pages   int
	cost    time.Duration
}

// refused marks a URL in rtask.depth that the task will not take.
const refused = -1

// probe returns a warm-up recrawl of channel ch: the loop's own task, with
// the fields the Manager gives its tasks.
func (r *recrawler) probe(ch *rchannel, rnow time.Time) recrawl.Task {
	return recrawl.Task{Channel: ch.id, Submitted: rnow, Deadline: ch.nextProbe, Seeds: ch.seeds(),
		Filters: ch.filters, MaxDepth: ch.maxDepth, ExpectedPages: len(ch.items), PageSeen: ch.pageSeen()}
}

func (ch *rchannel) seeds() []string {
	return append([]string{ch.entry}, ch.interSite...)
}

// pageSeen returns the digests of ch's copies.
func (ch *rchannel) pageSeen() recrawl.PageSeen {
	ds := make([]recrawl.Digest, 0, len(ch.items))
	for _, it := range ch.items {
		if it.digest != 0 {
			ds = append(ds, it.digest)
		}
	}
	return recrawl.NewPageSeen(ds)
}

// startTask starts task t of channel ch by queuing its seeds.
func (c *crawl) startTask(ch *rchannel, t recrawl.Task, manager bool, now time.Time) {
	rc := c.rc
	// The pages known now are the surest expected count: the Manager's is
	// the last task's, and the crawl may have found more since.
	t.ExpectedPages = max(t.ExpectedPages, len(ch.items))
	if len(t.Seeds) == 0 {
		t.Seeds = ch.seeds()
	}
	rt := &rtask{t: t, manager: manager, limit: t.PageLimit(), depth: map[uint64]int{}, left: map[uint64]bool{}}
	ch.task = rt
	for _, u := range t.Seeds {
		if f := (visit.FoundLink{URL: u}); f.Resolve() {
			c.take(ch, f, 0, ch.interSeen[f.ID], 0, now)
		}
	}
	if len(rt.left) == 0 {
		ch.task = nil
		if manager {
			rc.mgr.Done(t, recrawl.Outcome{})
			rc.dropped++
		}
		return
	}
	rc.tasks++
}

// take gives URL f, at depth links from a seed of ch's task, to the task
// if its bounds allow, and queues it; crawlDepth and parent are its
// depth and page in the crawl. It reports whether the task has it.
func (c *crawl) take(ch *rchannel, f visit.FoundLink, depth, crawlDepth int, parent uint64, now time.Time) bool {
	rc, t := c.rc, ch.task
	if d, ok := t.depth[f.ID]; ok {
		return d != refused
	}
	switch {
	case !t.t.Allows(f.URL):
		rc.filtered++
		t.depth[f.ID] = refused
		return false
	case t.t.MaxDepth > 0 && depth > t.t.MaxDepth:
		rc.bounded++ // not marked: a shorter path may reach it yet
		return false
	case t.limit > 0 && t.taken >= t.limit:
		rc.bounded++
		t.depth[f.ID] = refused
		return false
	}
	if it := rc.items[f.ID]; it != nil {
		s := c.sites[it.site]
		if it.ch != ch || s == nil || !s.recrawlable() {
			return false
		}
		if !it.queued {
			c.queueCopy(it, s, now)
		}
	} else if c.web.has(f.ID) || !c.discoverAt(f, crawlDepth, parent, true, now) {
		// Known without a copy: the crawl's own queue has it, or skipped it.
		return false
	}
	t.depth[f.ID] = depth
	t.left[f.ID] = true
	t.taken++
	rc.pending[f.ID] = ch
	return true
}

// queueCopy puts the URL of copy it, of site s, back in its site's queue.
func (c *crawl) queueCopy(it *ritem, s *site, now time.Time) {
	c.rc.setQueued(it, true)
	c.nextSeq++
	c.batch.Requeues = append(c.batch.Requeues, record.Requeue{URL: it.id, Priority: recrawlPriority, Seq: c.nextSeq})
	c.enqueued(s, 1, recrawlPriority, now)
}

// recrawlPage learns from a page record: a new copy and its links, a
// recrawl's verdict, the next step of a task.
func (c *crawl) recrawlPage(m *visit.PageResult) {
	rc := c.rc
	rec := &m.Record
	clear(rc.withheld)
	rnow := rc.clock.Now()
	keeps := rec.Err == "" && (rec.Status >= 200 && rec.Status < 400)
	it := rc.items[rec.URL]
	ch := rc.pending[rec.URL] // the channel whose task waits for it
	delete(rc.pending, rec.URL)
	if rc.sched != nil {
		if s := c.sites[rec.Site]; s != nil {
			rc.sched.Cost(rec.Duration + s.delay)
		}
		if key, ok := rc.schedSites[rec.Site]; ok && !rec.Recrawl {
			rc.sched.Discovered(key, rec.URL, keeps) // a turn of its site went to discovery
			rc.visitFound[rec.Site] = true
		}
	}
	switch {
	case it == nil && keeps:
		if it = rc.copied(rec.URL, m.URL, rec.Site, rnow); it == nil {
			break
		}
		if ch != nil {
			rc.found++
		}
		c.schedCopied(it)
		if rc.sched != nil {
			rc.listedCopy(it)
		}
		if rc.mgr != nil && !it.ch.added {
			c.addToManager(it.ch)
		}
	case it != nil && rec.Verdict.Known():
		if rc.sched != nil {
			fresh := 0
			for i := range m.Links {
				if f := &m.Links[i]; f.Resolve() {
					if !c.web.has(f.ID) {
						fresh++
					}
				}
			}
			rc.sched.Fetched(rec.URL, rnow, rec.Verdict.Changed(), rec.LastModified, fresh)
			rc.done++
		}
		o := &it.ch.obs
		*o = append(*o, recrawl.Observation{Interval: rnow.Sub(it.fetched), Changed: rec.Verdict.Changed()})
		if len(*o) > maxObservations {
			*o = (*o)[len(*o)-maxObservations:]
		}
	}
	if it != nil {
		if rec.Digest != 0 {
			// 32 bits of the page digest the robot took already.
			it.digest = recrawl.Digest(rec.Digest >> 32)
		}
		if len(m.Links) > 0 {
			rc.noteLinks(it, m)
			if rc.sched != nil {
				ids := make([]uint64, 0, len(m.Links))
				for i := range m.Links {
					if f := &m.Links[i]; f.Resolve() {
						ids = append(ids, f.ID)
					}
				}
				rc.sched.Links(it.id, ids)
			}
		}
	}
	if ch != nil && ch.task != nil && ch.task.left[rec.URL] {
		t := ch.task
		delete(t.left, rec.URL)
		t.pages++
		t.cost += rec.Duration + c.sites[rec.Site].delay
		t.changed = t.changed || rec.Verdict.Changed()
		ok := keeps || rec.Verdict == fetch.VerdictNotModified
		t.failed = t.failed || !ok
		if it != nil && it.digest != 0 {
			t.digests = append(t.digests, it.digest)
		}
		if ok {
			c.expand(ch, it, m)
		}
		if len(t.left) == 0 {
			c.taskDone(ch, rnow)
		}
	}
	delete(rc.listed, rec.URL) // its first fetch took it, or failed
	if it == nil {
		return
	}
	switch {
	case keeps || rec.Verdict == fetch.VerdictNotModified:
		it.fetched = rnow
		rc.setQueued(it, false)
	case rec.Err != "" || rec.Status >= 500 || rec.Status == 429:
		rc.setQueued(it, false) // the copy stays, to be recrawled again
	default: // gone (4xx): nothing left to recrawl
		rc.setQueued(it, false)
		delete(it.ch.items, rec.URL)
		delete(rc.items, rec.URL)
		if rc.sched != nil {
			rc.sched.Gone(rec.URL)
		}
	}
}

// expand takes the links of page m, fetched by ch's task (it is its copy,
// nil for none), that the task follows, and withholds from the crawl's
// discovery those it does not.
func (c *crawl) expand(ch *rchannel, it *ritem, m *visit.PageResult) {
	rc, t := c.rc, ch.task
	rec := &m.Record
	now := c.e.clock.Now()
	depth := t.depth[rec.URL] + 1
	// Only the same bytes (a 304, the same digest, or a digest in the
	// Pageseen) leave the links as they were: a page whose text is the
	// same within recrawl.threshold (VerdictSameText) has not changed for
	// the change rates, but may link to new pages (an entry added to a
	// list whose other words outweigh it).
	sameBytes := rec.Verdict == fetch.VerdictNotModified || rec.Verdict == fetch.VerdictSameDigest
	unchanged := it != nil && (sameBytes || !rec.Verdict.Known() && t.t.PageSeen.Has(it.digest))
	if unchanged {
		// Its links are those its copy had: the task follows them to the
		// copies they lead to, and discovers nothing anew.
		for _, id := range it.links {
			if to := rc.items[id]; to != nil {
				if f := (visit.FoundLink{URL: to.url}); f.Resolve() {
					c.take(ch, f, depth, m.Depth+1, rec.URL, now)
				}
			}
		}
	}
	for i := range m.Links { // none for a 304
		f := &m.Links[i]
		if !f.Resolve() || f.ID == rec.URL {
			continue
		}
		switch to := rc.channelOf(f); {
		case to == nil:
			continue // a channel with no copy yet: the crawl discovers it
		case to == ch && !unchanged && c.take(ch, *f, depth, m.Depth+1, rec.URL, now):
			continue
		}
		// Another channel's recrawl fetches it (an inter-site seed), or
		// this task's bounds refuse it.
		rc.withheld[f.ID] = rec.URL
	}
}

// withholds reports whether the crawl must not discover link id of page
// parent: the recrawl task that fetched the page did not follow it.
func (r *recrawler) withholds(parent, id uint64) bool {
	p, ok := r.withheld[id]
	return ok && p == parent
}

// noteLinks records the links of page m, whose copy is it: those within
// its channel, which a task follows when the page has not changed, and
// those into other channels, their inter-site seeds.
func (r *recrawler) noteLinks(it *ritem, m *visit.PageResult) {
	it.links = it.links[:0]
	for i := range m.Links {
		f := &m.Links[i]
		if !f.Resolve() || f.ID == m.Record.URL {
			continue
		}
		switch to := r.channelOf(f); to {
		case nil:
		case it.ch:
			it.links = append(it.links, f.ID)
		default:
			r.addInterSite(to, f.ID, f.URL, m.Depth+1)
		}
	}
}

// learnLinks records the links of copy it from the store, as noteLinks
// does; only the links to copies are known by URL.
func (r *recrawler) learnLinks(it *ritem, links []uint64) {
	it.links = it.links[:0]
	for _, id := range links {
		switch to := r.items[id]; {
		case to == nil || id == it.id:
		case to.ch == it.ch:
			it.links = append(it.links, id)
		default:
			r.addInterSite(to.ch, id, to.url, 0)
		}
	}
}

// addInterSite records that a page of another channel links to rawURL
// (URL id, at crawlDepth in the crawl) in channel to.
func (r *recrawler) addInterSite(to *rchannel, id uint64, rawURL string, crawlDepth int) {
	if _, ok := to.interSeen[id]; ok || rawURL == to.entry || len(to.interSite) >= maxInterSite {
		return
	}
	to.interSeen[id] = crawlDepth
	to.interSite = append(to.interSite, rawURL)
	r.interSite++
	if r.mgr != nil && to.added {
		r.mgr.AddInterSite(to.id, rawURL)
	}
}

// channelOf returns the channel of link f if the crawl has copies in it,
// else nil.
func (r *recrawler) channelOf(f *visit.FoundLink) *rchannel {
	id, ok := r.byKey[f.Key]
	if !ok {
		// Most links stay on hosts no rule splits, whose channel is the
		// site key's: parse the key once, not every URL.
		if u, err := url.Parse(f.Key); err == nil && !r.chans.Split(u.Host) {
			id = r.chans.Of(u)
		}
		r.byKey[f.Key] = id
	}
	if id == "" {
		var err error
		if id, err = r.chans.OfString(f.URL); err != nil {
			return nil
		}
	}
	return r.channels[id]
}

// recrawlDropped forgets URLs a visit skipped (robots.txt now forbids
// them) or the loop dropped (labelled copies).
func (c *crawl) recrawlDropped(skips []record.Skip) {
	rc := c.rc
	for _, sk := range skips {
		delete(rc.listed, sk.URL) // never fetched: its lastmod is of no use
		if it := rc.items[sk.URL]; it != nil {
			rc.setQueued(it, false)
			delete(it.ch.items, sk.URL)
			delete(rc.items, sk.URL)
			if rc.sched != nil {
				rc.sched.Gone(sk.URL)
			}
		}
		ch := rc.pending[sk.URL]
		delete(rc.pending, sk.URL)
		if ch != nil && ch.task != nil && ch.task.left[sk.URL] {
			delete(ch.task.left, sk.URL)
			if len(ch.task.left) == 0 {
				c.taskDone(ch, rc.clock.Now())
			}
		}
	}
}

// taskDone ends channel ch's recrawl: the Manager hears of it, the
// channel's rate estimate and record are brought up to date.
func (c *crawl) taskDone(ch *rchannel, rnow time.Time) {
	rc := c.rc
	t := ch.task
	rc.endTask(ch)
	rc.done++
	if r, err := recrawl.Estimate(ch.obs); err == nil {
		ch.rate = r
	}
	if !t.manager {
		ch.probes++
		return
	}
	rc.mgr.Done(t.t, recrawl.Outcome{Success: !t.failed, Changed: t.changed, Duration: t.cost, Pages: t.pages, Digests: t.digests})
}

// endTask ends ch's task: the URLs it still waits for are no longer its
// (they stay queued, and what they give still counts).
func (r *recrawler) endTask(ch *rchannel) {
	for id := range ch.task.left {
		if r.pending[id] == ch {
			delete(r.pending, id)
		}
	}
	ch.task = nil
}

// recrawled follows the links of a recrawled page that were not seen
// before (unless its task withholds them): the page changed and links
// somewhere new.
func (c *crawl) recrawled(m *visit.PageResult, now time.Time) {
	for i := range m.Links {
		f := &m.Links[i]
		if !f.Resolve() {
			continue
		}
		if c.web.has(f.ID) || f.ID == m.Record.URL {
			continue
		}
		c.batch.Links = append(c.batch.Links, record.Link{From: m.Record.URL, To: f.ID})
		// The page scheduler fetches what a recrawl finds new at once: a
		// news site's new articles, found within the recrawl that saw them.
		c.discoverAt(*f, m.Depth+1, m.Record.URL, c.rc != nil && c.rc.sched != nil, now)
	}
}
