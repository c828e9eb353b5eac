package engine

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/netip"
	"slices"
	"time"

	"lidi/engine/cputime"
	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/robots"
	"lidi/engine/urlnorm"
	"lidi/engine/visit"
)

// site is what the loop knows of a site beyond what the scheduler needs.
type site struct {
	frontier.Site
	port    int
	robots  *visit.RobotsFile // nil: unknown, or to be fetched again
	rules   *robots.Rules     // robots parsed
	delay   time.Duration     // w, raised by Crawl-delay
	fetched int64
	parked  bool
	// lookingUp is set while the host's DNS look-up is queued or under
	// way, so that each look-up is started once and none is forgotten.
	lookingUp bool

	// leasing is the head read on its way to the loop for the site's
	// next lease (nil when none is).
	leasing *leasing
}

// leasing is a site taken from the frontier whose queue head the loop has
// asked the committer for. The head holds what was queued when it was
// asked for; what the site's queue gained or had re-ordered since is
// gathered here, so that the frontier's count and head priority come out
// right when the head arrives (onHead).
type leasing struct {
	budget     int64   // pages the lease may take (c, or less near a page limit)
	since      int64   // URLs queued since
	sincePrio  float64 // the best of them
	reprio     bool    // a Reprioritizer changed the queue since
	reprioHead float64
}

// leaseRun is a lease handed to the dispatcher, as the loop follows it.
type leaseRun struct {
	lease   *visit.Lease
	site    *site
	planned int64 // pages it may still fetch (counted in crawl.planned)
	seq     int   // the last result applied
	early   map[int]visit.Result
	upTo    int // lease.URLs[upTo:] are not reported fetched
	tracker *visitTracker
	revoked []bool // lease.URLs[i] revoked (see visit.Feed); nil for none
	// want, for a lease of an earlier run (adopt.go), are its URLs the
	// store still holds queued: only their results are applied.
	want map[uint64]bool
}

// crawl is the loop's state. Only the loop goroutine touches it.
type crawl struct {
	e       *Engine
	f       *frontier.Frontier
	sites   map[int64]*site
	seen    map[uint64]int32 // URL ID -> node of graph
	graph   linkGraph
	rank    ranker
	hops    map[uint64]int // redirect chain length of queued redirect targets
	batch   *pending
	results chan visit.Result
	heads   chan headReply
	dnsOut  chan dnsResult
	closed  chan struct{} // closed when the loop has returned: late reports are dropped

	// Leases: busy counts the sites taken from the frontier, whose head
	// is being read (heading) or whose lease runs (leases).
	visitCtx   context.Context
	leases     map[uint64]*leaseRun
	nextLease  uint64
	heading    int
	busy       int
	planned    int64 // pages planned by visits in flight
	resolving  int
	toResolve  []*site
	nextSiteID int64
	nextSeq    int64

	pages, bytes, errors, discovered int64
	dup                              DupStats
	errKinds                         map[visit.FailureKind]int64
	skipped                          map[record.SkipReason]int64
	savedPause                       bool
	lastPublish                      time.Time

	// Failures retried: sites whose look-up failed, tried again after
	// dns.retry, and parked sites with rounds left, tried again after
	// errors.park_for.
	retryDNS    []dnsRetry
	parkedSites []*site

	// The seeds' sites, while the crawl has had no answer yet: when all
	// of them fail, it ends at once (SeedsFailedError).
	answered    bool
	seeds       map[int64]bool
	seedsFailed map[int64]string
	badSeeds    []string // seeds that are no URL in scope

	// A strategy that re-orders queued pages (nil for the others), and
	// what driving it needs; see reprioritize.go.
	rp        frontier.Reprioritizer
	update    func(uint64, float64)
	nodeSite  []int32 // site of each graph node, when rp is set; 0 unknown
	touched   map[int64]siteTouch
	fetchHeld bool

	followBuf []followed
	linkBuf   []uint64
	nodeBuf   []int32

	rc *recrawler // nil when recrawling is off

	// How many URLs of each site are skipped under each rule in force
	// (by dedup.Rule.ID), queued again if it is withdrawn, and pages
	// whose links wait for a probe's answer, by the probe's URL id (see
	// detect.go).
	ruleSkips  map[uint64]map[int64]int64
	awaitCanon map[uint64][]canonSkip // by canonical URL id: URLs skipped in its favour, until it answers (see canonAnswered)
	held       map[uint64][]*visit.PageResult

	adopted string // the start event's note on leases of an earlier run taken over (adopt.go)
}

type dnsRetry struct {
	site *site
	at   time.Time
}

type dnsResult struct {
	site *site
	addr netip.Addr
	err  error
}

