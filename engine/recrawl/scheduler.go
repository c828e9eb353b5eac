package recrawl

import (
	"cmp"
	"math"
	"net/http"
	"slices"
	"time"
)

// Scheduler is the page-level Planner as a crawl loop drives it: the loop
// tells it what it fetched and asks what to fetch again, and the
// Scheduler keeps what the Planner needs that the loop has at hand only
// piecemeal: the pages' importance (their in-links among the pages with
// copies), the budget (a share of what the robots can fetch, measured
// from the fetches' costs), and the recrawl clock's pace against the
// loop's (a recrawl clock may run faster than the loop's, against a
// time-scaled web). The zero value is not usable: use NewScheduler. A
// Scheduler is not safe for concurrent use.
//
// The capacity is measured two ways, and the smaller counts. A fetch
// holds a robot at least its duration and its site's delay (Cost: a robot
// keeps its site for its visit, pages a delay apart), and at least the
// robot time the visits really took per page fetched (Held: Little's law
// over the visits, which counts what a fetch's duration leaves out, the
// loop's own work and the robots' wait for it, most of a fetch's cost
// with a delay of 0). A site takes at most a page per its gap (its
// politeness) and per the robot time its own visits took a page; while
// the crawl has URLs of a site to discover (SetDiscovering), recrawls
// take only Share of that, so recrawls queued ahead of new URLs leave
// discovery the rest.
//
// That share is a plan in time, and a loop that lags, or fetches slower
// than measured, finds many turns due at once: queued all together ahead
// of a site's new URLs, they would leave discovery nothing for as long as
// they last. So while a site has URLs to discover it has at most Ahead
// pages released and not back yet (Back) at once, and a page released
// costs a credit that the site's fetches of new URLs earn (Discovered,
// Share/(1−Share) each, at most Ahead banked); its other due pages wait,
// in order. A visit of the site then takes at most Ahead recrawls ahead
// of its new URLs, and its recrawls are at most Share of its fetches
// (Ahead more at most), whatever the clocks. A site with nothing to
// discover releases every page due: nothing of its own waits behind them,
// its turns pace them, and held to Ahead out its recrawls went one per
// round trip of the loop (release, queue, fetch, back), slower than its
// politeness on a busy site.
type Scheduler struct {
	pl    *Planner
	share float64
	ahead int
	// out are the pages released and not back, with their sites' names;
	// waiting the pages due that wait for their sites' released ones, and
	// waitSites the sites with some (or none left since Gone), in the
	// order they began to wait: a slice, not a map sorted at every Due.
	out       map[uint64]string
	waiting   map[uint64]bool
	waitSites []waitSite
	// robots is r; cost the mean time a fetch holds a robot by its
	// duration and the site's delay, hold by the visits' robot time, both
	// by the loop's clock, exponential averages.
	robots     int
	cost, hold mean
	// fullFirst rotates which full site is offered its free turn first.
	fullFirst int
	// scale is how fast the recrawl clock runs against the loop's, from
	// the first and latest readings of both.
	first, firstR time.Time
	scale         float64
	sites         map[string]*schedSite
	inlinks       map[uint64]int
	outlinks      map[uint64][]uint64
	info          map[uint64]PageInfo
	worth         []waitingPrice // waitingByWorth's, kept for its next call
	// weighedSites are the names of the sites whose discovery is weighed
	// (isWeighed), sorted.
	weighedSites []string
}

// waitSite is a site with due pages waiting, with its name.
type waitSite struct {
	name string
	ss   *schedSite
}

