package engine

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/frontier"
	"lidi/engine/robots"
)

// site is what the loop knows of a site beyond what the scheduler needs.
type site struct {
	frontier.Site
	port    int
	robots  *robotsRules
	delay   time.Duration // w, raised by Crawl-delay
	fetched int64
	parked  bool
	// lookingUp is set while the host's DNS look-up is queued or under
	// way, so that each look-up is started once and none is forgotten.
	lookingUp bool

	// Found while a visit's head request was on its way; see onHead.
	sinceDispatch     int64
	sinceDispatchPrio float64
	planned           int64 // pages the visit in flight may still fetch

	// A Reprioritizer changed the queue while the visit's head request
	// was on its way (see applyTouched).
	headPending bool
	reprio      bool
	reprioHead  float64
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
	batch   *Batch
	results chan any
	dnsOut  chan dnsResult

	busy       int
	planned    int64 // pages planned by visits in flight
	resolving  int
	toResolve  []*site
	nextSiteID int64
	nextSeq    int64

	pages, bytes, errors, discovered int64
	dup                              DupStats
	errKinds                         map[string]int64
	skipped                          map[string]int64
	savedPause                       bool
	lastPublish                      time.Time

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
		e:        e,
		f:        frontier.New(e.strategy, e.cfg.PerAddress),
		sites:    make(map[int64]*site),
		seen:     make(map[uint64]int32),
		hops:     make(map[uint64]int),
		results:  make(chan any, 1024),
		dnsOut:   make(chan dnsResult, 64),
		errKinds: make(map[string]int64),
		skipped:  make(map[string]int64),
		nextSeq:  e.clock.Now().UnixNano(),
	}
	c.batch = e.commit.batch()
	if rp, ok := e.strategy.(frontier.Reprioritizer); ok {
		c.rp, c.update, c.touched = rp, c.reprioritize, make(map[int64]siteTouch)
	}
	if err := c.load(ctx); err != nil {
		e.setState(StateFailed)
		return err
	}
	commitDone := make(chan struct{})
	go func() { e.commit.run(ctx); close(commitDone) }()
	c.startRanker(e.clock.Now())
	defer func() {
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
	e.setState(StateRunning)
	e.event(Event{Kind: "start", Text: fmt.Sprintf("crawl started: %d sites, %d URLs known, %d queued", c.f.Len(), c.discovered, c.f.Pending())})
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
			port: portOf(r.Key), delay: e.cfg.Delay, fetched: r.Fetched, parked: r.Parked}
		if r.RobotsStatus != 0 && now.Sub(r.RobotsFetched) < e.cfg.RobotsTTL && r.RobotsStatus < 500 && r.RobotsStatus > 0 {
			s.robots = &robotsRules{rules: robots.FromResponse(r.RobotsStatus, r.RobotsBody), status: r.RobotsStatus, body: r.RobotsBody, fetched: r.RobotsFetched}
			s.delay = c.delayFor(s.robots.rules)
		}
		// Pending is not known to be exact for the head priority; the
		// best guess is 0 (depth of a seed), corrected at the first visit.
		c.sites[r.ID] = s
		c.f.Add(&s.Site)
		c.nextSiteID = max(c.nextSiteID, r.ID)
		if s.parked {
			c.f.Park(&s.Site, now)
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
		// of every page fetched, then the labels given.
		err := e.store.Fingerprints(ctx, func(p FetchedPage) {
			e.det.Restore(dedup.Page{ID: p.URL, URL: p.Addr, Digest: p.Digest, Simhash: p.Simhash, Status: p.Status})
		})
		if err != nil {
			return fmt.Errorf("engine: loading fingerprints: %w", err)
		}
		ms, err := e.store.Mirrors(ctx)
		if err != nil {
			return fmt.Errorf("engine: loading mirror labels: %w", err)
		}
		for _, m := range ms {
			e.det.RestoreMirror(dedup.Mirror{Prefix: m.Prefix, Of: m.Of, Loop: m.Kind == "loop", Host: m.Kind == "host", Rule: m.Rule, Evidence: m.Evidence})
		}
	}
	ct, err := e.store.Counters(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading counters: %w", err)
	}
	c.pages, c.bytes, c.errors = ct.Pages, ct.Bytes, ct.Errors
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
			c.e.event(Event{Kind: "seed", Text: fmt.Sprintf("seed %q ignored: %v", raw, err)})
			continue
		}
		f, ok := c.e.inScope(u, 0)
		if !ok {
			c.e.event(Event{Kind: "seed", Text: fmt.Sprintf("seed %q is out of scope", raw)})
			continue
		}
		c.discover(f, 0, 0, now)
	}
}

