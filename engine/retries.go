package engine

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// retries is what the loop keeps of the sites that refuse or cannot be
// reached (docs/politeness.md): the tries of pages answered 429 or 503,
// the sites given up for the run, and the sitemaps read.
type retries struct {
	// tries counts the answers 429 or 503 of URLs queued again for them
	// (visit.LeaseEnd.Retried), until the URL is fetched; the store keeps
	// the count (record.Batch.SlowDowns) and gives it back with the URL
	// (record.QueuedURL.SlowDowns), so a later run goes on from it.
	tries map[uint64]int
	// givenUp lists the sites given up for this run and why, for the
	// crawl's end (giveUp).
	givenUp  []string
	lastLook time.Time // when onlyRetries last looked
	sitemaps SitemapStats
	// chains are the latest robots.txt redirect chains (Stats.RobotsChains),
	// chained the number of sites whose robots.txt redirected.
	chains  []RobotsChain
	chained int64
}

// maxChains is how many robots.txt redirect chains Stats shows.
const maxChains = 32

// robotsChain notes where the robots.txt of site key was read, when it
// took redirects.
func (r *retries) robotsChain(key string, f *visit.RobotsFile) {
	if f == nil || len(f.Redirects) == 0 {
		return
	}
	i := slices.IndexFunc(r.chains, func(c RobotsChain) bool { return c.Site == key })
	if i >= 0 {
		r.chains = slices.Delete(r.chains, i, i+1)
	} else {
		r.chained++
	}
	if len(r.chains) == maxChains {
		r.chains = slices.Delete(r.chains, 0, 1)
	}
	r.chains = append(r.chains, RobotsChain{Site: key, Redirects: f.Redirects, URL: f.URL, Status: f.Status, End: f.End})
}

// SitemapStats counts the sitemaps a crawl read. It is a plain value.
type SitemapStats struct {
	Named   int64 // sitemaps named by robots.txt files, in scope, queued
	Read    int64 // sitemap files fetched and read (urlset, index or text)
	Refused int64 // of them, read only in part: a protocol limit broken, or malformed
	URLs    int64 // entries in scope, followed as links
	OffSite int64 // entries refused by the cross-host rule
}

// leaseTries fills a lease's tries of earlier 429 and 503 answers, this
// run's or, for a URL of an earlier run, the store's.
func (c *crawl) leaseTries(l *visit.Lease) {
	for _, q := range l.URLs {
		if n := max(c.retries.tries[q.ID], q.SlowDowns); n > 0 {
			if l.Tries == nil {
				l.Tries = make(map[uint64]int)
			}
			l.Tries[q.ID] = n
		}
	}
}

// retried counts the tries of the pages a lease gave back after a 429 or
// 503, and has the store keep the count; l is the lease.
func (c *crawl) retried(l *visit.Lease, m *visit.LeaseEnd) {
	for _, id := range m.Retried {
		if c.retries.tries == nil {
			c.retries.tries = make(map[uint64]int)
		}
		c.retries.tries[id] = max(c.retries.tries[id], l.Tries[id]) + 1 // l.Tries: leaseTries's, an earlier run's included
		c.batch.SlowDowns = append(c.batch.SlowDowns, record.SlowDown{URL: id, Tries: c.retries.tries[id]})
		c.seeds.answered = true // a 429 or 503 is an answer, as when it is recorded (onPage)
	}
}

// adaptDelay grows the delay of a site answering 429 or 503 (doubled, up
// to politeness.max_delay), as Heritrix and StormCrawler slow down for a
// server that says it is overwhelmed, and shrinks it back by halves
// towards its own (w, or robots.txt's Crawl-delay) with each visit that
// fetched pages without one.
func (c *crawl) adaptDelay(s *site, m *visit.LeaseEnd) {
	base := c.delayFor(s.rules)
	switch {
	case m.Failure == visit.SlowDown(http.StatusTooManyRequests) || m.Failure == visit.SlowDown(http.StatusServiceUnavailable):
		s.delay = min(max(2*s.delay, base, time.Millisecond), max(c.e.cfg.MaxDelay, base))
	case m.Fetched > 0 && !m.BackedOff && !m.Failed && s.delay > base:
		s.delay = max(s.delay/2, base)
	}
}

