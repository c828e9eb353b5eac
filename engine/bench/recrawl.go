package bench

import (
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"lidi/engine/recrawl"
	"lidi/engine/recrawl/change"
	"lidi/engine/recrawl/simulate"
)

// RecrawlOptions sets up `lidi bench recrawl`: SARSS's REC and RUC
// simulations (Tables 1–4) with lidi's recrawl policies, and Wolf et al.'s
// comparison of allocations. The zero value is not usable: RegisterFlags
// sets the defaults.
type RecrawlOptions struct {
	Channels int
	Days     float64
	Seed     uint64
	Setups   []string
	Policies []recrawl.PolicyName
	Change   change.Kind

	// Overrides of the set-ups (0: SARSS's or recrawl.Defaults()').
	PagesMedian      int
	Encourage        float64
	SmallestMultiple float64
	BiggestMultiple  float64
	RateCap          float64
	Notified         float64 // share of departing crawlers that hand their tasks on (negative: SARSS's third)
	OneTask          bool    // a channel with a task queued or running gets no other (simulate.Setup.OneTask)
	Queue            int     // task queue length per crawler (0: SARSS's 5)

	WolfPages  int
	WolfRatios []float64
	WolfQ      float64

	Out string // directory for the CSV files and the chart
}

// RegisterFlags adds the benchmark's flags to fs, with their defaults.
func (o *RecrawlOptions) RegisterFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.Channels, "channels", 4000, "channels (SARSS: 16000; crawlers scale with them, 1400 per 16000 under REC)")
	fs.Float64Var(&o.Days, "days", 14, "simulated days (SARSS: 62.5)")
	fs.Uint64Var(&o.Seed, "seed", 1, "seed of the channels, their changes and the crawlers")
	o.Setups = []string{"rec", "ruc"}
	fs.Func("setups", "comma-separated set-ups (default rec,ruc)", func(s string) error {
		o.Setups = strings.Split(s, ",")
		return nil
	})
	o.Policies = channelPolicies(recrawl.PolicyNames())
	fs.Func("policies", "comma-separated policies of channels, or all (default all)", func(s string) error {
		ps, err := parsePolicies(s)
		if err == nil && len(channelPolicies(ps)) < len(ps) {
			err = fmt.Errorf("bench: recrawl simulates channels: policy %s schedules pages (lidi bench recrawl-live runs it)", recrawl.Pages)
			if strings.TrimSpace(s) == "all" {
				ps, err = channelPolicies(ps), nil
			}
		}
		o.Policies = ps
		return err
	})
	fs.Func("change", "the channels' change process: poisson, pareto or quasi (default poisson)", func(s string) error {
		k, err := change.ParseKind(s)
		o.Change = k
		return err
	})
	fs.IntVar(&o.PagesMedian, "pages-median", 0, "median pages per channel, which sets the load (0: 3000, SARSS's dataset's order)")
	fs.Float64Var(&o.Encourage, "encourage", 0, "δ of iir and icr (0: recrawl's default)")
	fs.Float64Var(&o.SmallestMultiple, "sigma", 0, "σ of checkPriorities (0: recrawl's default)")
	fs.Float64Var(&o.BiggestMultiple, "mu", 0, "μ of checkPriorities (0: recrawl's default)")
	fs.Float64Var(&o.RateCap, "rate-cap", 0, "cap on a channel's recrawl rate, times its estimated change rate (0: recrawl's default; negative: none)")
	fs.Float64Var(&o.Notified, "notified", -1, "share of departing crawlers that hand their tasks on (negative: SARSS's 1/3; 1: no task is lost)")
	fs.IntVar(&o.Queue, "queue", 0, "task queue length per crawler (0: SARSS's stated 5; its REC figures imply about 17 queued per crawler under FIXED)")
	fs.BoolVar(&o.OneTask, "one-task", false, "a channel whose last task is still queued or running gets no other, as the engine does (default: tasks of a channel may overlap)")
	fs.IntVar(&o.WolfPages, "wolf-pages", 2000, "pages of Wolf's comparison")
	o.WolfRatios = []float64{1.5, 2, 2.5, 3, 4, 5}
	fs.Func("wolf-ratios", "comma-separated R/N of Wolf's comparison (default 1.5,2,2.5,3,4,5)", func(s string) error {
		o.WolfRatios = nil
		for _, f := range strings.Split(s, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil || v <= 0 {
				return fmt.Errorf("bench: %q is not a list of positive numbers", s)
			}
			o.WolfRatios = append(o.WolfRatios, v)
		}
		return nil
	})
	fs.Float64Var(&o.WolfQ, "wolf-q", 0, "Zipf-like parameter of the change rates in Wolf's comparison (0: skewed, 1: uniform)")
	fs.StringVar(&o.Out, "out", "bench-recrawl", "directory for the CSV files and the chart")
}

