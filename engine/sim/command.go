package sim

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/simweb"
)

// Oracle returns the Optimal strategy's oracle for w: the final PageRank of
// a page, by the page ids the simulator gives strategies (page i has ID
// i+1, since 0 means "no parent" in frontier.PageInfo).
func Oracle(w *Web) func(frontier.PageInfo) float64 {
	return func(p frontier.PageInfo) float64 {
		if p.ID == 0 || p.ID > uint64(len(w.PageRank)) {
			return 0
		}
		return w.PageRank[p.ID-1]
	}
}

// NewStrategy returns a fresh strategy by name for a crawl of w, with w's
// oracle for "optimal" and a PageRank run every k pages for "batch" and
// "partial" (k < 1 means one 70th of w's pages, the chapter's middle K).
func NewStrategy(name string, w *Web, k int) (frontier.Strategy, error) {
	if k < 1 {
		k = max(1, w.NumPages()/70)
	}
	return frontier.NewStrategy(name, frontier.StrategyOptions{K: k, Oracle: Oracle(w)})
}

// WriteCSV writes one line per page fetched: its rank in the crawl, page
// id, site id, depth, request start and end in virtual seconds, and the
// cumulative oracle PageRank.
func (r *Result) WriteCSV(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString("n,page,site,depth,start_s,end_s,coverage\n")
	var line []byte
	for i, f := range r.Fetches {
		line = strconv.AppendInt(line[:0], int64(i+1), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(f.Page), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(f.Site), 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, int64(f.Depth), 10)
		line = append(line, ',')
		line = strconv.AppendFloat(line, f.Start.Seconds(), 'f', -1, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, f.End.Seconds(), 'f', -1, 64)
		line = append(line, ',')
		line = strconv.AppendFloat(line, f.Coverage, 'g', 10, 64)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// CommandDoc says what "lidi sim" does, for its usage.
const CommandDoc = `Simulate a crawl of a synthetic web (or of a graph exported by
lidi simweb --export) in virtual time with lidi's scheduler, and measure the
oracle PageRank it gathers against pages fetched.`

// CommandFlags registers the flags of "lidi sim" on fs and returns the
// function that runs the command once fs is parsed: it generates a simweb
// (or loads an exported one with --graph), takes the PageRank of the pages
// a complete crawl fetches as the oracle (Web.CollectionRank), simulates
// one crawl of it, writes the fetch sequence to --out if given, and prints
// a summary ending in key=value lines.
func CommandFlags(fs *flag.FlagSet) func(ctx context.Context, stdout io.Writer) error {
	webOpt := simweb.Options{Seed: 1, Sites: 2000, Pages: 200_000}
	simweb.WebFlags(fs, &webOpt.Sites, webOpt.Sites, &webOpt.Pages, webOpt.Pages, &webOpt.Seed)
	fs.IntVar(&webOpt.PageSizeMedian, "page-size", 0, "median page size in `bytes` (0: simweb's 12288; with --graph, every page's size)")
	graph := fs.String("graph", "", "crawl the web exported by `lidi simweb --export DIR` instead of generating one")
	seeds := fs.Int("seeds", 10, "start from the home pages of this many most popular sites")
	latency := fs.Duration("latency", 250*time.Millisecond, "median site latency (with --graph: every site's)")
	siteBW := fs.Int64("site-bandwidth", 50_000, "median site bandwidth in `bytes/s` (with --graph: every site's; 0 = unlimited)")
	strategy := fs.String("strategy", "length", "the ordering `strategy`, one of:\n"+frontier.StrategyUsage())
	k := fs.Int("k", 0, "pages between PageRank recomputations for batch and partial (0: pages/70)")
	var opt Options
	fs.DurationVar(&opt.Delay, "w", 15*time.Second, "politeness delay between requests to one site")
	fs.IntVar(&opt.PagesPerVisit, "c", 1, "pages per connection")
	fs.IntVar(&opt.Robots, "r", 1, "robots: sites visited at once")
	fs.Int64Var(&opt.Bandwidth, "bandwidth", 0, "crawler bandwidth B in `bytes/s` (0 = unlimited)")
	fs.IntVar(&opt.MaxPages, "max-pages", 0, "stop after this many pages (0 = all)")
	out := fs.String("out", "", "write the fetch sequence to this CSV `file`")
	return func(ctx context.Context, stdout io.Writer) error {
		// A misspelt strategy is refused before the web is generated,
		// which takes tens of seconds at the default size.
		if _, ok := frontier.LookupStrategy(*strategy); !ok {
			return fmt.Errorf("sim: unknown strategy %q (have %s)", *strategy, strings.Join(frontier.StrategyNames(), ", "))
		}
		var w *Web
		var err error
		t0 := time.Now()
		if *graph != "" {
			w, err = Load(*graph, LoadOptions{Seeds: *seeds, PageSize: webOpt.PageSizeMedian, Latency: *latency, Bandwidth: *siteBW})
		} else {
			webOpt.LatencyMedian, webOpt.BandwidthMedian = *latency, *siteBW
			var sw *simweb.Web
			if sw, err = simweb.Generate(webOpt); err == nil {
				w = FromSimweb(sw, *seeds)
			}
		}
		if err != nil {
			return err
		}
		// The oracle is the chapter's: the PageRank of what a complete crawl
		// gets, so a finished crawl's coverage is 1.
		if w.PageRank, err = w.CollectionRank(); err != nil {
			return err
		}
		prep := time.Since(t0)
		s, err := NewStrategy(*strategy, w, *k)
		if err != nil {
			return err
		}
		res, err := Run(ctx, w, s, opt)
		if err != nil {
			return err
		}
		if *out != "" {
			f, err := os.Create(*out)
			if err != nil {
				return fmt.Errorf("sim: %w", err)
			}
			err = res.WriteCSV(f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("sim: %w", err)
			}
		}
		return Summarize(stdout, w, res, prep)
	}
}

// Command runs "lidi sim" with its arguments (without the subcommand
// name), as CommandFlags describes. Flag errors and usage go to stderr; -h
// returns flag.ErrHelp.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	run := CommandFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: lidi sim [flags]\n\n%s\n\n", CommandDoc)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("sim: unexpected arguments %q", fs.Args())
	}
	return run(ctx, stdout)
}