// schedSite is what a Scheduler knows of a site's capacity, by the loop's
// clock.
type schedSite struct {
	gap         time.Duration // politeness: the delay, or a longer Crawl-delay
	hold        mean          // the robot time its visits took a page
	discovering bool          // the crawl has URLs of it to fetch for the first time
	out         int           // its pages released and not back
	credit      float64       // the releases its discovery earned (Discovered)
	found       worthMean     // what its discoveries brought (Discovered)
	// toDiscover is how many URLs of it the crawl has to fetch for the
	// first time (ToDiscover); spacing the turns it was served from one
	// discovery to the next, the finding one included (an exponential
	// mean).
	toDiscover int
	spacing    worthMean
	// turns is how many turns it was served since its last discovery
	// (Fetched, Passed), and passed how many of them found nothing
	// (Passed); idle the mean of passed at a discovery: Discovery's
	// Turns, Passed and Idle.
	turns, passed int
	idle          worthMean
	waiting       []uint64 // its due pages waiting for those, in order
	listed        bool     // in the Scheduler's waitSites
	// priced is the Planner's solve (Planner.solves) at which its waiting
	// pages were last priced against its floor, and recheck when the
	// first of those under it reaches it (zero: none will before the next
	// solve): until then none is worth a turn (waitingByWorth). -1: not
	// priced since its discovery was last weighed.
	priced  int
	recheck time.Time
	// isWeighed is whether its discovery was weighed (weighed) when it
	// was last told the Planner (discovery).
	isWeighed bool
	// refused: the crawl handed a release back unfetched (Refused: the
	// site is parked or given up); no page goes early until one of its
	// pages is fetched again.
	refused bool
}

// SchedulerOptions configure a Scheduler.
type SchedulerOptions struct {
	Planner PlannerOptions
	// Share is the share of the robots' capacity recrawls may use; zero
	// means DefaultShare. The rest is the crawl's, to discover.
	Share float64
	// Ahead is the most pages of a site with URLs to discover released
	// and not back yet at once (a crawl's visit takes them ahead of the
	// site's new URLs: a visit's pages times Share keeps discovery its
	// share of each visit); zero means no bound.
	Ahead int
}

// DefaultShare is the share of the robots' capacity recrawls use by
// default: half, so that discovery keeps as much.
const DefaultShare = 0.5

// costWeight is the weight of a new fetch in the averages of what fetches
// cost: about the last 1/costWeight fetches count. The budget and the
// sites' gaps it gives set every page's interval; averaged over a few
// dozen fetches they followed the machine's load from second to second
// (the budget of one crawl on a loaded machine went from 21 to 166
// recrawls an hour and back within a few virtual hours), and each solve
// then moved the intervals the plan holds for hours.
const costWeight = 1.0 / 512

// NewScheduler returns an empty Scheduler.
func NewScheduler(opt SchedulerOptions) *Scheduler {
	if opt.Share <= 0 || opt.Share > 1 {
		opt.Share = DefaultShare
	}
	return &Scheduler{pl: NewPlanner(opt.Planner), share: opt.Share, ahead: max(opt.Ahead, 0), scale: 1, sites: map[string]*schedSite{},
		inlinks: map[uint64]int{}, outlinks: map[uint64][]uint64{}, info: map[uint64]PageInfo{},
		out: map[uint64]string{}, waiting: map[uint64]bool{}}
}

// Planner returns the Planner, for its plans (Page, Channels).
func (s *Scheduler) Planner() *Planner { return s.pl }

// SetRobots sets r, the robots fetching.
func (s *Scheduler) SetRobots(n int) {
	s.robots = n
	s.budget()
}

// SetSiteGap sets the shortest time between two requests to site, by the
// loop's clock (politeness.delay, or a longer Crawl-delay).
func (s *Scheduler) SetSiteGap(site string, gap time.Duration) {
	s.site(site).gap = gap
	s.siteGap(site)
}

// SetDiscovering tells whether the crawl has URLs of site to fetch for the
// first time: recrawls then take only Share of the site's capacity.
func (s *Scheduler) SetDiscovering(site string, on bool) {
	if ss := s.site(site); ss.discovering != on {
		// The credit is kept as it is either way: only discovery binds it,
		// and banking Ahead again at each switch would let a site whose new
		// URLs come one at a time (a feed) release Ahead recrawls for each.
		ss.discovering = on
		if on {
			// The turns it had nothing to discover are no turns between
			// its turns of discovery (Discovered's spacing).
			ss.turns, ss.passed = 0, 0
		}
		s.discovery(site, ss)
	}
}

