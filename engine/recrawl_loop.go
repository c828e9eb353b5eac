package engine

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"lidi/engine/clock"
	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/recrawl"
	"lidi/engine/visit"
)

// Recrawling in the loop. A recrawl is a visit like any other: when a
// channel is due, the loop runs a recrawl task of it (SARSS 2.1, see
// recrawl_task.go): the task's seeds go back in their sites' queues ahead
// of discovered URLs (recrawlPriority), and the links of what they give
// are followed within the channel, through the task's filters, up to its
// maximum depth and page limit; the same scheduler, politeness, robots.txt
// rules and r robots fetch them. Each queued URL with a copy carries it
// (QueuedURL.Copy from the store), so the robot asks conditionally and
// judges the change (fetch.Judge); the loop learns the verdicts from the
// page records, keeps each channel's observations and tells the recrawl
// Manager when a task is done.
//
// The Manager groups channels by their estimated change rates, which a
// fresh crawl does not know: until recrawl.warmup of the recrawl clock has
// passed and a channel has been seen minProbes times, the loop recrawls it
// every recrawl.initial_interval (a probe, a task the loop makes itself)
// and estimates its rate from its pages' observations (Cho and
// Garcia-Molina's estimator over the pooled pages: a channel's pages are
// taken to share its rate). At the end of the warm-up the Manager starts
// with the channels estimated so far; channels estimated later join it,
// and the Manager groups all of them again (Regroup) once a quarter of
// them joined since it last did. A crawl that resumes with channels in the
// store restores them in the Manager at once.

// recrawlPriority puts a requeued URL ahead of every discovered one in its
// site's queue: the strategies' priorities are depths (0 and up) or minus
// a PageRank (-1 and up).
const recrawlPriority = -2

// maxObservations bounds the page observations kept per channel.
const maxObservations = 512

// tickEvery is how often, at most, the loop looks for what is due: the
// loop wakes at every message, and a scan of the channels each time would
// cost more than the recrawls' precision needs.
const tickEvery = 50 * time.Millisecond

// nextLook returns how long the loop may sleep before recrawlTick looks
// again: tickEvery after its last look. A page falls due at its site's
// turn, or a full site goes idle (recrawl.Planner.Early), whether or not
// a message wakes the loop; waking only at messages and at the frontier's
// delays, the loop looked every 110 ms on average in a crawl of 40 sites
// (a virtual minute at ×600), and a site whose politeness allows a
// request a minute took 0.82 to 0.86 of its turns.
func (r *recrawler) nextLook(now time.Time) time.Duration {
	return max(r.lastTick.Add(tickEvery).Sub(now), time.Millisecond)
}

// pageGroupsEvery is how often the page-level policy's groups are
// summarised for the console: the summary reads every page.
const pageGroupsEvery = time.Second

// minProbes is the number of recrawls of a channel before its estimated
// rate places it in a group.
const minProbes = 3

// recrawler is the loop's recrawl state; only the loop goroutine touches it.
type recrawler struct {
	cfg      RecrawlConfig
	clock    clock.Clock
	chans    *recrawl.Channels
	mgr      *recrawl.Manager   // nil during the warm-up
	sched    *recrawl.Scheduler // the page-level policy; nil for the channels' policies
	warmEnd  time.Time          // by the recrawl clock
	channels map[recrawl.ChannelID]*rchannel
	items    map[uint64]*ritem    // URLs with a copy, by ID
	pending  map[uint64]*rchannel // URLs a running task waits for, by ID
	// withheld are the links of the page being handled that the crawl
	// does not discover (see withholds), each with the page's ID.
	withheld map[uint64]uint64
	byKey    map[string]recrawl.ChannelID // a site's channel; "" when rules split its host
	// queuedOn counts the copies requeued per site, and schedSites are the
	// sites the Scheduler knows, with their names there (schedSite): a
	// site with more URLs queued than its requeued copies has URLs to
	// discover (Scheduler.SetDiscovering).
	queuedOn   map[int64]int
	schedSites map[int64]string
	// visitFound are the sites being visited whose visit fetched a URL
	// for the first time so far, and perVisit the most pages a visit
	// takes (recrawlVisitEnd).
	visitFound map[int64]bool
	perVisit   int
	// listed are the lastmods sitemaps gave URLs not fetched yet (real
	// time), for the Scheduler at their first fetch.
	listed map[uint64]time.Time

	lastTick             time.Time // engine clock
	tasks, done, dropped int
	found, interSite     int // new pages fetched by tasks; inter-site URLs recorded
	filtered, bounded    int // URLs tasks refused: by their filters; by their depth or page limit
	reassigns            int // reassignments seen
	joined, grouped      int // channels added to the Manager since it last grouped them, and at that time
	lastStats            time.Time
	stats                recrawl.Stats
	// pageGroups are the Scheduler's groups as last published (at
	// pageGroupsAt, engine clock), warming its channels warming up.
	pageGroups   []recrawl.GroupStats
	pageGroupsAt time.Time
	warming      int
	pointAt      time.Time // the page-level groups' last point of history (recrawl clock)
	history      []IntervalPoint
	fresh        freshness
}

