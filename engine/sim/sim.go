// Package sim runs lidi's own scheduler (frontier.Frontier and a
// frontier.Strategy) over a known web graph in virtual time: a discrete
// event simulation of a crawl, as Castillo's chapter 6 used to compare
// ordering strategies under identical conditions.
//
// The simulator models what the chapter's did: the strategy (both levels of
// the two-level scheduler of Figure 6.4), politeness (never two connections
// to one site; w between the end of one request and the start of the next
// to the same site), c pages per connection (a visit takes up to c pages of
// the site's queue at once, in priority order), r robots (visits at once),
// the crawler's bandwidth B shared max-min fairly by the transfers in
// progress, each site's latency and bandwidth, and each page's size. It
// drives the Frontier as the engine's loop does: Next picks a site, Take
// hands pages to a visit, Found records new pages, Release ends a visit
// with the site's next allowed time; the page queues live in memory instead
// of SQLite. Strategies that implement frontier.Reprioritizer (Batch,
// Partial) learn each fetched page's links and re-order queued pages.
//
// robots.txt is modelled as the engine obeys it: a site's first visit asks
// for it (one request, w before the first page); pages it disallows
// (Web.Disallowed) are handed to visits like any other and dropped without
// a request; a site whose robots.txt answers 5xx is given up after that
// first visit (the engine with errors.park_after = 1).
//
// What it does not model: DNS, robots.txt expiry and Crawl-delay, errors
// and redirects, CPU time. Every page allowed answers 200 with its size.
//
// The measure is Castillo's: the cumulative oracle PageRank of the pages
// fetched, against the number of pages fetched (Result.Fetches).
//
// Command implements "lidi sim".
package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"lidi/engine/frontier"
)

// Options are the crawler's parameters. The zero value is one robot, one
// page per connection, no politeness delay and an unlimited link.
type Options struct {
	// Robots is r, the number of sites visited at once; 0 means 1.
	Robots int
	// PagesPerVisit is c, the pages fetched over one connection; 0 means 1.
	PagesPerVisit int
	// Delay is w, the time between the end of a request and the start of
	// the next one to the same site, within a visit and between visits.
	Delay time.Duration
	// Bandwidth is B, the crawler's link in bytes per second, shared by the
	// transfers in progress; 0 means unlimited.
	Bandwidth int64
	// MaxPages stops the crawl after that many pages; 0 means none.
	MaxPages int
}

func (o Options) withDefaults() Options {
	o.Robots = max(o.Robots, 1)
	o.PagesPerVisit = max(o.PagesPerVisit, 1)
	return o
}

// Fetch is one page fetched, in the order fetches ended.
type Fetch struct {
	Page  int32
	Site  int32
	Depth int32 // links from the nearest seed, when first found
	// Start is when the request was sent and End when its last byte came,
	// in virtual time since the crawl began.
	Start, End time.Duration
	// Coverage is the cumulative oracle PageRank of the pages fetched so
	// far, this one included.
	Coverage float64
}

// Result is what a simulated crawl did. It is a value; nothing else holds it.
type Result struct {
	Strategy string
	Options  Options
	Fetches  []Fetch
	Visits   int
	Bytes    int64
	// Elapsed is the virtual time of the crawl: when its last page ended.
	Elapsed time.Duration
	// PeakTransfers is the most transfers in progress at once.
	PeakTransfers int
	// Discovered counts the pages found (queued at least once).
	Discovered int
	// Skipped counts the pages dropped without a request: disallowed by
	// robots.txt, or on a site given up.
	Skipped int
	// Parked counts the sites given up (robots.txt answered 5xx).
	Parked int
	// Wall is the real time the simulation took.
	Wall time.Duration
}

// Pages returns the number of pages fetched.
func (r *Result) Pages() int { return len(r.Fetches) }

// Coverage returns the oracle PageRank fetched after n pages (0 for n <= 0).
func (r *Result) Coverage(n int) float64 {
	if n <= 0 || len(r.Fetches) == 0 {
		return 0
	}
	return r.Fetches[min(n, len(r.Fetches))-1].Coverage
}

// TimeAt returns when the n-th page ended (0 for n <= 0).
func (r *Result) TimeAt(n int) time.Duration {
	if n <= 0 || len(r.Fetches) == 0 {
		return 0
	}
	return r.Fetches[min(n, len(r.Fetches))-1].End
}