// Discovered tells that the crawl fetched URL id of site for the first
// time, and whether it kept a copy of it: while the site has URLs to
// discover, it earns Share/(1−Share) of a recrawl; and what the turn
// brought, the page's importance from its in-links among the pages with
// copies (nothing for a page not kept), is the evidence of what the
// site's discovery is worth (discoveryWorth).
func (s *Scheduler) Discovered(site string, id uint64, kept bool) {
	ss := s.sites[site]
	if ss == nil {
		return
	}
	w := 0.0
	if kept {
		w = InLinkWeight(s.inlinks[id])
	}
	if ss.found.n > 0 {
		ss.spacing.add(float64(ss.turns + 1))
		ss.idle.add(float64(ss.passed))
	}
	ss.found.add(w)
	ss.turns, ss.passed = 0, 0
	s.discovery(site, ss)
	if s.ahead == 0 {
		return
	}
	ss.credit = min(ss.credit+s.share/(1-s.share), float64(s.ahead))
}

// Passed tells that a visit of site, while it had URLs to discover,
// fetched none of them (robots.txt only, a failure, its URLs not leased):
// a turn its discovery was served that found nothing. The turns a site was
// served (Discovered, Fetched, Passed) are what its discovery's floor ages
// by, and those that found nothing lower it (Discovery): counted by the
// clock, the time a site was not leased, a suspend or a clock jump counted
// as turns of discovery that found nothing, and a site leased 10 min an
// hour gave all its turns to its recrawls for good (review s39's N1;
// TestSchedulerRarelyLeasedDiscovers). A site with nothing to discover
// has no turn of discovery to pass.
func (s *Scheduler) Passed(site string) {
	if ss := s.sites[site]; ss != nil && ss.discovering {
		ss.turns++
		ss.passed++
		s.discovery(site, ss)
	}
}

// ToDiscover tells how many URLs of site the crawl has to fetch for the
// first time. Once its discovery's worth is known (discoveryWorth), that
// weighs a turn of it against its recrawls (Planner.SetDiscovery); while
// it is 0, a site with URLs to discover (SetDiscovering) gives its
// recrawls only Share of its turns.
func (s *Scheduler) ToDiscover(site string, n int) {
	if ss := s.site(site); ss.toDiscover != n {
		ss.toDiscover = n
		s.discovery(site, ss)
	}
}

// discovery tells the Planner what site ss's discovery has still to find,
// once its worth is known, and sets the site's gap.
func (s *Scheduler) discovery(name string, ss *schedSite) {
	w, weighed := ss.weighed()
	weight := 0.0
	if weighed {
		weight = w
	}
	if weighed != ss.isWeighed {
		ss.isWeighed, ss.priced = weighed, -1
		i, _ := slices.BinarySearch(s.weighedSites, name)
		if weighed {
			s.weighedSites = slices.Insert(s.weighedSites, i, name)
		} else {
			s.weighedSites = slices.Delete(s.weighedSites, i, i+1)
		}
	}
	s.pl.SetDiscovery(name, Discovery{Weight: weight, N: ss.toDiscover, Spacing: ss.spacing.avg,
		Turns: ss.turns, Passed: ss.passed, Idle: ss.idle.avg})
	s.siteGap(name)
}

// weighed returns the mean importance of what a turn of site ss's
// discovery finds, and whether its turns are weighed against its
// recrawls': it has URLs to discover, how many is known (ToDiscover), and
// its discovery's worth too (discoveryWorth).
func (ss *schedSite) weighed() (float64, bool) {
	w, known := ss.discoveryWorth()
	return w, known && ss.discovering && ss.toDiscover > 0
}

// minFound is how many discoveries of a site its discovery's worth needs
// before it is weighed against its recrawls': until then a discovering
// site's recrawls take Share of its turns.
const minFound = 8

// foundWeight is the weight of a new discovery in a site's mean worth of
// discovery: about the last 1/foundWeight count, since a site's pages
// found first are its most linked, and those found later less.
const foundWeight = 1.0 / 32

// worthMean is an exponential mean of what a site's discoveries brought;
// the zero value has seen none. zeros counts the 0s added since the last
// value that was not.
type worthMean struct {
	avg   float64
	n     int
	zeros int
}

func (m *worthMean) add(x float64) {
	m.n++
	m.zeros++
	if x != 0 {
		m.zeros = 0
	}
	w := max(foundWeight, 1/float64(m.n))
	m.avg += w * (x - m.avg)
}