// rchannel is one channel as the loop knows it.
type rchannel struct {
	id        recrawl.ChannelID
	items     map[uint64]*ritem
	task      *rtask // the recrawl running; nil for none
	obs       []recrawl.Observation
	rate      recrawl.Rate // estimated from obs (or the store)
	nextProbe time.Time    // the next warm-up recrawl
	added     bool         // known to the Manager
	probes    int          // probes finished
	entry     string       // its first URL fetched: the tasks' first seed
	// interSite are the URLs in it that pages of other channels link to,
	// in the order found (at most maxInterSite): the tasks' other seeds.
	interSite []string
	interSeen map[uint64]int   // the inter-site URLs' IDs, with their depths in the crawl
	filters   []*regexp.Regexp // the tasks' filters
	maxDepth  int              // and maximum depth
}

// maxInterSite bounds the inter-site seeds kept per channel: a popular
// host is linked to from everywhere, and a task's page limit would be
// spent on them anyway.
const maxInterSite = 256

// ritem is a URL with a copy.
type ritem struct {
	id      uint64
	ch      *rchannel
	url     string
	site    int64
	fetched time.Time // by the recrawl clock
	queued  bool      // requeued, not fetched again yet
	digest  recrawl.Digest
	links   []uint64 // the copy's links within its channel, by ID
}

// scaledClock runs TimeScale times as fast as the engine's clock from
// epoch.
type scaledClock struct {
	base  clock.Clock
	epoch time.Time
	scale float64
}

func (c scaledClock) Now() time.Time {
	return c.epoch.Add(time.Duration(float64(c.base.Now().Sub(c.epoch)) * c.scale))
}

// recrawlAhead is how many copies of a site with URLs to discover may be
// queued at once, from the pages a visit takes: a visit takes its site's queued copies first,
// at most Share of it, and leaves the rest to the site's new URLs however
// many of its copies are due.
func recrawlAhead(pagesPerVisit int) int {
	return max(1, int(float64(pagesPerVisit)*recrawl.DefaultShare))
}

// newRecrawler returns the recrawl state of a crawl whose visits take at
// most pagesPerVisit pages.
func newRecrawler(cfg RecrawlConfig, base clock.Clock, pagesPerVisit int) (*recrawler, error) {
	chans, err := recrawl.NewChannels(cfg.Channels, cfg.Scope)
	if err != nil {
		return nil, &ConfigError{Key: "recrawl.channels", Err: err}
	}
	clock := cfg.Clock
	if clock == nil {
		scale := cfg.TimeScale
		if scale == 0 {
			scale = 1
		}
		clock = scaledClock{base: base, epoch: base.Now(), scale: scale}
	}
	r := &recrawler{cfg: cfg, clock: clock, chans: chans, channels: map[recrawl.ChannelID]*rchannel{}, items: map[uint64]*ritem{},
		pending: map[uint64]*rchannel{}, withheld: map[uint64]uint64{}, byKey: map[string]recrawl.ChannelID{},
		queuedOn: map[int64]int{}, schedSites: map[int64]string{}, visitFound: map[int64]bool{}, listed: map[uint64]time.Time{}}
	r.warmEnd = clock.Now().Add(cfg.Warmup)
	r.perVisit = pagesPerVisit
	if cfg.Options.Policy == recrawl.Pages {
		r.sched = recrawl.NewScheduler(recrawl.SchedulerOptions{Planner: recrawl.PlannerOptions{
			InitialInterval: cfg.InitialInterval, MinInterval: cfg.Options.MinInterval, MaxInterval: cfg.Options.MaxInterval},
			Ahead: recrawlAhead(pagesPerVisit)})
	}
	return r, nil
}

