package recrawl

import (
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// Planner schedules recrawls page by page: it estimates each page's change
// rate from its own visits, drawn towards its channel's while its own
// evidence is thin (evidence.go), and gives each page the visit frequency
// of the optimal allocation (AllocateFrequencies) of a budget of visits a
// second, weighted by importance, each site within its politeness. A
// channel stays in warm-up, its pages visited every InitialInterval, only
// until its pooled evidence suffices (MinChanges changes seen, or
// MinVisits visits of each page without one). A page whose changes bring
// links to new pages (a news site's front page) is worth more than its
// own freshness: each new page its changes revealed adds the mean weight
// to its own.
//
// The engine tells it what it fetched (Add, Visit) and asks what is due
// (Due); everything is in the recrawl clock's time. The zero value is not
// usable: use NewPlanner. A Planner is not safe for concurrent use.
type Planner struct {
	opt      PlannerOptions
	pages    map[uint64]*plannedPage
	channels map[ChannelID]*plannedChannel
	sites    map[string]int
	caps     []float64 // per site index, visits a second
	gaps     []time.Duration
	// disc is, per site index, what its discovery has still to find
	// (SetDiscovery); floors what a turn of it was worth at the last
	// solve (DiscoveryFloor).
	disc   []Discovery
	floors []float64
	// prices are, per site index, what a visit of its planned pages was
	// worth at the margin at the last solve (its floor and the budget's
	// price, or its own where its politeness binds): SitePrice.
	prices []float64
	// fresh is, per site index, the freshness its planned pages'
	// estimated rates expect at their frequencies, weighted by their
	// weights in the plan, at the last solve.
	fresh []float64
	// turns are, per site with a gap, the turns its pages hold, by time:
	// each scheduled page holds the free turn nearest its time (reserve).
	turns [][]turn
	// bySite are, per site index, its pages (rebook gives them their
	// turns again without a look at every page of the crawl).
	bySite []map[uint64]*plannedPage
	// early is, per site index, what bestEarly's last scan of it that
	// found no page left to know (earlyCheck).
	early []earlyCheck
	// walked counts the turns reserve stepped over: its cost, which
	// maxWalk bounds.
	walked int
	// full are the names of the sites whose planned pages ask, at the last
	// solve, for all the capacity the plan gives them (Early), sorted, and
	// isFull the same as a set.
	full   []string
	isFull map[string]bool
	budget float64 // visits a second
	queue  pageQueue
	solved time.Time
	// solves counts the solves: a page's Price and its site's floor
	// change only at one (as time passes, a Price only rises).
	solves int
	// priced counts the Prices reckoned (Price, reaches): their cost,
	// which the Scheduler's Due bounds.
	priced int
	dirty  bool
	// now is the latest time the Planner was told of: no page is given a
	// turn before it.
	now  time.Time
	late Lateness
}

// turn is a site's turn held by a page: its release time.
type turn struct {
	at time.Time
	id uint64
}

// PlannerOptions configure a Planner. Zero fields take DefaultPlanner's.
type PlannerOptions struct {
	// InitialInterval is how often a channel's pages are visited during
	// its warm-up.
	InitialInterval time.Duration
	// MinChanges and MinVisits end a channel's warm-up: MinChanges changes
	// seen over its pages, or MinVisits visits of each of its pages.
	MinChanges, MinVisits int
	// MinInterval and MaxInterval bound a page's interval between visits.
	MinInterval, MaxInterval time.Duration
	// Resolve is how often the allocation is solved again.
	Resolve time.Duration
}

// DefaultPlanner returns the default planner options.
func DefaultPlanner() PlannerOptions {
	return PlannerOptions{InitialInterval: time.Hour, MinChanges: 4, MinVisits: 2,
		MinInterval: time.Minute, MaxInterval: 30 * 24 * time.Hour, Resolve: 5 * time.Minute}
}

func (o PlannerOptions) withDefaults() PlannerOptions {
	d := DefaultPlanner()
	if o.InitialInterval <= 0 {
		o.InitialInterval = d.InitialInterval
	}
	if o.MinChanges <= 0 {
		o.MinChanges = d.MinChanges
	}
	if o.MinVisits <= 0 {
		o.MinVisits = d.MinVisits
	}
	if o.MinInterval <= 0 {
		o.MinInterval = d.MinInterval
	}
	if o.MaxInterval <= 0 {
		o.MaxInterval = d.MaxInterval
	}
	o.MaxInterval = max(o.MaxInterval, o.MinInterval)
	if o.Resolve <= 0 {
		o.Resolve = d.Resolve
	}
	return o
}

// PageInfo describes a page with a copy to a Planner.
type PageInfo struct {
	ID      uint64
	Channel ChannelID
	Site    string  // the politeness domain (a host, or an address)
	Weight  float64 // importance (in-links, PageRank, ...); 0 means 1
}

type plannedPage struct {
	info   PageInfo
	site   int
	last   time.Time // the copy's fetch
	visits []Visit   // the last maxPageVisits
	// newLinks is how many new pages those visits revealed (links[i]
	// visits[i]'s): the changes that revealed them are counted over the
	// same visits, so the mean per change does not grow with a crawl's
	// length.
	newLinks int
	links    []int32
	rate     Rate
	// ownRate is, while its channel warms up (rate its channel's pooled
	// rate), its own evidence's posterior with that rate as the prior:
	// what a free turn weighs it by (bestEarly).
	ownRate Rate
	// weight is its weight in the last solve's allocation (0 while its
	// channel warms up): its importance and what its changes reveal.
	weight   float64
	interval time.Duration
	// next is when its next visit is planned, and turn the turn of its
	// site it holds for it (zero for a site without a gap, or none).
	next, turn time.Time
	// anchor is the plan's time line: when its last visit was planned,
	// or its fetch if the plan did not release it.
	anchor time.Time
	// due is when the visit in flight was planned (its next when Due
	// released it), and released when Due released it; zero when none is
	// in flight.
	due, released time.Time
	// early is whether Early released the visit in flight in a free turn
	// (its time line moves to the visit).
	early bool
	// held is whether the visit in flight waited for a turn its worth did
	// not win (Hold): its time line moves to the visit too.
	held bool
	// at is when its queue entry is due, and qi the entry's index in the
	// queue (-1 for none): each page has one entry at most.
	at        time.Time
	qi        int
	scheduled bool
	// evid is the evidence of visits, fresh unless changed; prior the
	// prior rate was estimated with.
	evid    Evidence
	changed bool
	prior   Rate
	// age is the time its last change was known quiet before its first
	// fetch (a sitemap's lastmod), and ageWeight its weight (AddAge).
	age       time.Duration
	ageWeight float64
	// cost is its last moveCost.
	cost moveCostOf
}

type plannedChannel struct {
	pages   map[uint64]*plannedPage
	ready   bool
	rate    Rate // pooled
	pooled  Evidence
	changed bool // a page's evidence changed since pooled
}

// NewPlanner returns an empty Planner.
func NewPlanner(opt PlannerOptions) *Planner {
	return &Planner{opt: opt.withDefaults(), pages: map[uint64]*plannedPage{}, channels: map[ChannelID]*plannedChannel{},
		sites: map[string]int{}, isFull: map[string]bool{}}
}

// SetBudget sets the visits a second recrawls may make in all.
func (p *Planner) SetBudget(perSecond float64) {
	if perSecond != p.budget {
		p.budget, p.dirty = perSecond, true
	}
}

// SetSiteGap sets the shortest time between two requests to site (its
// politeness: the delay, or its robots.txt Crawl-delay). A gap that
// changes by more than a quarter gives the site's pages their turns
// again, in the order of their times.
func (p *Planner) SetSiteGap(site string, gap time.Duration) {
	s := p.site(site)
	old := p.gaps[s]
	p.gaps[s] = gap
	c := 0.0
	if gap > 0 {
		c = 1 / gap.Seconds()
	}
	if p.caps[s] != c {
		p.caps[s], p.dirty = c, true
	}
	if (old == 0) != (gap == 0) || old > 0 && (gap*4 > old*5 || gap*5 < old*4) {
		p.rebook(s)
	}
}

// Discovery is what a site's discovery has still to find, and how its
// turns (the requests the crawl served it) have gone: N pages still to
// fetch for the first time, each of importance Weight (the mean of what
// its discovery found lately, a page not kept counting 0); its
// discoveries come Spacing turns apart (a mean, the finding turn
// included); it was served Turns since the last, Passed of which found
// nothing (the rest its recrawls took); and Idle turns found nothing
// between two of its discoveries lately (a mean). A Weight or N of 0 is
// for a site with nothing to discover, or whose discovery's worth is not
// known yet.
//
// Turns, not the clock: the time a site is not served (not leased, a
// suspend, a clock that jumped) is no turn of its discovery, neither one
// that waited nor one that found nothing (review s39's N1).
type Discovery struct {
	Weight  float64
	N       int
	Spacing float64
	Turns   int
	Passed  int
	Idle    float64
}

// age is how long the pages still to find have waited for a turn of
// discovery, in the site's turns: at least its usual Spacing, and the
// turns served since its last discovery and the next one.
func (d Discovery) age() float64 {
	return max(d.Spacing, float64(d.Turns+1))
}

// yield is the share of a turn of discovery expected to find a page: 1
// while the turns since its last discovery that found nothing (Passed)
// number no more than its discovery's usual Idle, then (1+Idle)/(1+Passed).
// A turn given to discovery that finds nothing is evidence that the next
// finds nothing too. The floor's age counts those turns as turns the
// pages still to find waited; without the yield, a discovery that stalled
// made the floor grow without a bound past every page's Price, bounded by
// w/λ, and the site recrawled nothing until its next discovery (review
// s38's R2: 1 visit of its hubs in 10 h). With it, the floor of a stalled
// discovery stays near what one of its spacings is worth; its recrawls
// taking the turns still raise it.
func (d Discovery) yield() float64 {
	return min(1, (1+d.Idle)/(1+float64(d.Passed)))
}

// SetDiscovery tells what site's discovery has still to find (Discovery).
//
// A page found keeps a copy from then on, fresh until its first change,
// then recrawled in turn (fresh F of the time, what its site's planned
// pages expect, weighted as the crawl's freshness is); so a turn of
// discovery moves the pages still to find a turn of discovery sooner,
// each with a copy for that time a: a = Discovery.age turns of the
// site's gap, a turn worth n'·Weight·((1−F)·(1 − e^(−λa))/λ + F·a)·yield, λ the
// site's mean rate, yield the share of its turns expected to find a page
// (Discovery.yield; DiscoveryFloor). Only the pages its turns could find
// within the horizon 1/λ' count, n' = min(N, 1/(λ'·gap)), gap the site's
// and λ' the rate of the pages its recrawls visit (discoveryReach). A
// turn a recrawl takes is worth its page's Price: its catch lasts only
// until the page's next change, and the visits the plan gives the page
// come anyway. So the site's pages are planned only while a visit is
// worth more than a turn of discovery at the margin, and the turns they
// leave go to discovery; the longer discovery waits for a turn its
// recrawls took, the more the next is worth, so it is never left without.
func (p *Planner) SetDiscovery(site string, d Discovery) {
	if s := p.site(site); p.disc[s] != d {
		p.disc[s], p.dirty = d, true
	}
}

// discoveryReach is how many of n pages still to find a turn of
// discovery brings sooner within the horizon 1/lam (in seconds), on a
// site taking a request a gap apart: those its turns could find within
// it, min(n, 1/(lam·gap)), at least one (the turn's own), and n where lam
// or gap is unknown (0).
//
// Delaying discovery by a turn delays each page still to find by that
// turn, but a page found beyond the horizon is not the turn's to count:
// the horizon is that of a recrawl's own gain (a Price is at most w/λ,
// its catch lasting until the page's next change), and past it the same
// choice comes round again. Counted whole, a backlog growing as it is
// found (a site mid-crawl has thousands) made a turn of discovery worth
// more than any visit, and the site recrawled nothing, the hubs whose
// changes link its new pages included (TestSchedulerBacklogKeepsRecrawls).
// The reach is counted at the site's own pace, a page a gap, not at the
// pace its discovery was given lately: that pace falls as recrawls take
// the turns, and a reach counted by it fell with it, so that discovery
// lost more turns the more it had lost (a site of 11 heavy pages changing
// every 2 h and a turn every 20 min found 10 of 300 pages in 36 h, 1 in
// the last day: TestSchedulerSlowSiteBacklogSharesTurns).
func discoveryReach(n int, lam float64, gap time.Duration) float64 {
	if lam <= 0 || gap <= 0 {
		return float64(n)
	}
	return min(float64(n), max(1, 1/(lam*gap.Seconds())))
}

// DiscoveryFloor returns what a turn of site's discovery was worth at the
// last solve, in the allocation's units (weighted freshness, in seconds,
// as Price): 0 for a site with nothing to discover (SetDiscovery).
func (p *Planner) DiscoveryFloor(site string) float64 {
	if s, ok := p.sites[site]; ok {
		return p.floors[s]
	}
	return 0
}

// SitePrice returns what a visit of site's planned pages was worth at
// the margin at the last solve, in Price's units: the price the plan
// gives them their frequencies at, what a turn of its discovery is worth
// (DiscoveryFloor) and the budget's price, or the site's own where its
// politeness binds above those. A page whose Price is above it is worth
// more than the plan gives it (Early).
func (p *Planner) SitePrice(site string) float64 {
	if s, ok := p.sites[site]; ok {
		return p.prices[s]
	}
	return 0
}

// rebook gives site s's scheduled pages their turns again, the earliest
// due first (a visit in flight at its retry), a gap from the turns
// already taken: the site's requests stay a gap apart across the change.
func (p *Planner) rebook(s int) {
	p.early[s].valid = false // its pages' turns move
	var pages []*plannedPage
	for _, pg := range p.bySite[s] {
		if pg.scheduled {
			pages = append(pages, pg)
		}
	}
	p.unreserveAll(pages)
	slices.SortFunc(pages, func(a, b *plannedPage) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return cmp.Compare(a.info.ID, b.info.ID)
	})
	for _, pg := range pages {
		p.push(pg, pg.at)
	}
}