// robotsOutcome takes in the robots.txt a lease fetched. It returns the
// host a redirect leads to that the loop must resolve first (the file is
// not known yet), and why the site is to be given up for the run when its
// robots.txt stayed unreachable robots_txt.tries times in a row.
func (c *crawl) robotsOutcome(s *site, m *visit.LeaseEnd, now time.Time) (unresolved, giveUp string) {
	e := c.e
	if m.Robots.Unresolved != "" {
		return m.Robots.Unresolved, "" // no file yet: fetched again once the host is resolved
	}
	s.robots, s.rules = m.Robots, m.Rules
	c.retries.robotsChain(s.Key, m.Robots)
	if s.rules == nil {
		s.rules = m.Robots.Rules()
	}
	if !s.rules.Kind().Temporary() {
		s.robotsTries = 0
		return "", ""
	}
	what := fmt.Sprintf("answered %d", m.Robots.Status)
	if m.Robots.Status < 0 {
		what = "unreachable (" + string(m.Failure) + ")"
	}
	s.robotsTries++
	s.robotsWhy = what
	if s.robotsTries >= e.cfg.RobotsTries {
		giveUp = fmt.Sprintf("robots.txt %s, %d times in a row", what, s.robotsTries)
	} else {
		e.event(record.Event{Time: now, Kind: record.EventRobots5xx, Site: s.Key, Text: fmt.Sprintf("robots.txt %s: nothing fetched until %s (try %d of %d, robots_txt.tries)", what, m.Next.Format(time.TimeOnly), s.robotsTries, e.cfg.RobotsTries)})
	}
	s.robots, s.rules = nil, nil // fetched again at the next visit
	return "", giveUp
}

// lookupRobotsHost looks up host, where the robots.txt of s redirects
// (visit.RobotsFile.Unresolved: a robot never resolves names), keeping s
// out of the schedule until the answer: with it, the next visit follows
// the chain further (visit.Lease.RobotsAddrs).
func (c *crawl) lookupRobotsHost(s *site, host string, now time.Time) {
	c.f.Park(&s.Site, now)
	c.dns.running++
	go func() {
		addr, err := c.e.resolver.Lookup(context.Background(), host)
		c.dns.out <- dnsResult{site: s, addr: addr, err: err, robotsHost: host}
	}()
}

// onRobotsHost puts back a site whose robots.txt redirect host was looked
// up. A host that does not resolve makes robots.txt unreachable: nothing
// is fetched until robots_txt.retry.
func (c *crawl) onRobotsHost(r dnsResult, now time.Time) {
	s := r.site
	if r.err != nil {
		c.tally.errKinds[visit.FailureDNS]++
		s.NextVisit = maxTime(s.NextVisit, now.Add(c.e.cfg.RobotsRetry))
		c.e.event(record.Event{Time: now, Kind: record.EventRobots5xx, Site: s.Key, Text: fmt.Sprintf("robots.txt redirects to %s, whose DNS look-up failed (%v): nothing fetched until %s", r.robotsHost, r.err, s.NextVisit.Format(time.TimeOnly))})
	} else {
		if s.robotsAddrs == nil {
			s.robotsAddrs = make(map[string]netip.Addr)
		}
		s.robotsAddrs[r.robotsHost] = r.addr
	}
	c.f.Unpark(&s.Site, now)
}

