package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"lidi/engine"
	"lidi/engine/dedup"
	"lidi/engine/dns"
	"lidi/engine/record"
	"lidi/engine/simweb"
)

// PrecisionOptions sets up `lidi bench precision`. The zero value is not
// usable: OpenStore must be set (main.go wires it) and the sizes given, as
// RegisterFlags does.
type PrecisionOptions struct {
	Sites, Pages  int   // the synthetic web
	Traps         int   // sites per trap kind
	Seed          int64 // the synthetic web's seed
	Seeds         int   // seed URLs: the home pages of the most popular sites
	FixedDepth    int   // max depth of the fixed-depth run
	Modes         []string
	Robots        int // r
	PagesPerVisit int // c
	// Limit bounds each run's time: a run that reaches it is stopped and
	// scored as it stands (the report says so).
	Limit            time.Duration
	Dir              string // where the crawl databases go ("": a temporary directory)
	OpenStore        func(path string) (record.Store, io.Closer, error)
	ProgressInterval time.Duration
	// Waste is how many of the URLs each trap wasted the report lists
	// (0: none, only the counts).
	Waste int
	// CPUProfile, when not "", is where a CPU profile of the runs goes
	// (the synthetic web's server included: it runs in this process).
	CPUProfile string
	// WordHash is the word hash of the runs' crawl files (0: dedup's
	// newest), to compare detection under each.
	WordHash dedup.WordHash
}

// The runs of the benchmark.
const (
	ModeLidi       = "lidi"        // detection on, unlimited depth: lidi as built
	ModeFixedDepth = "fixed-depth" // detection off, depth limited: the common crawler of the LiDi paper
)

