// Command lidi is a terminal-UI web crawler console. `lidi help` lists its
// commands; `lidi COMMAND -h` prints a command's usage and flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"lidi/engine"

	"lidi/engine/config"
	"lidi/engine/dns"
	"lidi/engine/frontier"
	"lidi/engine/recrawl"
	"lidi/engine/sim"
	"lidi/engine/simweb"
	"lidi/internal/gcpace"
	"lidi/storage"
	"lidi/tui"
)

// commands are lidi's commands, in the order `lidi help` lists them.
var commands = []command{
	{name: "crawl", synopsis: "[--config FILE] [--headless]", setup: crawlCmd,
		summary: "crawl what a config file says, in the console (the default command)",
		doc: `Crawl what the config file says, in the console; ` + "`lidi`" + ` alone is lidi crawl.
With --headless, print a progress line every few seconds instead; the crawl
ends when the frontier is empty or a limit is reached. SIGINT, SIGTERM or q
stop it with its state saved: running the same command again continues it.`},
	{name: "demo", synopsis: "[--sites N] [--pages N] [--seed N] [--strategy NAME] [--db FILE] [--headless]", setup: demoCmd,
		summary: "serve a synthetic web in this process and crawl it in the console",
		doc: `Serve a synthetic web on loopback in this process and crawl it in the
console, with the web's true PageRank as the oracle (oracle coverage and the
optimal strategy). Running it again continues the same crawl.`},
	{name: "simweb", synopsis: "[flags]", setup: simwebCmd, doc: simweb.CommandDoc,
		summary: "serve a synthetic web on loopback until interrupted, or export it"},
	{name: "sim", synopsis: "[flags]", setup: simCmd, doc: sim.CommandDoc,
		summary: "crawl a synthetic web (or an exported graph) in virtual time"},
	{name: "slave", synopsis: "--master nats://HOST:PORT --token TOKEN [--robots N] [--tag TAG] [--headless]", setup: slaveCmd,
		summary: "crawl as a light slave of a remote master (cluster.listen on the master)",
		doc: `Join a master's crawl as a light slave: pull its leases (a site's URLs with
the site's address), fetch them politely, and send back what was found,
zlib-compressed. A slave needs no config file, resolves no name and keeps no
crawl database: its results wait in a small spool file until the master has
them, so a slave cut off from its master, or killed and started again with
the same --id, delivers them later. Two slaves on one machine need two ids.`},
	{name: "version", setup: versionCmd,
		summary: "print lidi's version: the module version and the commit it was built from (also lidi --version)"},
	{name: "export", synopsis: "--db FILE (--out FILE | --warc DIR [--prefix P] [--max-size BYTES] [--config FILE])", setup: exportCmd,
		summary: "write a consistent snapshot of a crawl, or a web archive (WARC/1.1 and CDXJ), even while it runs"},
	{name: "bench crawl", synopsis: "[flags]", setup: benchCrawlCmd,
		summary: "measure crawl speed, CPU, memory and DNS queries against simweb"},
	{name: "bench precision", synopsis: "[flags]", setup: benchPrecisionCmd,
		summary: "measure crawling precision and recall against simweb's traps"},
	{name: "bench mirror", synopsis: "[--realweb DIR]", setup: benchMirrorCmd,
		summary: "a real blog holding a mirror of the Jargon File, crawled with and without duplicate detection"},
	{name: "bench strategies", synopsis: "[flags]", setup: benchStrategiesCmd,
		summary: "reproduce Castillo's chapter 6: the ordering strategies' PageRank coverage"},
	{name: "bench cluster", synopsis: "[flags]", setup: benchClusterCmd,
		summary: "a master with 1, 2 and 4 slave processes against one process: speed, CPU, Cho's metrics, faults"},
	{name: "bench recrawl", synopsis: "[flags]", setup: benchRecrawlCmd,
		summary: "SARSS's REC and RUC and Wolf's allocations with lidi's recrawl policies, in virtual time"},
	{name: "bench recrawl-live", synopsis: "[flags]", setup: benchRecrawlLiveCmd,
		summary: "a real recrawl of a time-scaled changing simweb over loopback against its simulation"},
	{name: "bench chaos", synopsis: "[flags]", setup: benchChaosCmd,
		summary: "kill -9 a crawl at random moments and restart it: pages lost, refetched, integrity, equality"},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func crawlCmd(fs *flag.FlagSet) runFunc {
	path := fs.String("config", "config.yaml", "the crawl's configuration `file`")
	headless := fs.Bool("headless", false, "no console: print a progress line every few seconds")
	return func(ctx context.Context, out output) error {
		cfg, err := config.Load(*path)
		if errors.Is(err, os.ErrNotExist) && !flagSet(fs, "config") {
			return &usageError{overview: true,
				msg: fmt.Sprintf("no %s here: copy lidi's config.yaml and set its seeds and scope, or name one with --config FILE", *path)}
		}
		var bad *engine.ConfigError
		if errors.As(err, &bad) && bad.Key == "seeds" && !flagSet(fs, "config") {
			return fmt.Errorf("%w\n(lidi demo crawls a synthetic web with no config)", err)
		}
		if err != nil {
			return err
		}
		return crawl(ctx, cfg, nil, *headless, out, "lidi crawl --config "+*path)
	}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// crawl runs the crawl cfg describes, in the console or headless. wire,
// when not nil, gives the engine what no config.yaml key can: the demo's
// synthetic web as the oracle of PageRank and freshness, its clock. Errors
// on start (no terminal, a locked database, DNS servers) come back before
// any screen opens. again is the command line that continues the crawl.
func crawl(ctx context.Context, cfg *config.File, wire func(*engine.Config), headless bool, out output, again string) error {
	if !headless && !(term.IsTerminal(os.Stdin.Fd()) && term.IsTerminal(os.Stdout.Fd())) {
		return errors.New("the console needs a terminal and this is not one: add --headless for progress lines instead")
	}
	// Everything the config can get wrong fails here, before the database
	// and its lock are created.
	ec := cfg.Engine()
	if wire != nil {
		wire(&ec)
	}
	if err := ec.Validate(); err != nil {
		return err
	}
	resolver, err := dns.NewCache(cfg.DNS)
	if err != nil {
		return err
	}
	defer resolver.Close()
	defer gcpace.Start(cfg.HeapLimitMB, cfg.HeadroomMB)()
	// An upgrade of an older file says what it does: at millions of URLs
	// it takes minutes, before any screen opens.
	db, err := storage.Open(cfg.StoragePath, storage.Options{MaxSize: cfg.MaxSize, Log: func(msg string) { fmt.Fprintln(out.stderr, msg) }})
	if err != nil {
		return err
	}
	defer db.Close()
	eng, err := engine.New(ec, db, resolver, nil)
	if err != nil {
		return err
	}
	eng.SnapshotDir = filepath.Dir(cfg.StoragePath)
	master, stopMaster, err := startMaster(ctx, cfg, eng, out.stdout)
	if err != nil {
		return err
	}
	defer stopMaster()
	// The crawl's context ends with a cause that says why: a signal, q or
	// limits.max_duration, which ends the crawl, not the console (the
	// final figures stay on screen until q).
	crawlCtx, stopCrawl := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopCrawl(nil)
	defer context.AfterFunc(ctx, func() {
		stopCrawl(engine.Stopped(engine.EndSignal, context.Cause(ctx).Error()))
	})()
	var until time.Time
	if d := cfg.MaxDuration; d > 0 {
		var cancel context.CancelFunc
		crawlCtx, cancel = context.WithTimeoutCause(crawlCtx, d, engine.Stopped(engine.EndMaxDuration, d.String()))
		defer cancel()
		until, _ = crawlCtx.Deadline()
	}
	if headless {
		err := runHeadless(crawlCtx, eng, out.stdout)
		if master != nil {
			fmt.Fprintln(out.stdout, masterLine(master))
		}
		if errors.Is(err, engine.ErrStopped) && ctx.Err() == nil {
			return nil // the duration limit: a normal end
		}
		return err
	}
	opt := tui.Options{Refresh: cfg.Refresh, Until: until}
	closed := func() {}
	if master != nil {
		opt.Cluster = master
		master.stop = func() { stopCrawl(engine.Stopped(engine.EndKey, "q")) }
		master.quiet.Store(true)
		closed = master.consoleClosed
	}
	err = runConsole(ctx, crawlCtx, func() { closed(); stopCrawl(engine.Stopped(engine.EndKey, "q")) }, eng, opt)
	if err == nil {
		where, _ := filepath.Abs(cfg.StoragePath)
		fmt.Fprintf(out.stdout, "lidi: the crawl is kept in %s (%d pages fetched); to continue it: %s\n", where, eng.Stats().Pages, again)
	}
	return err
}

// runConsole shows the console while the engine crawls; quitting the console
// stops the crawl with its state saved.
func runConsole(ctx, crawlCtx context.Context, stopCrawl func(), eng *engine.Engine, opt tui.Options) error {
	// net/http logs what a hostile server sends past a response's end
	// with the standard logger, which would draw over the console.
	log.SetOutput(io.Discard)
	defer log.SetOutput(os.Stderr)
	done := make(chan error, 1)
	go func() { done <- eng.Run(crawlCtx) }()
	uiErr := tui.Run(ctx, eng, opt)
	stopCrawl()
	err := <-done
	if uiErr != nil {
		return uiErr
	}
	if errors.Is(err, engine.ErrStopped) {
		return nil // the user quit: state saved
	}
	return err
}

// runHeadless crawls with a progress line every few seconds, a line for
// each event (a site parked, robots.txt 5xx, a seed failed, ...) and, at
// the end, one that says why the crawl ended.
func runHeadless(ctx context.Context, eng *engine.Engine, out io.Writer) error {
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	events := time.NewTicker(250 * time.Millisecond)
	defer events.Stop()
	var seen int64
	for {
		select {
		case err := <-done:
			s := eng.Stats()
			printEvents(out, s, seen)
			fmt.Fprintln(out, progressLine(s))
			if s.EndText != "" {
				fmt.Fprintf(out, "%s  ended: %s\n", time.Now().Format(time.TimeOnly), s.EndText)
			}
			return err
		case <-events.C:
			seen = printEvents(out, eng.Stats(), seen)
		case <-tick.C:
			fmt.Fprintln(out, progressLine(eng.Stats()))
		}
	}
}

// printEvents prints the events of s after the first seen, and returns how
// many have been printed.
func printEvents(out io.Writer, s engine.Stats, seen int64) int64 {
	evs := s.Events
	if n := s.EventCount - seen; n < int64(len(evs)) {
		evs = evs[int64(len(evs))-n:]
	}
	for _, e := range evs {
		site := ""
		if e.Site != "" {
			site = " " + e.Site
		}
		fmt.Fprintf(out, "%s  event %s%s: %s\n", e.Time.Format(time.TimeOnly), e.Kind, site, e.Text)
	}
	return s.EventCount
}

func progressLine(s engine.Stats) string {
	var errs int64
	for _, n := range s.ErrorKind {
		errs += n
	}
	limit := ""
	if s.MaxPages > 0 {
		limit = fmt.Sprintf(" max_pages=%d", s.MaxPages)
	}
	return fmt.Sprintf("%s  %s pages=%d fetches=%d recrawls=%d%s fetches/s=%.0f sites_active=%d queue=%d sites=%d errors=%d dns_queries=%d reconnects=%d requests_per_connection=%.1f",
		time.Now().Format(time.TimeOnly), s.State, s.Pages, s.Fetches, s.Recrawls, limit, s.FetchesPerSec, s.RobotsBusy, s.QueueDepth, s.Sites, errs, s.DNS.Queries,
		s.Conns.Reconnects(), s.Conns.PerConnection())
}

func demoCmd(fs *flag.FlagSet) runFunc {
	var sites, pages = new(int), new(int)
	seed := new(int64)
	simweb.WebFlags(fs, sites, 200, pages, 4000, seed)
	traps := fs.Int("traps", 2, "sites per kind of crawler trap (mirrors, session ids, soft 404s, …) in the synthetic web, for duplicate detection to find; 0 for none")
	dbPath := fs.String("db", "", "the demo crawl's SQLite `file` (default lidi-demo-FLAGS.db, named after the flags below; run the demo again to continue it)")
	headless := fs.Bool("headless", false, "no console: print a progress line every few seconds")
	strategy := fs.String("strategy", "length", "the crawl's `strategy`, one of:\n"+frontier.StrategyUsage())
	policy := fs.String("recrawl", string(recrawl.Defaults().Policy), "the recrawl policy: pages, fixed, iir, icr, optimal, adaptive, or off")
	scale := fs.Float64("time-scale", 120, "the changing web's clock runs `N` times as fast as real time")
	return func(ctx context.Context, out output) error {
		flags := demoFlags{{"sites", strconv.Itoa(*sites)}, {"pages", strconv.Itoa(*pages)}, {"seed", strconv.FormatInt(*seed, 10)}, {"traps", strconv.Itoa(*traps)},
			{"strategy", *strategy}, {"recrawl", *policy}, {"time-scale", strconv.FormatFloat(*scale, 'g', -1, 64)}}
		if *dbPath == "" {
			*dbPath = flags.fileName()
		}
		// The demo's database is made below: what can be wrong with the
		// flags is found before.
		if _, ok := frontier.LookupStrategy(*strategy); !ok {
			return &usageError{msg: fmt.Sprintf("unknown strategy %q: write one of %s", *strategy, strings.Join(frontier.StrategyNames(), ", "))}
		}
		if _, err := recrawl.ParsePolicyName(*policy); err != nil && *policy != "off" {
			return &usageError{msg: err.Error()}
		}
		cfg := config.Default()
		cfg.StoragePath = *dbPath
		if err := cfg.CheckStorageDir(); err != nil {
			return err
		}
		epoch, err := flags.claim(ctx, *dbPath, time.Now())
		if err != nil {
			return err
		}
		web, err := simweb.Generate(simweb.Options{Seed: *seed, Sites: *sites, Pages: *pages, Traps: *traps, Change: simweb.ChangeOptions{Enabled: true}})
		if err != nil {
			return err
		}
		// The web outlives the crawl's visits: a stop must not turn the
		// pages in flight into connection errors.
		srv, err := simweb.Start(context.WithoutCancel(ctx), web, simweb.ServerConfig{Port: demoPort, TimeScale: *scale, Epoch: epoch})
		if err != nil {
			return err
		}
		defer srv.Close()
		cfg.Seeds = srv.SeedURLs(5)
		cfg.Scope.AllowedDomains = []string{"test"} // simweb's hosts
		cfg.DNS.Servers = []string{srv.DNSAddr()}
		cfg.Robots = 16
		cfg.Delay = 200 * time.Millisecond
		cfg.PagesPerVisit = 20
		// A coverage point every 100 pages of the demo's few thousand, and
		// the synthetic web's true PageRank for the oracle's curve.
		cfg.RankEveryPages = 100
		cfg.RankEvery = 2 * time.Second
		cfg.RankStoreEvery = 10 * time.Second
		cfg.RankBatch = 200
		// The web changes (SARSS's groups, an hour to sixteen): recrawl
		// it on its own clock, probing every half hour for three hours
		// before the policy takes over.
		cfg.Recrawl.Enabled = *policy != "off"
		if cfg.Recrawl.Enabled {
			cfg.Recrawl.Options.Policy = recrawl.PolicyName(*policy)
		}
		cfg.Recrawl.InitialInterval = 30 * time.Minute
		cfg.Recrawl.Warmup = 3 * time.Hour
		if err := cfg.Check(); err != nil {
			return err
		}
		// Set after the check, which knows no oracle: "optimal" needs the one
		// crawl gives the engine (an unknown name fails there all the same).
		cfg.Strategy = *strategy
		again := "lidi demo " + flags.String()
		for _, name := range []string{"db", "recrawl", "time-scale"} {
			if flagSet(fs, name) {
				again += " --" + name + " " + fs.Lookup(name).Value.String()
			}
		}
		return crawl(ctx, cfg, func(ec *engine.Config) {
			ec.Oracle = web.Oracle()
			ec.Recrawl.Clock = srv.VirtualTime()
			ec.Recrawl.Freshness = srv
		}, *headless, out, again)
	}
}

// demoFlags are the flags that make a demo's crawl what it is: its web and
// its strategy, in order.
type demoFlags []struct{ name, value string }

// String is the flags as typed: "--sites 200 --pages 4000 ...".
func (d demoFlags) String() string {
	parts := make([]string, len(d))
	for i, f := range d {
		parts[i] = "--" + f.name + " " + f.value
	}
	return strings.Join(parts, " ")
}

// fileName is the default database of a demo with these flags, so that
// demos with other flags never continue each other's crawl.
func (d demoFlags) fileName() string {
	var b strings.Builder
	b.WriteString("lidi-demo")
	for _, f := range d {
		b.WriteString("-" + f.name + f.value)
	}
	return b.String() + ".db"
}

// demoFlagsKey is the meta key where a demo's database keeps its flags.
const demoFlagsKey = "demo.flags"

// demoEpochKey is the meta key where a demo's database keeps its changing
// web's epoch, the real time at which the web's virtual clock read 0. The
// web's clock continues from it when the demo runs again, so that the
// copies stored and the web's ground truth stay on one time line (the web
// changed while the demo was stopped, as the real web would).
const demoEpochKey = "demo.web_epoch"

// claim records the flags in a new demo database, or checks that an
// existing one was made with the same flags: continuing a crawl of another
// web, or with another strategy, would mix two experiments in one file. It
// returns the web's epoch: the one recorded, else now, recorded.
func (d demoFlags) claim(ctx context.Context, path string, now time.Time) (time.Time, error) {
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		return time.Time{}, err
	}
	defer db.Close()
	had, ok, err := db.Meta(ctx, demoFlagsKey)
	switch {
	case err != nil:
		return time.Time{}, err
	case !ok:
		if err := db.SetMeta(ctx, demoFlagsKey, d.String()); err != nil {
			return time.Time{}, err
		}
	case had != d.String():
		return time.Time{}, d.differ(path, had)
	}
	epoch, ok, err := db.Meta(ctx, demoEpochKey)
	if err != nil {
		return time.Time{}, err
	}
	if !ok {
		return now, db.SetMeta(ctx, demoEpochKey, now.Format(time.RFC3339Nano))
	}
	t, err := time.Parse(time.RFC3339Nano, epoch)
	if err != nil {
		return time.Time{}, fmt.Errorf("demo: %s: meta %s = %q: %w", path, demoEpochKey, epoch, err)
	}
	return t, nil
}

// differ is the error for a demo database made with other flags than d.
func (d demoFlags) differ(path, had string) error {
	var differ []string
	old := strings.Fields(had)
	for i, f := range d {
		if 2*i+1 < len(old) && old[2*i+1] != f.value {
			differ = append(differ, fmt.Sprintf("--%s %s (the file has %s)", f.name, f.value, old[2*i+1]))
		}
	}
	return fmt.Errorf("demo: %s holds a demo made with %s; these flags differ: %s. Run the demo with the same flags to continue it, or name another file with --db",
		path, had, strings.Join(differ, ", "))
}

// demoPort is the synthetic web's port in the demo: fixed, so that running
// the demo again continues the same crawl.
const demoPort = 18080

func simwebCmd(fs *flag.FlagSet) runFunc {
	run := simweb.CommandFlags(fs)
	return func(ctx context.Context, out output) error { return run(ctx, out.stdout) }
}

func simCmd(fs *flag.FlagSet) runFunc {
	run := sim.CommandFlags(fs)
	return func(ctx context.Context, out output) error { return run(ctx, out.stdout) }
}

func exportCmd(fs *flag.FlagSet) runFunc {
	db := fs.String("db", "crawl.db", "the crawl's SQLite `file`")
	snap := fs.String("out", "", "the snapshot `file` to write (must not exist)")
	warc := addWarcFlags(fs)
	return func(ctx context.Context, out output) error {
		if *warc.dir != "" {
			return exportWARC(ctx, out, *db, warc)
		}
		if *snap == "" {
			return &usageError{msg: "--out is required (or --warc DIR for a web archive)"}
		}
		if err := storage.Export(ctx, *db, *snap); err != nil {
			return err
		}
		fmt.Fprintf(out.stdout, "snapshot of %s written to %s\n", *db, *snap)
		return nil
	}
}
