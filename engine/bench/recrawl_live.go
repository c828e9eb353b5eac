package bench

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/record"
	"lidi/engine/recrawl"
	"lidi/engine/recrawl/change"
	"lidi/engine/recrawl/simulate"
	"lidi/engine/simweb"
)

// RecrawlLiveOptions sets up `lidi bench recrawl-live`: per web shape and
// policy, one real crawl of a changing simweb over loopback, its clock
// TimeScale times as fast as real time, recrawled by the policy. Its
// freshness is scored against the web's ground truth beside the uniform and
// the optimal schedules with the same requests; on a web whose sites'
// pages change together (SARSS's channels), it is also compared with
// recrawl/simulate's run of the same set-up (channels, groups, pages,
// robots, the time a page takes), their freshness curves sampled at the
// same virtual times. The zero value is not usable: RegisterFlags sets the
// defaults and OpenStore must be set (main.go wires it).
type RecrawlLiveOptions struct {
	Shapes       []simweb.ChangeShape // the webs, each crawled by every policy
	Sites, Pages int
	Seed         int64
	TimeScale    float64
	Duration     time.Duration // of the real crawl, in real time
	Robots       int
	Delay        time.Duration // w, real time
	// PagesPerVisit is the pages a robot's visit of a site may take
	// (politeness.pages_per_connection): on a fast clock a visit of many
	// pages to a site with a Crawl-delay lasts virtual hours, and the
	// recrawls of the site wait for it.
	PagesPerVisit int
	Policies      []recrawl.PolicyName
	// InitialInterval and Warmup are the recrawl warm-up's (virtual time).
	InitialInterval, Warmup time.Duration
	Out                     string // directory for recrawl_live.csv and .png ("": none)
	OpenStore               func(path string) (record.Store, io.Closer, error)
}

// RegisterFlags defines the flags and sets the defaults.
func (o *RecrawlLiveOptions) RegisterFlags(fs *flag.FlagSet) {
	def := engine.DefaultRecrawl()
	o.Shapes = []simweb.ChangeShape{simweb.ShapeSARSS}
	fs.Func("changes", "comma-separated `shapes` of the changing web, each crawled in turn: sarss, pareto, quasi, news, no-validators, stamped or all (default sarss)", func(v string) error {
		sh, err := simweb.ParseChangeShapes(v)
		o.Shapes = sh
		return err
	})
	simweb.WebFlags(fs, &o.Sites, 40, &o.Pages, 600, &o.Seed) // a site is a channel
	fs.Float64Var(&o.TimeScale, "time-scale", 600, "the web's clock runs `N` times as fast as real time")
	fs.DurationVar(&o.Duration, "duration", 3*time.Minute, "length of the real crawl, real time")
	fs.IntVar(&o.Robots, "robots", 8, "r: robots, the recrawl capacity")
	fs.IntVar(&o.PagesPerVisit, "pages-per-visit", 1, "c: pages a visit of a site may take (a visit of many pages to a site with a Crawl-delay lasts virtual hours on a fast clock)")
	fs.DurationVar(&o.Delay, "delay", 100*time.Millisecond, "w: delay between two requests to a site, real time")
	o.Policies = []recrawl.PolicyName{def.Options.Policy}
	fs.Func("policy", "comma-separated recrawl `policies`, each run in turn: fixed, iir, icr, optimal, adaptive, pages or all (default "+string(def.Options.Policy)+", the engine's)", func(v string) error {
		ps, err := parsePolicies(v)
		o.Policies = ps
		return err
	})
	fs.DurationVar(&o.InitialInterval, "initial-interval", def.InitialInterval, "warm-up probe interval, virtual time")
	fs.DurationVar(&o.Warmup, "warmup", def.Warmup, "warm-up length, virtual time")
	fs.StringVar(&o.Out, "out", "", "write recrawl_live.csv and recrawl_live.png (the freshness curves, real and simulated) into `DIR`")
}

