package bench

import (
	"container/heap"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"lidi/engine/recrawl"
	"lidi/engine/recrawl/simulate"
	"lidi/engine/simweb"
)

// The measuring stick of `lidi bench recrawl-live`: what a schedule any
// user could write (every page revisited at the same rate), and the
// Wolf/Cho-optimal one, would have reached with the requests the crawl
// made, each site no faster than its politeness allows, scored exactly
// against the web's ground truth as the crawl's own copies are.

// refPhases is how many phases of its schedule a reference page is scored
// at: the mean over them stands for a schedule started at a random time.
const refPhases = 4

// scheduleInput is what the references need of a crawl and its web.
type scheduleInput struct {
	web      *simweb.Web
	from, to time.Duration // the window scored, virtual time
	// fetches are the crawl's copies of each page (by web page id), their
	// virtual times sorted; the pages scored are those with a copy by from,
	// and the requests the references spend those fetches of theirs within
	// the window (a crawl's fetches of pages it finds later are discovery,
	// not recrawls).
	fetches map[int][]time.Duration
	// gap is the shortest virtual time between two requests to a site.
	gap func(site int) time.Duration
	// weight, if set, is the importance the planner is given of each page
	// (plannerScores), in place of its true in-links, which the scores
	// always weigh by.
	weight func(page int) float64
}

// scheduleScores are the three freshness figures of one crawl, each the
// time-average over the window of the in-link-weighted share of pages
// whose copy is current.
type scheduleScores struct {
	Pages                       int
	Freshness, Uniform, Optimal float64
	// Requests are the crawl's requests to the scored pages in the window,
	// the references' budget; UniformRequests and OptimalRequests what the
	// references spent of it, fewer when the sites' caps add up to less.
	Requests                         int
	UniformRequests, OptimalRequests float64
	// RequestsPerPageHour is the crawl's request rate per scored page.
	RequestsPerPageHour float64
	// Sites break the figures down by site, in site order.
	Sites []siteScore
}

// siteScore is one site's part of scheduleScores: its scored pages, the
// requests its politeness allows in the window, the requests the
// schedule scored and the optimal one made to it, and each one's
// in-link-weighted freshness summed over its pages (a share of the
// whole's once divided by the whole's weight, Weight the site's part).
type siteScore struct {
	Site, Pages, Cap    int
	Requests, Optimal   int
	Weight              float64
	Fresh, OptimalFresh float64
}

// refPage is one scored page.
type refPage struct {
	page, site int
	weight     float64
	rate       float64         // true changes per second
	changes    []time.Duration // ground truth up to the window's end
	fetches    []time.Duration
}

// scoreSchedules scores the crawl, the uniform schedule and the optimal one.
func scoreSchedules(in scheduleInput) scheduleScores {
	web, ch := in.web, in.web.Changes()
	inlinks := inLinks(web)
	var pages []refPage
	for p, ts := range in.fetches {
		if len(ts) == 0 || ts[0] > in.from {
			continue
		}
		pages = append(pages, refPage{page: p, site: ch.ChannelOf(p), weight: recrawl.InLinkWeight(inlinks[p]),
			rate: ch.Rate(p), changes: streamUntil(ch, p, in.to), fetches: ts})
	}
	slices.SortFunc(pages, func(a, b refPage) int { return a.page - b.page })
	sc := scheduleScores{Pages: len(pages)}
	d := in.to - in.from
	if len(pages) == 0 || d <= 0 {
		return sc
	}
	requests := 0
	for _, pg := range pages {
		requests += windowFetches(pg.fetches, in.from, in.to)
	}
	sc.RequestsPerPageHour = float64(requests) / float64(len(pages)) / d.Hours()
	caps := siteCaps(pages, d, in.gap)
	var wsum, lidi, uni, opt float64
	uniform := uniformCrawls(pages, caps, float64(requests))
	optimal := optimalCrawls(pages, caps, requests, d)
	sc.Requests = requests
	bySite := map[int]*siteScore{}
	for i, pg := range pages {
		sc.UniformRequests += uniform[i]
		sc.OptimalRequests += float64(optimal[i])
		l := pg.weight * freshShare(pg.changes, pg.fetches, in.from, in.to)
		o := pg.weight * scheduleFresh(pg.changes, float64(optimal[i]), in.from, in.to)
		wsum += pg.weight
		lidi += l
		uni += pg.weight * scheduleFresh(pg.changes, uniform[i], in.from, in.to)
		opt += o
		ss := bySite[pg.site]
		if ss == nil {
			ss = &siteScore{Site: pg.site, Cap: caps[pg.site]}
			bySite[pg.site] = ss
		}
		ss.Pages++
		ss.Requests += windowFetches(pg.fetches, in.from, in.to)
		ss.Optimal += optimal[i]
		ss.Weight += pg.weight
		ss.Fresh += l
		ss.OptimalFresh += o
	}
	sc.Freshness, sc.Uniform, sc.Optimal = lidi/wsum, uni/wsum, opt/wsum
	for _, ss := range bySite {
		ss.Weight, ss.Fresh, ss.OptimalFresh = ss.Weight/wsum, ss.Fresh/wsum, ss.OptimalFresh/wsum
		sc.Sites = append(sc.Sites, *ss)
	}
	slices.SortFunc(sc.Sites, func(a, b siteScore) int { return a.Site - b.Site })
	return sc
}