// RegisterFlags adds the benchmark's flags to fs, with their defaults.
func (o *PrecisionOptions) RegisterFlags(fs *flag.FlagSet) {
	simweb.WebFlags(fs, &o.Sites, 400, &o.Pages, 20000, &o.Seed) // pages before traps
	fs.IntVar(&o.Traps, "traps", 12, "sites per trap kind")
	fs.IntVar(&o.Seeds, "seeds", 10, "seed URLs (home pages of the most popular sites)")
	fs.IntVar(&o.FixedDepth, "depth", 10, "max depth of the fixed-depth run")
	o.Modes = []string{ModeLidi, ModeFixedDepth}
	fs.Func("modes", "comma-separated runs among "+ModeLidi+","+ModeFixedDepth+" (default both)", func(s string) error {
		o.Modes = strings.Split(s, ",")
		for _, m := range o.Modes {
			if m != ModeLidi && m != ModeFixedDepth {
				return fmt.Errorf("bench: unknown mode %q", m)
			}
		}
		return nil
	})
	crawlerFlags(fs, &o.Robots, 64, &o.PagesPerVisit, 100)
	limitFlag(fs, &o.Limit, 10*time.Minute)
	dirFlag(fs, &o.Dir, "the crawl databases")
	progressFlag(fs, &o.ProgressInterval)
	fs.IntVar(&o.Waste, "waste", 0, "list up to this many wasted URLs per trap")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the runs (the synthetic web's server included) to this file")
	fs.TextVar(&o.WordHash, "word-hash", dedup.NewestWordHash, "the word hash of the runs' fingerprints (fnv1a64, mix64), as config.yaml's dedup.word_hash")
}

// Fetch is one page retrieved: its URL and the status it answered (0 when
// no response came).
type Fetch struct {
	URL    string
	Status int
}

// Score is a crawl measured against simweb's ground truth.
//
// A page retrieved is any fetch the crawler made, whatever came back
// (redirects, 404s, soft 404s, truncated binaries included; robots.txt
// excluded). A unique page is a fetch that answered 200 with genuine
// content (simweb.Truth.Genuine) whose content class (Truth.Content) no
// earlier fetch had brought: a mirror copy, a loop level, a session-id or
// tracking variant or a print copy of a page already fetched is not
// unique, nor are soft 404s, empty calendar months and binary files.
type Score struct {
	Pages     int     // pages retrieved
	Unique    int     // distinct genuine contents among them
	Reachable int     // genuine contents reachable from the seeds (Reach.Unique)
	Recalled  int     // reachable contents among the unique ones
	Precision float64 // Unique / Pages
	Recall    float64 // Recalled / Reachable
	// ByTrap counts pages retrieved and unique ones by the trap their URL
	// belongs to (Truth.Trap; TrapNone for ordinary pages), and wasted
	// ones by the trap that made them a copy (see TrapCount.Wasted).
	ByTrap map[simweb.TrapKind]TrapCount
	// Missed counts the reachable contents not fetched, by the trap kind
	// that made them (the top byte of Truth.Content; TrapNone for base
	// pages).
	Missed map[simweb.TrapKind]int
}

// TrapCount is one row of Score.ByTrap.
type TrapCount struct {
	Pages, Unique int
	// Wasted counts the pages retrieved that brought no new content, by
	// the trap that made them a copy: their URL's, or, for an ordinary
	// URL whose content was first fetched through a trap's URL (a host
	// mirror's other name, a tracking variant), that trap's: the crawl
	// met the copy first, and the ordinary page paid for it.
	Wasted int
	// Waste lists the wasted fetches, in the order they were made.
	Waste []Fetch
}

// ScoreCrawl scores the pages a crawl retrieved, in any order, against the
// web's truth and the content reachable from the crawl's seeds.
func ScoreCrawl(web *simweb.Web, reach *simweb.Reach, fetched []Fetch) Score {
	sc := Score{Pages: len(fetched), Reachable: reach.Unique, ByTrap: make(map[simweb.TrapKind]TrapCount)}
	first := make(map[uint64]simweb.TrapKind) // contents fetched, by the trap of their first URL
	for _, f := range fetched {
		t := web.Truth(f.URL)
		row := sc.ByTrap[t.Trap]
		row.Pages++
		firstTrap, seen := first[t.Content]
		if f.Status == 200 && t.Genuine && t.Content != 0 && !seen {
			first[t.Content] = t.Trap
			sc.Unique++
			row.Unique++
			if reach.Contains(t.Content) {
				sc.Recalled++
			}
			sc.ByTrap[t.Trap] = row
			continue
		}
		sc.ByTrap[t.Trap] = row
		blame := t.Trap
		if blame == simweb.TrapNone && seen {
			blame = firstTrap
		}
		w := sc.ByTrap[blame]
		w.Wasted++
		w.Waste = append(w.Waste, f)
		sc.ByTrap[blame] = w
	}
	sc.Missed = make(map[simweb.TrapKind]int)
	for c := range reach.All() {
		if _, ok := first[c]; !ok {
			sc.Missed[contentKind(c)]++
		}
	}
	if sc.Pages > 0 {
		sc.Precision = float64(sc.Unique) / float64(sc.Pages)
	}
	if sc.Reachable > 0 {
		sc.Recall = float64(sc.Recalled) / float64(sc.Reachable)
	}
	return sc
}

// contentKind returns the trap kind that made a content (Truth.Content
// keeps it in its top byte), TrapNone for a base page.
func contentKind(c uint64) simweb.TrapKind { return simweb.TrapKind(c >> 56) }

// recorder is an engine.Store that passes everything to the real store and
// keeps, on the side, the URL of every id and the status of every fetch,
// so the crawl can be scored when it ends.
type recorder struct {
	tap
	mu      sync.Mutex
	urls    map[uint64]string
	fetches []record.PageRecord // URL and Status only
	skipped map[uint64]uint64   // by rule ID: the first URL skipped under it
}

// newRecorder returns a recorder of the batches the engine hands store.
func newRecorder(store record.Store) *recorder {
	r := &recorder{urls: make(map[uint64]string)}
	r.tap = tap{Store: store, see: r.note}
	return r
}

// tap passes every batch the engine hands Store to see first. Its Write
// and Commit give the engine Store's open transaction when it keeps one
// (record.BatchWriter, as storage.DB does): a wrapper that embedded only
// the record.Store interface hid them, and the engine applied and
// committed every batch, a path production has left (found in review).
// Over a store without one a Write is an Apply, committed at once.
type tap struct {
	record.Store
	see func(*record.Batch)
}

func (t *tap) Apply(ctx context.Context, b *record.Batch) error {
	t.see(b)
	return t.Store.Apply(ctx, b)
}

func (t *tap) Write(ctx context.Context, b *record.Batch) error {
	t.see(b)
	if w, ok := t.Store.(record.BatchWriter); ok {
		return w.Write(ctx, b)
	}
	return t.Store.Apply(ctx, b)
}

func (t *tap) Commit(ctx context.Context) error {
	if w, ok := t.Store.(record.BatchWriter); ok {
		return w.Commit(ctx)
	}
	return nil
}

// metaStore is what the engine reads and records a crawl file's named
// values with (storage.DB's meta table).
type metaStore interface {
	Meta(ctx context.Context, key string) (string, bool, error)
	SetMeta(ctx context.Context, key, value string) error
}

// Meta and SetMeta give the engine Store's named values: hidden, as Write
// and Commit were, they let the engine record neither the word hash nor
// the digest its file's values were made with, and the file, kept with
// --dir, was read later as one of before (found in review). Over a store
// without them (a MemStore, new for each run) nothing is named and
// nothing recorded.
func (t *tap) Meta(ctx context.Context, key string) (string, bool, error) {
	if m, ok := t.Store.(metaStore); ok {
		return m.Meta(ctx, key)
	}
	return "", false, nil
}

func (t *tap) SetMeta(ctx context.Context, key, value string) error {
	if m, ok := t.Store.(metaStore); ok {
		return m.SetMeta(ctx, key, value)
	}
	return nil
}

// note records what b holds.
func (r *recorder) note(b *record.Batch) {
	r.mu.Lock()
	for _, u := range b.URLs {
		r.urls[u.ID] = u.URL
		if u.Rule != 0 {
			r.skip(u.Rule, u.ID)
		}
	}
	for _, s := range b.Skips {
		if s.Rule != 0 {
			r.skip(s.Rule, s.URL)
		}
	}
	for _, p := range b.Pages {
		r.fetches = append(r.fetches, record.PageRecord{URL: p.URL, Status: p.Status})
	}
	r.mu.Unlock()
}

// skip records url as skipped under rule, if it is the first.
func (r *recorder) skip(rule, url uint64) {
	if r.skipped == nil {
		r.skipped = make(map[uint64]uint64)
	}
	if _, ok := r.skipped[rule]; !ok {
		r.skipped[rule] = url
	}
}

func (r *recorder) fetched() []Fetch {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Fetch, len(r.fetches))
	for i, p := range r.fetches {
		out[i] = Fetch{URL: r.urls[p.URL], Status: p.Status}
	}
	return out
}