// discover records a URL not seen before.
func (c *crawl) discover(f found, depth int, parent uint64, now time.Time) {
	if _, ok := c.seen[f.id]; ok {
		return
	}
	c.discovered++
	s := c.siteFor(f)
	c.seen[f.id] = c.addNode(f.id, s.ID)
	prio := c.e.strategy.PagePriority(frontier.PageInfo{URL: f.url, Depth: depth, ID: f.id, Parent: parent})
	c.nextSeq++
	rec := URLRecord{ID: f.id, Site: s.ID, URL: f.url, Depth: depth, Priority: prio, Seq: c.nextSeq, Parent: parent, Discovered: now}
	if pruned, orig := c.e.prunedTo(f.url); pruned {
		// Under a mirror or a loop: kept for the record, never queued;
		// the original it copies is followed instead.
		rec.State, rec.SkipReason = URLSkipped, "mirror"
		c.batch.URLs = append(c.batch.URLs, rec)
		c.dup.Pruned++
		c.left(f.id, nil)
		if orig != "" {
			if g, ok := c.e.inScope(orig, depth); ok {
				c.discover(g, depth, parent, now)
			}
		}
		return
	}
	c.batch.URLs = append(c.batch.URLs, rec)
	if s.parked {
		return
	}
	if s.Place() == frontier.Busy {
		if s.sinceDispatch == 0 || prio < s.sinceDispatchPrio {
			s.sinceDispatchPrio = prio
		}
		s.sinceDispatch++
	}
	c.f.Found(&s.Site, 1, prio, now)
	if s.Place() == frontier.Resolving {
		// A site of an earlier run with nothing queued then was not looked
		// up at load; its first new URL needs its address.
		c.resolve(s)
	}
}

// siteFor returns the site of f, creating it (and starting its look-up) if new.
func (c *crawl) siteFor(f found) *site {
	if fs := c.f.Lookup(f.key); fs != nil {
		return c.sites[fs.ID]
	}
	c.nextSiteID++
	s := &site{Site: frontier.Site{ID: c.nextSiteID, Key: f.key, Host: f.host, Seq: c.nextSiteID}, port: portOf(f.key), delay: c.e.cfg.Delay}
	c.sites[s.ID] = s
	c.f.Add(&s.Site)
	c.batch.Sites = append(c.batch.Sites, c.record(s))
	c.resolve(s)
	return s
}

func (c *crawl) record(s *site) SiteRecord {
	r := SiteRecord{ID: s.ID, Key: s.Key, Host: s.Host, NextVisit: s.NextVisit, Failures: s.Failures, Parked: s.parked, Fetched: s.fetched}
	if s.Resolved {
		r.Addr = s.Addr.String()
	}
	if s.robots != nil {
		r.RobotsStatus, r.RobotsBody, r.RobotsFetched = s.robots.status, s.robots.body, s.robots.fetched
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
		c.errKinds["dns"]++
		c.park(s, now, fmt.Sprintf("%s: DNS look-up failed: %v", s.Host, r.err))
		return
	}
	c.f.Resolved(&s.Site, r.addr, now)
	if !s.parked {
		c.batch.Sites = append(c.batch.Sites, c.record(s))
	}
}