// RecrawlLiveResult is what the comparison of one policy measured.
type RecrawlLiveResult struct {
	Shape   simweb.ChangeShape
	Policy  recrawl.PolicyName
	Virtual time.Duration // virtual time the real crawl covered after its warm-up
	// Freshness is the time-average share of channels whose copy is
	// current after the warm-up (a channel's share of its pages), real
	// crawl and simulation; PageFreshness the real crawl's over pages.
	Freshness, SimFreshness float64
	PageFreshness           float64
	Recrawls                int64 // real recrawl fetches
	PageTime                time.Duration
	// Curve is the real crawl's freshness every liveStep of virtual time
	// after the warm-up; SimCurve the simulation's channel freshness at the
	// same times (Pages unset), and CurveMeanDiff and CurveMaxDiff the mean
	// and largest absolute difference between the two channel curves.
	Curve, SimCurve             []FreshPoint
	CurveMeanDiff, CurveMaxDiff float64
	Sim                         *simulate.Result       // nil when the web's pages do not change together
	Groups                      []engine.IntervalGroup // the real crawl's at its end
	// Scores are the crawl's in-link-weighted page freshness, exactly
	// integrated after the warm-up, beside the uniform and the optimal
	// schedules' with the same requests, each site's within the turns the
	// crawl's other requests to it left (liveScores): the goal's. AllTurns
	// are the same references given all of every site's turns (the goal's
	// before session 40).
	Scores, AllTurns scheduleScores
	// Planner is recrawl.Planner's page-level schedule of the same pages
	// with the crawl's request rate, simulated in virtual time against the
	// same ground truth, with its own uniform and optimal references.
	Planner scheduleScores
	// NewFound is the share of the articles news sites published after
	// the warm-up that the crawl fetched within one recrawl of their home
	// page (NaN on a web without news sites), of NewArticles.
	NewFound    float64
	NewArticles int
	// Found is how many of the web's pages the crawl had a copy of by its
	// end, and FoundWeight their share of all the pages' true importance:
	// how much it discovered, which the goal's references lose turns to
	// (liveScores) and AllTurns' do not.
	Found       int
	FoundWeight float64
	// PlannerCrawlWeights is the planner simulated as Planner, but given
	// the importance the crawl's Scheduler had at the warm-up's end (in-links
	// from the pages fetched by then) instead of the true in-links;
	// WeightDistance the total variation distance between those weights and
	// the true ones at the warm-up's end, and at the end of the crawl.
	PlannerCrawlWeights float64
	// PlannerShared is the planner simulated as Planner, each site's
	// turns but those the crawl spent on what is not scored (Others):
	// what the crawl's planner could reach with the capacity discovery
	// left it.
	PlannerShared float64
	// PlannerSharedScores are PlannerShared's scores in full (its sites'),
	// and Others the crawl's fetches per site in the window that were not
	// recrawls of scored pages (otherFetches).
	PlannerSharedScores scheduleScores
	Others              map[int]int
	// Budgets are the plan's recrawls an hour, sampled every virtual hour,
	// and Copies the crawl's copies (scheduleInput's fetches).
	Budgets                     []float64
	Copies                      map[int][]time.Duration
	WarmEnd                     time.Duration
	siteOf                      func(page int) int
	web                         *simweb.Web
	weight                      func(page int) float64 // true importance
	WeightDistance, WeightAtEnd float64
	// Late is how late the real crawl fetched its recrawls against its
	// plan after the warm-up (virtual time), and how many went to pages
	// still warming up.
	Late recrawl.Lateness
	// VerdictMissed is the share of the recrawls after the warm-up that
	// found a page changed by the ground truth but judged it unchanged,
	// VerdictFalse the share of those that found it unchanged but judged
	// it changed.
	VerdictMissed, VerdictFalse float64
	// Violations counts politeness and robots.txt violations on simweb's
	// witness: a host served two requests at once or closer than the
	// delay, within its Crawl-delay, or a disallowed path.
	Violations int
}

// FreshPoint is the real crawl's freshness at one virtual time.
type FreshPoint struct {
	At              time.Duration // since the warm-up's end
	Channels, Pages float64       // channel-level and page-level freshness
}

// liveStep is how often the freshness curves are sampled, virtual time.
const liveStep = 10 * time.Minute

// RecrawlLive runs the comparison for each policy in turn and prints it,
// ending with a key=value line per policy.
func RecrawlLive(ctx context.Context, o RecrawlLiveOptions, w io.Writer) ([]*RecrawlLiveResult, error) {
	if o.OpenStore == nil {
		return nil, errors.New("bench: recrawl-live: no store")
	}
	if len(o.Policies) == 0 {
		return nil, errors.New("bench: recrawl-live: no policy")
	}
	if len(o.Shapes) == 0 {
		o.Shapes = []simweb.ChangeShape{simweb.ShapeSARSS}
	}
	var out []*RecrawlLiveResult
	for _, shape := range o.Shapes {
		for _, pol := range o.Policies {
			res, err := recrawlLive(ctx, o, shape, pol, w)
			if err != nil {
				return nil, fmt.Errorf("bench: recrawl-live, changes %s, policy %s: %w", shape, pol, err)
			}
			out = append(out, res)
		}
	}
	if o.Out != "" {
		if err := writeRecrawlLive(o.Out, out); err != nil {
			return nil, err
		}
		fmt.Fprintf(w, "wrote %s, %s\n", filepath.Join(o.Out, "recrawl_live.csv"), filepath.Join(o.Out, "recrawl_live.png"))
	}
	for _, res := range out {
		fmt.Fprintln(w, res.keyValues())
	}
	return out, nil
}