// Summarize prints a result: the oracle coverage at every tenth of the
// web's pages, then key=value lines.
func Summarize(out io.Writer, w *Web, res *Result, prep time.Duration) error {
	n := w.NumPages()
	o := res.Options
	var b strings.Builder
	fmt.Fprintf(&b, "sim: %s on %d pages, %d sites; r=%d c=%d w=%v B=%d\n", res.Strategy, n, len(w.Sites), o.Robots, o.PagesPerVisit, o.Delay, o.Bandwidth)
	fmt.Fprintf(&b, "%8s %10s %14s\n", "pages", "coverage", "virtual time")
	for i := 1; i <= 10; i++ {
		at := n * i / 10
		if at > res.Pages() {
			break
		}
		fmt.Fprintf(&b, "%7d%% %10.4f %14s\n", i*10, res.Coverage(at), res.TimeAt(at).Round(time.Second))
	}
	fmt.Fprintf(&b, "strategy=%s\n", res.Strategy)
	fmt.Fprintf(&b, "pages=%d\n", res.Pages())
	fmt.Fprintf(&b, "discovered=%d\n", res.Discovered)
	fmt.Fprintf(&b, "skipped=%d\n", res.Skipped)
	fmt.Fprintf(&b, "parked_sites=%d\n", res.Parked)
	fmt.Fprintf(&b, "coverage=%.6f\n", res.Coverage(res.Pages()))
	fmt.Fprintf(&b, "virtual_s=%.0f\n", res.Elapsed.Seconds())
	fmt.Fprintf(&b, "pages_per_s=%.3f\n", float64(res.Pages())/max(res.Elapsed.Seconds(), 1e-9))
	fmt.Fprintf(&b, "visits=%d\n", res.Visits)
	fmt.Fprintf(&b, "bytes=%d\n", res.Bytes)
	fmt.Fprintf(&b, "peak_transfers=%d\n", res.PeakTransfers)
	fmt.Fprintf(&b, "prepare_s=%.2f\n", prep.Seconds())
	fmt.Fprintf(&b, "wall_s=%.2f\n", res.Wall.Seconds())
	_, err := io.WriteString(out, b.String())
	return err
}