// recrawlLoad rebuilds the recrawl state from the store.
func (c *crawl) recrawlLoad(ctx context.Context) error {
	e := c.e
	rs, ok := e.store.(record.RecrawlStore)
	if !ok {
		return errRecrawlStore
	}
	rc, err := newRecrawler(e.cfg.Recrawl, e.clock, e.cfg.PagesPerVisit)
	if err != nil {
		return err
	}
	c.rc = rc
	now := rc.clock.Now()
	at, dated := rc.clock.(RecrawlClockAt)
	err = rs.RecrawlURLs(ctx, func(u record.RecrawlURL) {
		fetched := now // the copy's age is not known on this clock: it counts from now
		if dated && at.At(u.Fetched).Before(now) {
			fetched = at.At(u.Fetched)
		}
		if it := rc.copied(u.ID, u.URL, u.Site, fetched); it != nil {
			c.schedCopied(it)
			if rc.sched != nil && !u.LastMod.IsZero() && !u.Discovered.IsZero() {
				// A sitemap's lastmod: the page was quiet from then to
				// its discovery at least, whatever its fetches since.
				rc.sched.Listed(it.id, rc.recrawlTime(u.Discovered), rc.recrawlTime(u.LastMod))
			}
		}
	})
	if err != nil {
		return fmt.Errorf("engine: loading recrawl URLs: %w", err)
	}
	if ll, ok := e.store.(record.LinkLoader); ok {
		// The copies' links: the tasks follow them, and those between
		// channels are the inter-site seeds.
		err := ll.FetchedLinks(ctx, func(page uint64, url string, links []uint64) {
			if it := rc.items[page]; it != nil {
				rc.learnLinks(it, links)
				if rc.sched != nil {
					rc.sched.Links(it.id, links)
				}
			}
		})
		if err != nil {
			return fmt.Errorf("engine: loading recrawl links: %w", err)
		}
	}
	recs, err := rs.Channels(ctx)
	if err != nil {
		return fmt.Errorf("engine: loading channels: %w", err)
	}
	var states []recrawl.ChannelState
	for _, r := range recs {
		ch := rc.channels[recrawl.ChannelID(r.ID)]
		if ch == nil {
			continue // nothing of it left to recrawl
		}
		ch.rate, ch.added = recrawl.Rate(r.Rate), true
		// A recrawl clock faster than real time starts again from the
		// real time at each run: an update "later" than now happened on
		// the last run's clock, and counts as now.
		last := r.LastUpdate
		if last.After(now) {
			last = now
		}
		states = append(states, recrawl.ChannelState{ID: ch.id, Group: r.Group, Interval: r.Interval, Rate: ch.rate,
			Submitted: r.Submitted, Updates: r.Updates, LastUpdate: last})
	}
	if len(states) == 0 {
		return nil
	}
	if err := c.startManager(now); err != nil {
		return err
	}
	if err := rc.mgr.Restore(states); err != nil {
		return fmt.Errorf("engine: restoring recrawl channels: %w", err)
	}
	return nil
}

// copied records that URL id of channel has a copy fetched at t.
func (r *recrawler) copied(id uint64, url string, site int64, t time.Time) *ritem {
	it := r.items[id]
	if it == nil {
		chID, err := r.chans.OfString(url)
		if err != nil {
			return nil
		}
		ch := r.channels[chID]
		if ch == nil {
			ch = &rchannel{id: chID, items: map[uint64]*ritem{}, entry: url, nextProbe: t.Add(r.cfg.InitialInterval), interSeen: map[uint64]int{}}
			ch.filters, ch.maxDepth = r.chans.Scope(chID)
			r.channels[chID] = ch
		}
		it = &ritem{id: id, ch: ch, url: url, site: site}
		ch.items[id] = it
		r.items[id] = it
	}
	it.fetched = t
	r.setQueued(it, false)
	return it
}

// setQueued notes whether copy it is requeued.
func (r *recrawler) setQueued(it *ritem, q bool) {
	if it.queued == q {
		return
	}
	it.queued = q
	if q {
		r.queuedOn[it.site]++
		return
	}
	if r.queuedOn[it.site]--; r.queuedOn[it.site] <= 0 {
		delete(r.queuedOn, it.site)
	}
	if r.sched != nil {
		r.sched.Back(it.id) // its site may queue another
	}
}