// keyValues is the policy's key=value line: the goal's figures (uniform,
// optimal, vs_uniform, of_optimal: the references within the turns the
// crawl's other requests left), the references given all the turns beside
// them, the crawl's requests to the scored pages and what each reference
// spent of them, and the rest.
func (res *RecrawlLiveResult) keyValues() string {
	sc, all := res.Scores, res.AllTurns
	return fmt.Sprintf("changes=%s policy=%s freshness=%.3f uniform=%.3f optimal=%.3f vs_uniform=%+.3f of_optimal=%.3f uniform_all_turns=%.3f optimal_all_turns=%.3f requests_per_page_hour=%.3f requests=%d uniform_requests=%.0f optimal_requests=%.0f new_found=%s found=%d found_weight=%.3f pages=%d violations=%d channel_freshness=%.3f sim_freshness=%s curve_mean_diff=%s recrawls=%d virtual_h=%.1f%s",
		res.Shape, res.Policy, sc.Freshness, sc.Uniform, sc.Optimal, sc.Freshness-sc.Uniform, sc.Freshness/sc.Optimal, all.Uniform, all.Optimal,
		sc.RequestsPerPageHour, sc.Requests, sc.UniformRequests, sc.OptimalRequests, fmtShare(res.NewFound, res.NewArticles), res.Found, res.FoundWeight, sc.Pages, res.Violations, res.Freshness,
		fmtNaN(res.SimFreshness), fmtNaN(res.CurveMeanDiff), res.Recrawls, res.Virtual.Hours(), res.lossKeys())
}

// scoreLive scores the crawl's copies (in.fetches) in the window against
// the goal's references (Scores) and those given all the turns (AllTurns),
// the crawl's other requests (Others) counted from its copies and its
// fetches of news articles (news, by site).
func (res *RecrawlLiveResult) scoreLive(in scheduleInput, news map[int][]time.Duration) {
	res.Others = otherFetches(in.fetches, news, in.from, in.to, in.web.Changes().ChannelOf)
	res.Scores, res.AllTurns = liveScores(in, res.Others)
}