// Run crawls until the frontier is empty, a limit is reached or ctx ends.
// It returns nil when the crawl finished, ErrStopped when ctx ended first
// (its state is saved: Run again on the same store continues it), or the
// error that stopped it.
func (e *Engine) Run(ctx context.Context) (err error) {
	c := &crawl{
		e:           e,
		f:           frontier.New(e.strategy, e.cfg.PerAddress),
		sites:       make(map[int64]*site),
		seen:        make(map[uint64]int32),
		hops:        make(map[uint64]int),
		results:     make(chan visit.Result, 1024),
		heads:       make(chan headReply, 1024),
		dnsOut:      make(chan dnsResult, 64),
		closed:      make(chan struct{}),
		leases:      make(map[uint64]*leaseRun),
		errKinds:    make(map[visit.FailureKind]int64),
		seeds:       make(map[int64]bool),
		seedsFailed: make(map[int64]string),
		skipped:     make(map[record.SkipReason]int64),
		nextSeq:     e.clock.Now().UnixNano(),
	}
	// Lease IDs, like URL sequence numbers, start at the clock so that a
	// result of an earlier run never passes for one of this run.
	c.nextLease = uint64(c.nextSeq)
	c.batch = e.commit.batch()
	if rp, ok := e.strategy.(frontier.Reprioritizer); ok {
		c.rp, c.update, c.touched = rp, c.reprioritize, make(map[int64]siteTouch)
	}
	if err := c.load(ctx); err != nil {
		e.setState(StateFailed)
		return err
	}
	if err := c.adopt(ctx); err != nil {
		e.setState(StateFailed)
		return err
	}
	commitDone := make(chan struct{})
	go func() { e.commit.run(ctx); close(commitDone) }()
	c.startRanker(e.clock.Now())
	defer func() {
		close(c.closed)
		c.dropResults()
		c.flush()
		c.stopRanker() // before the committer closes: runs write to it
		close(e.commit.in)
		<-commitDone
		if werr := e.commit.Err(); werr != nil && err == nil {
			err = fmt.Errorf("engine: writing to the store: %w", werr)
		}
		if err != nil && err != ErrStopped {
			e.setState(StateFailed)
		}
	}()
	c.addSeeds()
	c.publish(e.clock.Now(), true) // the loaded totals, before any rate is taken
	e.setState(StateRunning)
	e.event(record.Event{Kind: record.EventStart, Text: fmt.Sprintf("crawl started: %d sites, %d URLs known, %d queued%s", c.f.Len(), c.discovered, c.f.Pending(), c.adopted)})
	return c.loop(ctx)
}

func (e *Engine) setState(s RunState) {
	e.mu.Lock()
	e.st.State = s
	e.mu.Unlock()
}

// load rebuilds the crawl's state from the store.
func (c *crawl) load(ctx context.Context) error {
	e := c.e
	recs, err := e.store.Sites(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading sites: %w", err)
	}
	now := e.clock.Now()
	for _, r := range recs {
		s := &site{Site: frontier.Site{ID: r.ID, Key: r.Key, Host: r.Host, Seq: r.ID, Pending: r.Pending, NextVisit: r.NextVisit, Failures: r.Failures},
			port: urlnorm.Port(r.Key), delay: e.cfg.Delay, fetched: r.Fetched, parked: r.Parked}
		if r.RobotsStatus != 0 && now.Sub(r.RobotsFetched) < e.cfg.RobotsTTL && r.RobotsStatus < 500 && r.RobotsStatus > 0 {
			s.robots = &visit.RobotsFile{Status: r.RobotsStatus, Body: r.RobotsBody, Fetched: r.RobotsFetched, Wire: r.RobotsWire, IP: r.RobotsIP}
			s.rules = s.robots.Rules()
			s.delay = c.delayFor(s.rules)
		}
		// Pending is not known to be exact for the head priority; the
		// best guess is 0 (depth of a seed), corrected at the first visit.
		c.sites[r.ID] = s
		c.f.Add(&s.Site)
		c.nextSiteID = max(c.nextSiteID, r.ID)
		if s.parked {
			c.f.Park(&s.Site, now)
			if c.roundsLeft(s) {
				c.parkedSites = append(c.parkedSites, s)
			}
		} else if s.Pending > 0 {
			c.resolve(s)
		}
	}
	if err := e.store.URLFingerprints(ctx, func(id uint64) { c.seen[id] = c.addNode(id, 0) }); err != nil {
		return fmt.Errorf("engine: loading URLs: %w", err)
	}
	c.discovered = int64(len(c.seen))
	if err := c.loadGraph(ctx); err != nil {
		return err
	}
	if e.det != nil {
		// Duplicate detection picks up where it stopped: the fingerprints
		// of every page fetched, then the rules and soft 404s recorded.
		err := e.store.Fingerprints(ctx, func(p record.FetchedPage) {
			e.det.Restore(dedup.Page{ID: p.URL, URL: p.Addr, Digest: p.Digest, Simhash: p.Simhash, Main: p.Main, NoURL: p.NoURL, Title: p.Title, Status: p.Status})
		})
		if err != nil {
			return fmt.Errorf("engine: loading fingerprints: %w", err)
		}
		rs, err := e.store.Rules(ctx)
		if err != nil {
			return fmt.Errorf("engine: loading rules: %w", err)
		}
		for _, r := range rs {
			e.det.RestoreRule(r.Rule)
		}
		ss, err := e.store.Soft404s(ctx)
		if err != nil {
			return fmt.Errorf("engine: loading soft 404s: %w", err)
		}
		for _, s := range ss {
			e.det.RestoreSoft404(s.Sig)
		}
		if err := c.restoreDetection(ctx); err != nil {
			return err
		}
		c.dupCounts()
	}
	ct, err := e.store.Counters(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading counters: %w", err)
	}
	c.pages, c.bytes, c.errors = ct.Pages, ct.Bytes, ct.Errors
	c.answered = c.pages > 0
	if e.cfg.Recrawl.Enabled {
		return c.recrawlLoad(ctx)
	}
	return nil
}

