package visit

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"lidi/engine/simweb"
)

// BenchmarkCompressLevels compresses pages as a robot does, at zlib
// levels 1 to 3 and stored (0, the heads), over 300 pages of simweb (seed
// 1) and over the real pages in ../extract/testdata. It reports MB of
// input per CPU second (the process's, so that other programs' load on
// the machine does not count) and the compression ratio, and ends with a
// key=value line per set and level: what storage.compress_level's default
// rests on.
func BenchmarkCompressLevels(b *testing.B) {
	web, err := simweb.Generate(simweb.Options{Seed: 1, Sites: 30, Pages: 3000})
	if err != nil {
		b.Fatal(err)
	}
	var sim, real [][]byte
	for p := 0; p < web.NumPages() && len(sim) < 300; p += web.NumPages() / 300 {
		sim = append(sim, web.Render(p))
	}
	names, err := filepath.Glob("../extract/testdata/realweb-*.html")
	if err != nil || len(names) == 0 {
		b.Fatalf("real pages: %v (%d)", err, len(names))
	}
	for _, name := range names {
		page, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		real = append(real, page)
	}
	for _, set := range []struct {
		name  string
		pages [][]byte
	}{{"simweb", sim}, {"real", real}} {
		var in int64
		for _, p := range set.pages {
			in += int64(len(p))
		}
		for _, level := range []int{0, 1, 2, 3} {
			b.Run(fmt.Sprintf("%s/level=%d", set.name, level), func(b *testing.B) {
				c := newCompressors(level)
				var out int64
				b.SetBytes(in)
				cpu := cpuTime()
				for b.Loop() {
					out = 0
					for _, p := range set.pages {
						out += int64(len(c.compress(p)))
					}
				}
				cpu = cpuTime() - cpu
				ratio := float64(in) / float64(out)
				mbs := float64(in) * float64(b.N) / cpu.Seconds() / 1e6
				b.ReportMetric(ratio, "ratio")
				b.ReportMetric(mbs, "MB/cpu-s")
				b.Logf("set=%s level=%d pages=%d mb_per_cpu_s=%.0f ratio=%.3f", set.name, level, len(set.pages), mbs, ratio)
			})
		}
	}
}

// cpuTime is the process's CPU time, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