// discoveryWorth returns what a turn of site ss given to discovery is
// expected to find, the mean importance of the pages its discovery
// brought lately (the Planner weighs it: SetDiscovery), and false while
// it has too little evidence.
//
// A discovery that kept nothing in its last 1/foundWeight turns is worth
// nothing: the exponential mean decays towards 0 without reaching it, and
// weighed against the site's recrawls, for every URL left to discover,
// its remnant kept a share of the site's turns for a discovery that
// finds nothing (TestSchedulerFloorNearZero).
func (ss *schedSite) discoveryWorth() (float64, bool) {
	if ss.found.zeros >= int(1/foundWeight) {
		return 0, ss.found.n >= minFound
	}
	return ss.found.avg, ss.found.n >= minFound
}

// mayRelease reports whether site ss, named name, may release page id at
// rnow (recrawl clock), and whether it is by worth: a site with URLs to
// discover has at most Ahead out, and releases a page whose visit is
// worth at least what a turn of its discovery is (Planner.Price against
// Planner.DiscoveryFloor, once weighed): the turn goes to whichever is
// worth more, by the crawl's own evidence, and a page it holds back is
// planned again from its visit (Planner.Hold); until then, a page its
// discovery earned (credit).
func (s *Scheduler) mayRelease(ss *schedSite, name string, id uint64, rnow time.Time) (ok, byWorth bool) {
	if s.ahead == 0 || !ss.discovering {
		return true, false
	}
	if ss.out >= s.ahead {
		return false, false
	}
	if _, ok := ss.weighed(); ok {
		if !s.worthATurn(ss, name, id, rnow) {
			s.pl.Hold(id)
			return false, true
		}
		return true, true
	}
	return ss.credit >= 1, false
}

// worthATurn reports whether page id's visit at rnow is worth at least a
// turn of weighed site ss's discovery (Planner.Price against
// Planner.DiscoveryFloor); for a page that is not, the site's recheck
// moves to when it will be (recheck).
func (s *Scheduler) worthATurn(ss *schedSite, name string, id uint64, rnow time.Time) bool {
	floor := s.pl.DiscoveryFloor(name)
	if s.pl.Price(id, rnow) >= floor {
		return true
	}
	s.recheck(ss, id, floor)
	return false
}

// recheck moves site ss's recheck to when page id's Price reaches floor,
// if sooner.
func (s *Scheduler) recheck(ss *schedSite, id uint64, floor float64) {
	if at, ok := s.pl.reaches(id, floor); ok && (ss.recheck.IsZero() || at.Before(ss.recheck)) {
		ss.recheck = at
	}
}

func (s *Scheduler) site(name string) *schedSite {
	ss := s.sites[name]
	if ss == nil {
		ss = &schedSite{credit: float64(s.ahead), priced: -1}
		s.sites[name] = ss
	}
	return ss
}

// siteGap gives the Planner the time between two recrawls of site: its
// politeness gap or the robot time a page of it took, whichever is
// longer, and 1/Share as long while it has URLs to discover and its
// discovery's turns are not weighed against its recrawls' (weighed).
func (s *Scheduler) siteGap(site string) {
	ss := s.sites[site]
	gap := s.turn(ss)
	if _, ok := ss.weighed(); ss.discovering && !ok {
		gap = time.Duration(float64(gap) / s.share)
	}
	s.pl.SetSiteGap(site, gap)
}

// turn is the time between two turns of site ss, on the recrawl clock: its
// politeness gap or the robot time a page of it took, whichever is
// longer.
func (s *Scheduler) turn(ss *schedSite) time.Duration {
	return s.recrawlTime(max(ss.gap, ss.hold.avg))
}

// Copied records a page with a copy fetched at rfetched (recrawl clock), of
// channel ch, on site (its politeness domain).
func (s *Scheduler) Copied(id uint64, ch ChannelID, site string, rfetched time.Time) {
	info := PageInfo{ID: id, Channel: ch, Site: site, Weight: InLinkWeight(s.inlinks[id])}
	s.info[id] = info
	s.pl.Add(info, rfetched)
}