// ErrStalled reports a crawl that stopped with pages still queued: the
// strategy held every remaining page back (a Reprioritizer bug).
var ErrStalled = errors.New("sim: crawl stalled with pages queued")

// page states.
const (
	unseen uint8 = iota
	queuedState
	taken // handed to a visit
	fetched
	skipped // dropped without a request
)

// epoch is virtual time zero as the Frontier sees it.
var epoch = time.Date(2004, 4, 1, 0, 0, 0, 0, time.UTC)

type siteState struct {
	fs         frontier.Site // the Frontier holds a pointer to it
	q          pageQueue
	robotsDone bool // robots.txt has been asked for
	parked     bool
}

type conn struct {
	site      int32
	pages     []int32 // the visit's pages, taken from the head of the queue
	i         int     // the page in flight
	start     int64   // when the request in flight was sent
	lastEnd   int64   // when the visit's previous request ended
	requested bool    // the visit has sent a request (its connection is open)
	robots    bool    // the request in flight is robots.txt
	busy      bool
}

type simulator struct {
	ctx   context.Context
	web   *Web
	opt   Options
	strat frontier.Strategy
	rp    frontier.Reprioritizer
	f     *frontier.Frontier

	now    int64
	events eventHeap
	evSeq  uint64
	net    link
	netVer uint64

	sites []*siteState
	state []uint8
	depth []int32
	pos   []int32
	seq   int64 // pages discovered

	conns []conn
	free  []int32

	res      *Result
	cum      float64
	ids      []uint64
	doneBuf  []int32
	stopped  bool
	updateFn func(uint64, float64)
}

// Run simulates a crawl of w from its seeds with strategy s. It returns
// when no page is left to fetch, MaxPages pages are fetched, or ctx is
// done (with ctx's error and the crawl so far). The strategy must be fresh:
// strategies that learn (Batch, Partial) keep what they learnt.
func Run(ctx context.Context, w *Web, s frontier.Strategy, opt Options) (*Result, error) {
	if err := w.Validate(); err != nil {
		return nil, err
	}
	if opt.Robots < 0 || opt.PagesPerVisit < 0 || opt.Delay < 0 || opt.Bandwidth < 0 || opt.MaxPages < 0 {
		return nil, fmt.Errorf("sim: negative option in %+v", opt)
	}
	opt = opt.withDefaults()
	n := w.NumPages()
	sm := &simulator{
		ctx:   ctx,
		web:   w,
		opt:   opt,
		strat: s,
		f:     frontier.New(s, false),
		net:   newLink(opt.Bandwidth),
		sites: make([]*siteState, len(w.Sites)),
		state: make([]uint8, n),
		depth: make([]int32, n),
		pos:   make([]int32, n),
		conns: make([]conn, opt.Robots),
		res:   &Result{Strategy: s.Name(), Options: opt},
	}
	sm.rp, _ = s.(frontier.Reprioritizer)
	sm.updateFn = sm.update
	for i := opt.Robots - 1; i >= 0; i-- {
		sm.free = append(sm.free, int32(i))
	}
	capacity := n
	if opt.MaxPages > 0 {
		capacity = min(capacity, opt.MaxPages)
	}
	sm.res.Fetches = make([]Fetch, 0, capacity)
	start := time.Now()
	err := sm.run()
	sm.res.Wall = time.Since(start)
	sm.res.PeakTransfers = sm.net.peak
	sm.res.Discovered = int(sm.seq)
	if len(sm.res.Fetches) > 0 {
		sm.res.Elapsed = sm.res.Fetches[len(sm.res.Fetches)-1].End
	}
	return sm.res, err
}

func (sm *simulator) run() error {
	for _, p := range sm.web.Seeds {
		sm.discover(p, 0, -1)
	}
	for steps := 0; ; steps++ {
		if steps&4095 == 0 {
			if err := sm.ctx.Err(); err != nil {
				return err
			}
		}
		sm.dispatch()
		if sm.stopped {
			return nil
		}
		t := int64(math.MaxInt64)
		if len(sm.events) > 0 {
			t = sm.events[0].at
		}
		if len(sm.free) > 0 {
			if wake, ok := sm.f.NextWake(); ok {
				t = min(t, int64(wake.Sub(epoch)))
			}
		}
		if t == math.MaxInt64 {
			break
		}
		sm.now = t
		if len(sm.events) > 0 && sm.events[0].at == t {
			sm.handle(sm.events.pop())
		}
	}
	if p := sm.f.Pending(); p > 0 {
		return fmt.Errorf("%w: %d pages", ErrStalled, p)
	}
	return nil
}

