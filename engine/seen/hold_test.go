package seen_test

import (
	"context"
	"fmt"
	"runtime/metrics"
	"testing"
	"time"

	"lidi/engine/config"
	"lidi/engine/seen"
	"lidi/internal/gcpace"
)

// underCrawlGC runs fn with the collector paced as a crawl's is
// (memory.heap_limit_mb and gc_headroom_mb's defaults), with liveMB MiB
// of live heap beside it, as the crawl's other structures hold, and
// another goroutine allocating allocMBps MiB a second, as the crawl's
// pages do, so that collections run all along and a large allocation
// of fn's may be made to help them (an assist). It returns the
// collections run and the CPU time their assists took.
func underCrawlGC(liveMB, allocMBps int, fn func()) (cycles uint64, assist time.Duration) {
	stopPacing := gcpace.Start(config.DefaultHeapLimitMB, config.DefaultHeadroomMB)
	ctx, cancel := context.WithCancel(context.Background())
	churned := make(chan struct{})
	live := make([][]byte, liveMB)
	for i := range live {
		live[i] = make([]byte, 1<<20)
		for j := 0; j < len(live[i]); j += 4096 {
			live[i][j] = 1 // resident, as the crawl's is
		}
	}
	go func() {
		defer close(churned)
		const chunk = 64 << 10
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var ring [64][]byte // some of it live a while, as a page's buffers are
		for k := 0; ; {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			for range allocMBps << 20 / chunk / 1000 {
				ring[k%len(ring)] = make([]byte, chunk)
				k++
			}
		}
	}()
	samples := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}, {Name: "/cpu/classes/gc/mark/assist:cpu-seconds"}}
	metrics.Read(samples)
	c0, a0 := samples[0].Value.Uint64(), samples[1].Value.Float64()
	fn()
	metrics.Read(samples)
	cancel()
	<-churned
	stopPacing()
	live = nil
	return samples[0].Value.Uint64() - c0, time.Duration((samples[1].Value.Float64() - a0) * float64(time.Second))
}

// BenchmarkHoldUnderGC looks up and adds URLs as a crawl to 2,000,000 URLs
// does (CrawlLookups: some 20 look-ups a page, the new URLs added), under
// a crawl's collector pacing with 256 MiB of other live heap, and ends
// with a key=value line: the longest hold of each kind of hand-over with
// the worker (freezing a full table, taking over the worker's results), in wall time and in its thread's CPU
// time (a hold far longer than its CPU is the machine's load).
func BenchmarkHoldUnderGC(b *testing.B) {
	const n = 2_000_000
	const liveMB, allocMBps = 256, 200
	var st seen.Stats
	var cycles uint64
	var assist time.Duration
	for b.Loop() {
		s, err := seen.Open(seen.Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		cycles, assist = underCrawlGC(liveMB, allocMBps, func() {
			seen.CrawlLookups(n, func(id uint64) bool {
				_, ok, err := s.Get(id)
				if err != nil {
					b.Fatal(err)
				}
				return ok
			}, func(id uint64, v int32) {
				if err := s.Add(id, v); err != nil {
					b.Fatal(err)
				}
			})
		})
		st = s.Stats()
		b.Logf("%+v", st)
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	ms := func(d time.Duration) float64 { return d.Seconds() * 1000 }
	fmt.Printf("seen_hold urls=%d live_mb=%d alloc_mb_per_s=%d gc_cycles=%d gc_assist_ms=%.0f freezes=%d installs=%d max_freeze_ms=%.3f freeze_cpu_ms=%.3f max_install_ms=%.3f install_cpu_ms=%.3f max_hand_off_ms=%.3f\n",
		n, liveMB, allocMBps, cycles, ms(assist), st.Freeze.Count, st.Install.Count,
		ms(st.Freeze.Longest), ms(st.Freeze.CPU), ms(st.Install.Longest), ms(st.Install.CPU), ms(st.MaxHandOff))
}