// Listed records the lastmod a sitemap gave page id before its first
// fetch at rfetched (or any time between the two: its discovery, for a
// crawl that resumes), both on the recrawl clock: the page's age then is
// evidence of its rate, worth SitemapWeight of a dated change. A page
// visited since it was added takes nothing (Planner.Aged).
func (s *Scheduler) Listed(id uint64, rfetched, lastmod time.Time) {
	s.pl.Aged(id, rfetched, lastmod, SitemapWeight)
}

// InLinkWeight is a page's importance from its distinct in-links from
// other pages: their number, at least 1 (a seed may have none).
func InLinkWeight(inlinks int) float64 { return float64(max(1, inlinks)) }

// Links records the links of page from's copy, replacing those of its
// last copy: a page's importance is InLinkWeight of its distinct in-links
// from other pages with copies.
func (s *Scheduler) Links(from uint64, to []uint64) {
	for _, id := range s.outlinks[from] {
		s.inlink(id, -1)
	}
	to = slices.Compact(slices.Sorted(slices.Values(to)))
	to = slices.DeleteFunc(to, func(id uint64) bool { return id == from })
	s.outlinks[from] = to
	if len(to) == 0 {
		delete(s.outlinks, from)
	}
	for _, id := range to {
		s.inlink(id, 1)
	}
}

func (s *Scheduler) inlink(id uint64, d int) {
	s.inlinks[id] += d
	if s.inlinks[id] <= 0 {
		delete(s.inlinks, id)
	}
	if info, ok := s.info[id]; ok {
		info.Weight = InLinkWeight(s.inlinks[id])
		s.info[id] = info
		s.pl.Add(info, time.Time{}) // known: only its weight changes
		if ss := s.sites[info.Site]; d > 0 && s.waiting[id] && ss != nil && ss.priced == s.pl.solves {
			// A page still warming up is worth its weight at once: its
			// site's recheck, reckoned at the weight it had, may come
			// too late (review s39's N4; TestSchedulerWaitingGainsWeight).
			s.recheck(ss, id, s.pl.DiscoveryFloor(info.Site))
		}
	}
}

// Fetched records a fetch of a page with a copy at rnow (recrawl clock):
// whether it changed, the Last-Modified it was served with ("" for none),
// and how many links to pages not seen before it had: a turn of its site
// its recrawls took (Passed). What it cost is recorded by Cost, as for
// every fetch.
func (s *Scheduler) Fetched(id uint64, rnow time.Time, changed bool, lastModified string, newLinks int) {
	name := s.info[id].Site
	if ss := s.sites[name]; ss != nil {
		ss.refused = false
		ss.turns++
		defer s.discovery(name, ss) // after the visit: its time
	}
	v := Visit{At: rnow, Changed: changed}
	if lastModified != "" {
		if t, err := http.ParseTime(lastModified); err == nil {
			v.LastModified = t
		}
	}
	s.pl.Visit(id, v, newLinks)
}

// Cost records how long a fetch, a recrawl or the crawl's own, held its
// robot by the loop's clock (its duration and the site's delay): it
// measures the capacity.
func (s *Scheduler) Cost(cost time.Duration) {
	if cost <= 0 {
		return
	}
	s.cost.add(cost, 1)
	s.budget()
}

// Held records a visit of site that held a robot for hold (by the loop's
// clock, from its start to its end) and fetched pages pages (a visit that
// fetched none, robots.txt only or a failure, counts as one).
func (s *Scheduler) Held(site string, hold time.Duration, pages int) {
	if hold <= 0 {
		return
	}
	pages = max(pages, 1)
	per := hold / time.Duration(pages)
	s.hold.add(per, pages)
	ss := s.site(site)
	ss.hold.add(per, pages)
	s.siteGap(site)
	s.budget()
}

// mean is an exponential average of durations whose first samples weigh
// as in a plain mean, so that it starts from what it saw, not from zero.
// The zero value has seen nothing.
type mean struct {
	avg time.Duration
	n   int // samples seen
}

// add adds k samples of x.
func (m *mean) add(x time.Duration, k int) {
	m.n += k
	w := max(1-math.Pow(1-costWeight, float64(k)), float64(k)/float64(m.n))
	m.avg = time.Duration((1-w)*float64(m.avg) + w*float64(x))
}

