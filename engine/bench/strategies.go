package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"lidi/engine/dns"
	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/sim"
	"lidi/engine/simweb"
)

// StrategiesOptions sets up `lidi bench strategies`, the reproduction of
// Castillo's chapter 6 (Figures 6.5, 6.6 and 6.13, Table 6.1). The zero
// value is not usable: RegisterFlags sets the defaults, and OpenStore must
// be set (main.go wires it) unless SkipReal is.
type StrategiesOptions struct {
	// The simulated web.
	Sites, Pages  int
	Seed          int64
	Seeds         int           // seed sites' home pages (0: every site, as the chapter)
	Latency       time.Duration // median site latency
	SiteBandwidth int64         // median site bandwidth, bytes per second

	// The crawls of Figures 6.5 and 6.6.
	Strategies    []string
	Robots        []int         // r; the first is the base of Table 6.1
	PagesPerVisit int           // c
	Delay         time.Duration // w
	K             int           // Batch's and Partial's K (0: pages/70, the chapter's middle K)
	Bandwidth     int64         // B of the figures; 0: unlimited (the chapter's high-bandwidth case)
	Step          float64       // CSV sampling step, a fraction of the collection

	// Table 6.1: the Length strategy at each B; the first is the base.
	Bandwidths []int64

	// Figure 6.13: a real crawl over loopback against its simulation.
	SkipReal     bool
	RealSites    int
	RealPages    int
	RealRobots   int
	RealDelay    time.Duration
	RealLatency  time.Duration
	RealStrategy string

	Out              string // directory for the CSV, PNG and text files
	Dir              string // where the real crawl's database goes ("": a temporary directory)
	OpenStore        func(path string) (record.Store, io.Closer, error)
	ProgressInterval time.Duration
}

// RegisterFlags adds the benchmark's flags to fs, with their defaults.
func (o *StrategiesOptions) RegisterFlags(fs *flag.FlagSet) {
	simweb.WebFlags(fs, &o.Sites, 3000, &o.Pages, 200_000, &o.Seed)
	fs.IntVar(&o.Seeds, "seeds", 0, "start from the home pages of this many most popular sites (0: all, as the chapter)")
	fs.DurationVar(&o.Latency, "latency", 250*time.Millisecond, "median site latency")
	fs.Int64Var(&o.SiteBandwidth, "site-bandwidth", 50_000, "median site bandwidth in `bytes/s`")
	o.Strategies = []string{"optimal", "depth", "length", "batch", "partial"}
	fs.Func("strategies", "comma-separated strategies among "+strings.Join(frontier.StrategyNames(), ", ")+" (default "+strings.Join(o.Strategies, ",")+")", func(s string) error {
		o.Strategies = strings.Split(s, ",")
		for _, name := range o.Strategies {
			if _, ok := frontier.LookupStrategy(name); !ok {
				return fmt.Errorf("bench: unknown strategy %q", name)
			}
		}
		return nil
	})
	o.Robots = []int{1, 64, 256}
	fs.Func("r", "comma-separated numbers of robots (default 1,64,256)", func(s string) error {
		return parseList(s, &o.Robots)
	})
	fs.IntVar(&o.PagesPerVisit, "c", 1, "pages per connection")
	fs.DurationVar(&o.Delay, "w", 15*time.Second, "politeness delay between requests to one site")
	fs.IntVar(&o.K, "k", 0, "pages between PageRank recomputations for batch and partial (0: pages/70)")
	fs.Int64Var(&o.Bandwidth, "bandwidth", 0, "crawler bandwidth B of the figures in `bytes/s` (0: unlimited)")
	fs.Float64Var(&o.Step, "step", 0.005, "CSV sampling step, as a fraction of the pages")
	o.Bandwidths = []int64{20_000_000, 2_000_000, 200_000, 20_000, 2_000, 200}
	fs.Func("bandwidths", "comma-separated bandwidths of Table 6.1 in bytes/s (default the chapter's six)", func(s string) error {
		return parseList(s, &o.Bandwidths)
	})
	fs.BoolVar(&o.SkipReal, "skip-real", false, "skip Figure 6.13's real crawl")
	fs.IntVar(&o.RealSites, "real-sites", 400, "sites of Figure 6.13's web")
	fs.IntVar(&o.RealPages, "real-pages", 20_000, "pages of Figure 6.13's web")
	fs.IntVar(&o.RealRobots, "real-r", 64, "robots of Figure 6.13's crawls")
	fs.DurationVar(&o.RealDelay, "real-w", 20*time.Millisecond, "politeness delay of Figure 6.13's crawls")
	fs.DurationVar(&o.RealLatency, "real-latency", 5*time.Millisecond, "median site latency of Figure 6.13's web (served for real)")
	fs.StringVar(&o.RealStrategy, "real-strategy", "length", "strategy of Figure 6.13's crawls: length or depth (the engine's batch and partial take K from its own configuration)")
	fs.StringVar(&o.Out, "out", "bench-strategies", "directory for the CSV files, the chart and the tables")
	dirFlag(fs, &o.Dir, "the real crawl's database")
	progressFlag(fs, &o.ProgressInterval)
}

