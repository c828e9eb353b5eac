package bench

import (
	"maps"
	"math"
	"testing"
	"time"

	"lidi/engine/recrawl"
	"lidi/engine/recrawl/change"
	"lidi/engine/simweb"
)

func TestFreshShare(t *testing.T) {
	h := time.Hour
	for _, tc := range []struct {
		name        string
		changes, ts []time.Duration
		want        float64
	}{
		{"never changes", nil, []time.Duration{-h}, 1},
		{"no copy", nil, nil, 0},
		{"copy in the middle", nil, []time.Duration{5 * h}, 0.5},
		{"stale from the change", []time.Duration{2 * h}, []time.Duration{-h}, 0.2},
		{"refetched after the change", []time.Duration{2 * h}, []time.Duration{-h, 4 * h}, 0.8},
		{"change before the copy", []time.Duration{-2 * h}, []time.Duration{-h}, 1},
		{"two changes, one fetch between", []time.Duration{h, 3 * h}, []time.Duration{0, 2 * h}, 0.2},
	} {
		if got := freshShare(tc.changes, tc.ts, 0, 10*h); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A Poisson page crawled at equal intervals is fresh, on average over
// pages and phases, as the formula says.
func TestScheduleFreshMatchesFormula(t *testing.T) {
	const d = 200 * time.Hour
	m := change.Model{Kind: change.Poisson, Mean: 2 * time.Hour}
	for _, x := range []float64{20, 100, 400} {
		var sum float64
		const items = 300
		for i := range items {
			sum += scheduleFresh(m.Times(1, uint64(i), d), x, 0, d)
		}
		want := poissonFresh(m.Rate(), d, x)
		if got := sum / items; math.Abs(got-want) > 0.01 {
			t.Errorf("%v crawls: mean freshness %.4f, formula %.4f", x, got, want)
		}
	}
}

func TestUniformCrawlsWaterFills(t *testing.T) {
	// Site 0 (2 pages) can take 3 requests; the 9 others go to site 1's
	// 3 pages.
	pages := []refPage{{site: 0}, {site: 0}, {site: 1}, {site: 1}, {site: 1}}
	got := uniformCrawls(pages, map[int]int{0: 3, 1: 100}, 12)
	want := []float64{1.5, 1.5, 3, 3, 3}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("crawls %v, want %v", got, want)
		}
	}
}

// The greedy allocation is the best of every allocation of a small case,
// within the sites' caps.
func TestOptimalCrawlsBruteForce(t *testing.T) {
	const d = 10 * time.Hour
	pages := []refPage{
		{site: 0, weight: 1, rate: 1 / 3600.},
		{site: 0, weight: 3, rate: 1 / 600.}, // changes too fast to be worth much
		{site: 1, weight: 2, rate: 1 / 7200.},
		{site: 1, weight: 1, rate: 0},
	}
	caps := map[int]int{0: 4, 1: 9}
	const requests = 9
	value := func(x []int) float64 {
		var v float64
		for i, pg := range pages {
			v += pg.weight * poissonFresh(pg.rate, d, float64(x[i]))
		}
		return v
	}
	got := optimalCrawls(pages, caps, requests, d)
	best := -1.0
	var x [4]int
	var search func(i, left int)
	search = func(i, left int) {
		if i == len(pages) {
			if x[0]+x[1] <= caps[0] && x[2]+x[3] <= caps[1] {
				best = max(best, value(x[:]))
			}
			return
		}
		for k := 0; k <= left; k++ {
			x[i] = k
			search(i+1, left-k)
		}
	}
	search(0, requests)
	if v := value(got); math.Abs(v-best) > 1e-9 {
		t.Errorf("greedy %v scores %.6f, the best %.6f", got, v, best)
	}
	if got[0]+got[1] > caps[0] {
		t.Errorf("site 0 got %d crawls, cap %d", got[0]+got[1], caps[0])
	}
}

