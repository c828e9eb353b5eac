package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/engine/recrawl"
	"lidi/engine/simweb"
	"lidi/storage"
)

func TestRecrawlLiveSmall(t *testing.T) {
	t.Parallel() // 12 s of wall time on its web's clock, mostly waiting
	var o RecrawlLiveOptions
	fs := flag.NewFlagSet("recrawl-live", flag.ContinueOnError)
	o.RegisterFlags(fs)
	out := t.TempDir()
	if err := fs.Parse([]string{"--sites", "12", "--pages", "150", "--time-scale", "1200", "--duration", "12s",
		"--warmup", "2h", "--initial-interval", "30m", "--delay", "20ms", "--policy", "iir,pages", "--out", out}); err != nil {
		t.Fatal(err)
	}
	o.OpenStore = openTestStore
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	runs, err := RecrawlLive(ctx, o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	res := runs[0]
	if res.Recrawls == 0 || len(res.Curve) < 10 {
		t.Fatalf("%d recrawls, %d curve points\n%s", res.Recrawls, len(res.Curve), log.String())
	}
	sc := res.Scores
	if sc.Pages == 0 || sc.RequestsPerPageHour <= 0 {
		t.Fatalf("scores %+v\n%s", sc, log.String())
	}
	if sc.Optimal < sc.Uniform-0.02 {
		t.Errorf("the optimal schedule (%.3f) loses to the uniform one (%.3f)", sc.Optimal, sc.Uniform)
	}
	if res.Violations != 0 {
		t.Errorf("%d politeness or robots.txt violations on the witness", res.Violations)
	}
	for _, f := range []float64{res.Freshness, res.SimFreshness, res.PageFreshness, sc.Freshness, sc.Uniform, sc.Optimal} {
		if !(f > 0 && f <= 1) {
			t.Errorf("freshness %v outside (0, 1]\n%s", f, log.String())
		}
	}
	// The curves are compared at the same times: every real point after
	// the simulation's first sample has its simulated twin.
	if len(res.SimCurve) < len(res.Curve)-1 {
		t.Errorf("%d simulated points for %d real ones", len(res.SimCurve), len(res.Curve))
	}
	var sum float64
	for i, p := range res.SimCurve {
		if i > 0 && p.At <= res.SimCurve[i-1].At || !(p.Channels >= 0 && p.Channels <= 1) {
			t.Fatalf("simulated curve point %d: %+v", i, p)
		}
		for _, q := range res.Curve {
			if q.At == p.At {
				sum += math.Abs(q.Channels - p.Channels)
			}
		}
	}
	if mean := sum / float64(len(res.SimCurve)); math.Abs(mean-res.CurveMeanDiff) > 1e-9 || res.CurveMaxDiff < mean {
		t.Errorf("curve differences: mean %v (recomputed %v), max %v", res.CurveMeanDiff, mean, res.CurveMaxDiff)
	}
	// The page scheduler recrawls too, politely; the simulation, which
	// knows channels only, is not run for it.
	pages := runs[1]
	if pages.Policy != recrawl.Pages || pages.Recrawls == 0 || pages.Scores.Pages == 0 || pages.Violations != 0 || pages.Sim != nil {
		t.Errorf("policy %s: %d recrawls, %d pages scored, %d violations, simulated %v", pages.Policy, pages.Recrawls, pages.Scores.Pages, pages.Violations, pages.Sim != nil)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	last := lines[len(lines)-2] // iir's, before pages'
	if !strings.HasPrefix(lines[len(lines)-1], "changes=sarss policy=pages freshness=") || !strings.Contains(lines[len(lines)-1], " sim_freshness=- ") {
		t.Errorf("last line %q is not pages' key=value line", lines[len(lines)-1])
	}
	if !strings.HasPrefix(last, "changes=sarss policy=iir freshness=") || !strings.Contains(last, " sim_freshness=") ||
		!strings.Contains(last, " uniform=") || !strings.Contains(last, " optimal=") || !strings.Contains(last, " requests_per_page_hour=") {
		t.Errorf("last line %q is not the key=value line", last)
	}
	if !strings.Contains(last, " curve_mean_diff=") {
		t.Errorf("last line %q does not compare the curves", last)
	}
	for _, name := range []string{"recrawl_live.csv", "recrawl_live.png"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestNewFound(t *testing.T) {
	web, err := simweb.Generate(simweb.Options{Seed: 3, Sites: 8, Pages: 80, Change: simweb.ShapeNews.Options()})
	if err != nil {
		t.Fatal(err)
	}
	ch := web.Changes()
	site := -1
	for c := range ch.Channels() {
		if ch.News(c) {
			site = c
			break
		}
	}
	const from, to = 10 * time.Hour, 40 * time.Hour
	pub := ch.Articles(site, to)
	var inWindow []int // article numbers published in the window
	for i, at := range pub {
		if at > from {
			inWindow = append(inWindow, i+1)
		}
	}
	if len(inWindow) < 4 {
		t.Fatalf("%d articles in the window", len(inWindow))
	}
	// The home page fetched hourly; the first article found in time, the
	// second too late, the third never; the rest in time.
	var front []time.Duration
	for at := from; at <= to-time.Hour; at += time.Hour {
		front = append(front, at)
	}
	home := web.Site(site).HomePage
	pages := map[int][]time.Duration{home: front}
	articles := map[[2]int]time.Duration{}
	counted, want := 0, 0
	for n, k := range inWindow {
		p := pub[k-1]
		if p > front[len(front)-1] {
			continue // published after the last fetch: not counted
		}
		counted++
		next := (p/time.Hour + 1) * time.Hour // the first fetch after it
		switch n {
		case 1:
			articles[[2]int{site, k}] = next + 2*time.Hour
		case 2:
		default:
			articles[[2]int{site, k}] = next + time.Minute
			want++
		}
	}
	got, n := newFound(web, pages, articles, from, to)
	if n != counted || math.Abs(got-float64(want)/float64(counted)) > 1e-9 {
		t.Errorf("newFound = %v of %d, want %v of %d", got, n, float64(want)/float64(counted), counted)
	}
}

// openTestStore opens a crawl database for the benchmarks' real crawls.
func openTestStore(path string) (record.Store, io.Closer, error) {
	db, err := storage.Open(path, storage.Options{})
	return db, db, err
}

// The key=value line gives the goal's references (within the turns the
// crawl's other requests left) as uniform= and optimal=, the ones given
// all the turns as *_all_turns, for every policy, and what each reference
// spent of the crawl's requests. One scored page on a site of 600 turns,
// 500 of them taken by news articles' fetches, recrawled 300 times: the
// goal's references crawl it 100 times, those given all the turns 300,
// and each scores the page's own changes at that many equal intervals.
func TestScoreLiveGoalLine(t *testing.T) {
	web, err := simweb.Generate(simweb.Options{Seed: 2, Sites: 4, Pages: 80, ExternalLinks: 0.3, Change: simweb.ShapeSARSS.Options()})
	if err != nil {
		t.Fatal(err)
	}
	const d = 200 * time.Hour
	ch := web.Changes()
	page := -1
	for p := range web.NumPages() {
		if ch.ChannelOf(p) == 0 && ch.Rate(p) > 0 {
			page = p
			break
		}
	}
	if page < 0 {
		t.Fatal("no changing page on site 0")
	}
	var crawl, articles []time.Duration
	for k := range 301 {
		crawl = append(crawl, d*time.Duration(k)/300) // 0, then 300 in (0, d]
	}
	for k := range 500 {
		articles = append(articles, d*time.Duration(k+1)/501)
	}
	res := &RecrawlLiveResult{Shape: simweb.ShapeSARSS, Policy: recrawl.IIR}
	res.scoreLive(scheduleInput{web: web, from: 0, to: d, fetches: map[int][]time.Duration{page: crawl},
		gap: func(int) time.Duration { return d / 600 }}, map[int][]time.Duration{0: articles})
	goal, all := res.Scores, res.AllTurns
	changes := streamUntil(ch, page, d)
	for _, c := range []struct {
		name           string
		got, want      float64
		spentU, spentO float64
		x              float64
	}{
		{"goal", goal.Optimal, scheduleFresh(changes, 100, 0, d), goal.UniformRequests, goal.OptimalRequests, 100},
		{"all turns", all.Optimal, scheduleFresh(changes, 300, 0, d), all.UniformRequests, all.OptimalRequests, 300},
	} {
		if c.spentU != c.x || c.spentO != c.x || math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s: the references spent %v / %v requests, optimal %.6f; want %v, %.6f (the page's changes at %v equal intervals)",
				c.name, c.spentU, c.spentO, c.got, c.x, c.want, c.x)
		}
		// The closed form is the mean over the change process; one page's
		// changes over 200 h stray from it (by 0.009 here), less than
		// 100 crawls' form from 300's (0.075).
		if f := poissonFresh(ch.Rate(page), d, c.x); math.Abs(c.got-f) > 0.03 {
			t.Errorf("%s: optimal %.4f, the closed form at %v crawls %.4f", c.name, c.got, c.x, f)
		}
	}
	if goal.Requests != 300 || goal.Uniform != goal.Optimal {
		t.Errorf("the crawl's requests %d, want 300; one page: uniform %.6f = optimal %.6f", goal.Requests, goal.Uniform, goal.Optimal)
	}
	if fmt.Sprintf("%.3f", goal.Optimal) == fmt.Sprintf("%.3f", all.Optimal) {
		t.Fatalf("the set-up: the goal's optimal %.4f and all turns' %.4f print the same", goal.Optimal, all.Optimal)
	}
	line := res.keyValues()
	for _, kv := range []string{
		fmt.Sprintf(" uniform=%.3f optimal=%.3f ", goal.Uniform, goal.Optimal),
		fmt.Sprintf(" uniform_all_turns=%.3f optimal_all_turns=%.3f ", all.Uniform, all.Optimal),
		" requests=300 uniform_requests=100 optimal_requests=100 ",
	} {
		if !strings.Contains(line, kv) {
			t.Errorf("key=value line %q lacks %q", line, kv)
		}
	}
	t.Logf("optimal %.4f (closed form %.4f) within the turns left, %.4f (%.4f) with all", goal.Optimal, poissonFresh(ch.Rate(page), d, 100), all.Optimal, poissonFresh(ch.Rate(page), d, 300))
}