// siteGivenUp takes back the copies of site id that are queued when the
// crawl gives the site up for the rest of the run: none of them will be
// fetched, and a copy counted queued is not planned again (the Scheduler
// holds a page released until it is back).
func (r *recrawler) siteGivenUp(id int64) {
	// Most sites given up (dead hosts) have no copy queued: they cost no
	// walk over every item, and a walk ends at the site's last copy.
	n := r.queuedOn[id]
	if n == 0 {
		return
	}
	for _, it := range r.items {
		if it.site == id && it.queued {
			r.setQueued(it, false)
			if n--; n == 0 {
				return
			}
		}
	}
}

// recrawlable reports whether the crawl fetches s's pages now: it is not
// parked, nor given up for the run.
func (s *site) recrawlable() bool { return !s.parked && s.givenUp == "" }

// schedCopied tells the Scheduler of copy it, and of its site's politeness.
func (c *crawl) schedCopied(it *ritem) {
	rc := c.rc
	if rc.sched == nil {
		return
	}
	key, known := rc.schedSites[it.site]
	if !known {
		key = schedSite(it.site)
		rc.schedSites[it.site] = key
	}
	if s := c.sites[it.site]; s != nil {
		rc.sched.SetSiteGap(key, s.delay)
	}
	rc.sched.Copied(it.id, it.ch.id, key, it.fetched)
}

// listedAt keeps the lastmod a sitemap gave f, if any, for its first
// fetch (the policy of pages only).
func (r *recrawler) listedAt(f visit.FoundLink) {
	if r.sched != nil && !f.LastMod.IsZero() {
		r.listed[f.ID] = f.LastMod
	}
}

// listedCopy tells the Scheduler the lastmod a sitemap gave copy it before
// its first fetch, on the recrawl clock.
func (r *recrawler) listedCopy(it *ritem) {
	lm, ok := r.listed[it.id]
	if !ok {
		return
	}
	delete(r.listed, it.id)
	r.sched.Listed(it.id, it.fetched, r.recrawlTime(lm))
}

// recrawlTime returns real time t on the recrawl clock, as near as it
// knows it: exactly for a RecrawlClockAt or its own scaled clock, else t.
func (r *recrawler) recrawlTime(t time.Time) time.Time {
	switch c := r.clock.(type) {
	case RecrawlClockAt:
		return c.At(t)
	case scaledClock:
		return c.epoch.Add(time.Duration(float64(t.Sub(c.epoch)) * c.scale))
	}
	return t
}

// schedSite is a site's name for the Scheduler: its ID.
func schedSite(id int64) string { return strconv.FormatInt(id, 10) }

// recrawlVisitEnd tells the Scheduler how long a visit of site s held its
// robot (from its lease to its end, by the loop's clock) for the pages it
// fetched, and of a visit that fetched no URL for the first time, and
// fewer pages than a visit may take, that its discovery's turn found
// nothing (Scheduler.Passed): a lease takes the site's queue in order,
// its requeued copies first (Ahead, half a visit at most) and then its
// new URLs, so a visit of a site with URLs to discover that fetched none
// of them with room left (robots.txt only, a failure, its URLs not
// leased) is a turn its discovery was served and that found nothing. A
// visit full of copies is its recrawls' turns (a visit of one page, a
// copy, at politeness.pages_per_connection 1, as recrawl-live runs).
func (c *crawl) recrawlVisitEnd(s *site, started time.Time, pages int, now time.Time) {
	if c.rc == nil || c.rc.sched == nil {
		return
	}
	found := c.rc.visitFound[s.ID]
	delete(c.rc.visitFound, s.ID)
	if key, ok := c.rc.schedSites[s.ID]; ok {
		c.rc.sched.Held(key, now.Sub(started), pages)
		if !found && pages < c.rc.perVisit {
			c.rc.sched.Passed(key)
		}
	}
}

