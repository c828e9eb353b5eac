package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/urlnorm"
	"lidi/engine/visit"
)

// Run crawls until the frontier is empty, a limit is reached or ctx ends.
// It returns nil when the crawl finished, ErrStopped when ctx ended first
// (its state is saved: Run again on the same store continues it), or the
// error that stopped it.
func (e *Engine) Run(ctx context.Context) (err error) {
	c := &crawl{
		e:       e,
		f:       frontier.New(e.strategy, e.cfg.PerAddress),
		sites:   make(map[int64]*site),
		hops:    make(map[uint64]int),
		closed:  make(chan struct{}),
		leases:  leaseBook{runs: make(map[uint64]*leaseRun), results: make(chan visit.Result, 1024), heads: make(chan headReply, 1024)},
		detect:  detection{det: e.det},
		inScope: e.robot.InScope,
		dns:     lookups{out: make(chan dnsResult, 64)},
		seeds:   seedWatch{sites: make(map[int64]bool), failed: make(map[int64]string)},
		tally:   tally{errKinds: make(map[visit.FailureKind]int64), skipped: make(map[record.SkipReason]int64)},
		nextSeq: e.clock.Now().UnixNano(),
	}
	// Lease IDs, like URL sequence numbers, start at the clock so that a
	// result of an earlier run never passes for one of this run.
	c.leases.next = uint64(c.nextSeq)
	c.batch = e.commit.batch()
	if rp, ok := e.strategy.(frontier.Reprioritizer); ok {
		c.reprio = reprioritizer{rp: rp, update: c.reprioritize, touched: make(map[int64]siteTouch)}
	}
	if c.web, err = newWebGraph(e.cfg.Rank || c.reprio.rp != nil, e.cfg.Rank, c.reprio.rp != nil); err != nil {
		e.setState(StateFailed)
		return err
	}
	defer c.web.close()
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
	e.event(record.Event{Kind: record.EventStart, Text: fmt.Sprintf("crawl started: %d sites, %d URLs known, %d queued%s", c.f.Len(), c.tally.discovered, c.f.Pending(), c.adopted)})
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
			s.robots = &visit.RobotsFile{Status: r.RobotsStatus, Body: r.RobotsBody, Fetched: r.RobotsFetched, Wire: r.RobotsWire, IP: r.RobotsIP,
				URL: r.RobotsURL, Redirects: r.RobotsRedirects, End: r.RobotsEnd}
			s.rules = s.robots.Rules()
			s.delay = c.delayFor(s.rules)
		}
		c.retries.robotsChain(r.Key, &visit.RobotsFile{URL: r.RobotsURL, Redirects: r.RobotsRedirects, End: r.RobotsEnd, Status: r.RobotsStatus})
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
	if err := e.store.URLFingerprints(ctx, func(id uint64) { c.web.add(id, 0) }); err != nil {
		return fmt.Errorf("engine: loading URLs: %w", err)
	}
	if c.web.err != nil {
		return fmt.Errorf("engine: loading URLs: %w", c.web.err)
	}
	c.tally.discovered = int64(c.web.len())
	if err := c.loadGraph(ctx); err != nil {
		return err
	}
	// Duplicate detection picks up where it stopped.
	if err := c.detect.restore(ctx, e.store, func(id int64) bool { return c.sites[id] != nil }); err != nil {
		return err
	}
	ct, err := e.store.Counters(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading counters: %w", err)
	}
	c.tally.fetches, c.tally.recrawls, c.tally.bytes, c.tally.errors = ct.Pages, ct.Recrawls, ct.Bytes, ct.Errors
	c.restoreTallies(ct.Tallies)
	c.seeds.answered = c.tally.fetches > 0
	if e.cfg.Recrawl.Enabled {
		return c.recrawlLoad(ctx)
	}
	return nil
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
	// done is ctx.Done() until the loop starts stopping, then nil: a
	// closed channel would be ready at every select, and the loop would
	// spin through the grace period instead of waiting for the visits.
	done := ctx.Done()
	c.steps.start() // the loop's first wake-up, for Stats.LoopPause
	for {
		now := e.clock.Now()
		if c.rc != nil && !stopping {
			c.recrawlTick(now)
			c.steps.mark(StepRecrawl)
		}
		if !stopping && !e.paused.Load() {
			c.dispatch(now)
			c.steps.mark(StepDispatch)
		}
		if e.paused.Load() && c.leases.busy == 0 && !c.savedPause {
			c.flush()
			e.commit.flush()
			c.steps.mark(StepStore)
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
			if c.leases.busy == 0 {
				c.end(record.EventStop, EndStoreFailed, err.Error())
				return fmt.Errorf("engine: writing to the store: %w", err)
			}
		}
		if err := c.web.err; err != nil {
			// The store holds every URL the set did: a later run
			// rebuilds it.
			stopping = true
			cancelVisits()
			if c.leases.busy == 0 {
				c.end(record.EventStop, EndStoreFailed, err.Error())
				return err
			}
		}
		c.publish(now, false)
		if stopping && c.leases.busy == 0 {
			c.publish(now, true)
			e.setState(StateStopping)
			reason, detail := stopReason(ctx)
			c.end(record.EventStop, reason, detail)
			return ErrStopped
		}
		if !stopping {
			// finished may give up sites that only wait for retries: a
			// seed's site given up fails the seed, so the seeds are
			// asked again after it.
			reason := c.finished()
			if err := c.allSeedsFailed(); err != nil {
				c.publish(now, true)
				c.end(record.EventDone, EndSeedsFailed, "")
				return err
			}
			if reason != EndNone {
				c.finalRank()
				c.publish(now, true)
				e.setState(StateDone)
				detail := ""
				if reason == EndFrontierEmpty {
					detail = c.endDetail() // the sites left for a later run, or given up
				}
				c.end(record.EventDone, reason, detail)
				return nil
			}
		}
		timer.Reset(c.wakeIn(now, stopping))
		c.steps.end(StepPublish)
		select {
		case r := <-c.leases.results:
			c.steps.start()
			e.results.release(resultBytes(r))
			c.onResult(r, now)
			// Take what else is waiting before dispatching again.
			for i := 0; i < 256; i++ {
				select {
				case r := <-c.leases.results:
					e.results.release(resultBytes(r))
					c.onResult(r, e.clock.Now())
					continue
				default:
				}
				break
			}
			c.steps.mark(StepResults)
		case h := <-c.leases.heads:
			c.steps.start()
			c.onHead(h, now)
			c.steps.mark(StepHeads)
		case r := <-c.dns.out:
			c.steps.start()
			c.onResolved(r, now)
			c.steps.mark(StepDNS)
		case r := <-c.rank.out:
			c.steps.start()
			c.onRank(r)
			c.steps.mark(StepRank)
		case f := <-e.control:
			c.steps.start()
			f()
			c.steps.mark(StepTimers)
		case <-timer.C:
			c.steps.start()
		case <-publish.C:
			c.steps.start()
			c.expire(now)
			c.retry(now)
			c.steps.mark(StepTimers)
		case <-done:
			c.steps.start()
			done = nil
			if !stopping {
				stopping = true
				e.stopping.Store(true)
				e.recall(true)
				e.setState(StateStopping)
				grace = time.After(10 * time.Second)
			}
		case <-grace:
			c.steps.start()
			cancelVisits()
		}
		c.rankDue(e.clock.Now())
		c.steps.mark(StepRank)
		c.handOff()
		c.steps.mark(StepStore)
	}
}

