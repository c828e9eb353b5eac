package engine

import (
	"context"
	"fmt"
	"time"

	"lidi/engine/record"
	"lidi/engine/visit"
)

// resolve looks the site's host up in the background, a few at a time, as
// soon as the site is known, so that no robot waits on DNS.
func (c *crawl) resolve(s *site) {
	if s.lookingUp {
		return
	}
	s.lookingUp = true
	c.startLookup(s)
}

// startLookup starts the look-up of a site marked lookingUp, or queues it
// while ResolveAhead look-ups are under way.
func (c *crawl) startLookup(s *site) {
	if c.dns.running >= c.e.cfg.ResolveAhead {
		c.dns.queue = append(c.dns.queue, s)
		return
	}
	c.dns.running++
	go func() {
		addr, err := c.e.resolver.Lookup(context.Background(), s.Host)
		c.dns.out <- dnsResult{site: s, addr: addr, err: err}
	}()
}

func (c *crawl) onResolved(r dnsResult, now time.Time) {
	c.dns.running--
	if len(c.dns.queue) > 0 {
		next := c.dns.queue[0]
		c.dns.queue = c.dns.queue[1:]
		c.startLookup(next)
	}
	if r.robotsHost != "" {
		c.onRobotsHost(r, now)
		return
	}
	s := r.site
	s.lookingUp = false
	if r.err != nil {
		c.tally.errKinds[visit.FailureDNS]++
		s.Failures++
		why := fmt.Sprintf("%s: DNS look-up failed: %v", s.Host, r.err)
		s.failWhy = fmt.Sprintf("DNS look-up failed: %v", r.err)
		c.seedFailed(s, why, now)
		if c.parkNow(s) {
			c.park(s, now, why)
			return
		}
		at := now.Add(c.e.cfg.ResolveFailed)
		c.dns.retry = append(c.dns.retry, dnsRetry{s, at})
		c.f.Park(&s.Site, now) // set aside until then
		c.e.event(record.Event{Time: now, Kind: record.EventDNSFailed, Site: s.Key, Text: fmt.Sprintf("%s; tried again at %s (dns.retry)", why, at.Format(time.TimeOnly))})
		c.batch.Sites = append(c.batch.Sites, c.record(s))
		return
	}
	c.f.Resolved(&s.Site, r.addr, now)
	if !s.parked {
		c.batch.Sites = append(c.batch.Sites, c.record(s))
	}
}
