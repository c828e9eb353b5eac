package engine

import (
	"fmt"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/record"
)

// The loop drives a frontier.Reprioritizer (the "batch" and "partial"
// strategies) as its documentation asks: Fetched for every page leaving the
// queue, before any link of the page is discovered; each new priority is
// written to the store with the URL (the site's queue re-orders) and the
// site's best priority goes to the Frontier; sites are picked with
// NextUnheld and a visit takes no page the strategy holds back.
//
// The strategy's own PageRank runs inside Fetched, in the loop goroutine:
// for Batch the crawl has nothing to fetch until the next batch is known
// anyway; for Partial it stalls the loop for one PageRank every K pages.

// reprioritizer is what driving a frontier.Reprioritizer needs; rp is
// nil for the other strategies.
type reprioritizer struct {
	rp        frontier.Reprioritizer
	update    func(uint64, float64)
	touched   map[int64]siteTouch
	fetchHeld bool
	links     []uint64 // scratch: a page's links, for Fetched
}

// siteTouch is what one Fetched call changed in a site's queue.
type siteTouch struct {
	best float64 // the best new priority
	n    int64   // priorities changed
}

// reprioritize is the update function given to the strategy.
func (c *crawl) reprioritize(id uint64, prio float64) {
	n, ok := c.web.node(id)
	if !ok {
		return // first found on the page being learnt: PagePriority answers
	}
	c.batch.Priorities = append(c.batch.Priorities, record.PriorityUpdate{URL: id, Priority: prio})
	site := c.web.siteOf(n)
	if site <= 0 {
		return // known from an earlier run: its site learns at its next visit
	}
	t, ok := c.reprio.touched[site]
	if !ok || prio < t.best {
		t.best = prio
	}
	t.n++
	c.reprio.touched[site] = t
}

// left tells the strategy that the page id left the queue, with links
// (nil when it was not fetched or its links are not followed), and applies
// the priorities it changed.
func (c *crawl) left(id uint64, links []uint64) {
	if c.reprio.rp == nil {
		return
	}
	c.reprio.rp.Fetched(id, links, c.reprio.update)
	c.applyTouched()
}

// applyTouched gives the Frontier the new best priority of each site whose
// queue the strategy changed. When every queued page of a site changed, the
// best new priority is its head; otherwise the head is the better of it and
// the old head (exact when priorities only improve, as between two runs of
// Partial; a little optimistic otherwise, until the site's next visit reads
// its true head).
func (c *crawl) applyTouched() {
	for id, t := range c.reprio.touched {
		delete(c.reprio.touched, id)
		s := c.sites[id]
		if s == nil || s.parked {
			continue
		}
		head := t.best
		if t.n < s.Pending {
			head = min(head, s.HeadPriority)
		}
		if p := s.leasing; p != nil {
			// The lease's head is on its way, read before these
			// priorities were written: onHead takes them into account.
			if !p.reprio || head < p.reprioHead {
				p.reprioHead = head
			}
			p.reprio = true
			continue
		}
		if s.Pending > 0 {
			c.f.Reprioritized(&s.Site, head)
		}
	}
}

// next picks the site to visit. A strategy that holds pages back can leave
// the crawl with nothing to do but Held pages and nothing in flight: the
// pages it waits for left the queue unseen (a parked site, a mirror's
// dropped directory) or it lost its state (a resumed crawl). It is then
// asked to release pages (frontier.Unholder); failing that, held pages are
// fetched anyway, in queue order.
func (c *crawl) next(now time.Time) *frontier.Site {
	if c.reprio.fetchHeld {
		return c.f.Next(now)
	}
	if fs := c.f.NextUnheld(now); fs != nil || c.reprio.rp == nil || !c.stalled(now) {
		return fs
	}
	if u, ok := c.reprio.rp.(frontier.Unholder); ok && u.Unhold(c.reprio.update) {
		c.applyTouched()
		if fs := c.f.NextUnheld(now); fs != nil || !c.stalled(now) {
			return fs
		}
	}
	c.reprio.fetchHeld = true
	text := fmt.Sprintf("strategy %s holds every queued page and releases none: fetching them in queue order", c.e.strategy.Name())
	c.e.event(record.Event{Time: now, Kind: record.EventStrategy, Text: text})
	return c.f.Next(now)
}

// stalled reports whether ready sites are all the crawl has to go on:
// nothing in flight, nothing waiting for DNS or an address, and no site due
// within its politeness delay (a site backing off after errors, or after a
// 5xx robots.txt, may keep the pages a strategy waits for for many
// minutes; they are fetched when it comes back, but not waited for).
func (c *crawl) stalled(now time.Time) bool {
	f := c.f
	if c.leases.busy > 0 || c.dns.running > 0 || len(c.dns.queue) > 0 || f.Count(frontier.Ready) == 0 ||
		f.Count(frontier.Resolving)+f.Count(frontier.Blocked) > 0 {
		return false
	}
	soonest := f.WaitingSoonest(1)
	if len(soonest) == 0 {
		return true
	}
	s := c.sites[soonest[0].ID]
	return s.NextVisit.Sub(now) > s.delay
}

// cutHeld drops from a visit's head the pages the strategy holds back:
// the head is in priority order and Held is the worst priority.
func cutHeld(h headReply) headReply {
	for i, q := range h.urls {
		if q.Priority == frontier.Held {
			h.urls, h.next, h.more = h.urls[:i], frontier.Held, true
			break
		}
	}
	return h
}
