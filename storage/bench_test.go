package storage

import (
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/internal/testkit"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeCalls is the number of write system calls the process has made,
// from /proc/self/io; -1 where there is none.
func writeCalls() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "syscw: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return -1
			}
			return n
		}
	}
	return -1
}

// benchPageSize is the page size of BenchmarkApply's files (go test
// -bench Apply -args -page-size 4096); 0 means pageSize's.
var benchPageSize = flag.Int("page-size", 0, "page size of BenchmarkApply's database files; 0: lidi's")

// BenchmarkApply applies batches as a crawl at full speed makes them: 200
// pages, each with 30 links of which 5 lead to new URLs, a compressed body
// per page, and the sites touched; and batches shaped as the default
// `lidi bench crawl`'s. The file grows as the benchmark runs
// (-benchtime 1000x is a 200,000-page crawl that has discovered a million
// URLs), so longer runs measure a bigger database.
//
// A case with group > 1 writes its batches group to a transaction (Write,
// then Commit), as the engine's committer does between the queue-head
// reads of a crawl, about 80 pages apart, and its commits, every
// storage.flush_interval.
//
// pages/s and links/s are over the time spent in Apply; cpu-ms/1000pages is
// the process's CPU time (all goroutines, the background checkpointer and
// the generation of the batches included) per 1,000 pages; writes/page,
// where Linux tells, the process's write system calls per page (two for
// each page of the write-ahead log, one for each the checkpoint copies).
func BenchmarkApply(b *testing.B) {
	for _, bc := range []struct {
		pages, links, news, body, group int
		visits                          bool // fetched as a crawl does (newVisiting), not FIFO
	}{
		{200, 30, 5, 6 << 10, 1, false},
		{200, 30, 5, 0, 1, false},
		// As `lidi bench crawl` makes them: 13 links and one new URL
		// a page, 8 KiB of body and head, a batch at each queue-head
		// read, committed one by one or six at a time.
		{400, 13, 1, 8 << 10, 1, false},
		{80, 13, 1, 8 << 10, 1, false},
		{80, 13, 1, 8 << 10, 6, false},
		// The same as fetched by a crawl: 2,500 sites, 256 visited at
		// once, up to 100 pages a visit, each site's queue in order
		// (BenchmarkWALFrames' fetch=visits).
		{80, 13, 1, 8 << 10, 6, true},
	} {
		name := fmt.Sprintf("pages=%d/links=%d/new=%d/body=%d/group=%d", bc.pages, bc.links, bc.news, bc.body, bc.group)
		if bc.visits {
			name += "/fetch=visits"
		}
		b.Run(name, func(b *testing.B) {
			db, err := Open(filepath.Join(b.TempDir(), "crawl.db"), Options{pageSize: *benchPageSize})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			ctx := context.Background()
			w := newWorkload(1, 500, bc.body)
			var batch record.Batch
			if bc.visits {
				// 20,000 pages fetched of 60,000 URLs found first: a
				// crawl finds most of a site's URLs long before it
				// fetches them, so its fetches update rows all over urls.
				w = newVisiting(1, 2500, bc.body, 256, 100)
				for range 250 {
					batch.Reset()
					w.fill(&batch, bc.pages, bc.links, 3)
					if err := db.Apply(ctx, &batch); err != nil {
						b.Fatal(err)
					}
				}
			}
			var links int64
			cpu, writes := cpuTime(), writeCalls()
			n := 0
			for b.Loop() {
				b.StopTimer()
				batch.Reset()
				w.fill(&batch, bc.pages, bc.links, bc.news)
				links += int64(len(batch.Links))
				b.StartTimer()
				if err := db.Write(ctx, &batch); err != nil {
					b.Fatal(err)
				}
				if n++; n%bc.group == 0 {
					if err := db.Commit(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := db.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			cpu, writes = cpuTime()-cpu, writeCalls()-writes
			sec := b.Elapsed().Seconds()
			pages := float64(b.N * bc.pages)
			b.ReportMetric(pages/sec, "pages/s")
			b.ReportMetric(float64(links)/sec, "links/s")
			b.ReportMetric(float64(cpu.Milliseconds())/pages*1000, "cpu-ms/1000pages")
			if writes >= 0 {
				b.ReportMetric(float64(writes)/pages, "writes/page")
			}
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
	var batch record.Batch
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

// BenchmarkFetchHistory measures what the fetch history (one row in
// fetches per page fetched) costs a crawl at full speed: the same batches
// as BenchmarkApply's (200 pages, 30 links each of which 5 new, 6 KiB
// bodies) go to two databases in turn, one as lidi writes it and one whose
// history insert is swapped for a statement that binds the same values
// and writes nothing. Alternating the two keeps the machine's load and the
// files' growth the same for both.
//
// It reports the time Apply takes per page with and without the history,
// their difference (history-ns/page) and its share, and ends with the same
// figures as a key=value line.
func BenchmarkFetchHistory(b *testing.B) {
	open := func(history bool) *DB {
		db, err := Open(filepath.Join(b.TempDir(), "crawl.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		if !history {
			for i, n := range chunkSizes {
				q := "SELECT " + strings.TrimSuffix(strings.Repeat("?, ", n*fetchCols), ", ")
				nop, err := db.w.Prepare(q)
				if err != nil {
					b.Fatal(err)
				}
				// The writer runs a statement from its text (rawStmts),
				// and Close closes those in all.
				db.st.text[nop] = q
				db.st.all = append(db.st.all, nop)
				db.st.recrawl.fetches[i] = nop
			}
		}
		return db
	}
	with, without := open(true), open(false)
	ctx := context.Background()
	const pages = 200
	w := newWorkload(1, 500, 6<<10)
	var batch record.Batch
	var took [2]time.Duration
	for b.Loop() {
		b.StopTimer()
		batch.Reset()
		w.fill(&batch, pages, 30, 5)
		for i, db := range []*DB{with, without} {
			start := time.Now()
			if err := db.Apply(ctx, &batch); err != nil {
				b.Fatal(err)
			}
			took[i] += time.Since(start)
		}
		b.StartTimer()
	}
	n := float64(b.N * pages)
	withNs, withoutNs := float64(took[0].Nanoseconds())/n, float64(took[1].Nanoseconds())/n
	var rows int64
	if err := with.r.QueryRowContext(ctx, "SELECT count(*) FROM fetches").Scan(&rows); err != nil || rows != int64(n) {
		b.Fatalf("%d history rows for %.0f pages: %v", rows, n, err)
	}
	b.ReportMetric(withNs, "ns/page")
	b.ReportMetric(withoutNs, "ns/page-without-history")
	b.ReportMetric(withNs-withoutNs, "history-ns/page")
	b.ReportMetric(100*(withNs-withoutNs)/withNs, "history-%")
	b.Logf("pages=%.0f apply_ns_per_page=%.0f without_history_ns_per_page=%.0f history_ns_per_page=%.0f history_share=%.3f pages_per_s=%.0f pages_per_s_without_history=%.0f",
		n, withNs, withoutNs, withNs-withoutNs, (withNs-withoutNs)/withNs, 1e9/withNs, 1e9/withoutNs)
}

// BenchmarkWALFrames counts what a crawled page writes to the WAL, by
// table and index: the pages each commit dirtied, each written whole
// to the WAL and again by a checkpoint, whose cost follows the
// bytes copied. Batches are shaped as the default `lidi bench crawl`'s (80
// pages, 13 links and one new URL a page, 8 KiB of body) and committed at
// commitRecords-like transactions of 5,000 records (four batches); the WAL
// does not start again during the run, so it holds every frame written,
// and dbstat names the table or index of each frame's page. The counts,
// unlike times, do not move with the machine's load: frames/page,
// WAL-KiB/page and TABLE-frames/page (the five largest) compare two
// schemas, or page sizes (a sub-benchmark each).
//
// fetch=fifo fetches the URLs in the order they were stored, which a
// crawl does not; fetch=visits as `lidi bench crawl` does (2,500 sites,
// 256 visited at once, up to 100 pages a visit, each site's queue in
// order), so a batch's fetches update rows all over urls, as in a
// crawl, where they took a third of the WAL.
func BenchmarkWALFrames(b *testing.B) {
	for _, size := range []int{4096, 8192, 16384, 32768} {
		for _, fetch := range []string{"fifo", "visits"} {
			b.Run(fmt.Sprintf("page=%d/fetch=%s", size, fetch), func(b *testing.B) {
				walFramesBench(b, size, func() *workload {
					if fetch == "visits" {
						return newVisiting(1, 2500, 8<<10, 256, 100)
					}
					return newWorkload(1, 500, 8<<10)
				})
			})
		}
	}
}

func walFramesBench(b *testing.B, pageSize int, newLoad func() *workload) {
	const pages, perTx = 80, 4
	for b.Loop() {
		b.StopTimer()
		path := filepath.Join(b.TempDir(), "crawl.db")
		db, err := Open(path, Options{restartFrames: 1 << 40, pageSize: pageSize})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		w := newLoad()
		// Warmed up first: the frames counted are those of a crawl
		// that holds some 20,000 pages already.
		const warm, counted = 250, 60
		for i := range warm + counted {
			if i == warm {
				if err := db.Commit(ctx); err != nil {
					b.Fatal(err)
				}
				// A checkpoint of the checkpointer's under way makes
				// this one busy (a row that says so, no error), and the
				// warm-up's frames left in the WAL made the writer's
				// automatic checkpoint start it again during the count.
				testkit.WaitFor(b, time.Minute, "the WAL emptied", func() bool {
					var busy, log, done int64
					if err := db.w.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &log, &done); err != nil {
						b.Fatal(err)
					}
					return busy == 0
				})
			}
			var batch record.Batch
			news := 1
			if w.visits && i < warm {
				// A crawl finds most of a site's URLs long before it
				// fetches them: the queue grows first.
				news = 3
			}
			w.fill(&batch, pages, 13, news)
			if err := db.Write(ctx, &batch); err != nil {
				b.Fatal(err)
			}
			if i%perTx == perTx-1 {
				if err := db.Commit(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := db.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		byPage, err := walFrames(path + "-wal")
		if err != nil {
			b.Fatal(err)
		}
		names := map[int64]string{}
		rows, err := db.r.QueryContext(ctx, "SELECT name, pageno FROM dbstat")
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			var name string
			var page int64
			if err := rows.Scan(&name, &page); err != nil {
				b.Fatal(err)
			}
			names[page] = name
		}
		rows.Close()
		byName := map[string]int{}
		total := 0
		for page, n := range byPage {
			byName[names[page]] += n
			total += n
		}
		db.Close()
		if least := counted * pages * w.bodyN / pageSize; byName["pages"] < least {
			b.Fatalf("%d frames of bodies in the WAL, %d at least written: it started again during the count", byName["pages"], least)
		}
		b.StartTimer()
		n := float64(counted * pages)
		b.ReportMetric(float64(total)/n, "frames/page")
		b.ReportMetric(float64(total*(pageSize+24))/n/1024, "WAL-KiB/page")
		type kv struct {
			name string
			n    int
		}
		var all []kv
		for name, c := range byName {
			all = append(all, kv{name, c})
		}
		slices.SortFunc(all, func(a, b kv) int { return b.n - a.n })
		for _, e := range all[:min(5, len(all))] {
			b.ReportMetric(float64(e.n)/n, e.name+"-frames/page")
		}
	}
}

// walFrames reads a WAL file and counts its valid frames by page number:
// those after the header whose salts are the header's.
func walFrames(path string) (map[int64]int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 32 {
		return nil, fmt.Errorf("WAL of %d bytes", len(data))
	}
	size := int(binary.BigEndian.Uint32(data[8:]))
	salts := data[16:24]
	frames := map[int64]int{}
	for off := 32; off+24+size <= len(data); off += 24 + size {
		h := data[off : off+24]
		if !bytes.Equal(h[8:16], salts) {
			break
		}
		frames[int64(binary.BigEndian.Uint32(h))]++
	}
	return frames, nil
}
