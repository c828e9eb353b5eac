package engine

import (
	"context"
	"fmt"

	"lidi/engine/record"
	"lidi/engine/visit"
)

// Leases that outlive a run, and results a run does not apply.

// adoptHead bounds the queue read that tells which URLs of an earlier
// run's lease the store still holds queued.
const adoptHead = 10000

// adopt takes over the leases an earlier run of a Resumer left out (a
// cluster master killed while slaves crawled): each becomes a lease of this
// run on its site, busy until its End or its deadline and grace, with the
// URLs the store still holds queued; the results of the others (stored
// already, before the earlier run ended) are not applied again. It runs
// before the committer starts, so it reads the store itself.
func (c *crawl) adopt(ctx context.Context) error {
	r, ok := c.e.dispatch.(visit.Resumer)
	if !ok {
		return nil
	}
	now := c.e.clock.Now()
	var kept []*visit.Lease
	for _, l := range r.Outstanding() {
		fs := c.f.Lookup(l.Key)
		if fs == nil {
			continue // no site of this crawl
		}
		s := c.sites[fs.ID]
		urls, complete, err := c.stillQueued(ctx, s, l.URLs)
		if err != nil {
			return fmt.Errorf("engine: lease %d of %s from an earlier run: %w", l.ID, l.Key, err)
		}
		if len(l.URLs) > 0 && len(urls) == 0 && complete {
			continue // its results are stored: it is over
		}
		if !s.Resolved && l.Addr.IsValid() {
			c.f.Resolved(&s.Site, l.Addr, now)
		}
		if !c.f.Claim(&s.Site) {
			continue // parked
		}
		c.f.Take(&s.Site, int64(len(urls)), s.HeadPriority)
		l.Site, l.URLs = s.ID, urls
		run := &leaseRun{lease: l, site: s, planned: int64(len(urls)), want: make(map[uint64]bool, len(urls)),
			tracker: &visitTracker{site: s.Key, planned: len(urls), started: now}}
		for _, q := range urls {
			run.want[q.ID] = true
		}
		c.leases.runs[l.ID] = run
		c.leases.busy++
		c.leases.planned += run.planned
		c.e.mu.Lock()
		c.e.visits[s.ID] = run.tracker
		c.e.mu.Unlock()
		kept = append(kept, l)
	}
	if len(kept) > 0 {
		c.adopted = fmt.Sprintf("; %d leases of the earlier run taken over (their sites wait for their results)", len(kept))
	}
	r.Resume(kept, c.report)
	return nil
}

// stillQueued returns those of urls the store holds queued, as it holds
// them, in the order of urls; complete is false when the site's queue was
// too long to be read whole (a URL not found may be queued still).
func (c *crawl) stillQueued(ctx context.Context, s *site, urls []record.QueuedURL) (_ []record.QueuedURL, complete bool, _ error) {
	if len(urls) == 0 || s.Pending == 0 {
		return nil, true, nil
	}
	head, _, more, err := c.e.store.Head(ctx, s.ID, int(min(s.Pending, adoptHead)))
	if err != nil {
		return nil, false, err
	}
	queued := make(map[uint64]record.QueuedURL, len(head))
	for _, q := range head {
		queued[q.ID] = q
	}
	var out []record.QueuedURL
	for _, q := range urls {
		if cur, ok := queued[q.ID]; ok {
			out = append(out, cur)
		}
	}
	return out, !more, nil
}

// wants reports whether a page of the lease is to be applied: any page of
// a lease of this run, and a page of an earlier run's lease whose URL the
// store still held queued when it was adopted (once).
func (run *leaseRun) wants(p *visit.PageResult) bool {
	if run.want == nil {
		return true
	}
	if !run.want[p.Record.URL] {
		return false
	}
	delete(run.want, p.Record.URL)
	return true
}

// wanted is the end of an earlier run's lease restricted to the URLs it
// still holds: what its robot skipped among them, and the rest returned.
func (run *leaseRun) wanted(end *visit.LeaseEnd) *visit.LeaseEnd {
	if run.want == nil {
		return end
	}
	e := *end
	e.Skips, e.Returned = nil, nil
	for _, sk := range end.Skips {
		if run.want[sk.URL] {
			e.Skips = append(e.Skips, sk)
			delete(run.want, sk.URL)
		}
	}
	for _, q := range run.lease.URLs {
		if run.want[q.ID] {
			e.Returned = append(e.Returned, q.ID)
		}
	}
	clear(run.want)
	return &e
}

// dropResults tells the results the loop leaves untaken when it returns
// that they will not be stored.
func (c *crawl) dropResults() {
	for {
		select {
		case r := <-c.leases.results:
			c.e.results.release(resultBytes(r))
			if r.Committed != nil {
				r.Committed(ErrStopped)
			}
		default:
			return
		}
	}
}

// recall passes a pause, a stop or a resumption to a dispatcher whose
// robots Robot.Halt does not reach.
func (e *Engine) recall(halt bool) {
	if r, ok := e.dispatch.(visit.Recaller); ok {
		r.Recall(halt)
	}
}