func (sm *simulator) at(t int64) time.Time { return epoch.Add(time.Duration(t)) }

func (sm *simulator) schedule(e event) {
	sm.evSeq++
	e.seq = sm.evSeq
	sm.events.push(e)
}

// discover queues page p, first found at depth on page parent (-1 for a
// seed), as the engine's discover does.
func (sm *simulator) discover(p int32, depth int32, parent int32) {
	if sm.state[p] != unseen {
		return
	}
	sm.state[p] = queuedState
	sm.depth[p] = depth
	sm.seq++
	st := sm.siteFor(sm.web.PageSite[p])
	if st.parked {
		sm.drop(p)
		return
	}
	info := frontier.PageInfo{Depth: int(depth), ID: uint64(p) + 1}
	if parent >= 0 {
		info.Parent = uint64(parent) + 1
	}
	prio := sm.strat.PagePriority(info)
	st.q.push(queued{prio: prio, seq: sm.seq, page: p}, sm.pos)
	sm.f.Found(&st.fs, 1, prio, sm.at(sm.now))
}

func (sm *simulator) siteFor(s int32) *siteState {
	if st := sm.sites[s]; st != nil {
		return st
	}
	st := &siteState{fs: frontier.Site{ID: int64(s), Key: strconv.Itoa(int(s)), Resolved: true}}
	sm.sites[s] = st
	sm.f.Add(&st.fs)
	return st
}

// update applies a Reprioritizer's new priority to a queued page.
func (sm *simulator) update(id uint64, prio float64) {
	if id == 0 || id > uint64(len(sm.state)) {
		return
	}
	p := int32(id - 1)
	if sm.state[p] != queuedState {
		return
	}
	st := sm.sites[sm.web.PageSite[p]]
	st.q.set(int(sm.pos[p]), prio, sm.pos)
	sm.f.Reprioritized(&st.fs, st.q.top().prio)
}

// dispatch starts visits while robots are free and sites are ready.
func (sm *simulator) dispatch() {
	for len(sm.free) > 0 && !sm.stopped {
		fs := sm.f.NextUnheld(sm.at(sm.now))
		if fs == nil {
			return
		}
		st := sm.sites[fs.ID]
		ci := sm.free[len(sm.free)-1]
		sm.free = sm.free[:len(sm.free)-1]
		c := &sm.conns[ci]
		c.site, c.pages, c.i, c.busy = int32(fs.ID), c.pages[:0], 0, true
		for len(c.pages) < sm.opt.PagesPerVisit && st.q.len() > 0 && st.q.top().prio != frontier.Held {
			p := st.q.pop(sm.pos).page
			sm.state[p] = taken
			c.pages = append(c.pages, p)
		}
		next := 0.0
		if st.q.len() > 0 {
			next = st.q.top().prio
		}
		sm.f.Take(&st.fs, int64(len(c.pages)), next)
		sm.res.Visits++
		c.requested, c.robots = false, false
		if sm.web.Sites[c.site].Robots != RobotsUnmodelled && !st.robotsDone {
			c.robots = true
			sm.request(ci)
			continue
		}
		sm.nextPage(ci)
	}
}

// request sends connection ci's next request: robots.txt or the page at
// c.i. The first request of a visit also opens the connection, which costs
// one more latency; the others wait w from the end of the previous one.
func (sm *simulator) request(ci int32) {
	c := &sm.conns[ci]
	lat := int64(sm.web.Sites[c.site].Latency)
	at := sm.now + 2*lat
	if c.requested {
		c.start = c.lastEnd + int64(sm.opt.Delay)
		at = c.start + lat
	} else {
		c.start = sm.now
	}
	c.requested = true
	sm.schedule(event{at: at, kind: evFirstByte, conn: ci})
}

