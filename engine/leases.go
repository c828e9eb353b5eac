package engine

import (
	"fmt"
	"maps"
	"math"
	"time"

	"lidi/engine/record"
	"lidi/engine/visit"
)

// dispatch takes sites from the frontier while robots are free and asks the
// committer for the head of each one's queue, after everything found so
// far; onHead turns the answer into a lease.
//
// It takes a site only while the committer's queue has room for the batch
// and the head request, and the bytes it holds room for the batch's: when
// the store is slow (a write can take seconds on a loaded machine), the
// loop would otherwise wait for it once per site in one wake-up, deaf to
// robots and the console meanwhile; the sites left are taken at the next
// wake-up.
func (c *crawl) dispatch(now time.Time) {
	e := c.e
	for int64(c.leases.busy) < e.robots.Load() && c.leases.heading < cap(c.leases.heads) && len(e.commit.in)+2 <= cap(e.commit.in) && e.commit.held.fits(c.batch.Bytes()) {
		budget := int64(e.cfg.PagesPerVisit)
		if e.cfg.MaxPages > 0 {
			// Near limits.max_pages what is left is shared among the
			// robots that can work (free ones, at most one per site
			// with pages pending and no visit in flight), so r visits
			// still run at once while a crawl of a few sites keeps c
			// pages per connection; the last visits take only what
			// is left. Sites still waiting for their address or their
			// delay count: counting only those ready this instant gave
			// the first site resolved after a restart every page left.
			left := e.cfg.MaxPages - c.tally.fetches - c.leases.planned
			if left <= 0 {
				return
			}
			share := max(1, min(e.robots.Load()-int64(c.leases.busy), int64(c.visitable())))
			budget = min(budget, left, (left+share-1)/share)
		}
		fs := c.next(now)
		if fs == nil {
			return
		}
		s := c.sites[fs.ID]
		c.steps.mark(StepDispatch)
		c.flush()
		s.leasing = &leasing{budget: budget}
		c.leases.heading++
		c.leases.busy++
		c.leases.planned += budget
		e.commit.in <- headReq{site: s.ID, n: int(budget), reply: c.leases.heads}
		c.steps.mark(StepStore)
	}
}

// onHead makes the lease of a site whose queue head has arrived: the URLs
// pruned by duplicate detection since they were queued are dropped (the
// originals they copy queued instead) and the rest go to the dispatcher.
func (c *crawl) onHead(h headReply, now time.Time) {
	e := c.e
	s := c.sites[h.site]
	p := s.leasing
	s.leasing = nil
	c.leases.heading--
	if !c.reprio.fetchHeld {
		h = cutHeld(h)
	}
	c.f.Take(&s.Site, int64(len(h.urls)), h.next)
	if !h.more && h.err == nil {
		// Storage holds nothing else queued, but for what was found
		// since the head was asked for.
		c.f.Drop(&s.Site, s.Pending-p.since)
		s.HeadPriority = p.sincePrio
	} else if p.since > 0 && p.sincePrio < s.HeadPriority {
		s.HeadPriority = p.sincePrio
	}
	if p.reprio && s.Pending > 0 && p.reprioHead < s.HeadPriority {
		// Re-ordered after the head was read: the queue left holds them.
		s.HeadPriority = p.reprioHead
	}
	urls := h.urls[:0]
	var taken map[uint64]int    // copies a candidate rule covers in this lease
	var awaited map[string]bool // canonical URLs queued ahead for this lease's copies
	deferred, deferPrio := 0, math.Inf(1)
	for _, q := range h.urls {
		covered, canon, by := c.detect.canonical(q.URL, now, &c.verdict)
		if !covered {
			if c.awaitsCanonical(q, now, &awaited) {
				deferred++
				deferPrio = min(deferPrio, q.Priority)
				continue
			}
			if c.detect.on() {
				// A lease takes no more copies of a rule not yet learned
				// than its evidence needs: the rest wait for the next
				// lease, which the rule may then spare.
				if cand, need, ok := c.detect.det.Unproven(q.URL); ok {
					if taken == nil {
						taken = make(map[uint64]int)
					}
					if taken[cand] >= need {
						deferred++
						deferPrio = min(deferPrio, q.Priority)
						continue
					}
					taken[cand]++
				}
			}
			urls = append(urls, q)
			continue
		}
		// Queued before a rule that covers it was learned: its canonical
		// URL is followed instead.
		rule := ruleID(by)
		c.batch.Skips = append(c.batch.Skips, record.Skip{URL: q.ID, Reason: record.SkipRule, Rule: rule})
		if c.rc != nil {
			c.recrawlDropped(c.batch.Skips[len(c.batch.Skips)-1:])
		}
		c.tally.skipped[record.SkipRule]++
		var canonID uint64
		if canon != "" {
			if f, ok := c.inScope(canon, q.Depth); ok {
				c.discover(f, q.Depth, q.ID, now)
				canonID = f.ID
			}
		}
		c.detect.ruleSkipped(rule, q.ID, s.ID, canonID, now, &c.verdict)
		c.apply(now)
		c.left(q.ID, nil)
	}
	if deferred > 0 {
		c.f.Found(&s.Site, int64(deferred), deferPrio, now) // still queued
	}
	if h.err != nil || len(urls) == 0 || e.paused.Load() || e.stopping.Load() {
		// Nothing to fetch, or no fetching now: the site goes back as it
		// was, its URLs still queued.
		if h.err != nil {
			c.tally.errKinds[visit.FailureStore]++
		}
		c.leases.busy--
		c.leases.planned -= p.budget
		if len(urls) > 0 {
			c.f.Found(&s.Site, int64(len(urls)), bestPriority(urls, nil), now)
		}
		c.f.Release(&s.Site, s.NextVisit, now)
		return
	}
	c.detect.canonicalFirst(urls) // only a lease handed out is ordered
	c.leases.planned -= p.budget - int64(len(urls))
	c.leases.next++
	l := &visit.Lease{ID: c.leases.next, Site: s.ID, Key: s.Key, Host: s.Host, Addr: s.Addr, Port: s.port,
		Delay: s.delay, NotBefore: s.NextVisit, URLs: urls}
	if s.robots != nil && now.Sub(s.robots.Fetched) < e.cfg.RobotsTTL {
		l.Robots, l.Rules = s.robots, s.rules
	}
	l.RobotsAddrs = maps.Clone(s.robotsAddrs) // the loop adds to its own while a lease it gave up on may still run
	c.leaseTries(l)
	l.Deadline = maxTime(now, l.NotBefore).Add(c.leaseTime(len(urls), s.delay))
	if c.detect.on() {
		l.Feed = visit.NewFeed(len(urls))
	}
	run := &leaseRun{lease: l, site: s, planned: int64(len(urls)),
		tracker: &visitTracker{site: s.Key, planned: len(urls), started: now}}
	c.leases.runs[l.ID] = run
	e.mu.Lock()
	e.visits[s.ID] = run.tracker
	e.mu.Unlock()
	e.dispatch.Dispatch(c.visitCtx, l, c.report)
}

