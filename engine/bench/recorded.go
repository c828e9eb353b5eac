package bench

import (
	"context"
	"io"
	"time"

	"lidi/engine"
	"lidi/engine/dedup"
	"lidi/engine/dns"
	"lidi/engine/record"
)

// recordedCrawl is one crawl of a benchmark that scores what was fetched:
// its store records every page's URL and status as it is written.
type recordedCrawl struct {
	Elapsed time.Duration
	Stopped bool // the crawl reached its time limit and was stopped
	Stats   engine.Stats
	Rules   []dedup.Rule
	fetched []Fetch
	urls    map[uint64]string // every URL recorded, by id
	skipped map[uint64]uint64 // by rule ID: the first URL skipped under it
}

// runRecorded crawls with cfg into a new store at path (opened with
// openStore), resolving through a dns.Cache of dnsCfg, until the crawl
// ends or limit has passed, writing progress lines to out every interval.
func runRecorded(ctx context.Context, cfg engine.Config, openStore func(string) (record.Store, io.Closer, error), path string,
	dnsCfg dns.Config, limit, interval time.Duration, out io.Writer) (recordedCrawl, error) {
	var res recordedCrawl
	store, closer, err := openStore(path)
	if err != nil {
		return res, err
	}
	defer closer.Close()
	rec := newRecorder(store)
	resolver, err := dns.NewCache(dnsCfg)
	if err != nil {
		return res, err
	}
	defer resolver.Close()
	eng, err := engine.New(cfg, rec, resolver, nil)
	if err != nil {
		return res, err
	}
	deadline := time.Now().Add(limit)
	res.Elapsed, err = runEngine(ctx, eng, out, interval, func(engine.Stats) bool {
		if time.Now().After(deadline) {
			res.Stopped = true
			return true
		}
		return false
	})
	if err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	res.Stats = eng.Stats()
	res.Rules = eng.Rules()
	res.fetched = rec.fetched()
	res.urls = rec.urls
	res.skipped = rec.skipped
	return res, nil
}