// startManager groups the channels estimated so far (or restored) by their
// rates and hands them to a recrawl Manager.
func (c *crawl) startManager(now time.Time) error {
	rc := c.rc
	opt := rc.cfg.Options
	opt.Clock = rc.clock
	specs := make([]recrawl.ChannelSpec, 0, len(rc.channels))
	for _, ch := range rc.sortedChannels() {
		if ch.added || ch.probes >= 1 {
			specs = append(specs, ch.spec())
			ch.added = true
		}
	}
	rc.grouped, rc.joined = len(specs), 0
	m, err := recrawl.New(opt, specs)
	if err != nil {
		return &ConfigError{Key: "recrawl", Err: err}
	}
	m.SetCapacity(float64(c.e.robots.Load()))
	rc.mgr = m
	for _, ch := range rc.channels {
		if ch.added {
			rc.managerSeeds(ch, 0)
		}
	}
	rc.stats = m.Stats()
	rc.reassigns = rc.stats.Reassignments
	text := fmt.Sprintf("recrawl: %d channels in %d groups by estimated change rate, policy %s", len(specs), opt.Groups, opt.Policy)
	c.batch.Events = append(c.batch.Events, record.Event{Time: c.e.clock.Now(), Kind: record.EventRecrawl, Text: text})
	c.e.event(record.Event{Kind: record.EventRecrawl, Text: text})
	c.recordGroups(now)
	return nil
}

func (r *recrawler) sortedChannels() []*rchannel {
	out := make([]*rchannel, 0, len(r.channels))
	for _, ch := range r.channels {
		out = append(out, ch)
	}
	slices.SortFunc(out, func(a, b *rchannel) int { return strings.Compare(string(a.id), string(b.id)) })
	return out
}

func (ch *rchannel) spec() recrawl.ChannelSpec {
	return recrawl.ChannelSpec{ID: ch.id, Rate: ch.rate, Entry: []string{ch.entry}, ExpectedPages: len(ch.items),
		Filters: ch.filters, MaxDepth: ch.maxDepth}
}

// addToManager hands channel ch to the running Manager.
func (c *crawl) addToManager(ch *rchannel) {
	rc := c.rc
	ch.added = true
	if err := rc.mgr.Add(ch.spec()); err != nil {
		c.e.event(record.Event{Kind: record.EventRecrawl, Text: err.Error()})
		return
	}
	rc.managerSeeds(ch, 0)
}

// managerSeeds tells the Manager channel ch's inter-site URLs from the
// from-th on.
func (r *recrawler) managerSeeds(ch *rchannel, from int) {
	for _, u := range ch.interSite[from:] {
		r.mgr.AddInterSite(ch.id, u)
	}
}

// recrawlTick starts what is due: probes of the channels not in the
// Manager yet, the Manager's tasks; it drops tasks past their deadline and
// starts the Manager at the end of the warm-up.
func (c *crawl) recrawlTick(now time.Time) {
	rc := c.rc
	if now.Sub(rc.lastTick) < tickEvery && !now.Before(rc.lastTick) {
		return // the loop runs at every message; once in a while is enough
	}
	rc.lastTick = now
	rnow := rc.clock.Now()
	if rc.sched != nil {
		rc.sched.SetRobots(int(c.e.robots.Load()))
		for id, key := range rc.schedSites {
			// A site being visited keeps what it was: its leased copies
			// are still counted queued but no longer pending, so it would
			// look as if it had nothing left to discover.
			if s := c.sites[id]; s != nil && s.Place() != frontier.Busy {
				n := 0
				if s.recrawlable() {
					n = int(max(s.Pending-int64(rc.queuedOn[id]), 0))
				}
				rc.sched.SetDiscovering(key, n > 0)
				rc.sched.ToDiscover(key, n)
			}
		}
		for _, id := range rc.sched.Due(now, rnow) {
			it := rc.items[id]
			if it == nil {
				rc.sched.Gone(id)
				continue
			}
			switch s := c.sites[it.site]; {
			case it.queued: // back when fetched
			case s != nil && s.recrawlable():
				c.queueCopy(it, s, now)
				rc.tasks++
			default:
				rc.sched.Refused(id) // not queued: its site's turn is free
			}
		}
		if rc.pointAt.IsZero() || rnow.Sub(rc.pointAt) >= rc.cfg.InitialInterval/4 || rnow.Before(rc.pointAt) {
			rc.pageGroups, rc.warming = rc.sched.Groups(rc.cfg.Options.Groups)
			rc.pageGroupsAt, rc.pointAt = now, rnow
			rc.notePoint(rnow, rc.pageGroups)
		}
		return
	}
	if rc.mgr == nil && !rnow.Before(rc.warmEnd) {
		if err := c.startManager(rnow); err != nil {
			c.e.event(record.Event{Kind: record.EventRecrawl, Text: err.Error()})
			c.rc = nil
			return
		}
	}
	for _, ch := range rc.channels {
		if ch.added {
			continue
		}
		if rc.mgr != nil && ch.probes >= minProbes && ch.task == nil {
			c.addToManager(ch)
			rc.joined++
			continue
		}
		if ch.task == nil && !rnow.Before(ch.nextProbe) {
			ch.nextProbe = rnow.Add(rc.cfg.InitialInterval)
			c.startTask(ch, rc.probe(ch, rnow), false, now)
		}
	}
	for _, ch := range rc.channels {
		if t := ch.task; t != nil && rnow.After(t.t.Deadline) {
			// Not done in time (a parked site, too little capacity): the
			// task is given up. Its URLs stay queued, and what they
			// find when they are fetched still counts.
			if t.manager {
				rc.mgr.Done(t.t, recrawl.Outcome{})
			}
			rc.endTask(ch)
			rc.dropped++
		}
	}
	if rc.mgr == nil {
		return
	}
	if rc.joined > 0 && rc.joined*4 >= rc.grouped+rc.joined {
		rc.mgr.Regroup()
		rc.grouped, rc.joined = rc.grouped+rc.joined, 0
	}
	if next, ok := rc.mgr.NextDue(); ok && !rnow.Before(next) {
		for _, t := range rc.mgr.Due() {
			ch := rc.channels[t.Channel]
			if ch == nil || ch.task != nil || len(ch.items) == 0 {
				// Still busy with the last one (SARSS drops the task
				// then), or nothing to fetch.
				rc.mgr.Done(t, recrawl.Outcome{})
				rc.dropped++
				continue
			}
			c.startTask(ch, t, true, now)
		}
	}
	rc.noteReassignments(c, rnow)
}