// wakeIn returns how long the loop sleeps at most when no message comes:
// until the committer may take what the last hand-off left, the first
// waiting site's delay ends, or the recrawls are looked at again
// (recrawler.nextLook: not while paused or stopping, when the recrawls
// wait), and a quarter of a second at most.
func (c *crawl) wakeIn(now time.Time, stopping bool) time.Duration {
	wake := 250 * time.Millisecond
	if c.batch.Len() > 0 {
		// The committer was busy at the last hand-off: try again
		// soon, so nothing waits in the loop past flush_interval.
		wake = min(wake, max(c.e.cfg.FlushEvery/4, time.Millisecond))
	}
	if t, ok := c.f.NextWake(); ok {
		wake = min(wake, max(t.Sub(now), time.Millisecond))
	}
	if c.rc != nil && !stopping && !c.e.paused.Load() {
		wake = min(wake, c.rc.nextLook(now))
	}
	return wake
}

// finished reports why the crawl has nothing left to do, or EndNone.
func (c *crawl) finished() EndReason {
	if c.leases.busy > 0 {
		return EndNone
	}
	if c.e.cfg.MaxPages > 0 && c.tally.fetches >= c.e.cfg.MaxPages {
		return EndMaxPages
	}
	if c.rc != nil {
		return EndNone // recrawling goes on until stopped or a limit
	}
	if c.dns.running == 0 && c.visitable() > 0 {
		c.onlyRetries(c.e.clock.Now())
	}
	if c.dns.running == 0 && c.visitable() == 0 {
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
	e.event(record.Event{Kind: kind, Text: fmt.Sprintf("%s: %s; %s", verb, text, c.tally.pagesFetches())})
}

// publish copies the loop's figures into the engine's Stats.
func (c *crawl) publish(now time.Time, force bool) {
	if !force && now.Sub(c.tally.published) < 100*time.Millisecond {
		return
	}
	c.tally.published = now
	e := c.e
	if c.rc != nil {
		c.rc.measureFreshness(now, force)
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
	st.Pages, st.Fetches, st.Recrawls = c.tally.fetches-c.tally.recrawls, c.tally.fetches, c.tally.recrawls
	st.Bytes, st.Errors = c.tally.bytes, c.tally.errors
	st.Discovered = c.tally.discovered
	st.LoopPause, st.StoreWait, st.LoopWork, st.Seen = c.steps.worst, c.tally.storeWait, c.steps.own, c.web.seen.Stats()
	st.LoopWakeups = c.steps.wakeups
	st.LoopSteps, st.LoopWorkSteps = c.steps.steps(), c.steps.ownSteps()
	e.commit.slowest(st)
	st.StorePendingMax = c.pendingMost
	st.Memory.Seen, st.Memory.Graph = c.web.bytes()
	st.Memory.Rank = c.rank.bytes()
	if c.detect.det != nil {
		st.Memory.Detection = c.detect.det.Stats().Bytes
	}
	st.QueueDepth = c.f.Pending()
	st.Sites = c.f.Len()
	st.SitesReady = c.f.Count(frontier.Ready)
	st.SitesWaiting = c.f.Count(frontier.Waiting) + c.f.Count(frontier.Resolving) + c.f.Count(frontier.Blocked)
	st.SitesParked = c.f.Count(frontier.Parked)
	st.SitesDone = c.f.Count(frontier.Idle)
	st.Waiting = waiting
	st.Dup = c.detect.dup
	st.ErrorKind = maps.Clone(c.tally.errKinds)
	st.Skipped = maps.Clone(c.tally.skipped)
	st.Sitemaps, st.GivenUp = c.retries.sitemaps, slices.Clone(c.retries.givenUp)
	st.RobotsRedirected, st.RobotsChains = c.retries.chained, slices.Clone(c.retries.chains)
	if st.Started.IsZero() {
		st.Started = now
	}
	if c.rc != nil {
		c.recrawlPublish(st)
	}
}