func (p *Planner) site(name string) int {
	s, ok := p.sites[name]
	if !ok {
		s = len(p.caps)
		p.sites[name] = s
		p.caps = append(p.caps, 0)
		p.gaps = append(p.gaps, 0)
		p.disc = append(p.disc, Discovery{})
		p.floors = append(p.floors, 0)
		p.prices = append(p.prices, 0)
		p.fresh = append(p.fresh, 0)
		p.turns = append(p.turns, nil)
		p.bySite = append(p.bySite, map[uint64]*plannedPage{})
		p.early = append(p.early, earlyCheck{})
	}
	return s
}

// tell moves the Planner's present to t, if later.
func (p *Planner) tell(t time.Time) {
	if t.After(p.now) {
		p.now = t
	}
}

// Add records a page with a copy fetched at fetched; a page known already
// keeps its history and takes the new info.
func (p *Planner) Add(info PageInfo, fetched time.Time) {
	p.tell(fetched)
	pg := p.pages[info.ID]
	ch := p.channels[info.Channel]
	if ch == nil {
		ch = &plannedChannel{pages: map[uint64]*plannedPage{}}
		p.channels[info.Channel] = ch
	}
	if pg == nil {
		pg = &plannedPage{info: info, last: fetched, anchor: fetched, site: -1, qi: -1}
		ch.pages[info.ID] = pg
		p.pages[info.ID] = pg
		p.dirty = true
	} else if pg.info.Channel != info.Channel {
		// Moved (a new channel may be new to the Planner): both
		// channels' pooled evidence changes.
		old := p.channels[pg.info.Channel]
		delete(old.pages, info.ID)
		old.changed = true
		ch.pages[info.ID] = pg
		ch.changed, p.dirty = true, true
	}
	pg.info = info
	if s := p.site(info.Site); s != pg.site {
		p.unreserve(pg)
		if pg.site >= 0 {
			delete(p.bySite[pg.site], info.ID)
		}
		pg.site = s
		p.bySite[s][info.ID] = pg
		if pg.scheduled {
			// Due when it was, a visit in flight at its retry: its
			// new site's turn nearest that time.
			p.push(pg, pg.at)
		}
	}
	if !pg.scheduled {
		p.schedule(pg, p.opt.InitialInterval)
	}
	// A page new to its site, or a weight changed (a Price rises with
	// it), between solves: what bestEarly knew of the site is void.
	p.early[pg.site].valid = false
}