// RecrawlResult is everything the benchmark measured.
type RecrawlResult struct {
	Runs []*simulate.Result
	Wolf []simulate.WolfRow
}

// Recrawl runs the benchmark, prints its tables to w and ends with one
// key=value line per set-up and policy.
func Recrawl(ctx context.Context, o RecrawlOptions, w io.Writer) (*RecrawlResult, error) {
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	res := &RecrawlResult{}
	for _, name := range o.Setups {
		s, err := simulate.SARSS(name, o.Channels, o.Days, o.Seed)
		if err != nil {
			return nil, err
		}
		s.Change = o.Change
		if o.PagesMedian > 0 {
			s.PagesMedian = o.PagesMedian
		}
		if o.Encourage > 0 {
			s.Options.Encourage = o.Encourage
		}
		if o.SmallestMultiple > 0 {
			s.Options.SmallestMultiple = o.SmallestMultiple
		}
		if o.BiggestMultiple > 0 {
			s.Options.BiggestMultiple = o.BiggestMultiple
		}
		if o.Notified >= 0 {
			s.Notified = min(o.Notified, 1)
		}
		s.OneTask = o.OneTask
		if o.Queue > 0 {
			s.Queue = o.Queue
		}
		switch {
		case o.RateCap > 0:
			s.Options.RateCap = o.RateCap
		case o.RateCap < 0:
			s.Options.RateCap = 0
		}
		for _, p := range o.Policies {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			start := time.Now()
			r, err := simulate.Run(s, p)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(w, "simulated %s/%s: %d channels, %d crawlers, %.1f days in %v\n", name, p, s.Channels, s.Crawlers, o.Days, time.Since(start).Round(time.Millisecond))
			res.Runs = append(res.Runs, r)
		}
	}
	kinds := []change.Kind{change.Poisson, change.Pareto, change.Quasi}
	wolf, err := simulate.Wolf(simulate.WolfSetup{Pages: o.WolfPages, Q: o.WolfQ, MeanRate: 1.5, Horizon: 24 * time.Hour,
		Ratios: o.WolfRatios, Kinds: kinds, Intervals: 30, Seed: o.Seed})
	if err != nil {
		return nil, err
	}
	res.Wolf = wolf
	printRecrawl(w, o, res, kinds)
	if err := writeRecrawlCSV(o.Out, res, kinds); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(o.Out, "recrawl.png"))
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := drawIntervals(f, res.Runs); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	fmt.Fprintf(w, "\nwrote %s\n", strings.Join([]string{
		filepath.Join(o.Out, "recrawl.csv"), filepath.Join(o.Out, "recrawl-groups.csv"),
		filepath.Join(o.Out, "recrawl-intervals.csv"), filepath.Join(o.Out, "recrawl-wolf.csv"),
		filepath.Join(o.Out, "recrawl.png")}, ", "))
	for _, r := range res.Runs {
		fmt.Fprintf(w, "setup=%s policy=%s tasks=%d updates=%d success_rate=%.3f update_quality_w=%.4f update_quality=%.4f freshness=%.4f age_s=%.0f reassignments=%d\n",
			r.Setup, r.Policy, r.Tasks, r.Updates, r.SuccessRate, r.UpdateQualityW, r.UpdateQuality, r.Freshness, r.Age.Seconds(), r.Reassignments)
	}
	return res, nil
}

func minutes(d time.Duration) string { return strconv.FormatFloat(d.Minutes(), 'f', 0, 64) }