// PrecisionRun is one run of the benchmark.
type PrecisionRun struct {
	Mode    string
	Score   Score
	Elapsed time.Duration
	Stopped bool            // the run reached Options.Limit
	Dup     engine.DupStats // the engine's duplicate detection counters
	// DetectPerPage is the engine's own measure of detection's cost
	// (Stats.Dup.Time: fingerprinting and decisions) per page retrieved.
	DetectPerPage time.Duration
	// Rules are the URL rewrite rules the run learned, by the trap kind of
	// the first copy that supported them.
	Rules map[simweb.TrapKind]RuleCount
}

// RuleCount is one row of PrecisionRun.Rules.
type RuleCount struct {
	Learned, Withdrawn int
	// Prior counts the rules learned from fewer pairs because other
	// hosts had learned the same rewrite (dedup.Rule.Prior); NoPair
	// those of them put in force with no pair of their own, once their
	// canonical spelling answered (dedup.Detector.FromPrior).
	Prior, NoPair int
	Covered       int64 // URLs the rules covered, not fetched
	ByKind        map[dedup.RuleKind]int
}

// Precision runs the precision benchmark: it serves simweb with traps in
// this process, crawls it once per mode with lidi's engine into a real
// store, scores each crawl against the ground truth and writes the report
// to out, ending with one line of key=value pairs per run.
func Precision(ctx context.Context, o PrecisionOptions, out io.Writer) ([]PrecisionRun, error) {
	dir, cleanup, err := benchDir(o.Dir)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	web, err := simweb.Generate(simweb.Options{Seed: o.Seed, Sites: o.Sites, Pages: o.Pages, Traps: o.Traps})
	if err != nil {
		return nil, err
	}
	ws := web.Stats()
	seedPages := web.Seeds(o.Seeds)
	reach := web.ReachableUnique(seedPages)
	fmt.Fprintf(out, "bench precision: simweb of %d sites, %d pages, %d trap sites per kind (%d sites with traps), seed %d; r=%d c=%d w=0; word hash %s; storage in %s\n",
		ws.Sites, ws.Pages, o.Traps, ws.TrapSites, o.Seed, o.Robots, o.PagesPerVisit, o.WordHash.Or(), dir)
	fmt.Fprintf(out, "ground truth: %d unique genuine contents reachable from %d seeds, %d of them more than 10 links away (at most %d)\n",
		reach.Unique, len(seedPages), reach.BeyondDepth10, reach.MaxDistance)
	srv, err := simweb.Start(ctx, web, simweb.ServerConfig{})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	seeds := srv.SeedURLs(o.Seeds)
	if o.CPUProfile != "" {
		f, err := os.Create(o.CPUProfile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}

	var runs []PrecisionRun
	for _, mode := range o.Modes {
		cfg := benchConfig(seeds, o.Robots, o.PagesPerVisit)
		cfg.WordHash = o.WordHash
		switch mode {
		case ModeLidi:
			cfg.Detect = true
			cfg.Scope.MaxDepth = 0
			fmt.Fprintf(out, "\nrun %s: detection on, unlimited depth\n", mode)
		case ModeFixedDepth:
			cfg.Detect = false
			cfg.Scope.MaxDepth = o.FixedDepth
			fmt.Fprintf(out, "\nrun %s: detection off, max depth %d\n", mode, o.FixedDepth)
		default:
			return nil, fmt.Errorf("bench: unknown mode %q", mode)
		}
		run, err := precisionRun(ctx, o, cfg, srv.DNSAddr(), filepath.Join(dir, "precision-"+mode+".db"), out)
		if err != nil {
			return nil, err
		}
		run.Mode = mode
		run.Score = ScoreCrawl(web, reach, run.fetched)
		run.Rules = rulesByTrap(web, run.rules, run.urls, run.skipped)
		runs = append(runs, run.PrecisionRun)
		writeTrapTable(out, run.Score)
		writeWaste(out, run.Score, o.Waste)
		writeRuleTable(out, run.Rules)
		fmt.Fprintf(out, "  precision %.4f (%d unique of %d retrieved), recall %.4f (%d of %d reachable), detection %.1f µs/page%s\n",
			run.Score.Precision, run.Score.Unique, run.Score.Pages, run.Score.Recall, run.Score.Recalled, run.Score.Reachable,
			us(run.DetectPerPage), stoppedNote(run.Stopped))
	}

	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tpages\tunique\tprecision\trecall\tdetect µs/page\texact\tnear\tsoft-404\trules\twithdrawn\tpruned\ttime\t")
	for _, r := range runs {
		d := r.Dup
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.4f\t%.4f\t%.1f\t%d\t%d\t%d\t%d\t%d\t%d\t%s%s\t\n", r.Mode, r.Score.Pages, r.Score.Unique, r.Score.Precision, r.Score.Recall,
			us(r.DetectPerPage), d.Exact, d.Near, d.Soft404, d.Rules, d.Withdrawn, d.Pruned, r.Elapsed.Round(100*time.Millisecond), stoppedNote(r.Stopped))
	}
	tw.Flush()
	for _, r := range runs {
		fmt.Fprintf(out, "mode=%s pages=%d unique=%d precision=%.4f recall=%.4f detect_us_per_page=%.1f\n",
			r.Mode, r.Score.Pages, r.Score.Unique, r.Score.Precision, r.Score.Recall, us(r.DetectPerPage))
	}
	return runs, nil
}