func parseList[T int | int64](s string, dst *[]T) error {
	var out []T
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil || v < 0 {
			return fmt.Errorf("bench: %q is not a list of numbers", s)
		}
		out = append(out, T(v))
	}
	*dst = out
	return nil
}

// Point is one sample of a coverage curve: after Pages pages (Fraction of
// the collection), the oracle PageRank fetched is Coverage.
type Point struct {
	Pages    int
	Fraction float64
	Coverage float64
}

// Curve is the coverage curve of one crawl.
type Curve struct {
	Robots   int
	Strategy string
	Points   []Point
}

// sampleCurve samples a crawl of total pages (the collection) of which
// fetched were fetched, every step of the collection from 0 to 1 (and the
// last page fetched); cov(n) is the coverage after n pages.
func sampleCurve(cov func(n int) float64, total, fetched int, step float64) []Point {
	pts := []Point{{}}
	for i := 1; ; i++ {
		f := math.Min(float64(i)*step, 1)
		n := min(int(math.Round(f*float64(total))), fetched)
		if n > pts[len(pts)-1].Pages {
			pts = append(pts, Point{Pages: n, Fraction: float64(n) / float64(total), Coverage: cov(n)})
		}
		if f >= 1 || n >= fetched {
			break
		}
	}
	return pts
}

// coverageAt returns a curve's coverage after fraction f of the
// collection: the last sample at or before it.
func coverageAt(pts []Point, f float64) float64 {
	c := 0.0
	for _, p := range pts {
		if p.Fraction > f+1e-9 {
			break
		}
		c = p.Coverage
	}
	return c
}

// Speed is one cell of Table 6.1: the virtual time a Length crawl took at
// bandwidth B with r robots, in all and to fetch half of the collection.
type Speed struct {
	Bandwidth  int64
	Robots     int
	Whole      time.Duration
	Half       time.Duration
	WholeSpeed float64 // speed-up over the base crawl (first r, first B)
	HalfSpeed  float64
}

// speedUps fills WholeSpeed and HalfSpeed: the base crawl's time over
// each crawl's, as the chapter's table (whose base r=1 at 20 MB/s is 1.0).
func speedUps(rows []Speed) {
	if len(rows) == 0 {
		return
	}
	base := rows[0]
	for i := range rows {
		rows[i].WholeSpeed = ratio(base.Whole, rows[i].Whole)
		rows[i].HalfSpeed = ratio(base.Half, rows[i].Half)
	}
}

func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// StrategiesResult is what the benchmark measured.
type StrategiesResult struct {
	Collection int     // pages a complete crawl fetches
	Curves     []Curve // Figures 6.5 and 6.6
	Speeds     []Speed // Table 6.1
	// Figure 6.13 (empty when skipped).
	RealCurve, SimCurve Curve
	RealPages, SimPages int
	RealCollection      int
	MaxDiff             float64 // largest |real - simulated| coverage at equal pages
	MaxDiffAt           int     // pages fetched where it is
	// The same past the first 1% of the collection, where the first
	// visits' order follows the DNS answers' (the simulator has no DNS).
	MaxDiffLater   float64
	MaxDiffLaterAt int
	RealElapsed    time.Duration
	RealOther      int // fetches that did not answer a page with 200
}

