package bench

import (
	"math"
	"testing"
	"time"

	"lidi/engine/recrawl"
	"lidi/engine/simweb"
)

// The page-level planner, simulated on every web shape with a budget of
// half a visit per page per hour after a six-hour warm-up, beats the
// uniform schedule with the same requests and comes near the optimal one.
func TestPlannerBeatsUniform(t *testing.T) {
	for _, shape := range simweb.ChangeShapes() {
		t.Run(string(shape), func(t *testing.T) {
			t.Parallel()
			web, err := simweb.Generate(simweb.Options{Seed: 1, Sites: 40, Pages: 600, ExternalLinks: 0.3, Change: shape.Options()})
			if err != nil {
				t.Fatal(err)
			}
			const from, to = 6 * time.Hour, 30 * time.Hour
			// A copy of every page at 0, and the budget of half a visit per
			// page per hour, spent as the requests of a crawl would be.
			copies := map[int][]time.Duration{}
			n := int(0.5 * (to - from).Hours())
			for p := range web.NumPages() {
				copies[p] = []time.Duration{0}
				for k := range n {
					copies[p] = append(copies[p], from+time.Duration(k+1)*(to-from)/time.Duration(n))
				}
			}
			gap := func(site int) time.Duration {
				return time.Duration(float64(min(max(100*time.Millisecond, web.Site(site).CrawlDelay), time.Minute)) * 600)
			}
			in := scheduleInput{web: web, from: from, to: to, fetches: copies, gap: gap}
			sc, err := plannerScores(in, recrawl.DefaultPlanner())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: planner %.3f at %.3f requests/page/h, uniform %.3f, optimal %.3f", shape, sc.Freshness, sc.RequestsPerPageHour, sc.Uniform, sc.Optimal)
			if sc.Freshness < sc.Uniform+0.03 || sc.Freshness < 0.95*sc.Optimal {
				t.Errorf("%s: planner %.3f, uniform %.3f, optimal %.3f", shape, sc.Freshness, sc.Uniform, sc.Optimal)
			}
			// The sites' parts make up the whole.
			var pages int
			var requests, weight, fresh, opt float64
			for _, ss := range sc.Sites {
				pages += ss.Pages
				requests += float64(ss.Requests)
				weight += ss.Weight
				fresh += ss.Fresh
				opt += ss.OptimalFresh
			}
			if pages != sc.Pages || math.Abs(requests/float64(pages)/(to-from).Hours()-sc.RequestsPerPageHour) > 1e-9 ||
				math.Abs(weight-1) > 1e-9 || math.Abs(fresh-sc.Freshness) > 1e-9 || math.Abs(opt-sc.Optimal) > 1e-9 {
				t.Errorf("%s: the sites' parts sum to %d pages, %.0f requests, weight %.3f, freshness %.3f and optimal %.3f; the whole %d, %.3f/page/h, %.3f and %.3f",
					shape, pages, requests, weight, fresh, opt, sc.Pages, sc.RequestsPerPageHour, sc.Freshness, sc.Optimal)
			}
		})
	}
}