func (c *crawl) addSeeds() {
	now := c.e.clock.Now()
	for _, raw := range c.e.cfg.Seeds {
		u, err := c.e.cfg.Normalizer.Normalize(raw)
		if err != nil {
			c.badSeed(fmt.Sprintf("%s: not a URL: %v", raw, err))
			continue
		}
		f, ok := c.e.inScope(u, 0)
		if !ok {
			c.badSeed(fmt.Sprintf("%s: out of scope", raw))
			continue
		}
		c.discover(f, 0, 0, now)
		if fs := c.f.Lookup(f.Key); fs != nil && !c.answered {
			c.seeds[fs.ID] = true
		}
	}
}

func (c *crawl) badSeed(why string) {
	c.badSeeds = append(c.badSeeds, why)
	c.e.event(record.Event{Kind: record.EventSeedFailed, Text: "seed " + why})
}

// seedFailed notes that the site of a seed failed, while nothing has
// answered yet.
func (c *crawl) seedFailed(s *site, why string, now time.Time) {
	if c.answered || !c.seeds[s.ID] {
		return
	}
	if _, ok := c.seedsFailed[s.ID]; ok {
		return
	}
	c.seedsFailed[s.ID] = why
	c.e.event(record.Event{Time: now, Kind: record.EventSeedFailed, Site: s.Key, Text: why})
}

// allSeedsFailed returns the error that ends a crawl whose every seed
// failed before anything answered, or nil.
func (c *crawl) allSeedsFailed() error {
	if c.answered || c.busy > 0 || len(c.seeds)+len(c.badSeeds) == 0 {
		return nil
	}
	if len(c.seeds) == 0 && c.f.Pending() > 0 {
		return nil // resumed: the seeds were known, their URLs fetched or queued
	}
	reasons := append([]string(nil), c.badSeeds...)
	ids := make([]int64, 0, len(c.seeds))
	for id := range c.seeds {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		why, failed := c.seedsFailed[id]
		if !failed {
			return nil
		}
		reasons = append(reasons, why)
	}
	return &SeedsFailedError{Reasons: reasons}
}

// discover records a URL not seen before.
func (c *crawl) discover(f visit.FoundLink, depth int, parent uint64, now time.Time) {
	c.discoverAt(f, depth, parent, false, now)
}

// discoverAt is discover, at recrawlPriority for a URL a recrawl task
// takes; it reports whether f was queued.
func (c *crawl) discoverAt(f visit.FoundLink, depth int, parent uint64, recrawl bool, now time.Time) bool {
	if _, ok := c.seen[f.ID]; ok || !recrawl && c.rc != nil && c.rc.withholds(parent, f.ID) {
		return false
	}
	c.discovered++
	s := c.siteFor(f)
	c.seen[f.ID] = c.addNode(f.ID, s.ID)
	prio := float64(recrawlPriority)
	if !recrawl {
		prio = c.e.strategy.PagePriority(frontier.PageInfo{URL: f.URL, Depth: depth, ID: f.ID, Parent: parent})
	}
	c.nextSeq++
	rec := record.URLRecord{ID: f.ID, Site: s.ID, URL: f.URL, Depth: depth, Priority: prio, Seq: c.nextSeq, Parent: parent, Discovered: now}
	if covered, canon, by := c.e.canonical(f.URL); covered {
		// A rule covers it: kept for the record, never queued; its
		// canonical URL is followed instead.
		rec.State, rec.SkipReason, rec.Rule = record.URLSkipped, record.SkipRule, ruleID(by)
		c.batch.URLs = append(c.batch.URLs, rec)
		var canonID uint64
		if canon != "" {
			if g, ok := c.e.inScope(canon, depth); ok {
				c.discover(g, depth, parent, now)
				canonID = g.ID
			}
		}
		c.ruleSkipped(rec.Rule, f.ID, s, canonID, now)
		c.left(f.ID, nil)
		return false
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
	}
	return r
}

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
	if c.resolving >= c.e.cfg.ResolveAhead {
		c.toResolve = append(c.toResolve, s)
		return
	}
	c.resolving++
	go func() {
		addr, err := c.e.resolver.Lookup(context.Background(), s.Host)
		c.dnsOut <- dnsResult{s, addr, err}
	}()
}