// nextPage drops the disallowed pages at the visit's position, then
// requests the next page, or ends the visit when none is left.
func (sm *simulator) nextPage(ci int32) {
	c := &sm.conns[ci]
	for c.i < len(c.pages) && sm.web.disallowed(c.pages[c.i]) {
		sm.drop(c.pages[c.i])
		c.i++
	}
	if c.i < len(c.pages) {
		sm.request(ci)
		return
	}
	st := sm.sites[c.site]
	c.busy = false
	sm.free = append(sm.free, ci)
	// A visit that sent nothing leaves the site's next visit time as it was.
	next := st.fs.NextVisit
	if c.requested {
		next = sm.at(c.lastEnd + int64(sm.opt.Delay))
	}
	sm.f.Release(&st.fs, next, sm.at(sm.now))
}

// drop gives up page p without a request.
func (sm *simulator) drop(p int32) {
	sm.state[p] = skipped
	sm.res.Skipped++
	if sm.rp != nil {
		sm.rp.Fetched(uint64(p)+1, nil, sm.updateFn)
	}
}

// park gives up the site of connection ci, whose robots.txt answered 5xx:
// its pages, taken or queued, are dropped, and so are those found later.
func (sm *simulator) park(ci int32) {
	c := &sm.conns[ci]
	st := sm.sites[c.site]
	st.parked = true
	sm.res.Parked++
	for _, p := range c.pages[c.i:] {
		sm.drop(p)
	}
	for st.q.len() > 0 {
		sm.drop(st.q.pop(sm.pos).page)
	}
	sm.f.Drop(&st.fs, st.fs.Pending)
	c.busy = false
	sm.free = append(sm.free, ci)
	sm.f.Park(&st.fs, sm.at(sm.now))
}

func (sm *simulator) handle(e event) {
	switch e.kind {
	case evFirstByte:
		c := &sm.conns[e.conn]
		size := int(sm.web.Sites[c.site].RobotsSize)
		if !c.robots {
			size = int(sm.web.PageSize[c.pages[c.i]])
		}
		capBW := math.Inf(1)
		if bw := sm.web.Sites[c.site].Bandwidth; bw > 0 {
			capBW = float64(bw)
		}
		if sm.net.instant(size, capBW) {
			sm.requestDone(e.conn)
			return
		}
		sm.net.advance(sm.now)
		sm.net.add(e.conn, size, capBW)
		sm.rescheduleNet()
	case evLink:
		if e.ver != sm.netVer {
			return // the rates changed since; a later evLink stands
		}
		sm.net.advance(sm.now)
		sm.doneBuf = sm.net.takeDone(sm.doneBuf[:0])
		sm.rescheduleNet()
		for _, ci := range sm.doneBuf {
			if sm.stopped {
				return
			}
			sm.requestDone(ci)
		}
	}
}

func (sm *simulator) rescheduleNet() {
	sm.netVer++
	if t, ok := sm.net.next(); ok {
		sm.schedule(event{at: t, kind: evLink, ver: sm.netVer})
	}
}

// requestDone ends the request in flight on connection ci, and the visit
// goes on or ends.
func (sm *simulator) requestDone(ci int32) {
	c := &sm.conns[ci]
	c.lastEnd = sm.now
	if c.robots {
		c.robots = false
		st := sm.sites[c.site]
		st.robotsDone = true
		if sm.web.Sites[c.site].Robots == RobotsError {
			sm.park(ci)
			return
		}
		sm.nextPage(ci)
		return
	}
	sm.pageDone(ci)
	if sm.stopped {
		return
	}
	c.i++
	sm.nextPage(ci)
}

// pageDone records the page in flight on connection ci as fetched and
// learns its links.
func (sm *simulator) pageDone(ci int32) {
	c := &sm.conns[ci]
	p := c.pages[c.i]
	sm.state[p] = fetched
	sm.cum += sm.web.PageRank[p]
	sm.res.Bytes += int64(sm.web.PageSize[p])
	sm.res.Fetches = append(sm.res.Fetches, Fetch{
		Page: p, Site: c.site, Depth: sm.depth[p],
		Start: time.Duration(c.start), End: time.Duration(sm.now),
		Coverage: sm.cum,
	})
	links := sm.web.Graph.Out(p)
	if sm.rp != nil {
		sm.ids = sm.ids[:0]
		for _, t := range links {
			sm.ids = append(sm.ids, uint64(t)+1)
		}
		sm.rp.Fetched(uint64(p)+1, sm.ids, sm.updateFn)
	}
	for _, t := range links {
		sm.discover(t, sm.depth[p]+1, p)
	}
	if sm.opt.MaxPages > 0 && len(sm.res.Fetches) >= sm.opt.MaxPages {
		sm.stopped = true
	}
}