// Gone forgets a page (gone, forbidden, or out of scope).
func (s *Scheduler) Gone(id uint64) {
	s.Back(id)
	if s.waiting[id] {
		delete(s.waiting, id)
		if ss := s.sites[s.info[id].Site]; ss != nil {
			ss.waiting = slices.DeleteFunc(ss.waiting, func(w uint64) bool { return w == id })
		}
	}
	s.Links(id, nil)
	s.pl.Remove(id)
	delete(s.info, id)
}

// Due returns the pages to fetch again now: now by the loop's clock, rnow
// by the recrawl clock (see Planner.Due); of a site with URLs to discover
// at most Ahead out at once, and as many as its discovery earned: first
// those that waited, in the order they fell due, then those due now; and
// of each full site left idle, its next page early (Planner.Early). A
// page released is out until Back.
func (s *Scheduler) Due(now, rnow time.Time) []uint64 {
	s.clocks(now, rnow)
	var out []uint64
	// The sites with pages waiting, in the order they began to wait.
	s.waitSites = slices.DeleteFunc(s.waitSites, func(w waitSite) bool {
		ss := w.ss
		if _, weighed := ss.weighed(); !weighed || s.ahead == 0 {
			ss.priced = -1
			out = s.waitingInOrder(out, w.name, ss, rnow)
		} else if ss.out < s.ahead {
			out = s.waitingByWorth(out, w.name, ss, rnow)
		}
		ss.listed = len(ss.waiting) > 0
		return !ss.listed
	})
	for _, id := range s.pl.Due(rnow, 0) {
		if _, out := s.out[id]; out || s.waiting[id] {
			continue // its last release is not back yet, or waits
		}
		name := s.info[id].Site
		ss := s.site(name)
		ok, byWorth := false, false
		if _, weighed := ss.weighed(); len(ss.waiting) == 0 || weighed {
			ok, byWorth = s.mayRelease(ss, name, id, rnow)
		}
		if !ok {
			if _, weighed := ss.weighed(); weighed && !byWorth && ss.priced == s.pl.solves {
				// Refused for the copies out (Ahead), not held: its worth
				// decides once they are back (waitingByWorth).
				if s.worthATurn(ss, name, id, rnow) {
					ss.recheck = rnow
				}
			}
			ss.waiting = append(ss.waiting, id)
			s.waiting[id] = true
			if !ss.listed {
				ss.listed = true
				s.waitSites = append(s.waitSites, waitSite{name, ss})
			}
			continue
		}
		out = s.release(out, id, name, ss, byWorth)
	}
	// A full site (its politeness binds the plan) with nothing out waits
	// for its next turn: the plan fills only SiteLoad of its turns, and
	// its pages' visits leave the rest to its discovery while it has URLs
	// to discover. A page goes now instead (Planner.Early) if its visit is
	// worth more than what the turn would bring otherwise: nothing on a
	// site with nothing to discover, a turn of its discovery on one with
	// (Planner.DiscoveryFloor); and while the robots can take a request
	// every gap of each full site so far.
	// The recrawls' share of the robots bounds them (budget), and the
	// full sites take turns at the room first, so that none is always
	// last when it runs out.
	room := math.Inf(1) // requests a second (loop clock)
	if per := max(s.cost.avg, s.hold.avg); s.robots > 0 && per > 0 {
		room = s.share * float64(s.robots) / per.Seconds()
	}
	full := s.pl.Full()
	s.fullFirst++
	for k := range full {
		name := full[(s.fullFirst+k)%len(full)]
		ss := s.sites[name]
		if ss == nil || ss.refused {
			continue
		}
		if g := max(ss.gap, ss.hold.avg); g > 0 {
			if room -= 1 / g.Seconds(); room < 0 {
				break
			}
		}
		// Its pages waiting, on a site whose discovery is weighed, are
		// those not worth a turn: they leave it free.
		if _, weighed := ss.weighed(); ss.out > 0 || len(ss.waiting) > 0 && !weighed {
			continue
		}
		floor := 0.0
		if ss.discovering {
			if _, ok := ss.weighed(); !ok {
				continue
			}
			floor = s.pl.DiscoveryFloor(name)
		}
		if id, ok := s.pl.Early(name, rnow, floor); ok {
			out = s.release(out, id, name, ss, ss.discovering)
		}
	}
	// A site whose discovery is weighed, not full, with nothing out: a
	// page whose visit is worth more than the plan gives its site's pages
	// at the margin (Planner.SitePrice, at least what a turn of its
	// discovery brings) takes the turn, as on a full site; its discovery
	// would take it otherwise, not another site's recrawls, so the room
	// does not bound it. Offered only the turns of full sites, a big,
	// mostly static site being discovered left the hubs of its channels
	// still warming up (their pages visited 62 h apart, the hubs' changes
	// unseen) unvisited for 12 h, their Prices 7 to 24 times its floor
	// (review s38's R1; TestSchedulerMostlyStaticSiteVisitsHubs).
	for _, name := range s.weighedSites {
		ss := s.sites[name]
		if ss.out > 0 || ss.refused || s.ahead == 0 || s.pl.IsFull(name) {
			continue
		}
		if id, ok := s.pl.Early(name, rnow, s.pl.SitePrice(name)); ok {
			out = s.release(out, id, name, ss, true)
		}
	}
	return out
}