// Strategies runs the benchmark and writes coverage.csv, speedup.csv,
// fig6.13.csv, strategies.png and results.txt to o.Out, and the tables to
// out.
func Strategies(ctx context.Context, o StrategiesOptions, out io.Writer) (*StrategiesResult, error) {
	if !o.SkipReal && o.RealStrategy != "length" && o.RealStrategy != "depth" {
		return nil, fmt.Errorf("bench: --real-strategy %q: length or depth", o.RealStrategy)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	var report strings.Builder
	both := io.MultiWriter(out, &report)
	t0 := time.Now()
	_, w, err := simWeb(simweb.Options{Seed: o.Seed, Sites: o.Sites, Pages: o.Pages, LatencyMedian: o.Latency, BandwidthMedian: o.SiteBandwidth}, o.Seeds)
	if err != nil {
		return nil, err
	}
	_, total := w.Collection()
	k := o.K
	if k < 1 {
		k = max(1, o.Pages/70)
	}
	res := &StrategiesResult{Collection: total}
	fmt.Fprintf(both, "bench strategies: simweb of %d sites, %d pages (seed %d), %d seed sites; site latency %v, site bandwidth %d B/s (medians)\n",
		o.Sites, o.Pages, o.Seed, len(w.Seeds), o.Latency, o.SiteBandwidth)
	fmt.Fprintf(both, "collection: %d pages a complete crawl fetches (robots.txt obeyed); oracle: their PageRank; prepared in %v\n",
		total, time.Since(t0).Round(time.Millisecond))
	fmt.Fprintf(both, "crawls: w=%v c=%d B=%s; Batch and Partial K=%d (1/%d of the pages, as the chapter's 50,000 of 3.5 M)\n\n",
		o.Delay, o.PagesPerVisit, bandwidthName(o.Bandwidth), k, max(1, o.Pages/k))

	// Figures 6.5 and 6.6.
	for _, r := range o.Robots {
		for _, name := range o.Strategies {
			s, err := sim.NewStrategy(name, w, k)
			if err != nil {
				return nil, err
			}
			run, err := sim.Run(ctx, w, s, sim.Options{Robots: r, PagesPerVisit: o.PagesPerVisit, Delay: o.Delay, Bandwidth: o.Bandwidth})
			if err != nil {
				return nil, fmt.Errorf("bench: %s r=%d: %w", name, r, err)
			}
			res.Curves = append(res.Curves, Curve{Robots: r, Strategy: s.Name(), Points: sampleCurve(run.Coverage, total, run.Pages(), o.Step)})
			fmt.Fprintf(out, "  simulated %-8s r=%-3d %7d pages, %8.1f h virtual, %5.1f s wall\n", s.Name(), r, run.Pages(), run.Elapsed.Hours(), run.Wall.Seconds())
		}
	}
	fmt.Fprintln(both)
	writeCoverageTables(both, res.Curves, o.Robots)

	// Table 6.1.
	for _, b := range o.Bandwidths {
		for _, r := range o.Robots {
			run, err := sim.Run(ctx, w, frontier.Length{}, sim.Options{Robots: r, PagesPerVisit: o.PagesPerVisit, Delay: o.Delay, Bandwidth: b})
			if err != nil {
				return nil, err
			}
			res.Speeds = append(res.Speeds, Speed{Bandwidth: b, Robots: r, Whole: run.Elapsed, Half: run.TimeAt((total + 1) / 2)})
		}
	}
	speedUps(res.Speeds)
	writeSpeedTable(both, res.Speeds, o.Robots)

	// Figure 6.13.
	if !o.SkipReal {
		if err := realVersusSim(ctx, o, res, out); err != nil {
			return nil, err
		}
		fmt.Fprintf(both, "\nFigure 6.13: %s, r=%d, c=%d, w=%v on a simweb of %d sites, %d pages (site latency %v median), served on loopback\n",
			o.RealStrategy, o.RealRobots, o.PagesPerVisit, o.RealDelay, o.RealSites, o.RealPages, o.RealLatency)
		fmt.Fprintf(both, "real crawl: %d pages in %v (%d other answers); simulated: %d pages; collection %d\n",
			res.RealPages, res.RealElapsed.Round(time.Millisecond), res.RealOther, res.SimPages, res.RealCollection)
		writeCompareTable(both, res.RealCurve.Points, res.SimCurve.Points)
		fmt.Fprintf(both, "max |real - simulated| coverage at equal pages: %.4f (after %d pages); past the first 1%%: %.4f (after %d pages)\n",
			res.MaxDiff, res.MaxDiffAt, res.MaxDiffLater, res.MaxDiffLaterAt)
	}

	if err := writeOutputs(o.Out, res, report.String()); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "\nwrote %s in %v\n", strings.Join([]string{"coverage.csv", "speedup.csv", "fig6.13.csv", "strategies.png", "results.txt"}, ", "), time.Since(t0).Round(time.Second))
	return res, nil
}