// noteReassignments turns the Manager's new reassignments into events and
// records.
func (r *recrawler) noteReassignments(c *crawl, rnow time.Time) {
	if rnow.Sub(r.lastStats) < time.Second && r.lastStats.Before(rnow) {
		return
	}
	r.lastStats = rnow
	r.stats = r.mgr.Stats()
	n := r.stats.Reassignments - r.reassigns
	r.reassigns = r.stats.Reassignments
	recent := r.stats.Recent
	for _, ra := range recent[max(len(recent)-n, 0):] {
		rec := record.ReassignmentRecord{Time: ra.At, Policy: string(ra.Policy), Before: ra.Before, After: ra.After,
			SuccessRates: ra.SuccessRates, Theta: ra.Theta, Budget: ra.Budget}
		c.batch.Reassignments = append(c.batch.Reassignments, rec)
		text := fmt.Sprintf("%s reassigned the recrawl intervals: %s", ra.Policy, describeIntervals(ra.Before, ra.After))
		ev := record.Event{Time: c.e.clock.Now(), Kind: record.EventReassign, Text: text}
		c.batch.Events = append(c.batch.Events, ev)
		c.e.event(ev)
	}
	if len(r.history) == 0 || n > 0 || rnow.Sub(r.history[len(r.history)-1].Time) >= r.cfg.InitialInterval/4 {
		c.recordGroups(rnow)
		r.notePoint(rnow, r.stats.Groups)
	}
}

// notePoint adds the groups' intervals at rnow to the history, if there
// are groups.
func (r *recrawler) notePoint(rnow time.Time, groups []recrawl.GroupStats) {
	if len(groups) == 0 {
		return
	}
	p := IntervalPoint{Time: rnow, Freshness: r.fresh.value}
	for _, g := range groups {
		p.Intervals = append(p.Intervals, g.Interval)
	}
	r.history = append(r.history, p)
	if len(r.history) > maxIntervalPoints {
		r.history = slices.Delete(r.history, 0, len(r.history)-maxIntervalPoints)
	}
}

// recordGroups writes every group (from rc.stats, which its callers have
// just taken) and channel of the Manager as they are now: what a resumed
// crawl restores.
func (c *crawl) recordGroups(rnow time.Time) {
	rc := c.rc
	for _, g := range rc.stats.Groups {
		c.batch.Groups = append(c.batch.Groups, record.GroupRecord{Index: g.Index, Channels: g.Channels, Initial: g.Initial, Interval: g.Interval, Updated: rnow})
	}
	for _, s := range rc.mgr.ChannelStates() {
		c.batch.Channels = append(c.batch.Channels, record.ChannelRecord{ID: string(s.ID), Group: s.Group, Interval: s.Interval,
			Rate: float64(s.Rate), Submitted: s.Submitted, Updates: s.Updates, LastUpdate: s.LastUpdate, Updated: rnow})
	}
}