func printRecrawl(w io.Writer, o RecrawlOptions, res *RecrawlResult, kinds []change.Kind) {
	for _, setup := range o.Setups {
		var runs []*simulate.Result
		for _, r := range res.Runs {
			if r.Setup == setup {
				runs = append(runs, r)
			}
		}
		if len(runs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: recrawl tasks and mean effective interval (minutes) per rank (rank 4 changes fastest), as SARSS's Table %s\n",
			strings.ToUpper(setup), map[string]string{"rec": "1", "ruc": "3"}[setup])
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "rank\tchannels\t")
		for _, r := range runs {
			fmt.Fprintf(tw, "%s tasks\t", r.Policy)
		}
		for _, r := range runs {
			fmt.Fprintf(tw, "%s min\t", r.Policy)
		}
		fmt.Fprintln(tw)
		for g := range runs[0].Groups {
			fmt.Fprintf(tw, "%d\t%d\t", runs[0].Groups[g].Rank, runs[0].Groups[g].Channels)
			for _, r := range runs {
				fmt.Fprintf(tw, "%d\t", r.Groups[g].Tasks)
			}
			for _, r := range runs {
				fmt.Fprintf(tw, "%s\t", minutes(r.Groups[g].Interval))
			}
			fmt.Fprintln(tw)
		}
		fmt.Fprint(tw, "total\t\t")
		for _, r := range runs {
			fmt.Fprintf(tw, "%d\t", r.Tasks)
		}
		fmt.Fprintln(tw)
		tw.Flush()
		fmt.Fprintf(w, "\n%s: update quality (SARSS eq. 5; w: weight 2^rank), success, freshness and age, as SARSS's Table %s\n",
			strings.ToUpper(setup), map[string]string{"rec": "2", "ruc": "4"}[setup])
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(w, "(FIXED's demand %.0f robots; %.0f online on average of %d)\n", runs[0].Demand, runs[0].MeanOnline, runs[0].Threads)
		fmt.Fprintln(tw, "policy\tquality (w)\tquality\tsuccess\tfreshness\tage (min)\tqueued\tlost\tcancelled\tdropped\treassignments\tmisgrouped\t")
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t%.4f\t%.4f\t%.3f\t%.4f\t%.0f\t%.1f\t%d\t%d\t%d\t%d\t%.3f\t\n", r.Policy, r.UpdateQualityW, r.UpdateQuality,
				r.SuccessRate, r.Freshness, r.Age.Minutes(), r.MeanQueued, r.Lost, r.Cancelled, r.Dropped, r.Reassignments, r.Misgrouped)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nWolf et al.: average staleness of %d pages, Zipf-like change rates (q = %g, mean 1.5 a day), R crawls a day\n", o.WolfPages, o.WolfQ)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "R/N\t")
	for _, a := range simulate.Allocations() {
		fmt.Fprintf(tw, "%s (formula)\t", a)
	}
	for _, k := range kinds {
		for _, a := range simulate.Allocations() {
			fmt.Fprintf(tw, "%s %s\t", k, a)
		}
	}
	fmt.Fprintln(tw)
	for _, row := range res.Wolf {
		fmt.Fprintf(tw, "%g\t", row.Ratio)
		for _, a := range simulate.Allocations() {
			fmt.Fprintf(tw, "%.4f\t", row.Analytic[a])
		}
		for _, k := range kinds {
			for _, a := range simulate.Allocations() {
				fmt.Fprintf(tw, "%.4f\t", row.Simulated[k][a])
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nWolf et al.: staleness weighted by PageRank-like importance (formula, Poisson pages), as their Figure 7 compares\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "R/N\t")
	for _, a := range simulate.WeightedAllocations() {
		fmt.Fprintf(tw, "%s\t", a)
	}
	fmt.Fprintln(tw)
	for _, row := range res.Wolf {
		fmt.Fprintf(tw, "%g\t", row.Ratio)
		for _, a := range simulate.WeightedAllocations() {
			fmt.Fprintf(tw, "%.4f\t", row.Weighted[a])
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func writeRecrawlCSV(dir string, res *RecrawlResult, kinds []change.Kind) error {
	write := func(name string, rows [][]string) error {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		cw := csv.NewWriter(f)
		if err := cw.WriteAll(rows); err != nil {
			f.Close()
			return fmt.Errorf("bench: %w", err)
		}
		return f.Close()
	}
	ff := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	summary := [][]string{{"setup", "policy", "tasks", "updates", "success_rate", "update_quality_w", "update_quality", "freshness", "age_s", "lost", "cancelled", "dropped", "mean_queued", "reassignments", "misgrouped", "pages"}}
	groups := [][]string{{"setup", "policy", "rank", "channels", "tasks", "updates", "interval_min"}}
	series := [][]string{{"setup", "policy", "hour", "rank", "interval_min", "crawlers_online", "queued"}}
	for _, r := range res.Runs {
		summary = append(summary, []string{r.Setup, string(r.Policy), strconv.Itoa(r.Tasks), strconv.Itoa(r.Updates), ff(r.SuccessRate),
			ff(r.UpdateQualityW), ff(r.UpdateQuality), ff(r.Freshness), ff(r.Age.Seconds()), strconv.Itoa(r.Lost), strconv.Itoa(r.Cancelled),
			strconv.Itoa(r.Dropped), ff(r.MeanQueued), strconv.Itoa(r.Reassignments), ff(r.Misgrouped), strconv.FormatInt(r.Pages, 10)})
		for _, g := range r.Groups {
			groups = append(groups, []string{r.Setup, string(r.Policy), strconv.Itoa(g.Rank), strconv.Itoa(g.Channels),
				strconv.Itoa(g.Tasks), strconv.Itoa(g.Updates), ff(g.Interval.Minutes())})
		}
		for _, s := range r.Series {
			for i, iv := range s.Intervals {
				series = append(series, []string{r.Setup, string(r.Policy), ff(s.At.Hours()), strconv.Itoa(r.Groups[i].Rank),
					ff(iv.Minutes()), strconv.Itoa(s.Online), strconv.Itoa(s.Queued)})
			}
		}
	}
	wolf := [][]string{{"ratio", "process", "allocation", "staleness"}}
	for _, row := range res.Wolf {
		for _, a := range simulate.Allocations() {
			wolf = append(wolf, []string{ff(row.Ratio), "formula", string(a), ff(row.Analytic[a])})
		}
		for _, k := range kinds {
			for _, a := range simulate.Allocations() {
				wolf = append(wolf, []string{ff(row.Ratio), k.String(), string(a), ff(row.Simulated[k][a])})
			}
		}
		for _, a := range simulate.WeightedAllocations() {
			wolf = append(wolf, []string{ff(row.Ratio), "formula-weighted", string(a), ff(row.Weighted[a])})
		}
	}
	for name, rows := range map[string][][]string{"recrawl.csv": summary, "recrawl-groups.csv": groups,
		"recrawl-intervals.csv": series, "recrawl-wolf.csv": wolf} {
		if err := write(name, rows); err != nil {
			return err
		}
	}
	return nil
}

// rankColors gives each rank the same colour in every panel.
var rankColors = []color.Color{
	color.RGBA{0x44, 0x44, 0x44, 0xff}, color.RGBA{0x1f, 0x77, 0xb4, 0xff}, color.RGBA{0x2c, 0xa0, 0x2c, 0xff},
	color.RGBA{0xff, 0x7f, 0x0e, 0xff}, color.RGBA{0xd6, 0x27, 0x28, 0xff},
}

// drawIntervals draws one panel per set-up and policy: each group's mean
// effective interval over time (log scale), rows by set-up.
func drawIntervals(w io.Writer, runs []*simulate.Result) error {
	var setups []string
	var policies []recrawl.PolicyName
	for _, r := range runs {
		if len(setups) == 0 || setups[len(setups)-1] != r.Setup {
			setups = append(setups, r.Setup)
		}
		if len(setups) == 1 {
			policies = append(policies, r.Policy)
		}
	}
	if len(runs) == 0 {
		return fmt.Errorf("bench: nothing to draw")
	}
	// One scale for every panel, so that panels compare at a glance.
	lo, hi := math.Inf(1), 0.0
	for _, r := range runs {
		for _, s := range r.Series {
			for _, iv := range s.Intervals {
				if iv > 0 {
					lo, hi = min(lo, iv.Minutes()), max(hi, iv.Minutes())
				}
			}
		}
	}
	grid := make([][]*plot.Plot, len(setups))
	for i := range grid {
		grid[i] = make([]*plot.Plot, len(policies))
	}
	for _, r := range runs {
		i := slices.Index(setups, r.Setup)
		j := slices.Index(policies, r.Policy)
		if i < 0 || j < 0 {
			continue
		}
		p := plot.New()
		p.Title.Text = fmt.Sprintf("%s, %s", strings.ToUpper(r.Setup), r.Policy)
		p.X.Label.Text = "hours"
		p.Y.Label.Text = "interval (min)"
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		if hi > 0 {
			p.Y.Min, p.Y.Max = math.Max(lo*0.8, 1), hi*1.25
		}
		p.Add(plotter.NewGrid())
		for g := range r.Groups {
			xys := make(plotter.XYs, 0, len(r.Series))
			for _, s := range r.Series {
				if iv := s.Intervals[g]; iv > 0 {
					xys = append(xys, plotter.XY{X: s.At.Hours(), Y: math.Max(iv.Minutes(), 1)})
				}
			}
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(xys)
			if err != nil {
				return fmt.Errorf("bench: %w", err)
			}
			l.LineStyle.Color = rankColors[r.Groups[g].Rank%len(rankColors)]
			l.LineStyle.Width = vg.Points(1)
			p.Add(l)
			if j == 0 {
				p.Legend.Add(fmt.Sprintf("rank %d", r.Groups[g].Rank), l)
			}
		}
		p.Legend.Top = true
		grid[i][j] = p
	}
	return drawGrid(w, grid, 8*vg.Centimeter, 0.8)
}

// parsePolicies parses a comma-separated list of policy names; "all" is
// every policy.
// channelPolicies returns the policies of ps that schedule channels.
func channelPolicies(ps []recrawl.PolicyName) []recrawl.PolicyName {
	var out []recrawl.PolicyName
	for _, p := range ps {
		if !p.PerPage() {
			out = append(out, p)
		}
	}
	return out
}

func parsePolicies(s string) ([]recrawl.PolicyName, error) {
	if strings.TrimSpace(s) == "all" {
		return recrawl.PolicyNames(), nil
	}
	var out []recrawl.PolicyName
	for _, f := range strings.Split(s, ",") {
		p, err := recrawl.ParsePolicyName(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