// simWeb generates a simweb and returns it with the simulator's view of it,
// starting from the home pages of seeds sites (0: every site), with the
// oracle of the chapter.
func simWeb(opt simweb.Options, seeds int) (*simweb.Web, *sim.Web, error) {
	sw, err := simweb.Generate(opt)
	if err != nil {
		return nil, nil, err
	}
	if seeds == 0 {
		seeds = sw.NumSites()
	}
	w := sim.FromSimweb(sw, seeds)
	if w.PageRank, err = w.CollectionRank(); err != nil {
		return nil, nil, err
	}
	return sw, w, nil
}

// realVersusSim crawls a simweb for real over loopback and simulates the
// same crawl, for Figure 6.13.
func realVersusSim(ctx context.Context, o StrategiesOptions, res *StrategiesResult, out io.Writer) error {
	if o.OpenStore == nil {
		return errors.New("bench: no store to crawl into")
	}
	web, w, err := simWeb(simweb.Options{Seed: o.Seed, Sites: o.RealSites, Pages: o.RealPages, LatencyMedian: o.RealLatency}, o.Seeds)
	if err != nil {
		return err
	}
	_, total := w.Collection()
	res.RealCollection = total

	s, err := sim.NewStrategy(o.RealStrategy, w, o.K)
	if err != nil {
		return err
	}
	run, err := sim.Run(ctx, w, s, sim.Options{Robots: o.RealRobots, PagesPerVisit: o.PagesPerVisit, Delay: o.RealDelay})
	if err != nil {
		return err
	}

	dir, cleanup, err := benchDir(o.Dir)
	if err != nil {
		return err
	}
	defer cleanup()
	srv, err := simweb.Start(ctx, web, simweb.ServerConfig{})
	if err != nil {
		return err
	}
	defer srv.Close()
	store, closer, err := o.OpenStore(filepath.Join(dir, "fig6.13.db"))
	if err != nil {
		return err
	}
	defer closer.Close()
	resolver, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
	if err != nil {
		return err
	}
	defer resolver.Close()
	fmt.Fprintf(out, "\n  real crawl of %d sites, %d pages: %s r=%d c=%d w=%v\n", o.RealSites, o.RealPages, o.RealStrategy, o.RealRobots, o.PagesPerVisit, o.RealDelay)
	cfg := simConfig(srv.SeedURLs(len(w.Seeds)), o.RealStrategy, o.RealRobots, o.PagesPerVisit, o.RealDelay)
	pages, elapsed, other, err := crawlOrder(ctx, srv, cfg, store, resolver, out, o.ProgressInterval)
	if err != nil {
		return err
	}
	realCov := cumulative(pages, w.PageRank)
	// crawlOrder fails when no page was fetched: realCov is never empty.
	covReal := func(n int) float64 { return realCov[min(n, len(realCov))-1] }
	res.RealElapsed, res.RealOther, res.RealPages, res.SimPages = elapsed, other, len(pages), run.Pages()
	res.RealCurve = Curve{Robots: o.RealRobots, Strategy: s.Name(), Points: sampleCurve(covReal, total, len(pages), o.Step)}
	res.SimCurve = Curve{Robots: o.RealRobots, Strategy: s.Name(), Points: sampleCurve(run.Coverage, total, run.Pages(), o.Step)}
	n := min(len(pages), run.Pages())
	res.MaxDiff, res.MaxDiffAt = maxDiff(covReal, run.Coverage, 1, n)
	res.MaxDiffLater, res.MaxDiffLaterAt = maxDiff(covReal, run.Coverage, total/100+1, n)
	return nil
}

// cumulative returns the running sum of rank over pages, in order; a page
// counts once however often it appears.
func cumulative(pages []int32, rank []float64) []float64 {
	out := make([]float64, len(pages))
	seen := make(map[int32]bool, len(pages))
	sum := 0.0
	for i, p := range pages {
		if !seen[p] {
			seen[p] = true
			sum += rank[p]
		}
		out[i] = sum
	}
	return out
}

// maxDiff returns the largest |a(i) - b(i)| for i in from..to and where it is.
func maxDiff(a, b func(int) float64, from, to int) (float64, int) {
	best, at := 0.0, 0
	for i := from; i <= to; i++ {
		if d := math.Abs(a(i) - b(i)); d > best {
			best, at = d, i
		}
	}
	return best, at
}

func bandwidthName(b int64) string {
	if b == 0 {
		return "unlimited"
	}
	return strconv.FormatInt(b, 10) + " B/s"
}