type precisionRunResult struct {
	PrecisionRun
	fetched []Fetch
	rules   []dedup.Rule
	urls    map[uint64]string
	skipped map[uint64]uint64 // by rule ID: the first URL skipped under it
}

func precisionRun(ctx context.Context, o PrecisionOptions, cfg engine.Config, dnsAddr, path string, out io.Writer) (precisionRunResult, error) {
	var res precisionRunResult
	c, err := runRecorded(ctx, cfg, o.OpenStore, path, dns.Config{Servers: []string{dnsAddr}}, o.Limit, o.ProgressInterval, out)
	if err != nil {
		return res, err
	}
	res.Elapsed, res.Stopped, res.Dup = c.Elapsed, c.Stopped, c.Stats.Dup
	if c.Stats.Pages > 0 {
		res.DetectPerPage = c.Stats.Dup.Time / time.Duration(c.Stats.Pages)
	}
	res.fetched, res.rules, res.urls, res.skipped = c.fetched, c.Rules, c.urls, c.skipped
	return res, nil
}

// rulesByTrap counts rules by the trap kind of the first copy that
// supported them (simweb's truth of its URL), or for a rule with no pair
// of its own, of the first URL skipped under it (skipped, by rule ID).
func rulesByTrap(web *simweb.Web, rules []dedup.Rule, urls map[uint64]string, skipped map[uint64]uint64) map[simweb.TrapKind]RuleCount {
	out := make(map[simweb.TrapKind]RuleCount)
	for _, r := range rules {
		k := simweb.TrapNone
		if len(r.Support) > 0 {
			k = web.Truth(urls[r.Support[0].Copy]).Trap
		} else if u, ok := skipped[r.ID()]; ok {
			k = web.Truth(urls[u]).Trap
		}
		row := out[k]
		if row.ByKind == nil {
			row.ByKind = make(map[dedup.RuleKind]int)
		}
		row.Learned++
		if r.Withdrawn {
			row.Withdrawn++
		}
		row.Covered += r.Covered
		row.ByKind[r.Kind]++
		if r.Prior > 0 {
			row.Prior++
			if r.Supports == 0 {
				row.NoPair++
			}
		}
		out[k] = row
	}
	return out
}

