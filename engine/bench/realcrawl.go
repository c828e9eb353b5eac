package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/simweb"
)

// simConfig is the engine configuration that crawls simweb as lidi's
// simulator models a crawl (engine/sim): strategy, r, c and w as given;
// Crawl-delay capped at w (the simulator has none); a site whose
// robots.txt answers 5xx given up after that first visit; no duplicate
// detection (a web without traps has no duplicates, so it could only add
// false positives) and no bodies kept.
func simConfig(seeds []string, strategy string, robots, pagesPerVisit int, delay time.Duration) engine.Config {
	cfg := benchConfig(seeds, robots, pagesPerVisit)
	cfg.Strategy = strategy
	cfg.Delay, cfg.MaxDelay = delay, delay
	cfg.ParkAfter = 1
	cfg.Detect = false
	cfg.KeepBodies = false
	return cfg
}

// crawlOrder crawls srv's web with lidi's engine into store and returns the
// web's pages that answered 200, in the order the engine recorded them,
// with the crawl's wall time and the number of other answers. Progress
// lines go to out every interval.
func crawlOrder(ctx context.Context, srv *simweb.Server, cfg engine.Config, store record.Store, resolver engine.Resolver,
	out io.Writer, interval time.Duration) (pages []int32, elapsed time.Duration, other int, err error) {
	rec := newRecorder(store)
	eng, err := engine.New(cfg, rec, resolver, nil)
	if err != nil {
		return nil, 0, 0, err
	}
	elapsed, err = runEngine(ctx, eng, out, interval, nil)
	if err != nil {
		return nil, elapsed, 0, err
	}
	if err := ctx.Err(); err != nil {
		return nil, elapsed, 0, err
	}
	web := srv.Web()
	for _, f := range rec.fetched() {
		t := web.Truth(f.URL)
		if f.Status != 200 || t.Page < 0 {
			other++
			continue
		}
		pages = append(pages, int32(t.Page))
	}
	if len(pages) == 0 {
		return nil, elapsed, other, fmt.Errorf("bench: the crawl of simweb fetched no page (%d other answers)", other)
	}
	return pages, elapsed, other, nil
}