// Remove forgets a page (gone, or out of scope).
func (p *Planner) Remove(id uint64) {
	pg := p.pages[id]
	if pg == nil {
		return
	}
	delete(p.channels[pg.info.Channel].pages, id)
	delete(p.pages, id)
	delete(p.bySite[pg.site], id)
	p.unreserve(pg)
	if pg.qi >= 0 {
		heap.Remove(&p.queue, pg.qi)
	}
	p.dirty = true
}

// Visit records a fetch of page id: v.Interval, if zero, is the time since
// the copy's fetch; newLinks is how many links to pages not known before
// the visit found. The page is planned again on the plan's time line (see
// schedule).
func (p *Planner) Visit(id uint64, v Visit, newLinks int) {
	pg := p.pages[id]
	if pg == nil {
		return
	}
	p.tell(v.At)
	if v.Interval == 0 {
		v.Interval = v.At.Sub(pg.last)
	}
	if v.Interval > 0 {
		if len(pg.visits) == maxPageVisits {
			pg.visits = slices.Delete(pg.visits, 0, 1)
			pg.newLinks -= int(pg.links[0])
			pg.links = slices.Delete(pg.links, 0, 1)
		}
		pg.visits = append(pg.visits, v)
		pg.links = append(pg.links, int32(newLinks))
		pg.newLinks += newLinks
	}
	pg.last = v.At
	pg.changed = true
	p.early[pg.site].valid = false // pg may go early again
	p.channels[pg.info.Channel].changed = true
	p.dirty = true
	iv := p.interval(pg)
	pg.anchor = v.At
	if !pg.due.IsZero() {
		p.late.add(pg.due, pg.released, v.At, iv)
		pg.anchor = pg.due
		if pg.early {
			// A free turn took it ahead of its time: its time line moves
			// to the visit, so that the turns a full site's plan leaves
			// free raise its pages' frequencies.
			pg.anchor = minTime(pg.due, v.At)
		}
		if pg.held {
			pg.anchor = maxTime(pg.due, v.At)
		}
	}
	pg.due, pg.released, pg.early, pg.held = time.Time{}, time.Time{}, false, false
	p.schedule(pg, iv)
}

// schedule plans page pg's next visit an interval iv after its anchor:
// when its last visit was planned, not when it was fetched, if the plan
// released it. A fetch that waits for its site's turn or for a robot
// would otherwise stretch every interval by the wait, and cost the pages
// with short intervals (those the plan visits most because they matter
// most) the largest share of their visits. The catch-up is bounded: the
// next visit is never planned less than half an interval after the
// fetch. Visit and Solve (a new interval) plan by this one rule.
func (p *Planner) schedule(pg *plannedPage, iv time.Duration) {
	pg.scheduled = true
	pg.next = p.nextVisit(pg, iv)
	p.push(pg, pg.next)
}

// nextVisit is when page pg is next visited at an interval iv (schedule).
func (p *Planner) nextVisit(pg *plannedPage, iv time.Duration) time.Time {
	return maxTime(pg.anchor.Add(iv), pg.last.Add(iv/2))
}

// push makes page pg's entry due at at the current one: it is released at
// the turn of its site it holds (reserve), or at at on a site without a
// gap.
func (p *Planner) push(pg *plannedPage, at time.Time) {
	p.unreserve(pg)
	pg.at = at
	key := p.reserve(pg, at)
	if pg.qi >= 0 {
		p.queue.entries[pg.qi].key = key
		heap.Fix(&p.queue, pg.qi)
		return
	}
	heap.Push(&p.queue, queued{key: key, pg: pg})
}

// reserve gives page pg the free turn of its site nearest at, and returns
// it: a turn is free if no other page holds one less than the site's gap
// from it, and none is before the Planner's present. A site whose
// politeness makes turns scarce then serves the pages due together each
// near its time, some a little early and some a little late, where
// released as they fall due they would be served in order, each later
// than the one before, and the turns before them would pass unused.
//
// Whoever comes last to a crowded stretch of turns would otherwise wait
// longest, whatever it is worth: a news site's front page, worth more
// than all its site's other pages, waited an hour or two for its turn
// behind pages visited once a day after a site's gap changed. So a page
// (not in flight) whose nearest free turn is more than a gap from its
// time takes the nearest turn of a page that loses less when moved
// (moveCost), which then books again by the same rule (maxBump deep).
func (p *Planner) reserve(pg *plannedPage, at time.Time) time.Time {
	return p.reserveDepth(pg, at, 0)
}