// windowFetches counts the fetches at sorted times ts within (from, to].
func windowFetches(ts []time.Duration, from, to time.Duration) int {
	a := sort.Search(len(ts), func(i int) bool { return ts[i] > from })
	b := sort.Search(len(ts), func(i int) bool { return ts[i] > to })
	return b - a
}

// inLinks counts each page's distinct in-links from other pages in the web's
// graph, as the crawl's Scheduler counts those of its copies.
func inLinks(web *simweb.Web) []int {
	g := web.Graph()
	in := make([]int, web.NumPages())
	for p := range in {
		out := slices.Clone(g.Out(int32(p)))
		slices.Sort(out)
		for _, q := range slices.Compact(out) {
			if int(q) != p {
				in[q]++
			}
		}
	}
	return in
}

// streamUntil returns page p's change times up to until.
func streamUntil(ch *simweb.Changes, p int, until time.Duration) []time.Duration {
	s := ch.Stream(p)
	if s == nil {
		return nil
	}
	return s.Until(until)
}

// siteCaps returns, per site of the scored pages, the most requests its
// politeness allows within a window of d.
func siteCaps(pages []refPage, d time.Duration, gap func(int) time.Duration) map[int]int {
	caps := map[int]int{}
	for _, pg := range pages {
		if _, ok := caps[pg.site]; !ok {
			caps[pg.site] = int(d / max(gap(pg.site), time.Nanosecond))
		}
	}
	return caps
}

// uniformCrawls spreads requests evenly over the pages: every page the
// same number of crawls in the window, except on sites whose politeness
// cannot take that many, whose share goes to the others (water-filling).
func uniformCrawls(pages []refPage, caps map[int]int, requests float64) []float64 {
	n := map[int]int{}
	for _, pg := range pages {
		n[pg.site]++
	}
	perPage := map[int]float64{} // capped sites' rate per page
	left, free := requests, len(pages)
	for changed := true; changed && free > 0; {
		changed = false
		x := left / float64(free)
		for s, c := range caps {
			if _, done := perPage[s]; done || float64(c) >= x*float64(n[s]) {
				continue
			}
			perPage[s] = float64(c) / float64(n[s])
			left -= float64(c)
			free -= n[s]
			changed = true
		}
	}
	x := 0.0
	if free > 0 {
		x = left / float64(free)
	}
	out := make([]float64, len(pages))
	for i, pg := range pages {
		if r, ok := perPage[pg.site]; ok {
			out[i] = r
		} else {
			out[i] = x
		}
	}
	return out
}

// optimalCrawls is Wolf et al.'s and Cho and Garcia-Molina's allocation
// with the pages' true rates: the crawls of each page in the window that
// maximise Σ w·F(λ, x), F the freshness of a Poisson page crawled x times
// at equal intervals, with Σ x = requests and each site within its cap.
// F is concave in x, and the caps partition the pages, so the greedy
// choice of the largest marginal gain is optimal.
func optimalCrawls(pages []refPage, caps map[int]int, requests int, d time.Duration) []int {
	x := make([]int, len(pages))
	used := map[int]int{}
	gain := func(i int) float64 {
		pg := pages[i]
		return pg.weight * (poissonFresh(pg.rate, d, float64(x[i]+1)) - poissonFresh(pg.rate, d, float64(x[i])))
	}
	h := &refHeap{}
	for i := range pages {
		h.items = append(h.items, refGain{i, gain(i)})
	}
	heap.Init(h)
	for spent := 0; spent < requests && h.Len() > 0; {
		top := heap.Pop(h).(refGain)
		s := pages[top.i].site
		if used[s] >= caps[s] {
			continue // the site is full: its pages get no more
		}
		x[top.i]++
		used[s]++
		spent++
		heap.Push(h, refGain{top.i, gain(top.i)})
	}
	return x
}