// writeCoverageTables writes, per r, the coverage of each strategy at
// every tenth of the collection.
func writeCoverageTables(out io.Writer, curves []Curve, robots []int) {
	for _, r := range robots {
		var row []Curve
		for _, c := range curves {
			if c.Robots == r {
				row = append(row, c)
			}
		}
		fmt.Fprintf(out, "Figure 6.%s: cumulative oracle PageRank vs pages fetched, r=%d\n", map[bool]string{true: "5", false: "6"}[r == 1], r)
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "pages\t")
		for _, c := range row {
			fmt.Fprintf(tw, "%s\t", c.Strategy)
		}
		fmt.Fprintln(tw)
		for i := 1; i <= 10; i++ {
			fmt.Fprintf(tw, "%d%%\t", i*10)
			for _, c := range row {
				fmt.Fprintf(tw, "%.4f\t", coverageAt(c.Points, float64(i)/10))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
		fmt.Fprintln(out)
	}
}

// writeSpeedTable writes Table 6.1: speed-ups at every bandwidth and r.
func writeSpeedTable(out io.Writer, rows []Speed, robots []int) {
	fmt.Fprintln(out, "Table 6.1: predicted speed-ups (Length), first half of the collection | whole crawl; base: the first row's first column")
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "bandwidth B/s\t")
	for _, r := range robots {
		fmt.Fprintf(tw, "r=%d\t", r)
	}
	for _, r := range robots {
		fmt.Fprintf(tw, "r=%d whole\t", r)
	}
	fmt.Fprintln(tw)
	for i := 0; i < len(rows); i += len(robots) {
		fmt.Fprintf(tw, "%d\t", rows[i].Bandwidth)
		for _, s := range rows[i : i+len(robots)] {
			fmt.Fprintf(tw, "%.1f\t", s.HalfSpeed)
		}
		for _, s := range rows[i : i+len(robots)] {
			fmt.Fprintf(tw, "%.1f\t", s.WholeSpeed)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	if len(rows) > 0 {
		fmt.Fprintf(out, "base: half the collection in %.1f h, all of it in %.1f h (virtual)\n", rows[0].Half.Hours(), rows[0].Whole.Hours())
	}
}

// writeCompareTable writes Figure 6.13's curves at every tenth.
func writeCompareTable(out io.Writer, real, simulated []Point) {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "pages\treal\tsimulated\t")
	for i := 1; i <= 10; i++ {
		f := float64(i) / 10
		fmt.Fprintf(tw, "%d%%\t%.4f\t%.4f\t\n", i*10, coverageAt(real, f), coverageAt(simulated, f))
	}
	tw.Flush()
}

// writeCurvesCSV writes curves in long format, one line per sample; with
// runs, a first column names each curve's run ("real" or "sim").
func writeCurvesCSV(w io.Writer, curves []Curve, runs []string) error {
	bw := bufio.NewWriter(w)
	if runs != nil {
		bw.WriteString("run,")
	}
	bw.WriteString("r,strategy,pages,fraction,coverage\n")
	for i, c := range curves {
		for _, p := range c.Points {
			if runs != nil {
				fmt.Fprintf(bw, "%s,", runs[i])
			}
			fmt.Fprintf(bw, "%d,%s,%d,%.6f,%.6f\n", c.Robots, c.Strategy, p.Pages, p.Fraction, p.Coverage)
		}
	}
	return bw.Flush()
}

func writeSpeedCSV(w io.Writer, rows []Speed) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "bandwidth,r,half_s,whole_s,speedup_half,speedup_whole")
	for _, s := range rows {
		fmt.Fprintf(bw, "%d,%d,%.0f,%.0f,%.3f,%.3f\n", s.Bandwidth, s.Robots, s.Half.Seconds(), s.Whole.Seconds(), s.HalfSpeed, s.WholeSpeed)
	}
	return bw.Flush()
}

// writeOutputs writes the benchmark's files.
func writeOutputs(dir string, res *StrategiesResult, report string) error {
	write := func(name string, fn func(io.Writer) error) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		err = fn(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("bench: writing %s: %w", name, err)
		}
		return nil
	}
	var fig613 []Curve
	if len(res.RealCurve.Points) > 0 {
		fig613 = []Curve{res.RealCurve, res.SimCurve}
	}
	return errors.Join(
		write("coverage.csv", func(w io.Writer) error { return writeCurvesCSV(w, res.Curves, nil) }),
		write("speedup.csv", func(w io.Writer) error { return writeSpeedCSV(w, res.Speeds) }),
		write("fig6.13.csv", func(w io.Writer) error { return writeCurvesCSV(w, fig613, []string{"real", "sim"}) }),
		write("results.txt", func(w io.Writer) error { _, err := io.WriteString(w, report); return err }),
		write("strategies.png", func(w io.Writer) error { return drawChart(w, res) }),
	)
}