func (c *crawl) onResolved(r dnsResult, now time.Time) {
	c.resolving--
	if len(c.toResolve) > 0 {
		next := c.toResolve[0]
		c.toResolve = c.toResolve[1:]
		c.startLookup(next)
	}
	s := r.site
	s.lookingUp = false
	if r.err != nil {
		c.errKinds[visit.FailureDNS]++
		s.Failures++
		why := fmt.Sprintf("%s: DNS look-up failed: %v", s.Host, r.err)
		c.seedFailed(s, why, now)
		if c.parkNow(s) {
			c.park(s, now, why)
			return
		}
		at := now.Add(c.e.cfg.ResolveFailed)
		c.retryDNS = append(c.retryDNS, dnsRetry{s, at})
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

// park gives up on a site for errors.park_for, or for good once its
// errors.park_rounds are spent: a round is errors.park_after failures in a
// row, and the count goes on across rounds until a page answers.
func (c *crawl) park(s *site, now time.Time, why string) {
	if s.parked {
		return
	}
	s.parked = true
	c.f.Park(&s.Site, now)
	round := s.Failures / c.e.cfg.ParkAfter
	if c.roundsLeft(s) {
		s.NextVisit = now.Add(c.e.cfg.ParkFor)
		c.parkedSites = append(c.parkedSites, s)
		why = fmt.Sprintf("%s; parked until %s (round %d of %d)", why, s.NextVisit.Format(time.TimeOnly), round, c.e.cfg.ParkRounds)
	} else {
		why = fmt.Sprintf("%s; given up after %d rounds", why, c.e.cfg.ParkRounds)
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
	keep := c.retryDNS[:0]
	for _, r := range c.retryDNS {
		if r.at.After(now) {
			keep = append(keep, r)
			continue
		}
		if !r.site.parked && !r.site.Resolved {
			c.f.Unpark(&r.site.Site, now)
			c.resolve(r.site)
		}
	}
	clear(c.retryDNS[len(keep):])
	c.retryDNS = keep
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

// retrying counts the sites with pages queued that wait to be tried again.
// A crawl with nothing else to do ends without waiting for them: when it
// is run again, look-ups are tried at once and parked sites when due.
func (c *crawl) retrying() int {
	n := 0
	for _, r := range c.retryDNS {
		if r.site.Pending > 0 {
			n++
		}
	}
	for _, s := range c.parkedSites {
		if s.Pending > 0 {
			n++
		}
	}
	return n
}

// loop is the scheduler: it reacts to robots, look-ups and the console, and
// dispatches visits.
func (c *crawl) loop(ctx context.Context) error {
	e := c.e
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	publish := time.NewTicker(200 * time.Millisecond)
	defer publish.Stop()
	stopping := false
	visitCtx, cancelVisits := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelVisits()
	c.visitCtx = visitCtx
	var grace <-chan time.Time
	for {
		now := e.clock.Now()
		if c.rc != nil && !stopping {
			c.recrawlTick(now)
		}
		if !stopping && !e.paused.Load() {
			c.dispatch(now)
		}
		if e.paused.Load() && c.busy == 0 && !c.savedPause {
			c.flush()
			e.commit.flush()
			c.savedPause = true
			e.event(record.Event{Kind: record.EventPause, Text: "paused; state saved"})
		}
		if !e.paused.Load() && c.savedPause {
			c.savedPause = false
			e.event(record.Event{Kind: record.EventResume, Text: "resumed"})
		}
		if err := e.commit.Err(); err != nil {
			stopping = true
			cancelVisits()
			if c.busy == 0 {
				c.end(record.EventStop, EndStoreFailed, err.Error())
				return fmt.Errorf("engine: writing to the store: %w", err)
			}
		}
		c.publish(now, false)
		if stopping && c.busy == 0 {
			c.publish(now, true)
			e.setState(StateStopping)
			reason, detail := stopReason(ctx)
			c.end(record.EventStop, reason, detail)
			return ErrStopped
		}
		if !stopping {
			if err := c.allSeedsFailed(); err != nil {
				c.publish(now, true)
				c.end(record.EventDone, EndSeedsFailed, "")
				return err
			}
			if reason := c.finished(); reason != EndNone {
				c.finalRank()
				c.publish(now, true)
				e.setState(StateDone)
				detail := ""
				if n := c.retrying(); n > 0 && reason == EndFrontierEmpty {
					// Their retries are hours away: the next run tries them.
					detail = fmt.Sprintf("%d failed sites to be tried again by a later run", n)
				}
				c.end(record.EventDone, reason, detail)
				return nil
			}
		}
		wake := 250 * time.Millisecond
		if c.batch.Len() > 0 {
			// The committer was busy at the last hand-off: try again
			// soon, so nothing waits in the loop past flush_interval.
			wake = min(wake, max(e.cfg.FlushEvery/4, time.Millisecond))
		}
		if t, ok := c.f.NextWake(); ok {
			wake = min(wake, max(t.Sub(now), time.Millisecond))
		}
		timer.Reset(wake)
		select {
		case r := <-c.results:
			c.onResult(r, now)
			// Take what else is waiting before dispatching again.
			for i := 0; i < 256; i++ {
				select {
				case r := <-c.results:
					c.onResult(r, e.clock.Now())
					continue
				default:
				}
				break
			}
		case h := <-c.heads:
			c.onHead(h, now)
		case r := <-c.dnsOut:
			c.onResolved(r, now)
		case r := <-c.rank.out:
			c.onRank(r)
		case f := <-e.control:
			f()
		case <-timer.C:
		case <-publish.C:
			c.expire(now)
			c.retry(now)
		case <-ctx.Done():
			if !stopping {
				stopping = true
				e.stopping.Store(true)
				e.recall(true)
				e.setState(StateStopping)
				grace = time.After(10 * time.Second)
			}
		case <-grace:
			cancelVisits()
		}
		c.rankDue(e.clock.Now())
		if c.batch.Len() >= e.cfg.FlushRecords/4 {
			c.flush() // waits for the committer: the loop keeps pace with the store
		} else {
			c.handOff()
		}
	}
}

// finished reports why the crawl has nothing left to do, or EndNone.
func (c *crawl) finished() EndReason {
	if c.busy > 0 {
		return EndNone
	}
	if c.e.cfg.MaxPages > 0 && c.pages >= c.e.cfg.MaxPages {
		return EndMaxPages
	}
	if c.rc != nil {
		return EndNone // recrawling goes on until stopped or a limit
	}
	if c.resolving == 0 && c.visitable() == 0 {
		return EndFrontierEmpty
	}
	return EndNone
}

// visitable is the number of sites with pages pending and no visit in
// flight: ready, or waiting for their address, their delay or their
// address's other visit.
func (c *crawl) visitable() int {
	return c.f.Count(frontier.Ready) + c.f.Count(frontier.Waiting) + c.f.Count(frontier.Blocked) + c.f.Count(frontier.Resolving)
}

// end records why the crawl ended, for Stats and the events table.
func (c *crawl) end(kind record.EventKind, reason EndReason, detail string) {
	e := c.e
	text := endText(reason, detail)
	e.mu.Lock()
	e.st.End, e.st.EndText = reason, text
	e.mu.Unlock()
	verb := "crawl finished"
	if kind == record.EventStop {
		verb = "crawl stopped; run it again to continue"
	}
	e.event(record.Event{Kind: kind, Text: fmt.Sprintf("%s: %s; %d pages", verb, text, c.pages)})
}

// dispatch takes sites from the frontier while robots are free and asks the
// committer for the head of each one's queue, after everything found so
// far; onHead turns the answer into a lease.
func (c *crawl) dispatch(now time.Time) {
	e := c.e
	for int64(c.busy) < e.robots.Load() && c.heading < cap(c.heads) {
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
			left := e.cfg.MaxPages - c.pages - c.planned
			if left <= 0 {
				return
			}
			share := max(1, min(e.robots.Load()-int64(c.busy), int64(c.visitable())))
			budget = min(budget, left, (left+share-1)/share)
		}
		fs := c.next(now)
		if fs == nil {
			return
		}
		s := c.sites[fs.ID]
		c.flush()
		s.leasing = &leasing{budget: budget}
		c.heading++
		c.busy++
		c.planned += budget
		e.commit.in <- headReq{site: s.ID, n: int(budget), reply: c.heads}
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
	c.heading--
	if !c.fetchHeld {
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
	var taken map[uint64]int // copies a candidate rule covers in this lease
	deferred, deferPrio := 0, math.Inf(1)
	for _, q := range h.urls {
		covered, canon, by := e.canonical(q.URL)
		if !covered {
			if e.det != nil {
				// A lease takes no more copies of a rule not yet learned
				// than its evidence needs: the rest wait for the next
				// lease, which the rule may then spare.
				if cand, need, ok := e.det.Unproven(q.URL); ok {
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
		c.skipped[record.SkipRule]++
		var canonID uint64
		if canon != "" {
			if f, ok := e.inScope(canon, q.Depth); ok {
				c.discover(f, q.Depth, q.ID, now)
				canonID = f.ID
			}
		}
		c.ruleSkipped(rule, q.ID, s, canonID, now)
		c.left(q.ID, nil)
	}
	if deferred > 0 {
		c.f.Found(&s.Site, int64(deferred), deferPrio, now) // still queued
	}
	if h.err != nil || len(urls) == 0 || e.paused.Load() || e.stopping.Load() {
		// Nothing to fetch, or no fetching now: the site goes back as it
		// was, its URLs still queued.
		if h.err != nil {
			c.errKinds[visit.FailureStore]++
		}
		c.busy--
		c.planned -= p.budget
		if len(urls) > 0 {
			c.f.Found(&s.Site, int64(len(urls)), bestPriority(urls, nil), now)
		}
		c.f.Release(&s.Site, s.NextVisit, now)
		return
	}
	c.planned -= p.budget - int64(len(urls))
	c.nextLease++
	l := &visit.Lease{ID: c.nextLease, Site: s.ID, Key: s.Key, Host: s.Host, Addr: s.Addr, Port: s.port,
		Delay: s.delay, NotBefore: s.NextVisit, URLs: urls}
	if s.robots != nil && now.Sub(s.robots.Fetched) < e.cfg.RobotsTTL {
		l.Robots, l.Rules = s.robots, s.rules
	}
	l.Deadline = maxTime(now, l.NotBefore).Add(c.leaseTime(len(urls), s.delay))
	if e.det != nil {
		l.Feed = visit.NewFeed(len(urls))
	}
	run := &leaseRun{lease: l, site: s, planned: int64(len(urls)),
		tracker: &visitTracker{site: s.Key, planned: len(urls), started: now}}
	c.leases[l.ID] = run
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
func (c *crawl) report(r visit.Result) {
	select {
	case c.results <- r:
	case <-c.closed:
		if r.Committed != nil {
			r.Committed(ErrStopped)
		}
	}
}

// expire ends the leases whose end never came, deadline and grace past:
// their URLs not reported fetched are queued again. A robot obeys the deadline by its own clock, which may run a little
// behind the loop's: the grace covers that (cluster.lease_grace), and the
// site's delay runs from the end of the grace, as if its last request had
// started then.
func (c *crawl) expire(now time.Time) {
	for _, run := range c.leases {
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
	run := c.leases[r.Lease]
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

// takeEvents moves the events recorded since the last call into the batch.
func (c *crawl) takeEvents() {
	e := c.e
	e.mu.Lock()
	c.batch.Events = append(c.batch.Events, e.unsaved...)
	clear(e.unsaved)
	e.unsaved = e.unsaved[:0]
	e.mu.Unlock()
}

// handOff passes the batch gathered so far to the committer if it can take
// it now. The loop hands off after every event it handles, so a result
// waits in the loop only while the committer is busy, and the committer's
// own timer bounds the rest: every page reaches the store within
// storage.flush_interval whatever visits, pauses and page rates do.
func (c *crawl) handOff() {
	c.takeEvents()
	if c.batch.empty() {
		return
	}
	select {
	case c.e.commit.in <- c.batch:
		c.batch = c.e.commit.batch()
	default:
	}
}

// flush hands the batch gathered so far to the committer.
func (c *crawl) flush() {
	c.takeEvents()
	if c.batch.empty() {
		return
	}
	c.e.commit.in <- c.batch
	c.batch = c.e.commit.batch()
}

func (c *crawl) onPage(run *leaseRun, m *visit.PageResult, now time.Time) {
	s := run.site
	m.Record.Site = s.ID
	rec := m.Record
	if run.planned > 0 {
		run.planned--
		c.planned--
	}
	prio := 0.0
	for i := run.upTo; i < len(run.lease.URLs); i++ {
		if run.lease.URLs[i].ID == rec.URL {
			run.upTo, prio = i+1, run.lease.URLs[i].Priority
			break
		}
	}
	if rec.Status > 0 {
		c.answered = true
	} else if !c.answered && c.seeds[s.ID] {
		// No answer, and nothing in the crawl has answered yet: the
		// seed stays queued, so a crawl run again once the network or
		// the server is back starts from it.
		c.f.Found(&s.Site, 1, prio, now)
		return
	}
	c.pages++
	run.tracker.pages.Add(1)
	run.tracker.bytes.Add(rec.Length)
	run.tracker.url.Store(&m.URL)
	c.bytes += rec.Length
	s.fetched++
	switch {
	case rec.Err != "":
		c.errors++
	case rec.Status >= 400:
		c.errors++
		c.errKinds[visit.HTTPFailure(rec.Status)]++
	}
	switch {
	case rec.TypeCheck == fetch.TypeBinaryAsHTML:
		c.skipped[record.SkipBinary]++ // download stopped at its first bytes
	case rec.Truncated:
		c.errKinds[visit.FailureTruncated]++
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
		c.skipped[record.SkipDuplicate] += int64(len(m.Links))
		c.left(rec.URL, nil)
		c.pageLinks(rec.URL, m.URL, nil)
		return
	}
	// A page a rule learned while its lease ran covers is still new
	// content when observe says so: it stands for its canonical URL (see
	// dedup.Detector.Canonical), whose links are its own.
	if c.linksHeld(rec.URL) {
		return // until a probe answers (see detect.go)
	}
	c.followLinks(m, now)
}

// followLinks follows the links of a page fetched, new content.
func (c *crawl) followLinks(m *visit.PageResult, now time.Time) {
	rec := &m.Record
	c.skipped[record.SkipScope] += int64(m.Skipped.Scope)
	c.skipped[record.SkipNoFollow] += int64(m.Skipped.NoFollow)
	c.skipped[record.SkipInvalid] += int64(m.Skipped.Invalid)
	hops := c.hops[rec.URL]
	delete(c.hops, rec.URL)
	follow := c.followBuf[:0]
	for i := range m.Links {
		f := &m.Links[i]
		if !f.Resolve() {
			c.skipped[record.SkipInvalid]++
			continue
		}
		if f.ID == rec.URL {
			continue
		}
		c.batch.Links = append(c.batch.Links, record.Link{From: rec.URL, To: f.ID})
		if rec.Redirect != "" && f.URL == rec.Redirect {
			// A redirect's target stands in for the page: same depth, and
			// the chain is counted so that an endless one stops.
			if _, seen := c.seen[f.ID]; !seen {
				if hops+1 > c.e.cfg.MaxRedirects {
					c.skipped[record.SkipRedirectChain]++
					continue
				}
				c.hops[f.ID] = hops + 1
			}
			follow = append(follow, followed{*f, m.Depth})
			continue
		}
		follow = append(follow, followed{*f, m.Depth + 1})
	}
	if c.rp != nil {
		// The strategy learns the page's links before it is asked to
		// place any page first found there.
		c.linkBuf = c.linkBuf[:0]
		for _, f := range follow {
			c.linkBuf = append(c.linkBuf, f.ID)
		}
		c.left(rec.URL, c.linkBuf)
	}
	for _, f := range follow {
		c.discover(f.FoundLink, f.depth, rec.URL, now)
	}
	c.pageLinks(rec.URL, m.URL, follow)
	c.followBuf = follow[:0]
}

// onLeaseEnd ends a lease: its URLs not fetched go back to the site's
// queue and the site to the frontier, after its delay or a back-off.
func (c *crawl) onLeaseEnd(run *leaseRun, m *visit.LeaseEnd, now time.Time) {
	e := c.e
	s := run.site
	delete(c.leases, run.lease.ID)
	c.busy--
	c.planned -= run.planned
	e.mu.Lock()
	delete(e.visits, s.ID)
	e.mu.Unlock()
	if m.Robots != nil {
		s.robots, s.rules = m.Robots, m.Rules
		if s.rules == nil {
			s.rules = m.Robots.Rules()
		}
		if s.rules.Kind().Temporary() {
			what := fmt.Sprintf("answered %d", m.Robots.Status)
			if m.Robots.Status < 0 {
				what = "unreachable (" + string(m.Failure) + ")"
			}
			e.event(record.Event{Time: now, Kind: record.EventRobots5xx, Site: s.Key, Text: fmt.Sprintf("robots.txt %s: nothing fetched until %s", what, m.Next.Format(time.TimeOnly))})
			s.robots, s.rules = nil, nil // fetched again at the next visit
		}
	}
	if m.Delay > 0 {
		s.delay = min(m.Delay, max(e.cfg.MaxDelay, e.cfg.Delay))
	}
	for _, sk := range m.Skips {
		c.batch.Skips = append(c.batch.Skips, sk)
		c.skipped[sk.Reason]++
		c.left(sk.URL, nil)
		c.probeUnanswered(sk.URL, now)
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
		c.errKinds[m.Failure]++
	case m.Failed || m.BackedOff:
		s.Failures++
		if m.Failure != visit.FailureNone {
			c.errKinds[m.Failure]++
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
			c.park(s, now, fmt.Sprintf("%s: %d failed visits in a row (last: %s)", s.Key, s.Failures, m.Failure))
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

// observe runs duplicate detection on a fetched page, before any of its
// links is followed, and reports whether the page is new content.
func (c *crawl) observe(run *leaseRun, m *visit.PageResult, now time.Time) bool {
	e := c.e
	rec := &m.Record
	if e.det != nil && dedup.IsProbe(m.URL) {
		return c.probed(m, now)
	}
	if e.det != nil {
		c.canonAnswered(rec.URL, rec.Status, now)
	}
	if e.det == nil || rec.Digest == 0 || rec.Status < 200 || rec.Status >= 300 {
		return true
	}
	t := cputime.Start()
	d := e.det.Observe(dedup.Page{ID: rec.URL, URL: m.URL, Digest: rec.Digest, Simhash: rec.Simhash, Main: rec.MainSimhash, NoURL: rec.NoURLSimhash, Title: rec.TitleHash, Status: rec.Status, Claims: m.Claims})
	c.demoted(d.Demoted, now)
	c.prefer(d.Prefer, m, now)
	if len(d.Learned) > 0 || d.Kind == dedup.Exact || d.Kind == dedup.Near {
		c.refilter(run) // what was learned spares the rest of the lease
	}
	c.dup.Time += t.Elapsed() + m.Detect
	for _, r := range d.Learned {
		c.ruleChanged(r, now)
	}
	for _, r := range d.Withdrawn {
		c.ruleChanged(r, now)
	}
	if d.Soft404 != nil {
		c.batch.Soft404s = append(c.batch.Soft404s, record.Soft404Record{Sig: *d.Soft404, Time: now})
		text := fmt.Sprintf("%s answers URLs that do not exist with one page (%d URLs), recorded as soft 404s", d.Soft404.Origin, len(d.Soft404.Evidence)+1)
		c.e.event(record.Event{Time: now, Kind: record.EventSoft404, Text: text})
	}
	if d.Probe != "" {
		if sig := c.probe(run, d.Probe, m, d.Kind == dedup.Unique, now); sig != nil && d.Kind == dedup.Unique {
			// No probe to wait for: the evidence decides, and this page
			// completed it.
			d.Kind, d.Test, d.Of, d.Similarity = dedup.Soft404, dedup.TestSoft404, sig.Of, 1-float64(dedup.Hamming(rec.NoURLSimhash, sig.Simhash))/64
		}
	}
	if d.Await != "" && d.Kind == dedup.Unique {
		c.hold(dedup.ID(d.Await), m)
	}
	if len(d.Learned) > 0 || len(d.Withdrawn) > 0 || d.Soft404 != nil {
		c.dupCounts()
	}
	switch d.Kind {
	case dedup.Exact:
		c.dup.Exact++
	case dedup.Near:
		c.dup.Near++
	case dedup.Soft404:
		// Not a genuine page: its links, found only here, are not
		// followed.
		c.dup.Soft404++
	default:
		return true
	}
	c.batch.Dups = append(c.batch.Dups, record.DupRecord{URL: rec.URL, Of: d.Of, Kind: d.Kind, Test: d.Test, Similarity: d.Similarity, Time: now})
	return false
}

// ruleChanged records a rule learned or withdrawn and tells the console.
// What is queued under a new rule is exchanged for its canonical URL as
// each URL's turn comes, not at once in the store: the canonical URL may
// not be known yet.
func (c *crawl) ruleChanged(r dedup.Rule, now time.Time) {
	c.batch.Rules = append(c.batch.Rules, record.RuleRecord{Rule: r, Time: now})
	kind, text := record.EventRule, fmt.Sprintf("rule learned: %s (%d duplicate pairs)", r.String(), r.Supports)
	if r.Withdrawn {
		kind, text = record.EventRuleWithdrawn, fmt.Sprintf("rule withdrawn: %s (a URL it rewrites holds other content)", r.String())
		c.requeueWithdrawn(&r, now)
	}
	c.e.event(record.Event{Time: now, Kind: kind, Text: text})
}

// dupCounts copies the detector's rule and soft-404 counts into the
// loop's figures.
func (c *crawl) dupCounts() {
	s := c.e.det.Stats()
	c.dup.Rules, c.dup.Withdrawn, c.dup.Soft404Hosts = int64(s.Rules), int64(s.Withdrawn), int64(s.Soft404Host)
	for k := range s.RulesByKind {
		c.dup.Learned[k] = int64(s.RulesByKind[k] + s.WithdrawnByKind[k])
	}
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

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// publish copies the loop's figures into the engine's Stats.
func (c *crawl) publish(now time.Time, force bool) {
	if !force && now.Sub(c.lastPublish) < 100*time.Millisecond {
		return
	}
	c.lastPublish = now
	e := c.e
	if c.rc != nil {
		c.rc.measureFreshness(now)
	}
	var waiting []WaitingSite
	for _, fs := range c.f.WaitingSoonest(32) {
		ws := WaitingSite{Site: fs.Key, Pending: fs.Pending, Until: fs.NextVisit}
		if s := c.sites[fs.ID]; s != nil && s.Failures > 0 {
			ws.Reason = WaitBackoff
			if s.robots == nil { // dropped after a 5xx or unreachable robots.txt
				ws.Reason = WaitRobotsTxt
			}
		}
		waiting = append(waiting, ws)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st := &e.st
	st.Pages, st.Bytes, st.Errors = c.pages, c.bytes, c.errors
	st.Discovered = c.discovered
	st.QueueDepth = c.f.Pending()
	st.Sites = c.f.Len()
	st.SitesReady = c.f.Count(frontier.Ready)
	st.SitesWaiting = c.f.Count(frontier.Waiting) + c.f.Count(frontier.Resolving) + c.f.Count(frontier.Blocked)
	st.SitesParked = c.f.Count(frontier.Parked)
	st.SitesDone = c.f.Count(frontier.Idle)
	st.Waiting = waiting
	st.Dup = c.dup
	st.ErrorKind = maps.Clone(c.errKinds)
	st.Skipped = maps.Clone(c.skipped)
	if st.Started.IsZero() {
		st.Started = now
	}
	if c.rc != nil {
		c.recrawlPublish(st)
	}
}