// recrawlLive runs the comparison for policy pol.
func recrawlLive(ctx context.Context, o RecrawlLiveOptions, shape simweb.ChangeShape, pol recrawl.PolicyName, w io.Writer) (*RecrawlLiveResult, error) {
	web, err := simweb.Generate(simweb.Options{Seed: o.Seed, Sites: o.Sites, Pages: o.Pages, ExternalLinks: 0.3,
		Change: shape.Options()})
	if err != nil {
		return nil, err
	}
	srv, err := simweb.Start(ctx, web, simweb.ServerConfig{TimeScale: o.TimeScale})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	dir, err := os.MkdirTemp("", "lidi-recrawl-live-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, closer, err := o.OpenStore(filepath.Join(dir, "live.db"))
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	rec := newFetchRecorder(store, srv.Clock())
	resolver, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
	if err != nil {
		return nil, err
	}
	defer resolver.Close()

	cfg := engine.Defaults()
	cfg.Seeds = srv.SeedURLs(o.Sites)
	cfg.Robots, cfg.Delay, cfg.MaxDelay = o.Robots, o.Delay, max(o.Delay, cfg.MaxDelay) // Crawl-delay honoured, as the witness checks
	cfg.PerAddress, cfg.Rank, cfg.Detect, cfg.KeepBodies = false, false, false, false
	cfg.PagesPerVisit = o.PagesPerVisit
	cfg.Recrawl.Enabled = true
	cfg.Recrawl.Options.Policy = pol
	cfg.Recrawl.Options.MinInterval = 10 * time.Minute
	cfg.Recrawl.InitialInterval, cfg.Recrawl.Warmup = o.InitialInterval, o.Warmup
	cfg.Recrawl.Clock, cfg.Recrawl.Freshness = srv.VirtualTime(), srv
	eng, err := engine.New(cfg, rec, resolver, nil)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "recrawl-live: changes %s, %d sites, %d pages, clock ×%g, %v real (%v virtual), r=%d, w=%v, policy %s\n",
		shape, o.Sites, o.Pages, o.TimeScale, o.Duration, time.Duration(float64(o.Duration)*o.TimeScale), o.Robots, o.Delay, pol)
	runCtx, cancel := context.WithTimeout(ctx, o.Duration)
	defer cancel()
	warmEnd := o.Warmup
	atWarmEnd := make(chan recrawl.Lateness, 1)
	var budgets []float64 // the plan's recrawls an hour, every virtual hour
	budgetsDone := make(chan struct{})
	go func() {
		// The lateness counts at the warm-up's end, for the window's.
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		defer close(budgetsDone)
		sent := false
		for next := time.Duration(0); ; {
			select {
			case <-runCtx.Done():
				if !sent {
					close(atWarmEnd)
				}
				return
			case <-tick.C:
			}
			off := srv.Clock().Offset()
			if !sent && off >= warmEnd {
				if r := eng.Stats().Recrawl; r != nil {
					atWarmEnd <- r.Late
				}
				close(atWarmEnd)
				sent = true
			}
			if off >= next {
				if r := eng.Stats().Recrawl; r != nil {
					budgets = append(budgets, r.Budget)
				}
				next += time.Hour
			}
		}
	}()
	if err := eng.Run(runCtx); err != nil && !errors.Is(err, engine.ErrStopped) {
		return nil, err
	}
	<-budgetsDone
	st := eng.Stats()
	end := srv.Clock().Offset()
	if end <= warmEnd {
		return nil, fmt.Errorf("bench: recrawl-live: the run ended at %v of virtual time, before the warm-up's end at %v: give it a longer --duration", end, warmEnd)
	}
	res := &RecrawlLiveResult{Shape: shape, Policy: pol, Virtual: end - warmEnd, Groups: st.Intervals,
		SimFreshness: math.NaN(), CurveMeanDiff: math.NaN(), CurveMaxDiff: math.NaN()}
	res.Budgets = budgets
	res.Curve, res.Freshness, res.PageFreshness, res.Recrawls, res.PageTime = rec.freshness(web, warmEnd, end)
	res.PageTime += time.Duration(float64(o.Delay) * o.TimeScale) // the robot waits w after each page
	copies, articles, news := rec.copies(web)
	res.Copies, res.WarmEnd = copies, warmEnd
	maxDelay := cfg.MaxDelay
	gap := func(site int) time.Duration {
		return time.Duration(float64(min(max(o.Delay, web.Site(site).CrawlDelay), maxDelay)) * o.TimeScale)
	}
	res.scoreLive(scheduleInput{web: web, from: warmEnd, to: end, fetches: copies, gap: gap}, news)
	res.NewFound, res.NewArticles = newFound(web, copies, articles, warmEnd, end)
	popt := recrawl.DefaultPlanner()
	popt.InitialInterval, popt.MinInterval = o.InitialInterval, cfg.Recrawl.Options.MinInterval
	if res.Planner, err = plannerScores(scheduleInput{web: web, from: warmEnd, to: end, fetches: copies, gap: gap}, popt); err != nil {
		return nil, err
	}
	inl := inLinks(web)
	trueW := func(p int) float64 { return recrawl.InLinkWeight(inl[p]) }
	startW, endW := crawlWeights(web, copies, warmEnd), crawlWeights(web, copies, end)
	res.WeightDistance = weightDistance(copies, warmEnd, func(p int) float64 { return startW[p] }, trueW)
	res.WeightAtEnd = weightDistance(copies, warmEnd, func(p int) float64 { return endW[p] }, trueW)
	crawlIn := scheduleInput{web: web, from: warmEnd, to: end, fetches: copies, gap: gap, weight: func(p int) float64 { return startW[p] }}
	if cw, err := plannerScores(crawlIn, popt); err != nil {
		return nil, err
	} else {
		res.PlannerCrawlWeights = cw.Freshness
	}
	shared := sharedGaps(res.Others, warmEnd, end, gap)
	if ps, err := plannerScores(scheduleInput{web: web, from: warmEnd, to: end, fetches: copies, gap: shared}, popt); err != nil {
		return nil, err
	} else {
		res.PlannerShared, res.PlannerSharedScores = ps.Freshness, ps
	}
	var all, got float64
	for p := range inl {
		all += trueW(p)
		if len(copies[p]) > 0 {
			res.Found++
			got += trueW(p)
		}
	}
	res.FoundWeight = got / all
	res.siteOf = web.Changes().ChannelOf
	res.web = web
	res.weight = trueW
	if st.Recrawl != nil {
		res.Late = st.Recrawl.Late.Sub(<-atWarmEnd)
	}
	res.VerdictMissed, res.VerdictFalse = rec.verdicts(web, warmEnd, end)
	res.Violations = witnessViolations(srv.Witness(), o.Delay)
	if !web.Changes().Options().Together || pol.PerPage() {
		// The simulation knows channels that change together only, and
		// the policies of channels.
		printRecrawlLive(w, res)
		return res, nil
	}

	// The simulation of the same set-up: the web's channels in its groups,
	// its pages, r robots, and the time a page took in the real crawl.
	// The simulation's channels are the web's: their groups, pages and
	// change times, so that the two curves see the same changes.
	ch := web.Changes()
	share := make([]float64, ch.Groups())
	var sizes []int
	var given []simulate.Channel
	for c := range ch.Channels() {
		share[ch.Group(c)]++
		first, n := ch.ChannelPages(c)
		sizes = append(sizes, n)
		given = append(given, simulate.Channel{Group: ch.Group(c), Pages: n, Changes: func() *change.Stream { return ch.Stream(first) }})
	}
	sort.Ints(sizes)
	opt := recrawl.Defaults()
	opt.MinInterval = cfg.Recrawl.Options.MinInterval
	setup := simulate.Setup{Name: "live", Channels: o.Sites, Crawlers: 1, Threads: o.Robots, Queue: o.Sites,
		Duration: res.Virtual, Seed: uint64(o.Seed), Change: change.Poisson, GroupShare: share,
		PagesMedian: sizes[len(sizes)/2], PageTime: res.PageTime, Given: given,
		Lifetime: 1000 * end, Downtime: time.Minute, Notified: 1,
		Warmup: o.Warmup, WarmupVisit: o.InitialInterval, WarmupCopies: true, Options: opt, Sample: liveStep}
	if res.Sim, err = simulate.Run(setup, pol); err != nil {
		return nil, err
	}
	res.SimFreshness = res.Sim.Freshness
	res.compareCurves()
	printRecrawlLive(w, res)
	return res, nil
}