// waitingInOrder releases the waiting pages of site ss, named name, whose
// discovery is not weighed, in the order they fell due, as long as it may
// (mayRelease): what refuses one (Ahead, the credit) refuses every page
// after it, so the first refused ends the walk.
func (s *Scheduler) waitingInOrder(out []uint64, name string, ss *schedSite, rnow time.Time) []uint64 {
	k := 0
	for ; k < len(ss.waiting); k++ {
		ok, byWorth := s.mayRelease(ss, name, ss.waiting[k], rnow)
		if !ok {
			break
		}
		delete(s.waiting, ss.waiting[k])
		out = s.release(out, ss.waiting[k], name, ss, byWorth)
	}
	n := copy(ss.waiting, ss.waiting[k:])
	clear(ss.waiting[n:])
	ss.waiting = ss.waiting[:n]
	return out
}

// waitingByWorth releases, while fewer than Ahead are out, the waiting
// pages of site ss (named name, its discovery weighed) whose visits are
// worth a turn of its discovery (worthATurn), the highest Price first:
// its turns go to the visits worth most. In the order they fell due, the
// heaviest page due waited behind every lighter one due before it, a
// turn each: on seed 2's news web, whose big site has a few URLs left to
// discover to the end (Ahead binds), its front page (561 in-links, two
// changes an hour, planned every 13 min) was fetched 9 to 12 min after it
// was due for hours (TestSchedulerWaitingByPrice).
//
// The pages under the floor are priced once a solve: a Price only rises
// until the next, so none is worth a turn before the first of them
// reaches the floor (reaches, the site's recheck). Priced at every Due,
// every tick of the engine, a site of 50,000 pages with 9,065 waiting
// took 3.1 to 3.4 ms a Due (TestSchedulerWaitingPricedOnce).
func (s *Scheduler) waitingByWorth(out []uint64, name string, ss *schedSite, rnow time.Time) []uint64 {
	if ss.priced == s.pl.solves && (ss.recheck.IsZero() || rnow.Before(ss.recheck)) {
		return out
	}
	ss.priced, ss.recheck = s.pl.solves, time.Time{}
	floor := s.pl.DiscoveryFloor(name)
	worth := s.worth[:0]
	for k, id := range ss.waiting {
		if p := s.pl.Price(id, rnow); p >= floor {
			worth = append(worth, waitingPrice{k, p})
		} else {
			s.pl.Hold(id)
			s.recheck(ss, id, floor)
		}
	}
	slices.SortStableFunc(worth, func(a, b waitingPrice) int { return cmp.Compare(b.price, a.price) })
	take := min(len(worth), s.ahead-ss.out)
	if len(worth) > take {
		ss.recheck = rnow // worth a turn: at the next room
	}
	for _, w := range worth[:take] {
		id := ss.waiting[w.k]
		delete(s.waiting, id)
		out = s.release(out, id, name, ss, true)
	}
	s.worth = worth[:0]
	if take > 0 {
		ss.waiting = slices.DeleteFunc(ss.waiting, func(id uint64) bool { return !s.waiting[id] })
	}
	return out
}