// poissonFresh is the time-average freshness of a Poisson page of rate λ
// (per second) crawled x times at equal intervals over d: (1 − e^(−λI))/(λI)
// with I = d/x; 0 for no crawl, 1 for a page that never changes.
func poissonFresh(rate float64, d time.Duration, x float64) float64 {
	if x <= 0 {
		return 0
	}
	u := rate * d.Seconds() / x
	if u <= 0 {
		return 1
	}
	return -math.Expm1(-u) / u
}

type refGain struct {
	i    int
	gain float64
}

type refHeap struct{ items []refGain }

func (h refHeap) Len() int { return len(h.items) }
func (h refHeap) Less(i, j int) bool {
	if h.items[i].gain != h.items[j].gain {
		return h.items[i].gain > h.items[j].gain
	}
	return h.items[i].i < h.items[j].i
}
func (h refHeap) Swap(i, j int) { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *refHeap) Push(x any)   { h.items = append(h.items, x.(refGain)) }
func (h *refHeap) Pop() any {
	x := h.items[len(h.items)-1]
	h.items = h.items[:len(h.items)-1]
	return x
}

// scheduleFresh is the share of [from, to] a copy crawled x times in the
// window at equal intervals is current, given the page's change times,
// averaged over refPhases phases of the schedule. The schedule runs on
// before and after the window, so its first copy in the window is one
// crawled an interval earlier; a page crawled no time keeps a copy one
// window old.
func scheduleFresh(changes []time.Duration, x float64, from, to time.Duration) float64 {
	d := to - from
	if x <= 0 {
		return freshShare(changes, []time.Duration{from - d}, from, to)
	}
	interval := time.Duration(float64(d) / x)
	if interval <= 0 {
		return 1
	}
	var sum float64
	var ts []time.Duration
	for ph := range refPhases {
		ts = ts[:0]
		first := from - interval + time.Duration((float64(ph)+0.5)/refPhases*float64(interval))
		for t := first; t <= to; t += interval {
			ts = append(ts, t)
		}
		sum += freshShare(changes, ts, from, to)
	}
	return sum / refPhases
}

// freshShare is the share of [from, to] during which the latest of the
// copies fetched at the sorted times ts is current, given the page's
// sorted change times; before its first copy a page counts as stale.
func freshShare(changes, ts []time.Duration, from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	var fresh time.Duration
	for i, t := range ts {
		end := to
		if i+1 < len(ts) {
			end = min(ts[i+1], to)
		}
		start := max(t, from)
		if end <= start {
			continue
		}
		// The copy is current until the first change after its fetch.
		j := sort.Search(len(changes), func(j int) bool { return changes[j] > t })
		until := end
		if j < len(changes) {
			until = min(until, changes[j])
		}
		if until > start {
			fresh += until - start
		}
	}
	return float64(fresh) / float64(to-from)
}

// plannerScores runs recrawl.Planner, the page-level planner, over the
// same pages in virtual time (simulate.Pages): their copies all fetched at
// time 0, a warm-up as the crawl's, then the crawl's request rate of the
// window as the budget, each site within its politeness; and scores its
// fetches in the window as the crawl's are.
func plannerScores(in scheduleInput, opt recrawl.PlannerOptions) (scheduleScores, error) {
	web, ch := in.web, in.web.Changes()
	inlinks := inLinks(web)
	ids := make([]int, 0, len(in.fetches))
	for p, ts := range in.fetches {
		if len(ts) > 0 && ts[0] <= in.from {
			ids = append(ids, p)
		}
	}
	slices.Sort(ids)
	d := in.to - in.from
	requests := 0
	for _, p := range ids {
		requests += windowFetches(in.fetches[p], in.from, in.to)
	}
	if len(ids) == 0 || d <= 0 || requests == 0 {
		return scheduleScores{}, nil
	}
	setup := simulate.PagesSetup{Until: in.to, Budget: float64(requests) / d.Seconds(), Gap: map[string]time.Duration{}, Options: opt}
	for _, p := range ids {
		site := ch.ChannelOf(p)
		name := strconv.Itoa(site)
		setup.Gap[name] = in.gap(site)
		w := recrawl.InLinkWeight(inlinks[p])
		if in.weight != nil {
			w = in.weight(p)
		}
		pg := simulate.Page{Channel: recrawl.ChannelID(name), Site: name, Weight: w,
			Changes: streamUntil(ch, p, in.to), Dated: ch.Validators(site).LastModified()}
		if ch.News(site) && p == web.Site(site).HomePage {
			pg.NewLinks = func(from, to time.Duration) int { return ch.Published(site, to) - ch.Published(site, from) }
		}
		setup.Pages = append(setup.Pages, pg)
	}
	runs, err := simulate.Pages(setup)
	if err != nil {
		return scheduleScores{}, err
	}
	fetches := map[int][]time.Duration{}
	for i, ts := range runs {
		fetches[ids[i]] = ts
	}
	sim := in
	sim.fetches = fetches
	return scoreSchedules(sim), nil
}