// writeRuleTable writes the rules learned by trap kind, with the URLs
// they covered (pages not fetched).
func writeRuleTable(out io.Writer, rules map[simweb.TrapKind]RuleCount) {
	if len(rules) == 0 {
		return
	}
	var kinds []simweb.TrapKind
	for k := range rules {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  rules by trap of their first copy\tlearned\twith a prior\tno pair\twithdrawn\tURLs covered\tkinds")
	for _, k := range kinds {
		r := rules[k]
		var parts []string
		for _, rk := range dedup.RuleKinds() {
			if n := r.ByKind[rk]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", rk, n))
			}
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t%d\t%s\n", k, r.Learned, r.Prior, r.NoPair, r.Withdrawn, r.Covered, strings.Join(parts, ", "))
	}
	tw.Flush()
}

// writeTrapTable writes the pages retrieved and the unique ones by the
// trap of their URL, and the wasted ones by the trap that made them a copy
// (TrapCount.Wasted).
func writeTrapTable(out io.Writer, sc Score) {
	var kinds []simweb.TrapKind
	for k := range sc.ByTrap {
		kinds = append(kinds, k)
	}
	for k := range sc.Missed {
		if _, ok := sc.ByTrap[k]; !ok {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  trap\tretrieved\tunique\twasted\treachable missed\t")
	for _, k := range kinds {
		r := sc.ByTrap[k]
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\t\n", k, r.Pages, r.Unique, r.Wasted, sc.Missed[k])
	}
	tw.Flush()
}

// writeWaste lists up to n wasted fetches of each trap.
func writeWaste(out io.Writer, sc Score, n int) {
	if n <= 0 {
		return
	}
	var kinds []simweb.TrapKind
	for k := range sc.ByTrap {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		w := sc.ByTrap[k].Waste
		if len(w) == 0 {
			continue
		}
		fmt.Fprintf(out, "  wasted by %s (%d):\n", k, len(w))
		for _, f := range w[:min(n, len(w))] {
			fmt.Fprintf(out, "    %d %s\n", f.Status, f.URL)
		}
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func stoppedNote(stopped bool) string {
	if stopped {
		return " (stopped at the time limit)"
	}
	return ""
}
