package seen

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"lidi/engine/cputime"
)

// crawlLookups drives a set (or a map, through get and add) as a crawl's
// loop does: for each page fetched, about 20 links are looked up (near
// the page in discovery order, popular pages, anywhere) and the new ones
// added, until n URLs are known. It returns the look-ups made, the longest
// a look-up and its add took, and how many took over a millisecond: on a
// shared machine the caller's thread is descheduled now and then, which
// the map shows as well as the set. longestCPU is the most CPU time the
// caller's thread spent in one look-up and its add: what the set's own
// work held the caller, which the machine's load does not inflate.
func crawlLookups(n int, get func(uint64) bool, add func(uint64, int32)) (lookups int, longest, longestCPU time.Duration, slow int) {
	rng := rand.New(rand.NewPCG(7, 8))
	id := func(node int) uint64 { return mix(uint64(node) + 1) }
	known := 0
	for page := 0; known < n; page++ {
		for range 20 {
			var t int
			switch rng.IntN(4) {
			case 0, 1: // the page's site, found a little before or now
				t = page*n/(n/2) + rng.IntN(60) - 30
			case 2: // popular pages
				t = int(math.Exp(rng.Float64()*math.Log(float64(known)+1))) - 1
			default:
				t = rng.IntN(known + 1)
			}
			t = max(t, 0)
			lookups++
			t0 := time.Now()
			c0 := cputime.Start()
			if !get(id(t)) && t >= known {
				add(id(t), int32(known))
				known++
			}
			longestCPU = max(longestCPU, c0.Elapsed())
			d := time.Since(t0)
			longest = max(longest, d)
			if d > time.Millisecond {
				slow++
			}
		}
	}
	return lookups, longest, longestCPU, slow
}

// BenchmarkCrawl1M looks up and adds URLs as a crawl of 1,000,000 URLs
// does, with a Set and with the Go map it replaces, and ends with a
// key=value line: memory per URL, time per look-up, disk reads per
// look-up and the longest a call held the caller.
func BenchmarkCrawl1M(b *testing.B) {
	const n = 1_000_000
	var setNs, mapNs, setBytes, mapBytes, readsPer float64
	var setPause, mapPause, setCPU, mapCPU time.Duration
	var setSlow, mapSlow int
	b.Run("set", func(b *testing.B) {
		for b.Loop() {
			s, err := Open(Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			t0 := time.Now()
			k, longest, longestCPU, slow := crawlLookups(n, func(id uint64) bool {
				_, ok, err := s.Get(id)
				if err != nil {
					b.Fatal(err)
				}
				return ok
			}, func(id uint64, v int32) { s.Add(id, v) })
			setNs = float64(time.Since(t0).Nanoseconds()) / float64(k)
			st := s.Stats()
			setBytes = float64(st.Bytes) / float64(st.Entries)
			readsPer = float64(st.DiskReads) / float64(st.Lookups)
			setPause, setCPU, setSlow = longest, longestCPU, slow
			b.Logf("%+v", st)
			s.Close()
		}
	})
	b.Run("map", func(b *testing.B) {
		for b.Loop() {
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			m := make(map[uint64]int32)
			t0 := time.Now()
			k, longest, longestCPU, slow := crawlLookups(n, func(id uint64) bool { _, ok := m[id]; return ok }, func(id uint64, v int32) { m[id] = v })
			mapNs = float64(time.Since(t0).Nanoseconds()) / float64(k)
			mapPause, mapCPU, mapSlow = longest, longestCPU, slow
			runtime.GC()
			runtime.ReadMemStats(&m1)
			mapBytes = float64(m1.HeapAlloc-m0.HeapAlloc) / float64(len(m))
			runtime.KeepAlive(m)
		}
	})
	fmt.Printf("seen urls=%d set_bytes_per_url=%.1f map_bytes_per_url=%.1f set_ns_per_lookup=%.0f map_ns_per_lookup=%.0f disk_reads_per_lookup=%.4f set_max_pause_ms=%.3f map_max_pause_ms=%.3f set_calls_over_1ms=%d map_calls_over_1ms=%d set_max_cpu_pause_ms=%.3f map_max_cpu_pause_ms=%.3f\n",
		n, setBytes, mapBytes, setNs, mapNs, readsPer, setPause.Seconds()*1000, mapPause.Seconds()*1000, setSlow, mapSlow, setCPU.Seconds()*1000, mapCPU.Seconds()*1000)
}