// compareCurves fills SimCurve with the simulation's samples at the real
// curve's times, and the differences between the two.
func (res *RecrawlLiveResult) compareCurves() {
	sim := map[time.Duration]float64{}
	for _, s := range res.Sim.Series {
		sim[s.At] = s.Fresh
	}
	res.SimCurve = res.SimCurve[:0]
	var sum float64
	res.CurveMaxDiff = 0
	for _, p := range res.Curve {
		f, ok := sim[p.At]
		if !ok {
			continue
		}
		res.SimCurve = append(res.SimCurve, FreshPoint{At: p.At, Channels: f})
		d := math.Abs(p.Channels - f)
		sum += d
		res.CurveMaxDiff = max(res.CurveMaxDiff, d)
	}
	if n := len(res.SimCurve); n > 0 {
		res.CurveMeanDiff = sum / float64(n)
	}
}

// sumOthers is the crawl's requests in the window that were not recrawls
// of scored pages (otherFetches).
func sumOthers(others map[int]int) int {
	n := 0
	for _, k := range others {
		n += k
	}
	return n
}

func printRecrawlLive(w io.Writer, res *RecrawlLiveResult) {
	sc := res.Scores
	fmt.Fprintf(w, "changes %s, policy %s, after the warm-up, %v of virtual time: %d recrawl fetches, a page took %v of virtual time\n",
		res.Shape, res.Policy, res.Virtual.Round(time.Minute), res.Recrawls, res.PageTime.Round(time.Second))
	fmt.Fprintf(w, "page freshness (weighted by in-links) over %d pages at %.3f requests per page per hour: lidi %.3f, uniform %.3f, optimal %.3f (lidi − uniform %+.3f, lidi/optimal %.3f), the references within the turns the crawl's %d other requests left; given all the turns, uniform %.3f, optimal %.3f\n",
		sc.Pages, sc.RequestsPerPageHour, sc.Freshness, sc.Uniform, sc.Optimal, sc.Freshness-sc.Uniform, sc.Freshness/sc.Optimal,
		sumOthers(res.Others), res.AllTurns.Uniform, res.AllTurns.Optimal)
	if float64(sc.Requests) > min(sc.UniformRequests, sc.OptimalRequests)+0.5 {
		fmt.Fprintf(w, "the references within the turns left spent fewer requests than the crawl's %d to the scored pages (its sites' turns left add up to less): uniform %.0f, optimal %.0f\n",
			sc.Requests, sc.UniformRequests, sc.OptimalRequests)
	}
	if res.NewArticles > 0 {
		fmt.Fprintf(w, "news: %.0f%% of %d new articles found within one recrawl of their home page\n", 100*res.NewFound, res.NewArticles)
	}
	if ps := res.Planner; ps.Pages > 0 {
		fmt.Fprintf(w, "the page-level planner simulated on the same pages at %.3f requests per page per hour: %.3f, uniform %.3f, optimal %.3f (planner − uniform %+.3f, planner/optimal %.3f)\n",
			ps.RequestsPerPageHour, ps.Freshness, ps.Uniform, ps.Optimal, ps.Freshness-ps.Uniform, ps.Freshness/ps.Optimal)
	}
	fmt.Fprintf(w, "witness: %d politeness or robots.txt violations\n", res.Violations)
	printSiteLoss(w, res)
	if res.Sim == nil {
		return
	}
	fmt.Fprintf(w, "%-14s %10s %10s\n", "", "real", "simulated")
	fmt.Fprintf(w, "%-14s %10.3f %10.3f\n", "freshness", res.Freshness, res.SimFreshness)
	fmt.Fprintf(w, "%-14s %10.3f %10s\n", "page freshness", res.PageFreshness, "")
	fmt.Fprintf(w, "freshness curves (channels), every virtual hour after the warm-up; |real − simulated| over the %d samples every %v: mean %.3f, max %.3f\n",
		len(res.SimCurve), liveStep, res.CurveMeanDiff, res.CurveMaxDiff)
	fmt.Fprintf(w, "  %6s %8s %8s\n", "hour", "real", "sim")
	for i, p := range res.SimCurve {
		if p.At%time.Hour != 0 {
			continue
		}
		real := res.Curve[slices.IndexFunc(res.Curve, func(q FreshPoint) bool { return q.At == p.At })]
		fmt.Fprintf(w, "  %6.0f %8.3f %8.3f\n", p.At.Hours(), real.Channels, res.SimCurve[i].Channels)
	}
	fmt.Fprintf(w, "group intervals (minutes), real at the end / simulated time-average:\n")
	for i, g := range res.Groups {
		sim := "-"
		if i < len(res.Sim.Groups) {
			sim = minutes(res.Sim.Groups[i].Interval)
		}
		fmt.Fprintf(w, "  group %d: %d channels, %s / %s\n", i, g.Channels, minutes(g.Interval), sim)
	}
}