// leaseTime is how long a lease of n pages, delay apart, may take: a
// second a page beyond the delay, and one page's longest fetch.
func (c *crawl) leaseTime(n int, delay time.Duration) time.Duration {
	fc := c.e.cfg.Fetch
	slowest := max(fc.ConnectTimeout+fc.BodyTimeout, c.e.cfg.LeaseSlack)
	return time.Duration(n+1)*(delay+time.Second) + slowest
}

// report passes a robot's result to the loop; once the loop has returned,
// it drops it.
//
// It waits while the results queued hold their share of
// storage.max_pending_mb: the loop, which waits for the store, takes them.
func (c *crawl) report(r visit.Result) {
	n := resultBytes(r)
	if c.e.results.take(c.closed, n) {
		select {
		case c.leases.results <- r:
			return
		case <-c.closed:
			c.e.results.release(n)
		}
	}
	if r.Committed != nil {
		r.Committed(ErrStopped)
	}
}

// expire ends the leases whose end never came, deadline and grace past:
// their URLs not reported fetched are queued again. A robot obeys the deadline by its own clock, which may run a little
// behind the loop's: the grace covers that (cluster.lease_grace), and the
// site's delay runs from the end of the grace, as if its last request had
// started then.
func (c *crawl) expire(now time.Time) {
	for _, run := range c.leases.runs {
		if now.Before(run.lease.Deadline.Add(c.e.cfg.LeaseGrace)) {
			continue
		}
		end := &visit.LeaseEnd{Next: now.Add(run.lease.Delay), Delay: run.lease.Delay, Failure: visit.FailureExpired}
		for _, q := range run.lease.URLs[run.upTo:] {
			end.Returned = append(end.Returned, q.ID)
		}
		c.onLeaseEnd(run, end, now)
	}
}

// onResult applies a robot's result once, in its lease's order.
func (c *crawl) onResult(r visit.Result, now time.Time) {
	if r.Committed != nil {
		c.batch.committed = append(c.batch.committed, r.Committed)
	}
	run := c.leases.runs[r.Lease]
	if run == nil || r.Seq <= run.seq {
		return // ended, expired, of an earlier run, or delivered before
	}
	if r.Seq > run.seq+1 {
		if run.early == nil {
			run.early = make(map[int]visit.Result)
		}
		run.early[r.Seq] = r
		return
	}
	for {
		run.seq = r.Seq
		switch {
		case r.Page != nil:
			if run.wants(r.Page) {
				c.onPage(run, r.Page, now)
			}
			if f := run.lease.Feed; f != nil {
				f.Applied <- run.seq // never blocks: one per page
			}
		case r.End != nil:
			c.onLeaseEnd(run, run.wanted(r.End), now)
			return
		}
		next, ok := run.early[run.seq+1]
		if !ok {
			return
		}
		delete(run.early, next.Seq)
		r = next
	}
}

