// Command lidi is a terminal-UI web crawler console.
//
//	lidi [--config config.yaml] [--headless]   crawl what config.yaml says, in the console
//	lidi crawl --config config.yaml --headless  the same without a terminal
//	lidi demo                                   crawl an embedded synthetic web in the console
//	lidi simweb --sites 2000 --seed 1           serve a synthetic web on loopback
//	lidi sim --strategy length                  crawl a synthetic web in virtual time
//	lidi export --db crawl.db --out snap.db     a consistent copy of a crawl, while it runs
//	lidi bench crawl                            measure the crawler against simweb
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"lidi/engine"
	"lidi/engine/bench"
	"lidi/engine/config"
	"lidi/engine/dns"
	"lidi/engine/sim"
	"lidi/engine/simweb"
	"lidi/storage"
	"lidi/tui"
)

const usage = `lidi: a web crawler console

usage:
  lidi [--config config.yaml] [--headless]    crawl what config.yaml says, in the console
  lidi crawl --config config.yaml --headless  the same, without a terminal (progress lines)
  lidi demo [--sites N] [--db FILE]           crawl an embedded synthetic web in the console
  lidi simweb --sites 2000 --seed 1           serve a synthetic web on loopback until interrupted
  lidi sim [--strategy length --robots 64]    crawl a synthetic web (or an exported graph) in virtual time
  lidi export --db crawl.db --out snap.db     write a consistent snapshot of a crawl, even while it runs
  lidi bench crawl [--pages N]                measure crawl speed, memory and DNS against simweb
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "", "crawl":
		err = crawlCmd(args, stdout, cmd == "crawl")
	case "demo":
		err = demoCmd(args, stdout)
	case "simweb":
		err = simwebCmd(args, stdout)
	case "sim":
		err = simCmd(args, stdout)
	case "export":
		err = exportCmd(args, stdout)
	case "bench":
		err = benchCmd(args, stdout)
	case "help":
		fmt.Fprint(stdout, usage)
	default:
		err = fmt.Errorf("unknown command %q\n\n%s", cmd, usage)
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, engine.ErrStopped):
		fmt.Fprintln(stderr, "lidi: stopped; the state is saved: run the same command again to continue")
		return 0
	default:
		fmt.Fprintln(stderr, "lidi:", err)
		return 1
	}
}

// setHeapLimit applies memory.heap_limit_mb (MiB; 0 means none) unless the
// GOMEMLIMIT environment variable already set one.
func setHeapLimit(mb int) {
	if mb > 0 && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(mb) << 20)
	}
}

// signalContext ends on SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func crawlCmd(args []string, stdout io.Writer, headlessDefault bool) error {
	fs := flag.NewFlagSet("crawl", flag.ContinueOnError)
	path := fs.String("config", "config.yaml", "the crawl's configuration")
	headless := fs.Bool("headless", false, "no console: print a progress line every few seconds")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path)
	if err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	return crawl(ctx, cfg, nil, *headless, stdout)
}

// crawl runs the crawl cfg describes, in the console or headless. oracle,
// when not nil, knows the true PageRank (the demo's synthetic web). Errors
// on start (a locked database, DNS servers) come back before any screen
// opens.
func crawl(ctx context.Context, cfg *config.File, oracle engine.Oracle, headless bool, stdout io.Writer) error {
	setHeapLimit(cfg.Memory.HeapLimitMB)
	db, err := storage.Open(cfg.Storage.Path, storage.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	resolver, err := dns.NewCache(cfg.DNSConfig())
	if err != nil {
		return fmt.Errorf("config: dns.servers: %w", err)
	}
	defer resolver.Close()
	ec := cfg.Engine()
	ec.Oracle = oracle
	eng, err := engine.New(ec, db, resolver, nil)
	if err != nil {
		return err
	}
	eng.SnapshotDir = filepath.Dir(cfg.Storage.Path)
	// limits.max_duration ends the crawl, not the console: the final
	// figures stay on screen until q.
	crawlCtx, stopCrawl := context.WithCancel(ctx)
	defer stopCrawl()
	if d := cfg.Limits.MaxDuration; d > 0 {
		crawlCtx, stopCrawl = context.WithTimeout(ctx, d)
		defer stopCrawl()
	}
	if headless {
		err := runHeadless(crawlCtx, eng, stdout)
		if errors.Is(err, engine.ErrStopped) && ctx.Err() == nil {
			return nil // the duration limit: a normal end
		}
		return err
	}
	return runConsole(ctx, crawlCtx, stopCrawl, eng, cfg.Console.Refresh)
}

// runConsole shows the console while the engine crawls; quitting the console
// stops the crawl with its state saved.
func runConsole(ctx, crawlCtx context.Context, stopCrawl context.CancelFunc, eng *engine.Engine, refresh time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- eng.Run(crawlCtx) }()
	uiErr := tui.Run(ctx, eng, tui.Options{Refresh: refresh})
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

// runHeadless crawls with a progress line every few seconds.
func runHeadless(ctx context.Context, eng *engine.Engine, out io.Writer) error {
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			fmt.Fprintln(out, progressLine(eng.Stats()))
			return err
		case <-tick.C:
			fmt.Fprintln(out, progressLine(eng.Stats()))
		}
	}
}

func progressLine(s engine.Stats) string {
	var errs int64
	for _, n := range s.ErrorKind {
		errs += n
	}
	return fmt.Sprintf("%s  %s pages=%d pages/s=%.0f sites_active=%d queue=%d sites=%d errors=%d dns_queries=%d",
		time.Now().Format(time.TimeOnly), s.State, s.Pages, s.PagesPerSec, s.RobotsBusy, s.QueueDepth, s.Sites, errs, s.DNS.Queries)
}

func demoCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	sites := fs.Int("sites", 200, "sites in the synthetic web")
	pages := fs.Int("pages", 4000, "pages in the synthetic web")
	seed := fs.Int64("seed", 1, "the synthetic web's seed")
	dbPath := fs.String("db", "lidi-demo.db", "the demo crawl's SQLite file (run the demo again to continue it)")
	headless := fs.Bool("headless", false, "no console")
	strategy := fs.String("strategy", "length", "the crawl's strategy: length, depth, batch, partial or optimal")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, stop := signalContext()
	defer stop()
	web, err := simweb.Generate(simweb.Options{Seed: *seed, Sites: *sites, Pages: *pages})
	if err != nil {
		return err
	}
	srv, err := simweb.Start(ctx, web, simweb.ServerConfig{Port: demoPort})
	if err != nil {
		return err
	}
	defer srv.Close()
	cfg := config.Default()
	cfg.Seeds = srv.SeedURLs(5)
	cfg.DNS.Servers = []string{srv.DNSAddr()}
	cfg.Robots = 16
	cfg.Politeness.Delay = 200 * time.Millisecond
	cfg.Politeness.PagesPerConnection = 20
	cfg.Storage.Path = *dbPath
	// A coverage point every 100 pages of the demo's few thousand, and
	// the synthetic web's true PageRank for the oracle's curve.
	cfg.PageRank.EveryPages = 100
	cfg.PageRank.Every = 2 * time.Second
	cfg.PageRank.StoreEvery = 10 * time.Second
	cfg.PageRank.BatchPages = 200
	if err := cfg.Check(); err != nil {
		return err
	}
	// Set after the check, which knows no oracle: "optimal" needs the one
	// crawl gives the engine (an unknown name fails there all the same).
	cfg.Strategy = *strategy
	return crawl(ctx, cfg, web.Oracle(), *headless, stdout)
}

// demoPort is the synthetic web's port in the demo: fixed, so that running
// the demo again continues the same crawl.
const demoPort = 18080

func simwebCmd(args []string, stdout io.Writer) error {
	ctx, stop := signalContext()
	defer stop()
	return simweb.Command(ctx, args, stdout, os.Stderr)
}

func simCmd(args []string, stdout io.Writer) error {
	ctx, stop := signalContext()
	defer stop()
	return sim.Command(ctx, args, stdout, os.Stderr)
}

func exportCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	db := fs.String("db", "crawl.db", "the crawl's SQLite file")
	out := fs.String("out", "", "the snapshot to write (must not exist)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("export: --out is required")
	}
	ctx, stop := signalContext()
	defer stop()
	if err := storage.Export(ctx, *db, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "snapshot of %s written to %s\n", *db, *out)
	return nil
}

// benchCmd runs one of lidi's benchmarks; each lives in engine/bench and is
// wired here.
func benchCmd(args []string, stdout io.Writer) error {
	which := ""
	if len(args) > 0 {
		which, args = args[0], args[1:]
	}
	switch which {
	case "crawl":
		return benchCrawlCmd(args, stdout)
	case "precision":
		return benchPrecisionCmd(args, stdout)
	case "strategies":
		return benchStrategiesCmd(args, stdout)
	}
	return errors.New("bench: which benchmark? (crawl, precision, strategies)")
}

// openBenchStore opens a benchmark's crawl database: the same SQLite store
// a real crawl uses.
func openBenchStore(path string) (engine.Store, io.Closer, error) {
	db, err := storage.Open(path, storage.Options{})
	return db, db, err
}

func benchCrawlCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench crawl", flag.ContinueOnError)
	var opt bench.CrawlOptions
	opt.RegisterFlags(fs)
	heapLimit := fs.Int("heap-limit-mb", config.DefaultHeapLimitMB, "soft limit on the Go heap in MiB, as memory.heap_limit_mb (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	setHeapLimit(*heapLimit)
	ctx, stop := signalContext()
	defer stop()
	opt.OpenStore = openBenchStore
	opt.SimwebCommand = []string{os.Args[0], "simweb"}
	return bench.Crawl(ctx, opt, stdout)
}