// writeRecrawlLive writes the curves of every policy to recrawl_live.csv
// and recrawl_live.png in dir.
func writeRecrawlLive(dir string, runs []*RecrawlLiveResult) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("changes,policy,virtual_h,channel_freshness,page_freshness,sim_channel_freshness\n")
	for _, res := range runs {
		sim := map[time.Duration]float64{}
		for _, p := range res.SimCurve {
			sim[p.At] = p.Channels
		}
		for _, p := range res.Curve {
			s := ""
			if f, ok := sim[p.At]; ok {
				s = strconv.FormatFloat(f, 'f', 4, 64)
			}
			b.WriteString(string(res.Shape) + "," + string(res.Policy) + "," + strconv.FormatFloat(p.At.Hours(), 'f', 3, 64) + "," +
				strconv.FormatFloat(p.Channels, 'f', 4, 64) + "," + strconv.FormatFloat(p.Pages, 'f', 4, 64) + "," + s + "\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "recrawl_live.csv"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "recrawl_live.png"))
	if err != nil {
		return err
	}
	if err := plotRecrawlLive(f, runs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// plotRecrawlLive draws a panel per policy: the real crawl's channel
// freshness and the simulation's over virtual time.
func plotRecrawlLive(w io.Writer, runs []*RecrawlLiveResult) error {
	row := make([]*plot.Plot, 0, len(runs))
	for _, res := range runs {
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, %s: mean |diff| %.3f", res.Shape, res.Policy, res.CurveMeanDiff)
		p.X.Label.Text = "virtual hours after the warm-up"
		p.Y.Label.Text = "freshness"
		p.Y.Min, p.Y.Max = 0, 1
		p.Add(plotter.NewGrid())
		for i, curve := range [][]FreshPoint{res.Curve, res.SimCurve} {
			xys := make(plotter.XYs, 0, len(curve))
			for _, pt := range curve {
				xys = append(xys, plotter.XY{X: pt.At.Hours(), Y: pt.Channels})
			}
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			l.LineStyle.Color = rankColors[i%len(rankColors)]
			l.LineStyle.Width = vg.Points(1)
			p.Add(l)
			p.Legend.Add([]string{"real crawl", "simulation"}[i], l)
		}
		p.Legend.Top = true
		row = append(row, p)
	}
	return drawGrid(w, [][]*plot.Plot{row}, 8*vg.Centimeter, 0.8)
}

// fmtNaN formats a figure with three decimals, or "-" for NaN.
func fmtNaN(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// fmtShare formats a share of n things, or "-" when there were none.
func fmtShare(x float64, n int) string {
	if n == 0 {
		return "-"
	}
	return fmtNaN(x)
}

// lossKeys are the key=value pairs that take the real crawl's loss against
// its planner apart (policy pages only): the planner alone, with the true
// and with the crawl's weights, and with the site turns discovery left
// (PlannerShared), how far the crawl's weights are from the true ones,
// how late its recrawls came and the share of them spent on pages warming
// up.
func (res *RecrawlLiveResult) lossKeys() string {
	if res.Planner.Pages == 0 || !res.Policy.PerPage() {
		return ""
	}
	l := res.Late
	perFetch := func(d time.Duration) string {
		if l.Fetched == 0 {
			return "-"
		}
		return strconv.FormatFloat((d / time.Duration(l.Fetched)).Minutes(), 'f', 1, 64)
	}
	ofInterval, overHalf, warm, early := math.NaN(), l.Over(slices.Index(recrawl.LateBounds[:], 0.5)), math.NaN(), math.NaN()
	if l.Fetched > 0 {
		ofInterval = l.OfInterval / float64(l.Fetched)
	}
	if l.Released > 0 {
		warm = float64(l.Warm) / float64(l.Released)
		early = float64(l.Early) / float64(l.Released)
	}
	return fmt.Sprintf(" planner=%.3f planner_crawl_weights=%.3f planner_shared=%.3f weight_tv=%s weight_tv_end=%s late_pace_min=%s late_queue_min=%s late_of_interval=%s late_over_half=%s warm_share=%s early_share=%s verdict_missed=%s verdict_false=%s",
		res.Planner.Freshness, res.PlannerCrawlWeights, res.PlannerShared, fmtNaN(res.WeightDistance), fmtNaN(res.WeightAtEnd),
		perFetch(l.Pace), perFetch(l.Queue), fmtNaN(ofInterval), fmtNaN(overHalf), fmtNaN(warm), fmtNaN(early), fmtNaN(res.VerdictMissed), fmtNaN(res.VerdictFalse))
}

// printSiteLoss prints, for the sites where the crawl lost most to the
// optimal schedule, each one's part: its scored pages, the turns its
// politeness allows in the window (all, and those the crawl's fetches of
// pages not scored left), the requests to its scored pages of the crawl,
// its planner (on all the turns and on those left), and the optimal (on
// all and on those left), and the in-link-weighted freshness each
// reached there, in thousandths of the whole's.
func printSiteLoss(w io.Writer, res *RecrawlLiveResult) {
	if res.Planner.Pages == 0 || len(res.Scores.Sites) == 0 {
		return
	}
	at := func(sc scheduleScores, site int) siteScore {
		i, ok := slices.BinarySearchFunc(sc.Sites, site, func(a siteScore, s int) int { return a.Site - s })
		if !ok {
			return siteScore{}
		}
		return sc.Sites[i]
	}
	sites := slices.Clone(res.Scores.Sites)
	slices.SortFunc(sites, func(a, b siteScore) int {
		return cmp.Compare(b.OptimalFresh-b.Fresh, a.OptimalFresh-a.Fresh)
	})
	fmt.Fprintf(w, "per site, the largest losses to the optimal first: requests in the window (crawl / planner / planner on the turns left / optimal / optimal on the turns left), and freshness ×1000 of the whole's\n")
	fmt.Fprintf(w, "  %4s %5s %6s %6s %6s %6s | %5s %5s %5s %5s %5s | %5s %5s %5s %5s %5s\n", "site", "pages", "weight", "turns", "left", "other",
		"crawl", "plan", "plan2", "opt", "opt2", "crawl", "plan", "plan2", "opt", "opt2")
	var rest [10]float64
	for i, ss := range sites {
		pl, ps, all := at(res.Planner, ss.Site), at(res.PlannerSharedScores, ss.Site), at(res.AllTurns, ss.Site)
		row := [10]float64{float64(ss.Requests), float64(pl.Requests), float64(ps.Requests), float64(all.Optimal), float64(ss.Optimal),
			1000 * ss.Fresh, 1000 * pl.Fresh, 1000 * ps.Fresh, 1000 * all.OptimalFresh, 1000 * ss.OptimalFresh}
		if i >= 8 {
			for k := range rest {
				rest[k] += row[k]
			}
			continue
		}
		fmt.Fprintf(w, "  %4d %5d %6.3f %6d %6d %6d | %5.0f %5.0f %5.0f %5.0f %5.0f | %5.1f %5.1f %5.1f %5.1f %5.1f\n", ss.Site, ss.Pages, ss.Weight, all.Cap, ss.Cap, res.Others[ss.Site],
			row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9])
	}
	fmt.Fprintf(w, "the plan's budget, recrawls an hour, every virtual hour:")
	for _, b := range res.Budgets {
		fmt.Fprintf(w, " %.0f", b)
	}
	fmt.Fprintln(w)
	// The site that lost most, every two virtual hours after the warm-up:
	// its scored pages' fetches, its first fetches (discovery), its other
	// pages' recrawls.
	top := sites[0].Site
	var slots [][3]int
	for p, ts := range res.Copies {
		if res.siteOf(p) != top {
			continue
		}
		scored := len(ts) > 0 && ts[0] <= res.WarmEnd
		for i, t := range ts {
			if t <= res.WarmEnd {
				continue
			}
			k := int((t - res.WarmEnd) / (2 * time.Hour))
			for len(slots) <= k {
				slots = append(slots, [3]int{})
			}
			switch {
			case scored:
				slots[k][0]++
			case i == 0:
				slots[k][1]++
			default:
				slots[k][2]++
			}
		}
	}
	var times []time.Duration
	for p, ts := range res.Copies {
		if res.siteOf(p) == top {
			for _, t := range ts {
				if t > res.WarmEnd {
					times = append(times, t)
				}
			}
		}
	}
	slices.Sort(times)
	if len(times) > 2 {
		gaps := make([]time.Duration, 0, len(times)-1)
		for i := 1; i < len(times); i++ {
			gaps = append(gaps, times[i]-times[i-1])
		}
		slices.Sort(gaps)
		fmt.Fprintf(w, "site %d: %d fetches after the warm-up, %v apart at the median, %v at the 10th percentile (virtual)\n",
			top, len(times), gaps[len(gaps)/2].Round(time.Second), gaps[len(gaps)/10].Round(time.Second))
	}
	var ws [2]float64
	var ns [2]int
	for p, ts := range res.Copies {
		if res.siteOf(p) == top && len(ts) > 0 {
			k := 0
			if ts[0] > res.WarmEnd {
				k = 1
			}
			ws[k] += res.weight(p)
			ns[k]++
		}
	}
	if ns[0] > 0 && ns[1] > 0 {
		fmt.Fprintf(w, "site %d: %d scored pages of mean in-link weight %.2f, %d found after the warm-up of %.2f\n", top, ns[0], ws[0]/float64(ns[0]), ns[1], ws[1]/float64(ns[1]))
	}
	fmt.Fprintf(w, "site %d every two virtual hours, its scored pages' fetches / first fetches / other recrawls:", top)
	for _, sl := range slots {
		fmt.Fprintf(w, " %d/%d/%d", sl[0], sl[1], sl[2])
	}
	fmt.Fprintln(w)
	if res.web != nil {
		printSiteAllocation(w, res.web, res, top)
	}
	if len(sites) > 8 {
		fmt.Fprintf(w, "  %4s %5s %6s %6s %6s %6s | %5.0f %5.0f %5.0f %5.0f %5.0f | %5.1f %5.1f %5.1f %5.1f %5.1f\n", "rest", "", "", "", "", "",
			rest[0], rest[1], rest[2], rest[3], rest[4], rest[5], rest[6], rest[7], rest[8], rest[9])
	}
}
