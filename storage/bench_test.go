package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"lidi/engine"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkApply applies batches as a crawl at full speed makes them: 200
// pages, each with 30 links of which 5 lead to new URLs, a compressed body
// per page, and the sites touched. The file grows as the benchmark runs
// (-benchtime 1000x is a 200,000-page crawl that has discovered a million
// URLs), so longer runs measure a bigger database.
//
// pages/s and links/s are over the time spent in Apply; cpu-ms/1000pages is
// the process's CPU time (all goroutines, the background checkpointer and
// the generation of the batches included) per 1,000 pages.
func BenchmarkApply(b *testing.B) {
	for _, bc := range []struct {
		pages, links, news, body int
	}{
		{200, 30, 5, 6 << 10},
		{200, 30, 5, 0},
	} {
		name := fmt.Sprintf("pages=%d/links=%d/new=%d/body=%d", bc.pages, bc.links, bc.news, bc.body)
		b.Run(name, func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "crawl.db"), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			w := newWorkload(1, 500, bc.body)
			var batch engine.Batch
			var links int64
			cpu := cpuTime()
			for b.Loop() {
				b.StopTimer()
				batch.Reset()
				w.fill(&batch, bc.pages, bc.links, bc.news)
				links += int64(len(batch.Links))
				b.StartTimer()
				if err := db.Apply(ctx, &batch); err != nil {
					b.Fatal(err)
				}
			}
			cpu = cpuTime() - cpu
			sec := b.Elapsed().Seconds()
			pages := float64(b.N * bc.pages)
			b.ReportMetric(pages/sec, "pages/s")
			b.ReportMetric(float64(links)/sec, "links/s")
			b.ReportMetric(float64(cpu.Milliseconds())/pages*1000, "cpu-ms/1000pages")
			st, err := db.Stats(ctx)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(st.FileBytes)/(1<<20), "file-MB")
			b.ReportMetric(float64(st.URLs), "urls")
		})
	}
}

// BenchmarkHead reads the head of a site's queue, as the engine does after
// each Apply for the sites it refills, from a database of 200,000 queued
// URLs over 100 sites.
func BenchmarkHead(b *testing.B) {
	db, err := Open(filepath.Join(b.TempDir(), "crawl.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	w := newWorkload(2, 100, 0)
	var batch engine.Batch
	for range 200 {
		batch.Reset()
		for range 1000 {
			site := 1 + w.rng.Int64N(w.sites)
			batch.URLs = append(batch.URLs, w.newURL(site, 0, w.rng.IntN(10)))
		}
		if err := db.Apply(ctx, &batch); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		i++
		urls, _, more, err := db.Head(ctx, int64(1+i%100), 100)
		if err != nil || len(urls) != 100 || !more {
			b.Fatal(len(urls), more, err)
		}
	}
}