// crawlWeights returns the importance the crawl's Scheduler gives each page
// at virtual time at: recrawl.InLinkWeight of its distinct in-links from
// the other pages the crawl had fetched by then (fetches as in
// scheduleInput).
func crawlWeights(web *simweb.Web, fetches map[int][]time.Duration, at time.Duration) map[int]float64 {
	g := web.Graph()
	in := map[int]int{}
	for q, ts := range fetches {
		if len(ts) == 0 || ts[0] > at {
			continue
		}
		out := slices.Clone(g.Out(int32(q)))
		slices.Sort(out)
		for _, p := range slices.Compact(out) {
			if int(p) != q {
				in[int(p)]++
			}
		}
	}
	w := make(map[int]float64, len(fetches))
	for p := range fetches {
		w[p] = recrawl.InLinkWeight(in[p])
	}
	return w
}

// weightDistance is the total variation distance between two weightings of
// the pages with a copy by at (fetches as in scheduleInput), each
// normalised to sum 1: the share of importance the first misplaces.
func weightDistance(fetches map[int][]time.Duration, at time.Duration, a, b func(int) float64) float64 {
	var ids []int
	var sa, sb float64
	for p, ts := range fetches {
		if len(ts) > 0 && ts[0] <= at {
			ids = append(ids, p)
			sa += a(p)
			sb += b(p)
		}
	}
	if sa <= 0 || sb <= 0 {
		return math.NaN()
	}
	slices.Sort(ids)
	var d float64
	for _, p := range ids {
		d += math.Abs(a(p)/sa - b(p)/sb)
	}
	return d / 2
}

// otherFetches counts, per site, the crawl's fetches within (from, to]
// that were not recrawls of the scored pages (those with a copy by from):
// the first fetches of the pages found after from and their recrawls
// (fetches, by page), and every fetch of a news article (news, by site).
// Each took one of its site's turns.
func otherFetches(fetches, news map[int][]time.Duration, from, to time.Duration, siteOf func(int) int) map[int]int {
	others := map[int]int{}
	for p, ts := range fetches {
		if len(ts) > 0 && ts[0] > from {
			others[siteOf(p)] += windowFetches(ts, from, to)
		}
	}
	for site, ts := range news {
		if n := windowFetches(ts, from, to); n > 0 {
			others[site] += n
		}
	}
	return others
}

// sharedGaps returns each site's gap as the crawl left it to the scored
// pages' recrawls in the window (from, to]: its politeness allows
// (to−from)/gap requests, and the crawl spent others[site] of them on
// what is not scored (otherFetches: discovery, the recrawls of the pages
// it found, news articles); the gap spreads what is left over the window.
// The goal's references schedule within it (liveScores). A site whose
// turns the other requests all took gets a gap longer than the window:
// no turn in it (siteCaps gives 0).
func sharedGaps(others map[int]int, from, to time.Duration, gap func(int) time.Duration) func(int) time.Duration {
	d := to - from
	return func(site int) time.Duration {
		g := gap(site)
		turns := int(d / max(g, time.Nanosecond))
		if others[site] == 0 || d <= 0 {
			return g
		}
		if left := turns - others[site]; left > 0 {
			return d / time.Duration(left)
		}
		return d + 1
	}
}

// liveScores scores the crawl against the goal's references and against
// references given all of every site's turns. The goal's (session 40)
// schedule the crawl's recrawls of the scored pages within the turns its
// other requests to each site left (sharedGaps): the references
// have "the same requests (per page, under each site's politeness)", and
// a site's politeness bounds all its requests. Of those other requests,
// the first fetches of pages the warm-up did not reach (coverage) and of
// news articles (the discovery the issue demands) are forced; the
// recrawls of the pages found and any refetch of an article are the
// policy's choice, so a policy that spends turns on what the score does
// not count lowers these references too (review s40 R1; docs/recrawl.md
// "The measuring stick"): hence AllTurns, printed beside them.
func liveScores(in scheduleInput, others map[int]int) (goal, allTurns scheduleScores) {
	allTurns = scoreSchedules(in)
	in.gap = sharedGaps(others, in.from, in.to, in.gap)
	return scoreSchedules(in), allTurns
}