// giveUp leaves s alone for the rest of the run: robots.txt stayed
// unreachable, or only its retries were left (onlyRetries). It is not
// parked in the store: the next run tries it again at once.
func (c *crawl) giveUp(s *site, why string, now time.Time) {
	if s.givenUp != "" || s.parked {
		return
	}
	s.givenUp = why
	if c.rc != nil {
		c.rc.siteGivenUp(s.ID)
	}
	c.seedFailed(s, s.Key+": "+why, now)
	c.f.Park(&s.Site, now)
	s.NextVisit = now
	c.batch.Sites = append(c.batch.Sites, c.record(s))
	c.retries.givenUp = append(c.retries.givenUp, s.Key+" ("+why+")")
	c.e.event(record.Event{Time: now, Kind: record.EventParked, Site: s.Key, Text: fmt.Sprintf("%s: %s; given up for this run (the next run tries again)", s.Key, why)})
}

// onlyRetries gives up, when nothing else is left to do, the sites that
// wait only to ask for their robots.txt again: a crawl does not sit for
// robots_txt.retry when nothing else is left (a later run tries them). It
// looks at most once a second, and only when no site is being visited,
// ready or resolved.
func (c *crawl) onlyRetries(now time.Time) {
	if c.leases.busy > 0 || c.dns.running > 0 || c.f.Count(frontier.Ready)+c.f.Count(frontier.Blocked)+c.f.Count(frontier.Resolving) > 0 ||
		c.f.Count(frontier.Waiting) == 0 || now.Sub(c.retries.lastLook) < time.Second {
		return
	}
	c.retries.lastLook = now
	var retrying []*site
	for _, s := range c.sites {
		if s.Place() != frontier.Waiting {
			continue
		}
		// Waiting for robots.txt again: after this run's tries, or as an
		// earlier run left it (failed, with no file kept).
		if s.robotsTries == 0 && (s.robots != nil || s.Failures == 0) {
			return // a site waits for its delay or a back-off: not only retries
		}
		retrying = append(retrying, s)
	}
	slices.SortFunc(retrying, func(a, b *site) int { return cmp.Compare(a.ID, b.ID) })
	for _, s := range retrying {
		why := "robots.txt unreachable in an earlier run"
		if s.robotsTries > 0 {
			why = fmt.Sprintf("robots.txt %s, try %d of %d; its retry was all that was left", s.robotsWhy, s.robotsTries, c.e.cfg.RobotsTries)
		}
		c.giveUp(s, why, now)
	}
}

// endDetail names, for the crawl's end, the sites left for a later run
// and those given up for this one, each with why.
func (c *crawl) endDetail() string {
	var later []string
	for _, r := range c.dns.retry {
		if r.site.Pending > 0 {
			later = append(later, r.site.Key+" ("+r.site.failWhy+")")
		}
	}
	for _, s := range c.parkedSites {
		if s.Pending > 0 {
			later = append(later, s.Key+" ("+s.failWhy+")")
		}
	}
	var parts []string
	if len(later) > 0 {
		// Their retries are hours away: the next run tries them.
		parts = append(parts, fmt.Sprintf("%d failed sites to be tried again by a later run: %s", len(later), strings.Join(later, ", ")))
	}
	if len(c.retries.givenUp) > 0 {
		parts = append(parts, "given up for this run: "+strings.Join(c.retries.givenUp, ", "))
	}
	return strings.Join(parts, "; ")
}

// sitemapRead counts a sitemap fetched, and says so when it was refused.
func (c *crawl) sitemapRead(s *site, m *visit.PageResult, now time.Time) {
	sm := m.Sitemap
	st := &c.retries.sitemaps
	st.Read++
	st.URLs += int64(sm.Entries)
	st.OffSite += int64(sm.OffSite)
	if sm.Err != "" {
		st.Refused++
		c.e.event(record.Event{Time: now, Kind: record.EventSitemap, Site: s.Key, Text: fmt.Sprintf("sitemap %s refused after %d URLs: %s", m.URL, sm.Entries, sm.Err)})
	}
}

// robotsFound queues the sitemaps a robots.txt named as its links: one
// step from the site's root.
func (c *crawl) robotsFound(m *visit.LeaseEnd, now time.Time) {
	for _, f := range m.Found {
		if f.Resolve() {
			c.retries.sitemaps.Named++
			c.discover(f, 1, 0, now)
		}
	}
}
