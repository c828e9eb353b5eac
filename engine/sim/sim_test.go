package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/rank"
	"lidi/engine/simweb"
)

// handWeb builds a web from an edge list; pages are 0..len(site)-1.
func handWeb(t testing.TB, site []int32, edges [][2]int32, sites []Site, seeds []int32) *Web {
	t.Helper()
	n := len(site)
	g, err := rank.NewGraph(n, func(yield func(int32, int32) bool) {
		for _, e := range edges {
			if !yield(e[0], e[1]) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	w := &Web{Graph: g, PageSite: site, PageSize: make([]int32, n), PageRank: make([]float64, n), Sites: sites, Seeds: seeds}
	for i := range w.PageSize {
		w.PageSize[i] = 1000
		w.PageRank[i] = 1 / float64(n)
	}
	return w
}

func pagesOf(r *Result) []int32 {
	out := make([]int32, len(r.Fetches))
	for i, f := range r.Fetches {
		out[i] = f.Page
	}
	return out
}

type span struct{ start, end time.Duration }

func spansOf(r *Result) []span {
	out := make([]span, len(r.Fetches))
	for i, f := range r.Fetches {
		out[i] = span{f.Start, f.End}
	}
	return out
}

func ms(v ...int) []span {
	out := make([]span, len(v)/2)
	for i := range out {
		out[i] = span{time.Duration(v[2*i]) * time.Millisecond, time.Duration(v[2*i+1]) * time.Millisecond}
	}
	return out
}

// TestTimeline checks fetch order and virtual times computed by hand.
//
// Site A (pages 0, 1, 2) answers after 100 ms, site B (pages 3, 4) at once;
// every page is 1000 bytes; the crawler's link carries 1000 bytes/s, shared
// equally by transfers in progress; w = 10 s; Length. A visit's first request
// pays the latency twice (connection, then request).
func TestTimeline(t *testing.T) {
	sites := []Site{{Latency: 100 * time.Millisecond}, {}}
	chain := handWeb(t, []int32{0, 0, 0, 1, 1}, [][2]int32{{0, 1}, {0, 3}, {1, 2}, {3, 4}, {2, 0}}, sites, []int32{0})
	fan := handWeb(t, []int32{0, 0, 0, 1, 1}, [][2]int32{{0, 1}, {0, 2}, {0, 3}, {3, 4}, {1, 0}}, sites, []int32{0})
	tests := []struct {
		name  string
		web   *Web
		opt   Options
		order []int32
		times []span
	}{
		{
			// 0: A at 0, first byte 0.2, done 1.2; finds 1 (A) and 3 (B).
			// 3: B is ready at 1.2, done 2.2; finds 4. A waits until
			// 11.2: 1 done 12.4, finds 2. B ready since 12.2: 4 done 13.4.
			// A again at 22.4: 2 done 23.6.
			name: "r=1 c=1", web: chain,
			opt:   Options{Robots: 1, PagesPerVisit: 1, Delay: 10 * time.Second, Bandwidth: 1000},
			order: []int32{0, 3, 1, 4, 2},
			times: ms(0, 1200, 1200, 2200, 11200, 12400, 12400, 13400, 22400, 23600),
		},
		{
			// As above until 11.2, when A's page 1 starts (first byte
			// 11.4). At 12.2 B's page 4 starts on the second robot with
			// 200 bytes of page 1 left: both get 500 bytes/s, page 1 ends
			// at 12.6, page 4 has 800 bytes left at full speed: 13.4.
			// A again at 22.6: 2 done 23.8.
			name: "r=2 c=1 shares the link", web: chain,
			opt:   Options{Robots: 2, PagesPerVisit: 1, Delay: 10 * time.Second, Bandwidth: 1000},
			order: []int32{0, 3, 1, 4, 2},
			times: ms(0, 1200, 1200, 2200, 11200, 12600, 12200, 13400, 22600, 23800),
		},
		{
			// 0 finds 1, 2 (A) and 3 (B). 3 at 1.2-2.2 finds 4. At 11.2
			// the visit to A takes 1 and 2: 1 at 11.2 (first byte 11.4,
			// done 12.4), 2 at 22.4 (one latency: 22.5, done 23.5). B
			// waits for the only robot: 4 at 23.5-24.5.
			name: "r=1 c=2 keeps the connection", web: fan,
			opt:   Options{Robots: 1, PagesPerVisit: 2, Delay: 10 * time.Second, Bandwidth: 1000},
			order: []int32{0, 3, 1, 2, 4},
			times: ms(0, 1200, 1200, 2200, 11200, 12400, 22400, 23500, 23500, 24500),
		},
		{
			// Unlimited link: transfers take no time, only latency and w.
			// 0: 0-0.2. 3: 0.2-0.2. 1: 10.2-10.4. 4: 10.4 (B ready
			// since 10.2). 2: 20.4-20.6.
			name: "unlimited bandwidth", web: chain,
			opt:   Options{Robots: 1, PagesPerVisit: 1, Delay: 10 * time.Second},
			order: []int32{0, 3, 1, 4, 2},
			times: ms(0, 200, 200, 200, 10200, 10400, 10400, 10400, 20400, 20600),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), tt.web, frontier.Length{}, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := pagesOf(res); !slices.Equal(got, tt.order) {
				t.Errorf("order %v, want %v", got, tt.order)
			}
			if got := spansOf(res); !slices.Equal(got, tt.times) {
				t.Errorf("times\n got %v\nwant %v", got, tt.times)
			}
			if res.Elapsed != tt.times[len(tt.times)-1].end {
				t.Errorf("elapsed %v", res.Elapsed)
			}
		})
	}
}

// TestStrategyOrders runs every strategy on one hand-made web with no
// delay, latency or bandwidth limit, so that only the ordering counts.
//
// Site 0 holds pages 0, 1, 2 and site 1 pages 3, 4, 5. Links: 0 -> 1, 2, 3;
// 1 -> 3, 4; 3 -> 5. The oracle's PageRank is made up.
func TestStrategyOrders(t *testing.T) {
	w := handWeb(t, []int32{0, 0, 0, 1, 1, 1}, [][2]int32{{0, 1}, {0, 2}, {0, 3}, {1, 3}, {1, 4}, {3, 5}}, []Site{{}, {}}, []int32{0})
	w.PageRank = []float64{0.05, 0.1, 0.3, 0.2, 0.05, 0.3}
	tests := []struct {
		strategy string
		want     []int32
	}{
		// Pages by oracle PageRank among those known: 2 (0.3), 3 (0.2)
		// which reveals 5 (0.3), then 1 (0.1) which reveals 4.
		{"optimal", []int32{0, 2, 3, 5, 1, 4}},
		// Breadth-first: depth 1 (1, 2, 3), then depth 2 (4, 5); site 0
		// wins ties as it was found first.
		{"depth", []int32{0, 1, 2, 3, 4, 5}},
		// After 0: site 0 has 2 pending, site 1 one. After 1: site 1 has
		// 3 and 4. After 3: site 1 has 4 and 5. After 4: one each, site 0
		// first.
		{"length", []int32{0, 1, 3, 4, 2, 5}},
		// Temporary scores: 1, 2, 3 get 1/3 from the seed; 1 passes 1/6
		// to 3 (now 1/2) and 4; 3 passes 1/2 to 5; then 2 (1/3), 4 (1/6).
		{"partial", []int32{0, 1, 3, 5, 2, 4}},
		// K = 2. Batches: {0}; {1, 2} (ties, first found); {3, 4}
		// (3 has two in-links); {5}.
		{"batch", []int32{0, 1, 2, 3, 4, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.strategy, func(t *testing.T) {
			s, err := NewStrategy(tt.strategy, w, 2)
			if tt.strategy == "partial" {
				s = frontier.NewPartial(100) // no recomputation: temporary scores only
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := Run(context.Background(), w, s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got := pagesOf(res); !slices.Equal(got, tt.want) {
				t.Errorf("order %v, want %v", got, tt.want)
			}
		})
	}
}

func smallSimweb(t testing.TB) *Web {
	t.Helper()
	sw, err := simweb.Generate(simweb.Options{Seed: 7, Sites: 40, Pages: 1500,
		LatencyMedian: 200 * time.Millisecond, BandwidthMedian: 20_000})
	if err != nil {
		t.Fatal(err)
	}
	w := FromSimweb(sw, 3)
	if w.PageRank, err = w.CollectionRank(); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestInvariants crawls a small simweb with every strategy and several
// r and c, and checks what must hold whatever the order.
func TestInvariants(t *testing.T) {
	w := smallSimweb(t)
	const delay = 15 * time.Second
	for _, name := range []string{"length", "depth", "optimal", "batch", "partial"} {
		for _, rc := range [][2]int{{1, 1}, {8, 1}, {64, 5}} {
			t.Run(fmt.Sprintf("%s/r=%d/c=%d", name, rc[0], rc[1]), func(t *testing.T) {
				s, err := NewStrategy(name, w, 100)
				if err != nil {
					t.Fatal(err)
				}
				opt := Options{Robots: rc[0], PagesPerVisit: rc[1], Delay: delay, Bandwidth: 200_000}
				res, err := Run(context.Background(), w, s, opt)
				if err != nil {
					t.Fatal(err)
				}
				checkInvariants(t, w, res, opt)
			})
		}
	}
}

func checkInvariants(t *testing.T, w *Web, res *Result, opt Options) {
	t.Helper()
	// Every page of the collection once, and nothing else: robots.txt is
	// obeyed.
	want, n := w.Collection()
	if res.Pages() != n {
		t.Fatalf("fetched %d pages, want the %d of the collection (of %d)", res.Pages(), n, w.NumPages())
	}
	seen := make([]bool, w.NumPages())
	for _, f := range res.Fetches {
		if seen[f.Page] || !want[f.Page] {
			t.Fatalf("page %d fetched twice or outside the collection", f.Page)
		}
		seen[f.Page] = true
		if f.Site != w.PageSite[f.Page] {
			t.Fatalf("page %d fetched as site %d", f.Page, f.Site)
		}
	}
	// Coverage rises monotonically and ends at 1; fetches end in order.
	prev := 0.0
	for i, f := range res.Fetches {
		if f.Coverage < prev {
			t.Fatalf("coverage falls at fetch %d: %v < %v", i, f.Coverage, prev)
		}
		prev = f.Coverage
		if i > 0 && f.End < res.Fetches[i-1].End {
			t.Fatalf("fetch %d ends at %v, before fetch %d (%v)", i, f.End, i-1, res.Fetches[i-1].End)
		}
	}
	if math.Abs(prev-1) > 1e-9 {
		t.Fatalf("final coverage %v, want 1", prev)
	}
	// Politeness: per site, each request starts at least w after the
	// previous one ended, so no two are ever in flight together.
	bySite := make(map[int32][]Fetch)
	for _, f := range res.Fetches {
		bySite[f.Site] = append(bySite[f.Site], f)
	}
	for s, fs := range bySite {
		slices.SortFunc(fs, func(a, b Fetch) int { return int(a.Start - b.Start) })
		for i := 1; i < len(fs); i++ {
			if gap := fs[i].Start - fs[i-1].End; gap < opt.Delay {
				t.Fatalf("site %d: request at %v only %v after the previous ended (w = %v)", s, fs[i].Start, gap, opt.Delay)
			}
		}
	}
	// Never more than r requests in flight.
	type edge struct {
		at    time.Duration
		delta int
	}
	var edges []edge
	for _, f := range res.Fetches {
		edges = append(edges, edge{f.Start, +1}, edge{f.End, -1})
	}
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta // ends before starts at the same instant
	})
	inFlight := 0
	for _, e := range edges {
		inFlight += e.delta
		if inFlight > opt.Robots {
			t.Fatalf("%d requests in flight at %v with r = %d", inFlight, e.at, opt.Robots)
		}
	}
}

func TestDeterministic(t *testing.T) {
	w := smallSimweb(t)
	for _, name := range []string{"length", "partial", "batch"} {
		var runs [2]*Result
		for i := range runs {
			s, err := NewStrategy(name, w, 50)
			if err != nil {
				t.Fatal(err)
			}
			if runs[i], err = Run(context.Background(), w, s, Options{Robots: 16, PagesPerVisit: 2, Delay: 5 * time.Second, Bandwidth: 100_000}); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(runs[0].Fetches, runs[1].Fetches) {
			t.Errorf("%s: two runs differ", name)
		}
	}
}

func TestMaxPagesAndCancel(t *testing.T) {
	w := smallSimweb(t)
	res, err := Run(context.Background(), w, frontier.Length{}, Options{Robots: 4, Delay: time.Second, MaxPages: 100})
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages() != 100 || res.Elapsed != res.Fetches[99].End {
		t.Errorf("MaxPages 100: %d pages, elapsed %v", res.Pages(), res.Elapsed)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, w, frontier.Length{}, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
}

func TestValidate(t *testing.T) {
	w := handWeb(t, []int32{0, 1}, [][2]int32{{0, 1}}, []Site{{}, {}}, []int32{0})
	bad := []func(w *Web){
		func(w *Web) { w.PageSite[1] = 2 },
		func(w *Web) { w.PageSize = w.PageSize[:1] },
		func(w *Web) { w.PageRank = nil },
		func(w *Web) { w.Seeds = []int32{5} },
		func(w *Web) { w.Sites[0].Latency = -1 },
		func(w *Web) { w.Graph = nil },
	}
	for i, mutate := range bad {
		c := *w
		c.PageSite = slices.Clone(w.PageSite)
		c.Sites = slices.Clone(w.Sites)
		mutate(&c)
		if _, err := Run(context.Background(), &c, frontier.Length{}, Options{}); !errors.Is(err, ErrBadWeb) {
			t.Errorf("case %d: err %v, want ErrBadWeb", i, err)
		}
	}
	if _, err := Run(context.Background(), w, frontier.Length{}, Options{Delay: -1}); err == nil {
		t.Error("negative delay accepted")
	}
}

func TestLoadMatchesSimweb(t *testing.T) {
	sw, err := simweb.Generate(simweb.Options{Seed: 3, Sites: 25, Pages: 600})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := sw.Export(dir); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir, LoadOptions{Seeds: 2, PageSize: 5000})
	if err != nil {
		t.Fatal(err)
	}
	direct := FromSimweb(sw, 2)
	// An export carries simweb's robots.txt truth, not lidi's reading.
	for p := range direct.Disallowed {
		direct.Disallowed[p] = sw.Page(p).Disallowed
	}
	if !slices.Equal(loaded.PageSite, direct.PageSite) || !slices.Equal(loaded.Seeds, direct.Seeds) {
		t.Fatal("loaded sites or seeds differ from simweb's")
	}
	for p := range direct.PageRank {
		if math.Abs(loaded.PageRank[p]-direct.PageRank[p]) > 1e-15 {
			t.Fatalf("page %d: PageRank %v, want %v", p, loaded.PageRank[p], direct.PageRank[p])
		}
		if !slices.Equal(loaded.Graph.Out(int32(p)), direct.Graph.Out(int32(p))) {
			t.Fatalf("page %d: links differ", p)
		}
	}
	// With no latency and an unlimited link, sizes do not matter: the
	// same crawl either way.
	var runs [2]*Result
	for i, w := range []*Web{loaded, direct} {
		if runs[i], err = Run(context.Background(), w, frontier.Length{}, Options{Robots: 3, Delay: time.Second}); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(pagesOf(runs[0]), pagesOf(runs[1])) || !slices.Equal(spansOf(runs[0]), spansOf(runs[1])) {
		t.Error("crawl of the loaded web differs")
	}
	if _, err := Load(t.TempDir(), LoadOptions{}); err == nil {
		t.Error("empty directory loaded")
	}
}

func TestFromSimwebSizes(t *testing.T) {
	sw, err := simweb.Generate(simweb.Options{Seed: 5, Sites: 10, Pages: 200})
	if err != nil {
		t.Fatal(err)
	}
	w := FromSimweb(sw, 1)
	for _, p := range []int{0, 57, 199} {
		if got, want := int(w.PageSize[p]), len(sw.Render(p)); got != want {
			t.Errorf("page %d size %d, want %d", p, got, want)
		}
	}
}

// TestRobots checks how robots.txt is modelled, with times computed by hand.
//
// Site A (pages 0, 1, 2, 4; latency 100 ms) disallows page 1, the only page
// linking to 4; site B (page 3, no latency) answers robots.txt with a 5xx.
// The link is unlimited, w = 10 s, r = 1, c = 1, Length.
//
// 0.0-0.2: A's robots.txt (connection and request). 10.2-10.3: page 0,
// which finds 1, 2 (A) and 3 (B). 10.3: B's robots.txt fails: B is given up
// and 3 dropped. 20.3: A's next visit takes 1, drops it without a request
// and ends; the next one takes 2 on a new connection: 20.3-20.5.
func TestRobots(t *testing.T) {
	sites := []Site{{Latency: 100 * time.Millisecond, Robots: RobotsOK, RobotsSize: 50}, {Robots: RobotsError}}
	w := handWeb(t, []int32{0, 0, 0, 1, 0}, [][2]int32{{0, 1}, {0, 2}, {0, 3}, {1, 4}}, sites, []int32{0})
	w.Disallowed = []bool{false, true, false, false, false}
	res, err := Run(context.Background(), w, frontier.Length{}, Options{Delay: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := pagesOf(res), []int32{0, 2}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if got, want := spansOf(res), ms(10200, 10300, 20300, 20500); !slices.Equal(got, want) {
		t.Errorf("times\n got %v\nwant %v", got, want)
	}
	if res.Skipped != 2 || res.Parked != 1 || res.Discovered != 4 || res.Visits != 4 {
		t.Errorf("skipped %d, parked %d, discovered %d, visits %d; want 2, 1, 4, 4", res.Skipped, res.Parked, res.Discovered, res.Visits)
	}
	if in, n := w.Collection(); n != 2 || !in[0] || !in[2] {
		t.Errorf("collection %v (%d pages), want pages 0 and 2", in, n)
	}
	pr, err := w.CollectionRank()
	if err != nil {
		t.Fatal(err)
	}
	if pr[1] != 0 || pr[3] != 0 || pr[4] != 0 || math.Abs(pr[0]+pr[2]-1) > 1e-9 {
		t.Errorf("collection PageRank %v", pr)
	}
	// Batch must not wait for pages that are dropped.
	for _, name := range []string{"batch", "partial"} {
		s, err := NewStrategy(name, w, 1)
		if err != nil {
			t.Fatal(err)
		}
		if res, err := Run(context.Background(), w, s, Options{Delay: 10 * time.Second}); err != nil || res.Pages() != 2 {
			t.Errorf("%s: %v, %d pages", name, err, res.Pages())
		}
	}
}