// The crawl's weights, once it has a copy of every page, are the ones the
// scores use: the distance between the two is 0, not a floor left by two
// definitions of a page's importance.
func TestCrawlWeightsConvergeToTrue(t *testing.T) {
	web, err := simweb.Generate(simweb.Options{Seed: 2, Sites: 10, Pages: 150, ExternalLinks: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	all := map[int][]time.Duration{}
	for p := range web.NumPages() {
		all[p] = []time.Duration{0}
	}
	in := inLinks(web)
	got := crawlWeights(web, all, 0)
	if d := weightDistance(all, 0, func(p int) float64 { return got[p] }, func(p int) float64 { return recrawl.InLinkWeight(in[p]) }); d != 0 {
		t.Errorf("the crawl's weights with every page fetched are %.4f from the true ones, want 0", d)
	}
	// Half the pages fetched: the weights differ.
	half := map[int][]time.Duration{}
	for p := range web.NumPages() {
		half[p] = []time.Duration{time.Duration(p%2) * time.Hour}
	}
	got = crawlWeights(web, half, 0)
	if d := weightDistance(half, 0, func(p int) float64 { return got[p] }, func(p int) float64 { return recrawl.InLinkWeight(in[p]) }); d <= 0 {
		t.Errorf("half the pages fetched: distance %v, want more than 0", d)
	}
}

// A site's turns that the crawl spent on what is not scored are the
// fetches in the window of the pages found after its start (discovery,
// their recrawls) and of news articles; the gap spreads the rest.
func TestSharedGaps(t *testing.T) {
	h := time.Hour
	fetches := map[int][]time.Duration{
		1: {0, 2 * h, 4 * h},         // scored (a copy by the start), site 0
		2: {h, 3 * h, 5 * h, 11 * h}, // found in the window, site 0: 3 turns in it
		3: {2 * h},                   // found in the window, site 1
		4: {0, 30 * time.Minute},     // scored, site 1
	}
	news := map[int][]time.Duration{2: {-h, 3 * h, 4 * h}} // site 2's articles: 2 in the window
	siteOf := func(p int) int { return map[int]int{1: 0, 2: 0, 3: 1, 4: 1}[p] }
	others := otherFetches(fetches, news, 0, 10*h, siteOf)
	if want := map[int]int{0: 3, 1: 1, 2: 2}; !maps.Equal(others, want) {
		t.Errorf("other fetches %v, want %v", others, want)
	}
	gap := func(site int) time.Duration { return []time.Duration{h, 2 * h, h, h}[site] }
	g := sharedGaps(others, 0, 10*h, gap)
	for site, want := range []time.Duration{10 * h / 7, 10 * h / 4, 10 * h / 8, h} {
		if got := g(site); got != want {
			t.Errorf("site %d: gap %v, want %v", site, got, want)
		}
	}
	// A site whose turns the other requests all took, or more than all
	// (a turn's rounding), has none left for the scored pages.
	full := sharedGaps(map[int]int{0: 10, 1: 12}, 0, 10*h, func(int) time.Duration { return h })
	for site := range 2 {
		if turns := int(10 * h / full(site)); turns != 0 {
			t.Errorf("site %d, its 10 turns taken: gap %v, %d turns left, want 0", site, full(site), turns)
		}
	}
}

// The goal's references schedule a site's scored pages within the turns
// the crawl's other requests to it left (liveScores): a crawl whose
// discovery took most of a big site's turns, and which recrawled its small
// sites often, is not compared with an optimal that moves those recrawls
// to the big site's scored pages, into turns its politeness did not have.
func TestLiveScoresLeaveOthersTurns(t *testing.T) {
	web, err := simweb.Generate(simweb.Options{Seed: 2, Sites: 4, Pages: 80, ExternalLinks: 0.3, Change: simweb.ShapeSARSS.Options()})
	if err != nil {
		t.Fatal(err)
	}
	const d = 10 * time.Hour
	siteOf := web.Changes().ChannelOf
	// Site 0's scored pages fetched twice in the window, the others' every
	// 10 min; a turn a minute everywhere (600 in the window), 500 of site
	// 0's taken by what is not scored.
	fetches := map[int][]time.Duration{}
	for p := range web.NumPages() {
		every := 10 * time.Minute
		if siteOf(p) == 0 {
			every = d / 2
		}
		for at := time.Duration(0); at <= d; at += every {
			fetches[p] = append(fetches[p], at)
		}
	}
	others := map[int]int{0: 500}
	in := scheduleInput{web: web, from: 0, to: d, fetches: fetches, gap: func(int) time.Duration { return time.Minute }}
	goal, all := liveScores(in, others)
	site0 := func(sc scheduleScores) siteScore {
		for _, ss := range sc.Sites {
			if ss.Site == 0 {
				return ss
			}
		}
		t.Fatalf("no site 0 in %+v", sc.Sites)
		return siteScore{}
	}
	a, g := site0(all), site0(goal)
	if a.Cap != 600 || a.Optimal <= 100 {
		t.Fatalf("given all the turns, site 0: cap %d, the optimal's requests %d: want 600 and more than 100 (the set-up)", a.Cap, a.Optimal)
	}
	if g.Cap != 100 || g.Optimal > 100 {
		t.Errorf("the goal's references, site 0: cap %d, the optimal's requests %d; want 100 and at most 100 (500 of its 600 turns taken)", g.Cap, g.Optimal)
	}
	if goal.Freshness != all.Freshness || goal.Optimal > all.Optimal {
		t.Errorf("the crawl's freshness %.4f and %.4f, the optimal %.4f within the turns left and %.4f with all: want the same crawl, an optimal no higher", goal.Freshness, all.Freshness, goal.Optimal, all.Optimal)
	}
	t.Logf("site 0: the optimal's requests %d of 600 turns, %d of the 100 left; optimal %.3f / %.3f, uniform %.3f / %.3f, the crawl %.3f", a.Optimal, g.Optimal, all.Optimal, goal.Optimal, all.Uniform, goal.Uniform, goal.Freshness)
}