// reserveDepth is reserve, depth pages moved from their turns before it
// (victim).
func (p *Planner) reserveDepth(pg *plannedPage, at time.Time, depth int) time.Time {
	// No turn before the present, nor, for a visit in flight, before
	// MinInterval after its release: the nearest free turn may be before
	// at, and the retry of a visit that takes long must not come so soon.
	floor := p.now
	if !pg.released.IsZero() {
		floor = maxTime(floor, pg.released.Add(p.opt.MinInterval))
		at = maxTime(at, floor)
	}
	gap := p.gaps[pg.site]
	if gap <= 0 {
		return at
	}
	// The turns taken a gap before the present bind no more.
	ts := p.turns[pg.site]
	bound := p.now.Add(-gap)
	if n := sort.Search(len(ts), func(i int) bool { return !ts[i].at.Before(bound) }); n > 0 {
		ts = slices.Delete(ts, 0, n)
	}
	// The first free time at or after at, and the last at or before it.
	late := maxTime(at, p.now)
	i, _ := slices.BinarySearchFunc(ts, late.Add(-gap), func(t turn, x time.Time) int {
		if t.at.After(x) {
			return 1
		}
		return -1
	})
	walk := 0
	for ; i < len(ts) && ts[i].at.Before(late.Add(gap)); i++ {
		if walk++; walk > maxWalk {
			// Turns back to back past here (a site's pages asking for
			// one time, as on resume): the turn after the last one
			// is free, and the walk stays short.
			late = maxTime(late, ts[len(ts)-1].at.Add(gap))
			break
		}
		late = ts[i].at.Add(gap)
	}
	p.walked += walk
	best := late
	if early := at; !early.Before(floor) {
		j, _ := slices.BinarySearchFunc(ts, early.Add(gap), func(t turn, x time.Time) int {
			if t.at.Before(x) {
				return -1
			}
			return 1
		})
		walk = 0
		for j--; j >= 0 && ts[j].at.After(early.Add(-gap)) && walk <= maxWalk; j-- {
			early = ts[j].at.Add(-gap)
			walk++
		}
		p.walked += walk
		if walk <= maxWalk && !early.Before(floor) && at.Sub(early) <= late.Sub(at) {
			best = early
		}
	}
	if d := absDuration(best.Sub(at)); d > gap && pg.released.IsZero() && depth < maxBump {
		if k, q := p.victim(pg, ts, at, floor, d); q != nil {
			// Its turn is pg's; q takes the free turn nearest its own
			// time, or a turn of a page that loses less still.
			best = ts[k].at
			ts[k].id = pg.info.ID
			p.turns[pg.site] = ts
			pg.turn = best
			q.turn = time.Time{}
			key := p.reserveDepth(q, q.at, depth+1)
			p.queue.entries[q.qi].key = key
			heap.Fix(&p.queue, q.qi)
			return best
		}
	}
	k, _ := slices.BinarySearchFunc(ts, best, func(t turn, x time.Time) int { return t.at.Compare(x) })
	p.turns[pg.site] = slices.Insert(ts, k, turn{at: best, id: pg.info.ID})
	pg.turn = best
	return best
}

// maxBump bounds the pages one reservation moves from their turns
// (victim), one after the other, each losing less than the one before.
const maxBump = 4

// victim returns the turn nearest at, less than d from it and not before
// floor, that page pg may take from the page holding it, and that page:
// one planned (not in flight) whose visit loses less than pg's when moved
// from its time (moveCost), at most maxWalk turns each way. It returns
// nil for none.
func (p *Planner) victim(pg *plannedPage, ts []turn, at, floor time.Time, d time.Duration) (int, *plannedPage) {
	c := p.moveCost(pg)
	if c <= 0 {
		return 0, nil
	}
	i, _ := slices.BinarySearchFunc(ts, at, func(t turn, x time.Time) int { return t.at.Compare(x) })
	best, bestD := -1, d
	try := func(k int) {
		dk := absDuration(ts[k].at.Sub(at))
		if dk >= bestD || ts[k].at.Before(floor) {
			return
		}
		q := p.pages[ts[k].id]
		if q == nil || q == pg || !q.turn.Equal(ts[k].at) || !q.due.IsZero() || q.qi < 0 || p.moveCost(q) >= c {
			return
		}
		best, bestD = k, dk
	}
	for k := i; k < len(ts) && k-i < maxWalk && ts[k].at.Sub(at) < bestD; k++ {
		try(k)
	}
	for k := i - 1; k >= 0 && i-k <= maxWalk && at.Sub(ts[k].at) < bestD; k-- {
		try(k)
	}
	p.walked += min(len(ts)-i, maxWalk) + min(i, maxWalk)
	if best < 0 {
		return 0, nil
	}
	return best, p.pages[ts[best].id]
}

// moveCost is what page pg's freshness loses, weighted, for each squared
// second its visit moves from its time: visited every I, a visit moved by
// δ makes two intervals I−δ and I+δ, and a page of rate λ is fresh
// (1 − e^(−λL))/λ of an interval L, so the two lose λ·e^(−λI)·δ² to
// second order. A page changing in nearly every interval loses little
// (its copy is stale most of the time anyway), one visited often that
// matters much loses most: the turns near their times are theirs.
func (p *Planner) moveCost(pg *plannedPage) float64 {
	lam := float64(pg.rate)
	if lam <= 0 {
		return 0
	}
	// victim weighs the pages holding the turns near a crowded time at
	// every reservation, the same pages again and again between two
	// changes of their rate, weight or interval: the last cost is kept
	// with what it was reckoned from.
	w, iv := pg.worth(), p.interval(pg)
	c := &pg.cost
	if c.lam != lam || c.w != w || c.iv != iv {
		*c = moveCostOf{lam: lam, w: w, iv: iv, cost: w * lam * math.Exp(-lam*iv.Seconds())}
	}
	return c.cost
}