func describeIntervals(before, after []time.Duration) string {
	var b strings.Builder
	for i := range after {
		if i > 0 {
			b.WriteString(", ")
		}
		var from time.Duration
		if i < len(before) {
			from = before[i]
		}
		fmt.Fprintf(&b, "group %d %s → %s", i, shortDuration(from), shortDuration(after[i]))
	}
	return b.String()
}

// shortDuration prints d to the minute (or second, below one).
func shortDuration(d time.Duration) string {
	if d >= time.Minute {
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Second).String()
}

// freshness is the share of copies still current, measured at most every
// freshEvery over at most freshSample copies.
type freshness struct {
	value float64 // -1 until measured
	exact bool    // against the ground truth (else estimated from the rates)
	at    time.Time
}

const (
	freshEvery  = 2 * time.Second
	freshSample = 2000
)

// measureFreshness updates the freshness of the copies: against the
// oracle when there is one, else as the Poisson estimate e^(−λ̂·age)
// averaged over the copies, λ̂ their channel's estimated rate; at most
// once every freshEvery unless forced (the totals of a run's end).
func (r *recrawler) measureFreshness(now time.Time, force bool) {
	if !force && !r.fresh.at.IsZero() && now.Sub(r.fresh.at) < freshEvery {
		return
	}
	r.fresh.at = now
	rnow := r.clock.Now()
	n, sum := 0, 0.0
	step := max(1, len(r.items)/freshSample)
	i := 0
	for _, it := range r.items {
		i++
		if i%step != 0 {
			continue
		}
		if o := r.cfg.Freshness; o != nil {
			f, ok := o.Fresh(it.url, it.fetched, rnow)
			if !ok {
				continue
			}
			n++
			if f {
				sum++
			}
			continue
		}
		n++
		sum += math.Exp(-float64(it.ch.rate) * rnow.Sub(it.fetched).Seconds())
	}
	r.fresh.exact = r.cfg.Freshness != nil
	r.fresh.value = -1
	if n > 0 {
		r.fresh.value = sum / float64(n)
	}
}

// recrawlPublish fills the engine's Stats with the recrawl state.
func (c *crawl) recrawlPublish(st *Stats) {
	rc := c.rc
	rs := &RecrawlStats{Policy: string(rc.cfg.Options.Policy), Channels: len(rc.channels), Copies: len(rc.items),
		Tasks: rc.tasks, Done: rc.done, Dropped: rc.dropped, Found: rc.found, InterSite: rc.interSite,
		Filtered: rc.filtered, Bounded: rc.bounded, Freshness: rc.fresh.value, FreshnessExact: rc.fresh.exact,
		WarmupEnds: rc.warmEnd, Now: rc.clock.Now()}
	st.Intervals = nil
	groups := rc.stats.Groups
	if rc.sched != nil {
		now := c.e.clock.Now()
		if rc.pageGroupsAt.IsZero() || now.Sub(rc.pageGroupsAt) >= pageGroupsEvery || now.Before(rc.pageGroupsAt) {
			// Over every page: not at every publication.
			rc.pageGroups, rc.warming = rc.sched.Groups(rc.cfg.Options.Groups)
			rc.pageGroupsAt = now
		}
		groups = rc.pageGroups
		rs.PerPage, rs.WarmupEnds, rs.Warming = true, time.Time{}, rc.warming
		rs.Budget = rc.sched.Budget() * 3600
		rs.Late = rc.sched.Planner().Lateness()
		rs.History = slices.Clone(rc.history)
	}
	for _, g := range groups {
		st.Intervals = append(st.Intervals, IntervalGroup{
			Name: fmt.Sprintf("group %d", g.Index), Index: g.Index, Rank: g.Rank, Channels: g.Channels,
			Interval: g.Interval, Initial: g.Initial, Submitted: g.Submitted, Updates: g.Updates,
			SuccessRate: g.SuccessRate, TotalUpdates: g.TotalUpdates, Change: g.Change, Freshness: g.Freshness,
		})
	}
	if rc.mgr != nil {
		rs.WarmupEnds = time.Time{}
		s := rc.stats
		rs.Reassignments = s.Reassignments
		if len(s.Recent) > 0 {
			last := s.Recent[len(s.Recent)-1]
			rs.LastReassign, rs.LastPolicy = last.At, string(last.Policy)
		}
		rs.History = slices.Clone(rc.history)
	}
	st.Recrawl = rs
}
