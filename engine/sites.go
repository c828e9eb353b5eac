package engine

import (
	"fmt"
	"strings"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/robots"
	"lidi/engine/urlnorm"
	"lidi/engine/visit"
)

// discover records a URL not seen before.
func (c *crawl) discover(f visit.FoundLink, depth int, parent uint64, now time.Time) {
	c.discoverAt(f, depth, parent, false, now)
}

// discoverAt is discover, at recrawlPriority for a URL a recrawl task
// takes; it reports whether f was queued.
func (c *crawl) discoverAt(f visit.FoundLink, depth int, parent uint64, recrawl bool, now time.Time) bool {
	if c.web.has(f.ID) || !recrawl && c.rc != nil && c.rc.withholds(parent, f.ID) {
		return false
	}
	c.tally.discovered++
	s := c.siteFor(f)
	c.web.add(f.ID, s.ID)
	prio := float64(recrawlPriority)
	if !recrawl {
		prio = c.e.strategy.PagePriority(frontier.PageInfo{URL: f.URL, Depth: depth, ID: f.ID, Parent: parent})
	}
	c.nextSeq++
	rec := record.URLRecord{ID: f.ID, Site: s.ID, URL: f.URL, Depth: depth, Priority: prio, Seq: c.nextSeq, Parent: parent, Discovered: now, LastMod: f.LastMod}
	if covered, canon, by := c.detect.canonical(f.URL, now, &c.verdict); covered {
		// A rule covers it: kept for the record, never queued; its
		// canonical URL is followed instead.
		rec.State, rec.SkipReason, rec.Rule = record.URLSkipped, record.SkipRule, ruleID(by)
		c.batch.URLs = append(c.batch.URLs, rec)
		var canonID uint64
		if canon != "" {
			if g, ok := c.inScope(canon, depth); ok {
				c.discover(g, depth, parent, now)
				canonID = g.ID
			}
		}
		c.detect.ruleSkipped(rec.Rule, f.ID, s.ID, canonID, now, &c.verdict)
		c.apply(now)
		c.left(f.ID, nil)
		return false
	}
	if c.rc != nil {
		c.rc.listedAt(f) // queued: its first fetch takes the lastmod
	}
	c.batch.URLs = append(c.batch.URLs, rec)
	c.enqueued(s, 1, prio, now)
	return true
}

// enqueued counts n URLs queued on site s at prio: in the frontier, and in
// the lease of s in flight, if any.
func (c *crawl) enqueued(s *site, n int64, prio float64, now time.Time) {
	if p := s.leasing; p != nil {
		if p.since == 0 || prio < p.sincePrio {
			p.sincePrio = prio
		}
		p.since += n
	}
	c.f.Found(&s.Site, n, prio, now)
	if s.Place() == frontier.Resolving {
		// A site of an earlier run with nothing queued then was not looked
		// up at load; its first new URL needs its address.
		c.resolve(s)
	}
}

// siteFor returns the site of f, creating it (and starting its look-up) if new.
func (c *crawl) siteFor(f visit.FoundLink) *site {
	if fs := c.f.Lookup(f.Key); fs != nil {
		return c.sites[fs.ID]
	}
	c.nextSiteID++
	s := &site{Site: frontier.Site{ID: c.nextSiteID, Key: f.Key, Host: f.Host, Seq: c.nextSiteID}, port: urlnorm.Port(f.Key), delay: c.e.cfg.Delay}
	c.sites[s.ID] = s
	c.f.Add(&s.Site)
	c.batch.Sites = append(c.batch.Sites, c.record(s))
	c.resolve(s)
	return s
}

func (c *crawl) record(s *site) record.SiteRecord {
	r := record.SiteRecord{ID: s.ID, Key: s.Key, Host: s.Host, NextVisit: s.NextVisit, Failures: s.Failures, Parked: s.parked, Fetched: s.fetched}
	if s.Resolved {
		r.Addr = s.Addr.String()
	}
	if s.robots != nil {
		r.RobotsStatus, r.RobotsBody, r.RobotsFetched = s.robots.Status, s.robots.Body, s.robots.Fetched
		r.RobotsWire, r.RobotsIP = s.robots.Wire, s.robots.IP
		r.RobotsURL, r.RobotsRedirects, r.RobotsEnd = s.robots.URL, s.robots.Redirects, s.robots.End
	}
	return r
}

// park gives up on a site for errors.park_for, or for good once its
// errors.park_rounds are spent: a round is errors.park_after failures in a
// row, and the count goes on across rounds until a page answers.
func (c *crawl) park(s *site, now time.Time, why string) {
	if s.parked {
		return
	}
	s.parked = true
	c.f.Park(&s.Site, now)
	s.failWhy = strings.TrimPrefix(why, s.Key+": ")
	round := s.Failures / c.e.cfg.ParkAfter
	if c.roundsLeft(s) {
		s.NextVisit = now.Add(c.e.cfg.ParkFor)
		c.parkedSites = append(c.parkedSites, s)
		why = fmt.Sprintf("%s; parked until %s (round %d of %d)", why, s.NextVisit.Format(time.TimeOnly), round, c.e.cfg.ParkRounds)
	} else {
		why = fmt.Sprintf("%s; given up after %d rounds", why, c.e.cfg.ParkRounds)
		if c.rc != nil {
			c.rc.siteGivenUp(s.ID)
		}
	}
	c.batch.Sites = append(c.batch.Sites, c.record(s))
	c.e.event(record.Event{Time: now, Kind: record.EventParked, Site: s.Key, Text: why})
}

// parkNow reports whether a site's failures complete a round.
func (c *crawl) parkNow(s *site) bool {
	return s.Failures > 0 && s.Failures%c.e.cfg.ParkAfter == 0
}

// roundsLeft reports whether a parked site is to be tried again.
func (c *crawl) roundsLeft(s *site) bool {
	return s.Failures < c.e.cfg.ParkAfter*c.e.cfg.ParkRounds
}

// retry tries again the look-ups and parked sites that are due.
func (c *crawl) retry(now time.Time) {
	keep := c.dns.retry[:0]
	for _, r := range c.dns.retry {
		if r.at.After(now) {
			keep = append(keep, r)
			continue
		}
		if !r.site.parked && !r.site.Resolved {
			c.f.Unpark(&r.site.Site, now)
			c.resolve(r.site)
		}
	}
	clear(c.dns.retry[len(keep):])
	c.dns.retry = keep
	parked := c.parkedSites[:0]
	for _, s := range c.parkedSites {
		if s.NextVisit.After(now) {
			parked = append(parked, s)
			continue
		}
		s.parked = false
		c.f.Unpark(&s.Site, now)
		if !s.Resolved {
			c.resolve(s)
		}
		c.batch.Sites = append(c.batch.Sites, c.record(s))
		c.e.event(record.Event{Time: now, Kind: record.EventUnparked, Site: s.Key, Text: fmt.Sprintf("%s tried again after %d failures", s.Key, s.Failures)})
	}
	clear(c.parkedSites[len(parked):])
	c.parkedSites = parked
}

func (c *crawl) backoff(failures int) time.Duration {
	d := c.e.cfg.BackoffBase
	for i := 1; i < failures && d < c.e.cfg.BackoffMax; i++ {
		d *= 2
	}
	return min(d, c.e.cfg.BackoffMax)
}

func (c *crawl) delayFor(r *robots.Rules) time.Duration {
	d := c.e.cfg.Delay
	if cd := r.CrawlDelay(c.e.cfg.UserAgent); cd > d {
		d = min(cd, c.e.cfg.MaxDelay)
	}
	return d
}