// onLeaseEnd ends a lease: its URLs not fetched go back to the site's
// queue and the site to the frontier, after its delay or a back-off.
func (c *crawl) onLeaseEnd(run *leaseRun, m *visit.LeaseEnd, now time.Time) {
	e := c.e
	s := run.site
	delete(c.leases.runs, run.lease.ID)
	c.leases.busy--
	c.recrawlVisitEnd(s, run.tracker.started, m.Fetched, now)
	c.leases.planned -= run.planned
	e.mu.Lock()
	delete(e.visits, s.ID)
	e.mu.Unlock()
	unresolved, giveUp := "", ""
	if m.Robots != nil {
		unresolved, giveUp = c.robotsOutcome(s, m, now)
	}
	c.robotsFound(m, now)
	if m.Delay > 0 {
		s.delay = min(m.Delay, max(e.cfg.MaxDelay, e.cfg.Delay))
	}
	c.retried(run.lease, m)
	c.adaptDelay(s, m)
	for _, sk := range m.Skips {
		c.batch.Skips = append(c.batch.Skips, sk)
		c.tally.skipped[sk.Reason]++
		c.left(sk.URL, nil)
		c.detect.probeUnanswered(sk.URL, now, &c.verdict)
		c.apply(now)
	}
	if c.rc != nil && len(m.Skips) > 0 {
		c.recrawlDropped(m.Skips)
	}
	returned := int64(len(m.Returned))
	retPrio := bestPriority(run.lease.URLs, m.Returned)
	next := m.Next
	switch {
	case m.Failure == visit.FailureExpired:
		// The robot's fault, not the site's.
		c.tally.errKinds[m.Failure]++
	case m.Failed || m.BackedOff:
		s.Failures++
		if m.Failure != visit.FailureNone {
			c.tally.errKinds[m.Failure]++
		}
		if m.Fetched == 0 || m.Failed && m.Fetched == 1 {
			why := fmt.Sprintf("%s: %s", s.Key, m.Failure)
			if m.Robots != nil && m.Robots.Status >= 0 {
				why = fmt.Sprintf("%s: robots.txt answered %d", s.Key, m.Robots.Status)
			}
			c.seedFailed(s, why, now)
		}
		if c.parkNow(s) {
			c.f.Found(&s.Site, returned, retPrio, now)
			c.f.Release(&s.Site, next, now)
			last := string(m.Failure)
			if m.Robots != nil && s.robots == nil && s.robotsWhy != "" {
				last = "robots.txt " + s.robotsWhy
			}
			c.park(s, now, fmt.Sprintf("%s: %d failed visits in a row (last: %s)", s.Key, s.Failures, last))
			return
		}
		if m.Failed || !m.RetryAfter && m.Robots == nil {
			// A failure, or 429/503 without Retry-After: back off
			// exponentially. A 5xx robots.txt has its own retry time.
			next = maxTime(next, now.Add(c.backoff(s.Failures)))
		}
	case m.Fetched > 0:
		s.Failures = 0
	}
	if returned > 0 {
		c.f.Found(&s.Site, returned, retPrio, now)
	}
	c.f.Release(&s.Site, next, now)
	if unresolved != "" {
		c.lookupRobotsHost(s, unresolved, now)
	}
	if giveUp != "" {
		c.giveUp(s, giveUp, now)
	}
	c.batch.Sites = append(c.batch.Sites, c.record(s))
}

// bestPriority returns the best priority among urls, or among those whose
// IDs are listed in only (in the order of urls) when only is not nil.
func bestPriority(urls []record.QueuedURL, only []uint64) float64 {
	best, first := 0.0, true
	for _, q := range urls {
		if only != nil {
			if len(only) == 0 {
				break
			}
			if q.ID != only[0] {
				continue
			}
			only = only[1:]
		}
		if first || q.Priority < best {
			best, first = q.Priority, false
		}
	}
	return best
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// refilter applies what duplicate detection learned from a page of a
// running lease to the rest of that lease, as onHead would have had it
// known it then: the URLs a rule now covers, and the copies of a
// candidate rule beyond what its evidence still needs, are revoked (see
// visit.Feed). The robot returns them unfetched and they are decided
// again when the site's queue is next read (skipped under the rule, or
// fetched if it never came). Each URL is revoked once; URLs queued for a
// recrawl are left to the recrawler.
func (c *crawl) refilter(run *leaseRun) {
	det := c.detect.det
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