func (c *crawl) park(s *site, now time.Time, why string) {
	if s.parked {
		return
	}
	s.parked = true
	c.f.Park(&s.Site, now)
	c.batch.Sites = append(c.batch.Sites, c.record(s))
	c.batch.Events = append(c.batch.Events, Event{Time: now, Kind: "parked", Site: s.Key, Text: why})
	c.e.event(Event{Time: now, Kind: "parked", Site: s.Key, Text: why})
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
	var grace <-chan time.Time
	for {
		now := e.clock.Now()
		if c.rc != nil && !stopping {
			c.recrawlTick(now)
		}
		if !stopping && !e.paused.Load() {
			c.dispatch(visitCtx, now)
		}
		if e.paused.Load() && c.busy == 0 && !c.savedPause {
			c.flush()
			e.commit.flush()
			c.savedPause = true
			e.event(Event{Kind: "pause", Text: "paused; state saved"})
		}
		if !e.paused.Load() {
			c.savedPause = false
		}
		if err := e.commit.Err(); err != nil {
			stopping = true
			cancelVisits()
			if c.busy == 0 {
				return fmt.Errorf("engine: writing to the store: %w", err)
			}
		}
		c.publish(now, false)
		if stopping && c.busy == 0 {
			c.publish(now, true)
			e.setState(StateStopping)
			return ErrStopped
		}
		if !stopping && c.finished() {
			c.finalRank()
			c.publish(now, true)
			e.setState(StateDone)
			e.event(Event{Kind: "done", Text: fmt.Sprintf("crawl finished: %d pages", c.pages)})
			return nil
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
		case m := <-c.results:
			c.onMessage(m, now)
			// Take what else is waiting before dispatching again.
			for i := 0; i < 256; i++ {
				select {
				case m := <-c.results:
					c.onMessage(m, e.clock.Now())
					continue
				default:
				}
				break
			}
		case r := <-c.dnsOut:
			c.onResolved(r, now)
		case r := <-c.rank.out:
			c.onRank(r)
		case f := <-e.control:
			f()
		case <-timer.C:
		case <-publish.C:
		case <-ctx.Done():
			if !stopping {
				stopping = true
				e.stopping.Store(true)
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

// finished reports whether nothing is left to do.
func (c *crawl) finished() bool {
	if c.busy > 0 {
		return false
	}
	if c.e.cfg.MaxPages > 0 && c.pages >= c.e.cfg.MaxPages {
		return true
	}
	if c.rc != nil {
		return false // recrawling goes on until stopped or a limit
	}
	return c.resolving == 0 && c.f.Count(frontier.Ready)+c.f.Count(frontier.Waiting)+c.f.Count(frontier.Blocked)+c.f.Count(frontier.Resolving) == 0
}

// dispatch starts visits while robots are free.
func (c *crawl) dispatch(ctx context.Context, now time.Time) {
	e := c.e
	for int64(c.busy) < e.robots.Load() {
		budget := int64(e.cfg.PagesPerVisit)
		if e.cfg.MaxPages > 0 {
			budget = min(budget, e.cfg.MaxPages-c.pages-c.planned)
			if budget <= 0 {
				return
			}
		}
		fs := c.next(now)
		if fs == nil {
			return
		}
		s := c.sites[fs.ID]
		// The robot asks the committer for the site's queue: everything
		// found so far must be on its way there first.
		c.flush()
		s.sinceDispatch = 0
		s.headPending = true
		v := Visit{Site: s.ID, Key: s.Key, Host: s.Host, Addr: s.Addr, Port: s.port, Max: int(budget), Delay: s.delay, NotBefore: s.NextVisit, FetchHeld: c.fetchHeld}
		if s.robots != nil && now.Sub(s.robots.fetched) < e.cfg.RobotsTTL {
			v.Robots = s.robots.rules
		}
		c.busy++
		c.planned += budget
		s.planned = budget
		tr := &visitTracker{site: s.Key, planned: int(budget), started: now}
		e.mu.Lock()
		e.visits[s.ID] = tr
		e.mu.Unlock()
		go e.robot(ctx, v, tr, c.results)
	}
}

// handOff passes the batch gathered so far to the committer if it can take
// it now. The loop hands off after every event it handles, so a result
// waits in the loop only while the committer is busy, and the committer's
// own timer bounds the rest: every page reaches the store within
// storage.flush_interval whatever visits, pauses and page rates do.
func (c *crawl) handOff() {
	if c.batch.Len() == 0 {
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
	if c.batch.Len() == 0 {
		return
	}
	c.e.commit.in <- c.batch
	c.batch = c.e.commit.batch()
}

func (c *crawl) onMessage(m any, now time.Time) {
	switch m := m.(type) {
	case headTaken:
		c.onHead(m)
	case pageDone:
		c.onPage(m, now)
	case visitDone:
		c.onVisitDone(m, now)
	}
}

func (c *crawl) onHead(m headTaken) {
	s := c.sites[m.site]
	c.f.Take(&s.Site, int64(m.n), m.next)
	if !m.more {
		// Storage holds nothing else queued, but for what was found
		// since the robot asked.
		c.f.Drop(&s.Site, s.Pending-s.sinceDispatch)
		s.HeadPriority = s.sinceDispatchPrio
	} else if s.sinceDispatch > 0 && s.sinceDispatchPrio < s.HeadPriority {
		s.HeadPriority = s.sinceDispatchPrio
	}
	s.sinceDispatch = 0
	s.headPending = false
	if s.reprio {
		// Re-ordered after the head was read: the queue left holds them.
		s.reprio = false
		if s.Pending > 0 && s.reprioHead < s.HeadPriority {
			s.HeadPriority = s.reprioHead
		}
	}
}

func (c *crawl) onPage(m pageDone, now time.Time) {
	s := c.sites[m.site]
	rec := m.rec
	c.pages++
	if s.planned > 0 {
		s.planned--
		c.planned--
	}
	c.bytes += rec.Length
	s.fetched++
	switch {
	case rec.Err != "":
		c.errors++
	case rec.Status >= 400:
		c.errors++
		c.errKinds[fmt.Sprintf("http-%dxx", rec.Status/100)]++
	}
	switch {
	case rec.TypeCheck == "binary-as-html":
		c.skipped["binary-as-html"]++ // download stopped at its first bytes
	case rec.Truncated:
		c.errKinds["truncated"]++
	}
	c.batch.Pages = append(c.batch.Pages, rec)
	if c.rc != nil {
		c.recrawlPage(m)
	}
	if rec.Recrawl {
		c.recrawled(m, now)
		return
	}
	if !c.observe(m, now) {
		// A duplicate: its links are the original's, not followed again.
		c.skipped["duplicate"] += int64(len(m.found))
		c.left(rec.URL, nil)
		c.pageLinks(rec.URL, m.url, nil)
		return
	}
	c.skipped["scope"] += int64(m.skip.scope)
	c.skipped["nofollow"] += int64(m.skip.nofollow)
	c.skipped["invalid"] += int64(m.skip.invalid)
	hops := c.hops[rec.URL]
	delete(c.hops, rec.URL)
	follow := c.followBuf[:0]
	for _, f := range m.found {
		if f.id == rec.URL {
			continue
		}
		c.batch.Links = append(c.batch.Links, Link{From: rec.URL, To: f.id})
		if rec.Redirect != "" && f.url == rec.Redirect {
			// A redirect's target stands in for the page: same depth, and
			// the chain is counted so that an endless one stops.
			if _, seen := c.seen[f.id]; !seen {
				if hops+1 > c.e.cfg.MaxRedirects {
					c.skipped["redirect-chain"]++
					continue
				}
				c.hops[f.id] = hops + 1
			}
			follow = append(follow, followed{f, m.depth})
			continue
		}
		follow = append(follow, followed{f, m.depth + 1})
	}
	if c.rp != nil {
		// The strategy learns the page's links before it is asked to
		// place any page first found there.
		c.linkBuf = c.linkBuf[:0]
		for _, f := range follow {
			c.linkBuf = append(c.linkBuf, f.id)
		}
		c.left(rec.URL, c.linkBuf)
	}
	for _, f := range follow {
		c.discover(f.found, f.depth, rec.URL, now)
	}
	c.pageLinks(rec.URL, m.url, follow)
	c.followBuf = follow[:0]
}

func (c *crawl) onVisitDone(m visitDone, now time.Time) {
	e := c.e
	s := c.sites[m.site]
	c.busy--
	c.planned -= s.planned
	s.planned = 0
	e.mu.Lock()
	delete(e.visits, m.site)
	e.mu.Unlock()
	if m.robots != nil {
		s.robots = m.robots
		if m.robots.status >= 500 || m.robots.status < 0 {
			what := fmt.Sprintf("answered %d", m.robots.status)
			if m.robots.status < 0 {
				what = "unreachable (" + m.robots.errKind + ")"
			}
			c.batch.Events = append(c.batch.Events, Event{Time: now, Kind: "robots-5xx", Site: s.Key, Text: fmt.Sprintf("robots.txt %s: nothing fetched until %s", what, m.next.Format(time.TimeOnly))})
			e.event(c.batch.Events[len(c.batch.Events)-1])
			s.robots = nil // fetched again at the next visit
		}
	}
	s.delay = m.delay
	if len(m.skips) > 0 {
		c.batch.Skips = append(c.batch.Skips, m.skips...)
		c.skipped["robots"] += int64(len(m.skips))
		for _, sk := range m.skips {
			c.left(sk.URL, nil)
		}
		if c.rc != nil {
			c.recrawlDropped(m.skips)
		}
	}
	for _, o := range m.originals {
		c.discover(o.found, o.depth, o.parent, now)
	}
	next := m.next
	if m.failed || m.backedOff {
		s.Failures++
		if m.errKind != "" {
			c.errKinds[m.errKind]++
		}
		if s.Failures >= e.cfg.ParkAfter {
			c.f.Found(&s.Site, int64(m.returned), m.retPrio, now)
			c.f.Release(&s.Site, next, now)
			c.park(s, now, fmt.Sprintf("%s: %d failed visits in a row (last: %s)", s.Key, s.Failures, m.errKind))
			return
		}
		if m.failed || !m.retryAfter && m.robots == nil {
			// A failure, or 429/503 without Retry-After: back off
			// exponentially. A 5xx robots.txt has its own retry time.
			next = maxTime(next, now.Add(c.backoff(s.Failures)))
		}
	} else if m.fetched > 0 {
		s.Failures = 0
	}
	if m.returned > 0 {
		c.f.Found(&s.Site, int64(m.returned), m.retPrio, now)
	}
	c.f.Release(&s.Site, next, now)
	c.batch.Sites = append(c.batch.Sites, c.record(s))
}

// observe runs duplicate detection on a fetched page, before any of its
// links is followed, and reports whether the page is new content.
func (c *crawl) observe(m pageDone, now time.Time) bool {
	e := c.e
	rec := &m.rec
	if e.det == nil || rec.Digest == 0 || rec.Status < 200 || rec.Status >= 300 {
		return true
	}
	e.detMu.Lock()
	t := startCPUTimer()
	d := e.det.Observe(dedup.Page{ID: rec.URL, URL: m.url, Digest: rec.Digest, Simhash: rec.Simhash, Status: rec.Status})
	c.dup.Time += t.elapsed() + m.detect
	e.detMu.Unlock()
	if d.Mirror != nil {
		c.labelled(d.Mirror, now)
	}
	switch d.Kind {
	case dedup.Exact:
		c.dup.Exact++
	case dedup.Near:
		c.dup.Near++
	default:
		return true
	}
	c.batch.Dups = append(c.batch.Dups, DupRecord{URL: rec.URL, Of: d.Of, Kind: d.Kind.String(), Test: d.Test, Similarity: d.Similarity, Time: now})
	return false
}

// labelled records a new mirror, loop or trap label and drops what is queued
// under it.
func (c *crawl) labelled(m *dedup.Mirror, now time.Time) {
	kind := "mirror"
	switch {
	case m.Loop:
		kind = "loop"
		c.dup.Loops++
	case m.Host:
		kind = "host"
		c.dup.Mirrors++
	case m.Rule == dedup.RuleSiblingTrap || m.Rule == dedup.RuleQueryParam:
		kind = m.Rule
		c.dup.Traps++
	default:
		c.dup.Mirrors++
	}
	c.batch.Mirrors = append(c.batch.Mirrors, MirrorRecord{Prefix: m.Prefix, Of: m.Of, Kind: kind, Rule: m.Rule, Evidence: m.Evidence, Time: now})
	text := fmt.Sprintf("%s labelled a %s of %s (%d duplicates)", m.Prefix, kind, m.Of, len(m.Evidence))
	c.batch.Events = append(c.batch.Events, Event{Time: now, Kind: kind, Text: text})
	c.e.event(Event{Time: now, Kind: kind, Text: text})
	// What is queued under the label is dropped by the robots as each
	// URL's turn comes (visit), not at once in the store: a copy is then
	// exchanged for the original it copies, which may not be known yet.
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
		waiting = append(waiting, WaitingSite{Site: fs.Key, Pending: fs.Pending, Until: fs.NextVisit})
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
	st.ErrorKind = cloneMap(c.errKinds)
	st.Skipped = cloneMap(c.skipped)
	if st.Started.IsZero() {
		st.Started = now
	}
	if c.rc != nil {
		c.recrawlPublish(st)
	}
}
