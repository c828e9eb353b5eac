package bench

import (
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

// A site's turns that the crawl spent on pages found after the window's
// start (discovery) are not the scored pages': the gap spreads the rest.
func TestSharedGaps(t *testing.T) {
	h := time.Hour
	fetches := map[int][]time.Duration{
		1: {0, 2 * h, 4 * h},         // scored (a copy by the start), site 0
		2: {h, 3 * h, 5 * h, 11 * h}, // found in the window, site 0: 3 turns in it
		3: {2 * h},                   // found in the window, site 1
		4: {0, 30 * time.Minute},     // scored, site 1
	}
	siteOf := func(p int) int { return map[int]int{1: 0, 2: 0, 3: 1, 4: 1}[p] }
	gap := func(site int) time.Duration { return []time.Duration{h, 2 * h, h}[site] }
	g := sharedGaps(fetches, 0, 10*h, gap, siteOf)
	for site, want := range []time.Duration{10 * h / 7, 10 * h / 4, h} {
		if got := g(site); got != want {
			t.Errorf("site %d: gap %v, want %v", site, got, want)
		}
	}
}
