package main

import (
	"context"
	"flag"
	"io"
	"os"

	"lidi/engine/bench"
	"lidi/engine/config"
	"lidi/engine/record"
	"lidi/internal/gcpace"
	"lidi/storage"
)

// openBenchStore opens a benchmark's crawl database: the same SQLite store
// a real crawl uses.
func openBenchStore(path string) (record.Store, io.Closer, error) {
	db, err := storage.Open(path, storage.Options{})
	return db, db, err
}

// benchCrawlCmd is `lidi bench crawl`: crawl speed, CPU, memory and DNS
// queries against a simweb served by another lidi process.
func benchCrawlCmd(fs *flag.FlagSet) runFunc {
	var opt bench.CrawlOptions
	opt.RegisterFlags(fs)
	heapLimit := fs.Int("heap-limit-mb", config.DefaultHeapLimitMB, "soft limit on the Go heap in MiB, as memory.heap_limit_mb (0: none)")
	headroom := fs.Int("gc-headroom-mb", config.DefaultHeadroomMB, "how far the heap may grow beyond what is live, in MiB, as memory.gc_headroom_mb (0: GOGC's share)")
	return func(ctx context.Context, out output) error {
		defer gcpace.Start(*heapLimit, *headroom)()
		opt.OpenStore = openBenchStore
		opt.SimwebCommand = []string{os.Args[0], "simweb"}
		return bench.Crawl(ctx, opt, out.stdout)
	}
}

// benchPrecisionCmd is `lidi bench precision`: crawling precision and
// recall against simweb's traps, with detection on and with a fixed depth.
func benchPrecisionCmd(fs *flag.FlagSet) runFunc {
	opt := bench.PrecisionOptions{OpenStore: openBenchStore}
	opt.RegisterFlags(fs)
	return func(ctx context.Context, out output) error {
		_, err := bench.Precision(ctx, opt, out.stdout)
		return err
	}
}

// benchMirrorCmd is `lidi bench mirror`: a real host holding a mirror of
// another real site in one directory, crawled with and without duplicate
// detection.
func benchMirrorCmd(fs *flag.FlagSet) runFunc {
	opt := bench.MirrorOptions{OpenStore: openBenchStore}
	opt.RegisterFlags(fs)
	return func(ctx context.Context, out output) error {
		_, err := bench.Mirror(ctx, opt, out.stdout)
		return err
	}
}

// benchStrategiesCmd is `lidi bench strategies`: Castillo's chapter 6
// reproduced on simweb (Figures 6.5, 6.6 and 6.13, Table 6.1).
func benchStrategiesCmd(fs *flag.FlagSet) runFunc {
	opt := bench.StrategiesOptions{OpenStore: openBenchStore}
	opt.RegisterFlags(fs)
	return func(ctx context.Context, out output) error {
		_, err := bench.Strategies(ctx, opt, out.stdout)
		return err
	}
}

// benchRecrawlCmd is `lidi bench recrawl`: SARSS's REC and RUC simulations
// (Tables 1–4) and Wolf's allocations with lidi's recrawl policies, in
// virtual time.
func benchRecrawlCmd(fs *flag.FlagSet) runFunc {
	var opt bench.RecrawlOptions
	opt.RegisterFlags(fs)
	return func(ctx context.Context, out output) error {
		_, err := bench.Recrawl(ctx, opt, out.stdout)
		return err
	}
}

// benchRecrawlLiveCmd is `lidi bench recrawl-live`: per policy, a real
// crawl of a changing simweb on a fast clock against the simulation of the
// same set-up, their freshness curves compared.
func benchRecrawlLiveCmd(fs *flag.FlagSet) runFunc {
	opt := bench.RecrawlLiveOptions{OpenStore: openBenchStore}
	opt.RegisterFlags(fs)
	return func(ctx context.Context, out output) error {
		_, err := bench.RecrawlLive(ctx, opt, out.stdout)
		return err
	}
}

// benchChaosCmd is `lidi bench chaos`: this binary's crawl command killed
// with SIGKILL at random moments and restarted, against an uninterrupted
// crawl of the same synthetic web.
func benchChaosCmd(fs *flag.FlagSet) runFunc {
	opt := bench.ChaosOptions{OpenDB: openChaosDB}
	opt.RegisterFlags(fs)
	return func(ctx context.Context, out output) error {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		opt.Crawler = []string{exe, "crawl"}
		_, err = bench.Chaos(ctx, opt, out.stdout)
		return err
	}
}

// openChaosDB opens a crawl database for the chaos benchmark's checks.
func openChaosDB(path string) (bench.ChaosDB, error) {
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		return nil, err
	}
	return db, nil
}

// benchClusterCmd is `lidi bench cluster`: a master with 1, 2 and 4 slave
// processes against one process alone, and the fault runs.
func benchClusterCmd(fs *flag.FlagSet) runFunc {
	opt := bench.ClusterOptions{OpenStore: openBenchStore}
	opt.RegisterFlags(fs)
	return func(ctx context.Context, out output) error {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		opt.Command = []string{exe}
		return bench.Cluster(ctx, opt, out.stdout)
	}
}