// waitingPrice is a waiting page's Price, the page by its index in its
// site's waiting list.
type waitingPrice struct {
	k     int
	price float64
}

// release releases page id of site ss; one released by worth costs no
// credit.
func (s *Scheduler) release(out []uint64, id uint64, site string, ss *schedSite, byWorth bool) []uint64 {
	s.out[id] = site
	ss.out++
	if ss.discovering && !byWorth {
		ss.credit--
	}
	return append(out, id)
}

// Back tells that page id, released by Due, is no longer queued: fetched
// (whatever came of it), or never queued. Its site may release another.
func (s *Scheduler) Back(id uint64) {
	site, ok := s.out[id]
	if !ok {
		return
	}
	delete(s.out, id)
	if ss := s.sites[site]; ss != nil {
		ss.out--
	}
}

// Refused hands page id back unfetched, as Back does, because its site
// cannot take it now (parked or given up): its site's free turns are not
// offered early (Planner.Early) until one of its pages is fetched again,
// since each early release would come straight back and push its page's
// retry out.
func (s *Scheduler) Refused(id uint64) {
	if ss := s.sites[s.out[id]]; ss != nil {
		ss.refused = true
	}
	s.Back(id)
}

// NextDue returns when the next page is due by the recrawl clock, and false
// if none is.
func (s *Scheduler) NextDue() (time.Time, bool) { return s.pl.NextDue() }

// Budget returns the visits a second (recrawl clock) the Planner spends.
func (s *Scheduler) Budget() float64 { return s.pl.budget }

// clocks notes a reading of both clocks, for the recrawl clock's pace.
func (s *Scheduler) clocks(now, rnow time.Time) {
	if s.first.IsZero() {
		s.first, s.firstR = now, rnow
		return
	}
	if d := now.Sub(s.first); d >= time.Second {
		sc := float64(rnow.Sub(s.firstR)) / float64(d)
		if sc > 0 && (sc > s.scale*1.01 || sc < s.scale*0.99) {
			s.scale = sc
			for site := range s.sites {
				s.siteGap(site)
			}
			s.budget()
		}
	}
}

func (s *Scheduler) recrawlTime(d time.Duration) time.Duration {
	return time.Duration(float64(d) * s.scale)
}

// budget sets the Planner's budget: the share of r robots each fetching
// a page per cost or per hold, whichever is longer.
func (s *Scheduler) budget() {
	per := max(s.cost.avg, s.hold.avg)
	if s.robots <= 0 || per <= 0 {
		return
	}
	s.pl.SetBudget(s.share * float64(s.robots) / s.recrawlTime(per).Seconds())
}

// Groups summarises the plan for the console in k groups of channels by
// estimated change rate, fastest first (equal numbers of channels, the
// channels still warming up left out), from its pages' own estimates: per
// group its channels, the change interval its pooled rates give, the mean
// interval between visits of its pages and the freshness their estimated
// rates expect at those intervals, weighted by importance. It also
// returns the channels still warming up. The groups are nil before any
// channel left its warm-up.
func (s *Scheduler) Groups(k int) (groups []GroupStats, warming int) {
	var ready []ChannelPlan
	for _, c := range s.pl.Channels() {
		if c.Ready {
			ready = append(ready, c)
		} else {
			warming++
		}
	}
	if len(ready) == 0 || k < 1 {
		return nil, warming
	}
	slices.SortStableFunc(ready, func(a, b ChannelPlan) int {
		switch {
		case a.Rate > b.Rate:
			return -1
		case a.Rate < b.Rate:
			return 1
		}
		return 0
	})
	k = min(k, len(ready))
	out := make([]GroupStats, k)
	for g := range out {
		members := ready[g*len(ready)/k : (g+1)*len(ready)/k]
		var rate Rate
		var freq, fresh float64
		for _, c := range members {
			rate += c.Rate
			freq += 1 / c.Interval.Seconds()
			fresh += c.Freshness
		}
		n := float64(len(members))
		out[g] = GroupStats{Index: g, Rank: Rank(g, k), Channels: len(members), Interval: frequencyInterval(freq / n),
			Freshness: fresh / n}
		if rate > 0 {
			out[g].Change = (rate / Rate(n)).Interval()
		}
	}
	return out, warming
}