// moveCostOf is a page's moveCost and what it was reckoned from.
type moveCostOf struct {
	lam, w float64
	iv     time.Duration
	cost   float64
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// maxWalk bounds the turns reserve steps over looking for a free one
// each way: past it, a page takes the turn after its site's last (and
// none earlier), so that a site with 100,000 pages due at once costs each
// a few dozen steps, not a walk over all the turns before it.
const maxWalk = 64

// unreserve frees the turn page pg holds, if any.
func (p *Planner) unreserve(pg *plannedPage) {
	if k := p.booked(pg); k >= 0 {
		p.turns[pg.site] = slices.Delete(p.turns[pg.site], k, k+1)
	}
	pg.turn = time.Time{}
}

// booked returns the index of the turn page pg holds in its site's
// turns, -1 for none.
func (p *Planner) booked(pg *plannedPage) int {
	if pg.turn.IsZero() {
		return -1
	}
	ts := p.turns[pg.site]
	k, _ := slices.BinarySearchFunc(ts, pg.turn, func(t turn, x time.Time) int { return t.at.Compare(x) })
	for ; k < len(ts) && ts[k].at.Equal(pg.turn); k++ {
		if ts[k].id == pg.info.ID {
			return k
		}
	}
	return -1
}

// unreserveAll is unreserve of each of pages, their turns taken out of
// their sites' in one pass: one at a time, each moved the turns after it,
// and a site of thousands of pages replanned or rebooked at once spent
// most of its solve moving them.
func (p *Planner) unreserveAll(pages []*plannedPage) {
	type at struct{ site, k int }
	var out []at
	for _, pg := range pages {
		if k := p.booked(pg); k >= 0 {
			out = append(out, at{pg.site, k})
		}
		pg.turn = time.Time{}
	}
	slices.SortFunc(out, func(a, b at) int {
		if c := cmp.Compare(a.site, b.site); c != 0 {
			return c
		}
		return cmp.Compare(a.k, b.k)
	})
	for i := 0; i < len(out); {
		s := out[i].site
		ts := p.turns[s]
		w := out[i].k
		for r := out[i].k; r < len(ts); r++ {
			if i < len(out) && out[i].site == s && out[i].k == r {
				i++
				continue
			}
			ts[w] = ts[r]
			w++
		}
		clear(ts[w:])
		p.turns[s] = ts[:w]
	}
}

// evidence returns a page's evidence.
func (pg *plannedPage) evidence() Evidence {
	var e Evidence
	e.AddAge(pg.age, pg.ageWeight)
	for _, v := range pg.visits {
		e.Add(v)
	}
	return e
}

// Aged records that page id's last change was dated lastChange before its
// first fetch, by a source whose date counts as weight of a dated change
// (SitemapWeight for a sitemap's lastmod). A date after the first fetch,
// or a page visited again since, adds nothing: the date no longer says
// what the page did before the first fetch.
func (p *Planner) Aged(id uint64, firstFetch, lastChange time.Time, weight float64) {
	pg := p.pages[id]
	if pg == nil || len(pg.visits) > 0 || !lastChange.Before(firstFetch) || weight <= 0 {
		return
	}
	pg.age, pg.ageWeight = firstFetch.Sub(lastChange), weight
	pg.changed = true
	p.channels[pg.info.Channel].changed = true
	p.dirty = true
}

// Solve estimates the rates again and allocates the budget, if anything
// changed since the last solve and Resolve has passed. Due calls it.
func (p *Planner) Solve(now time.Time) {
	if !p.dirty || (!p.solved.IsZero() && now.Sub(p.solved) < p.opt.Resolve && !now.Before(p.solved)) {
		return
	}
	p.solved, p.dirty = now, false
	p.solves++
	p.tell(now)
	// The prior of every channel: the rate pooled over all the pages,
	// a change per initial interval counting for one pseudo-change.
	var all Evidence
	for _, cid := range sortedKeys(p.channels) {
		ch := p.channels[cid]
		if ch.changed {
			ch.pooled = Evidence{}
			for _, id := range sortedKeys(ch.pages) {
				pg := ch.pages[id]
				if pg.changed {
					pg.evid = pg.evidence()
				}
				ch.pooled.Merge(pg.evid)
			}
		}
		all.Merge(ch.pooled)
	}
	global := all.Posterior(RateOf(p.opt.InitialInterval), PriorWeight)
	var demands []Demand
	var planned, moved []*plannedPage
	budget := p.budget
	warming := make([][]*plannedPage, len(p.caps)) // per site, its pages in warm-up
	var weights float64
	for _, pg := range p.pages {
		weights += weightOr1(pg.info.Weight)
	}
	meanWeight := 1.0
	if len(p.pages) > 0 {
		meanWeight = weights / float64(len(p.pages))
	}
	// In order of channel and page, so that the same visits give the same
	// plan (float sums depend on their order).
	for _, cid := range sortedKeys(p.channels) {
		ch := p.channels[cid]
		ids := sortedKeys(ch.pages)
		pooled := ch.pooled
		visited := math.MaxInt
		for _, id := range ids {
			visited = min(visited, len(ch.pages[id].visits))
		}
		changed := ch.changed || ch.rate == 0
		if changed {
			ch.rate = pooled.Posterior(global, PriorWeight)
			ch.changed = false
		}
		ch.ready = ch.ready || pooled.Changes() >= p.opt.MinChanges || len(ch.pages) > 0 && visited >= p.opt.MinVisits
		for _, id := range ids {
			pg := ch.pages[id]
			if !ch.ready {
				pg.rate, pg.weight = ch.rate, 0
				if changed || pg.ownRate == 0 {
					pg.ownRate = pg.evid.Posterior(ch.rate, PriorWeight)
				}
				warming[pg.site] = append(warming[pg.site], pg)
				continue
			}
			// A channel that never changed lends a prior of "less than one
			// change in all the time seen".
			prior := ch.rate
			if prior == 0 {
				prior = Rate(0.5 / math.Max(pooled.Quiet.Seconds()/float64(len(ch.pages)), 1))
			}
			e := pg.evid
			if pg.changed || math.Abs(float64(prior-pg.prior)) > 0.01*float64(prior) {
				pg.rate, pg.prior, pg.changed = e.Posterior(prior, PriorWeight), prior, false
			}
			w := weightOr1(pg.info.Weight)
			if n := e.Changes(); pg.newLinks > 0 && n > 0 {
				// Each change revealed new pages: catching it is worth them.
				w += meanWeight * float64(pg.newLinks) / float64(n)
			}
			pg.weight = w
			demands = append(demands, Demand{Rate: pg.rate, Weight: w, Site: pg.site,
				Min: 1 / p.opt.MaxInterval.Seconds(), Max: 1 / p.opt.MinInterval.Seconds()})
			planned = append(planned, pg)
		}
	}
	// The warm-up visits a site's pages every InitialInterval, within what
	// the site's politeness allows; on a site with planned pages too (a
	// ready channel's site, its newly found pages warming up) with half
	// its capacity at most, and spread to that, so that a slow site's
	// probes do not pile up ahead of its pages that matter. What is left of
	// the caps is the planned pages'.
	planned1 := make([]bool, len(p.caps))
	for _, pg := range planned {
		planned1[pg.site] = true
	}
	caps := slices.Clone(p.caps)
	for s := range caps {
		caps[s] *= SiteLoad
	}
	for s, pages := range warming {
		if len(pages) == 0 {
			continue
		}
		spend := float64(len(pages)) / p.opt.InitialInterval.Seconds()
		iv := p.opt.InitialInterval
		if c := caps[s]; c > 0 {
			if planned1[s] && spend > c/2 {
				spend = c / 2
				iv = frequencyInterval(spend / float64(len(pages)))
			}
			spend = math.Min(spend, c)
			caps[s] = math.Max(c-spend, 1e-12)
		}
		budget -= spend
		for _, pg := range pages {
			if pg.interval != iv {
				pg.interval = iv
				moved = append(moved, pg)
			}
		}
	}
	// What a turn of each site's discovery is worth (SetDiscovery): the
	// sites' mean rates, and the rates of their changes, each page's rate
	// weighted by how much of the site's worth changes there (w·λ).
	rates, n := make([]float64, len(p.caps)), make([]int, len(p.caps))
	changing, changes := make([]float64, len(p.caps)), make([]float64, len(p.caps))
	for _, pg := range p.pages {
		lam := float64(pg.rate)
		rates[pg.site] += lam
		n[pg.site]++
		changing[pg.site] += pg.worth() * lam * lam
		changes[pg.site] += pg.worth() * lam
	}
	for s, d := range p.disc {
		p.floors[s] = 0
		if d.Weight <= 0 || d.N <= 0 {
			continue
		}
		a := d.age() * p.gaps[s].Seconds()
		first := a // fresh until its first change
		lam := rates[s] / float64(max(n[s], 1))
		if lam > 0 {
			first = -math.Expm1(-lam*a) / lam
		}
		// The horizon is that of the recrawls it competes with
		// (discoveryReach): the rate of the site's changes, where its
		// recrawls' worth is, not its pages' mean rate, which its static
		// pages bring near 0 on a real site, where the reach was then the
		// whole backlog again (review s38's R4; TestPlannerReachStaticPages).
		var horizon float64
		if changes[s] > 0 {
			horizon = changing[s] / changes[s]
		}
		p.floors[s] = discoveryReach(d.N, horizon, p.gaps[s]) * d.Weight * (first + p.fresh[s]*(a-first)) * d.yield()
	}
	f, prices := allocate(demands, caps, p.floors, math.Max(budget, 0))
	copy(p.prices, prices)

	spent := make([]float64, len(caps))
	clear(p.fresh)
	ws := make([]float64, len(caps))
	for i, pg := range planned {
		spent[pg.site] += f[i]
		p.fresh[pg.site] += demands[i].Weight * Freshness(pg.rate, f[i])
		ws[pg.site] += demands[i].Weight
		iv := min(max(frequencyInterval(f[i]), p.opt.MinInterval), p.opt.MaxInterval)
		if iv != pg.interval {
			pg.interval = iv
			moved = append(moved, pg)
		}
	}
	for s := range p.fresh {
		if ws[s] > 0 {
			p.fresh[s] /= ws[s]
		}
	}
	p.full = p.full[:0]
	clear(p.isFull)
	for name, s := range p.sites {
		if caps[s] > 0 && p.gaps[s] > 0 && spent[s] >= fullSite*caps[s] {
			p.full = append(p.full, name)
			p.isFull[name] = true
		}
	}
	slices.Sort(p.full)
	p.replan(moved)
}

// fullSite is the share of its capacity in the plan a site's planned
// pages must ask for to be full: its own price then binds, above the
// budget's (AllocateFrequencies' bisection ends a little under the cap:
// 0.2% on a site of 40 pages).
const fullSite = 0.99

// Full returns the sites full at the last solve: those whose politeness
// binds the plan, whose pages are worth more visits than the site's turns
// in the plan give them. The slice is the Planner's; it changes at the
// next solve.
func (p *Planner) Full() []string { return p.full }

// IsFull reports whether site was full at the last solve (Full).
func (p *Planner) IsFull(site string) bool { return p.isFull[site] }

// Price returns what a visit of page id at now is worth, in the
// allocation's units (weighted freshness, in seconds): the price its
// copy's age has reached. A page of weight w (its importance, and the new
// pages its changes reveal) and rate λ visited every I is optimal at the
// price (w/λ)·(1 − e^(−λI)(1 + λI)) (AllocateFrequencies' condition), so a
// copy a old is worth a visit at any price up to
// (w/λ)·(1 − e^(−λa)(1 + λa)). A visit's catch lasts only until the
// page's next change, and the next visit comes anyway: this is what it
// adds over the visits the plan gives the page, as a turn of discovery's
// worth (SetDiscovery) is what a page found adds. It is 0 for a page the
// Planner does not know or never saw change, and one just fetched.
func (p *Planner) Price(id uint64, now time.Time) float64 {
	pg := p.pages[id]
	if pg == nil {
		return 0
	}
	p.priced++
	return pg.price(now)
}

// reaches returns when page id's Price reaches floor, the rates and
// weights of the last solve holding, and false if it never does (a page
// the Planner does not know or never saw change, or worth less than
// floor however old its copy: a Price is at most w/λ). A Price only rises
// with the copy's age, so a page under a floor stays under it until then.
func (p *Planner) reaches(id uint64, floor float64) (time.Time, bool) {
	pg := p.pages[id]
	if pg == nil {
		return time.Time{}, false
	}
	p.priced++
	return pg.reaches(floor, pg.rate)
}

// reaches is Planner.reaches at rate r.
func (pg *plannedPage) reaches(floor float64, r Rate) (time.Time, bool) {
	lam := float64(r)
	if floor <= 0 {
		return pg.last, true
	}
	if lam <= 0 {
		return time.Time{}, false
	}
	x, ok := invMarginal(floor * lam / pg.worth())
	if !ok {
		return time.Time{}, false
	}
	// A little after: invMarginal is exact to about 1e-9, and a page
	// looked at a hair early would be looked at again at every Due.
	return pg.last.Add(time.Duration(x / lam * (1 + 1e-6) * float64(time.Second))), true
}

// Hold tells that page id, released by Due and not yet visited, waits
// for a turn its visit is not worth: a turn of its site's discovery is
// worth more (Scheduler.mayRelease). Its next visit is then planned an
// interval after this one, not after the time it was due. The time
// line's catch-up (schedule) is for a visit that came late by the
// crawl's queues, so that a page keeps the frequency the allocation gave
// it; a wait its worth decided is the allocation itself, and caught up it
// took back the turns it gave discovery: on seed 2's sarss web the big
// site's pages held while it was discovered came back half an interval
// after their visits for hours after its discovery ended, every page late
// (TestSchedulerHeldPageKeepsItsInterval).
func (p *Planner) Hold(id uint64) {
	if pg := p.pages[id]; pg != nil && !pg.due.IsZero() {
		pg.held = true
	}
}

func (pg *plannedPage) price(now time.Time) float64 { return pg.priceAt(now, pg.rate) }

// priceAt is price at rate r.
func (pg *plannedPage) priceAt(now time.Time, r Rate) float64 {
	lam := float64(r)
	age := now.Sub(pg.last).Seconds()
	if age <= 0 || lam <= 0 {
		return 0
	}
	return pg.worth() / lam * marginal(lam*age)
}

// worth is pg's weight in the plan, or its in-link weight before the
// plan has given it one.
func (pg *plannedPage) worth() float64 {
	if pg.weight == 0 {
		return weightOr1(pg.info.Weight)
	}
	return pg.weight
}

// interval is pg's planned interval, or InitialInterval before the plan
// has given it one.
func (p *Planner) interval(pg *plannedPage) time.Duration {
	if pg.interval == 0 {
		return p.opt.InitialInterval
	}
	return pg.interval
}

// Early releases, at now, a page of site site whose visit is not in
// flight, whose last visit is at least MinInterval past and whose visit
// is worth more than floor (its Price against what the turn would bring
// otherwise: a turn of the site's discovery, or on a site not full
// SitePrice), into the turn the caller found the site idle in. The
// Scheduler offers it the turns of the full sites (Full) and of those
// whose discovery is weighed. The plan fills a site only to SiteLoad
// of its turns, so that the pages due together wait a bounded time; the
// turns left free would pass unused while the site's pages are worth
// more visits than they get. A turn that leaves the site's next one a
// gap after it is free: it goes to the site's most overdue page
// (bestEarly), whose time line moves to the early visit (Visit), so a
// full site's free turns raise its pages' frequencies. A turn less than
// a gap before the next one goes to that turn's holder, which keeps its
// time line. It reports false, and releases nothing, for a site without
// such a page.
//
// The turn is booked at now, when the page goes. Booked at the site's
// next free time by the plan's gap (twice the politeness gap while the
// site is discovered) while the site took each at once, the book ran
// ahead of the clock, a turn a call, and the holder of the "next" turn
// went hours before its time, then planned an interval after that time
// (TestSchedulerFreeTurnsByIndex: a full site's heaviest page unvisited
// for 1 h 58 min on a plan of 36 min). Whether the turn is the recrawls'
// or discovery's is the floor's alone: a rule that also kept the plan's
// share of the turns for discovery whenever the floor was above 0 gave a
// site's recrawls half its turns even when what its discovery brought
// had fallen to almost nothing (TestSchedulerFloorNearZero).
func (p *Planner) Early(site string, now time.Time, floor float64) (uint64, bool) {
	p.tell(now)
	s, ok := p.sites[site]
	if !ok {
		return 0, false
	}
	gap := p.gaps[s]
	ts := p.turns[s]
	// The first turn after now; the turns before it, and those taken
	// after it (released, a page's turn no longer), are the site's last.
	i, _ := slices.BinarySearchFunc(ts, now, func(t turn, x time.Time) int {
		if t.at.After(x) {
			return 1
		}
		return -1
	})
	holds := func(k int) *plannedPage {
		pg := p.pages[ts[k].id]
		if pg == nil || !pg.turn.Equal(ts[k].at) {
			return nil
		}
		return pg
	}
	for ; i < len(ts) && holds(i) == nil; i++ {
	}
	// A page of a later turn moves to now only if the site's next turn
	// leaves a gap after it.
	at := now
	free := i >= len(ts) || !ts[i].at.Before(at.Add(gap))
	warming := !p.isFull[site]
	// A free turn goes to the page most overdue (bestEarly; a scan of the
	// site's pages, so only then), else to the holder of one of the next
	// turns; a turn that is not free to the next turn's holder.
	var pg *plannedPage
	if free {
		pg = p.bestEarly(s, now, floor, warming)
	}
	for k := i; pg == nil && k < len(ts) && k-i < maxWalk && (k == i || free); k++ {
		pg = holds(k)
		if pg == nil || !pg.due.IsZero() || now.Before(pg.last.Add(p.opt.MinInterval)) || pg.price(now) <= floor ||
			warming && p.channels[pg.info.Channel].ready {
			// A turn taken, a visit in flight (its retry's turn), not
			// again within MinInterval, nor for less than the turn is
			// worth otherwise.
			pg = nil
		}
	}
	if pg != nil {
		iv := pg.interval
		if iv == 0 {
			iv = p.opt.InitialInterval
		}
		p.unreserve(pg)
		ts = p.turns[s]
		j, _ := slices.BinarySearchFunc(ts, at, func(t turn, x time.Time) int { return t.at.Compare(x) })
		p.turns[s] = slices.Insert(ts, j, turn{at: at, id: pg.info.ID})
		// A free turn moves the page's time line to the visit (Visit);
		// the holder of the next turn, served less than a gap ahead of
		// it in a turn that leaves none free, keeps its own. Moved to
		// the visit, each such page came back sooner than its plan by
		// what it was served ahead, the pages of short intervals (the
		// heaviest) most: they asked for more than the site's turns,
		// booked back to back, and took the lighter pages' turns by
		// their cost (reserve), until a full site being discovered
		// recrawled its heaviest quarter alone
		// (TestSchedulerFreeTurnsByIndex).
		pg.due, pg.released, pg.early, pg.held = pg.at, now, free, false
		p.late.Released++
		p.late.Early++
		if !p.channels[pg.info.Channel].ready {
			p.late.Warm++
		}
		p.push(pg, now.Add(iv)) // as Due: tried again an interval later unless visited
		return pg.info.ID, true
	}
	return 0, false
}

// bestEarly returns the page of site s most overdue by the allocation's
// own measure, nil if none may go (all in flight, their turn now,
// visited within MinInterval, or worth no more than floor, what the turn
// brings otherwise: Early) or the site has more than maxEarlyScan pages. A page of weight w and rate λ visited every I is optimal at the
// price μ = (w/λ)·(1 − e^(−λI)(1 + λI)) (AllocateFrequencies' condition),
// so a page whose copy is a old has reached the price of
// (w/λ)·(1 − e^(−λa)(1 + λa)): the free turn goes to the page whose age
// is worth the highest price, and the site's pages, taken in that order,
// each come near its optimal interval at the site's price.
//
// The plan fills only SiteLoad of a full site's turns, and its free turns
// went to the page holding the next: in proportion to the plan's
// frequencies, so the pages visited most got most of the extra visits,
// where Wolf's allocation of the visits the site really made gives them
// to the pages visited least. Session 34 gave them to the page a visit
// adds most freshness to until its own turn, w·(1−e^(−λa))·(1−e^(−λR))/λ:
// a page's chance of being stale times w/λ, which the heavy pages reach
// again within minutes of a visit, so that they took the turns again and
// again (a full site of 300 pages, weights 300/i^0.9, robots to spare:
// 0.979 to 0.983 of the optimal freshness of the same requests, 0.986 to
// 0.988 by the price; discovering 350 more pages as well, 0.90 to 0.93
// against 0.982 to 0.987; TestSchedulerFreeTurnsByIndex).
func (p *Planner) bestEarly(s int, now time.Time, floor float64, warming bool) *plannedPage {
	if len(p.bySite[s]) > maxEarlyScan {
		return nil
	}
	c := &p.early[s]
	if c.valid && c.solve == p.solves && c.floor == floor && c.warming == warming && (c.at.IsZero() || now.Before(c.at)) {
		return nil
	}
	var best *plannedPage
	var next time.Time // the first a page left out may go
	bestG := 0.0
	for _, pg := range p.bySite[s] {
		if !pg.scheduled || !pg.due.IsZero() || warming && p.channels[pg.info.Channel].ready {
			continue
		}
		r := pg.rate
		if !p.channels[pg.info.Channel].ready && pg.ownRate > 0 {
			r = pg.ownRate
		}
		if r <= 0 {
			continue
		}
		at := pg.turn
		if at.IsZero() {
			at = pg.at
		}
		if !at.After(now) {
			continue // its turn is now
		}
		p.priced++
		g := pg.priceAt(now, r)
		if g <= floor || now.Before(pg.last.Add(p.opt.MinInterval)) {
			// Worth less than the turn brings otherwise, or not again
			// within MinInterval: until it is both.
			if t, ok := pg.reaches(floor, r); ok {
				t = maxTime(t, pg.last.Add(p.opt.MinInterval))
				if next.IsZero() || t.Before(next) {
					next = t
				}
			}
			continue
		}
		if g > bestG || g == bestG && best != nil && pg.info.ID < best.info.ID {
			best, bestG = pg, g
		}
	}
	*c = earlyCheck{valid: best == nil, solve: p.solves, floor: floor, warming: warming, at: next}
	return best
}

// earlyCheck is what bestEarly's last scan of a site that found no page
// knows: none goes before at (zero: before the next solve) at that floor,
// as long as it is valid. A Price only rises between solves, and what
// else lets a page go (a visit back, its weight, its turn moved) voids
// it; a scan at every Due, every tick of the engine, priced every page
// of each weighed site not full with nothing out: 332 to 372 µs a Due at
// 4,000 pages (review s39's N3; TestSchedulerEarlyPricedOnce).
type earlyCheck struct {
	valid   bool
	solve   int
	floor   float64
	warming bool
	at      time.Time
}

// maxEarlyScan bounds the pages of a site bestEarly weighs at each free
// turn; a larger site's free turn goes to the page holding its next turn.
const maxEarlyScan = 16384

// replan plans the pages whose interval changed again, those whose visit
// is not in flight: all give up their turns first, then take new ones in
// the order of their new times, so that the earliest planned is nearest
// its time, whatever the order of their channels.
func (p *Planner) replan(pages []*plannedPage) {
	pages = slices.DeleteFunc(pages, func(pg *plannedPage) bool { return !pg.due.IsZero() })
	p.unreserveAll(pages)
	for _, pg := range pages {
		pg.next = p.nextVisit(pg, pg.interval)
	}
	slices.SortFunc(pages, byNext)
	for _, pg := range pages {
		pg.scheduled = true
		p.push(pg, pg.next)
	}
}

func byNext(a, b *plannedPage) int {
	if c := a.next.Compare(b.next); c != 0 {
		return c
	}
	return cmp.Compare(a.info.ID, b.info.ID)
}

// SiteLoad is the share of a site's capacity (one request per its gap) a
// plan fills at most. A site's due pages queue for its turns: planned at
// its full capacity, the queue never drains, and the least jitter in the
// fetches (a robot's wait, a gap measured a little longer) adds to a wait
// that grows without bound, so the pages of the sites that bind the plan
// come later and later. Filled to ρ, a queue of random arrivals waits
// ρ/(2(1−ρ)) turns on average (M/D/1): two at 0.8.
const SiteLoad = 0.8

func sortedKeys[K ChannelID | uint64, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func weightOr1(w float64) float64 {
	if w <= 0 {
		return 1
	}
	return w
}

// Due returns up to limit pages to visit at now (limit ≤ 0: all): the
// pages whose turn has come. Each page holds the free turn of its site
// nearest the time it is planned for (reserve), so a site takes its pages
// no faster than its gap allows (SetSiteGap), each near its time. Each
// page returned is due again an interval later unless a Visit reschedules
// it (a fetch that fails is tried again then).
func (p *Planner) Due(now time.Time, limit int) []uint64 {
	p.tell(now)
	p.Solve(now)
	var out []uint64
	for p.queue.Len() > 0 && (limit <= 0 || len(out) < limit) {
		top := p.queue.entries[0]
		if top.key.After(now) {
			break
		}
		pg := top.pg
		iv := pg.interval
		if iv == 0 {
			iv = p.opt.InitialInterval
		}
		if pg.due.IsZero() {
			// Not again when released again before its visit.
			pg.due, pg.released, pg.held = pg.at, now, false
			p.late.Released++
			if !p.channels[pg.info.Channel].ready {
				p.late.Warm++
			}
		}
		// The turn is taken: it stays in the site's turns, so that the
		// next is a gap after it.
		pg.turn = time.Time{}
		p.push(pg, now.Add(iv))
		out = append(out, pg.info.ID)
	}
	return out
}

// Lateness returns how far from their plan the pages released were
// fetched, from the Planner's start.
func (p *Planner) Lateness() Lateness { return p.late }

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// NextDue returns when the next page may be released (its turn), and
// false if none is scheduled.
func (p *Planner) NextDue() (time.Time, bool) {
	if p.queue.Len() == 0 {
		return time.Time{}, false
	}
	return p.queue.entries[0].key, true
}

// PagePlan is what the Planner thinks of one page.
type PagePlan struct {
	Weight   float64       // importance
	Rate     Rate          // estimated change rate
	Interval time.Duration // between visits, as allocated
	Next     time.Time
	Ready    bool // its channel left the warm-up
}

// Page returns the plan of page id, and false for a page it does not know.
func (p *Planner) Page(id uint64) (PagePlan, bool) {
	pg := p.pages[id]
	if pg == nil {
		return PagePlan{}, false
	}
	return PagePlan{Weight: weightOr1(pg.info.Weight), Rate: pg.rate, Interval: pg.interval, Next: pg.next, Ready: p.channels[pg.info.Channel].ready}, true
}

// ChannelPlan is what the Planner thinks of one channel, for the console.
type ChannelPlan struct {
	Channel ChannelID
	Pages   int
	Ready   bool
	Rate    Rate // pooled over its pages
	// Interval is the mean interval between visits of its pages, and
	// Freshness the expected share of them fresh at those intervals, by
	// their estimated rates, weighted by importance.
	Interval  time.Duration
	Freshness float64
}

// Channels returns the plan of every channel, by ID.
func (p *Planner) Channels() []ChannelPlan {
	out := make([]ChannelPlan, 0, len(p.channels))
	for _, id := range sortedKeys(p.channels) {
		ch := p.channels[id]
		cp := ChannelPlan{Channel: id, Pages: len(ch.pages), Ready: ch.ready, Rate: ch.rate}
		var freq, fresh, w float64
		for _, pg := range ch.pages {
			iv := pg.interval
			if iv == 0 {
				iv = p.opt.InitialInterval
			}
			f := 1 / iv.Seconds()
			freq += f
			wt := weightOr1(pg.info.Weight)
			fresh += wt * Freshness(pg.rate, f)
			w += wt
		}
		if len(ch.pages) > 0 {
			cp.Interval = frequencyInterval(freq / float64(len(ch.pages)))
			cp.Freshness = fresh / w
		}
		out = append(out, cp)
	}
	return out
}

// String describes the planner briefly.
func (p *Planner) String() string {
	ready := 0
	for _, ch := range p.channels {
		if ch.ready {
			ready++
		}
	}
	return fmt.Sprintf("planner: %d pages, %d channels (%d out of warm-up), budget %.3g visits/s", len(p.pages), len(p.channels), ready, p.budget)
}

// queued is a page's entry in the queue: released at key (its turn, or
// its time on a site without a gap; the page's at is the time).
type queued struct {
	key time.Time
	pg  *plannedPage
}

// pageQueue is a heap of the scheduled pages, each at most once (its qi).
type pageQueue struct{ entries []queued }

func (h pageQueue) Len() int { return len(h.entries) }
func (h pageQueue) Less(i, j int) bool {
	if !h.entries[i].key.Equal(h.entries[j].key) {
		return h.entries[i].key.Before(h.entries[j].key)
	}
	return h.entries[i].pg.info.ID < h.entries[j].pg.info.ID
}
func (h pageQueue) Swap(i, j int) {
	h.entries[i], h.entries[j] = h.entries[j], h.entries[i]
	h.entries[i].pg.qi, h.entries[j].pg.qi = i, j
}
func (h *pageQueue) Push(x any) {
	e := x.(queued)
	e.pg.qi = len(h.entries)
	h.entries = append(h.entries, e)
}
func (h *pageQueue) Pop() any {
	n := len(h.entries) - 1
	x := h.entries[n]
	x.pg.qi = -1
	h.entries[n] = queued{} // the backing array would keep a removed page
	h.entries = h.entries[:n]
	return x
}
