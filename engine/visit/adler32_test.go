package visit

import (
	"bytes"
	"hash/adler32"
	"math/rand/v2"
	"runtime"
	"testing"

	"lidi/engine/cputime"
)

// adler32Sum gives hash/adler32's checksum for every length up to a few
// blocks and beyond the 5552 bytes after which hash/adler32 reduces,
// of bytes that are all 0xff (the largest lane sums), all zero, and
// random.
func TestAdler32AsTheStandardLibrary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 70_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	inputs := map[string][]byte{
		"0xff":   bytes.Repeat([]byte{0xff}, len(random)),
		"zero":   make([]byte, len(random)),
		"random": random,
	}
	lengths := []int{len(random) - 7, 5551, 5552, 5553, 65535, 65536, 65537}
	for n := range 8*blockChunks*3 + 9 {
		lengths = append(lengths, n)
	}
	for name, in := range inputs {
		for _, n := range lengths {
			for _, off := range []int{0, 1, 7} {
				b := in[off : off+n]
				if got, want := adler32Sum(b), adler32.Checksum(b); got != want {
					t.Fatalf("%s, %d bytes from %d: %08x, want %08x", name, n, off, got, want)
				}
			}
		}
	}
	for range 2000 {
		n := r.IntN(len(random))
		off := r.IntN(len(random) - n + 1)
		if got, want := adler32Sum(random[off:off+n]), adler32.Checksum(random[off:off+n]); got != want {
			t.Fatalf("random, %d bytes from %d: %08x, want %08x", n, off, got, want)
		}
	}
}

// BenchmarkAdler32 checksums a page-sized body (18.8 KB, simweb's mean)
// with adler32Sum and with hash/adler32, reporting the thread's CPU time
// per byte (what a loaded machine does not inflate as it does ns/op).
func BenchmarkAdler32(b *testing.B) {
	page := make([]byte, 18_773)
	r := rand.New(rand.NewPCG(3, 4))
	for i := range page {
		page[i] = byte(' ' + r.IntN(95))
	}
	for _, sum := range []struct {
		name string
		f    func([]byte) uint32
	}{{"swar", adler32Sum}, {"stdlib", adler32.Checksum}} {
		b.Run(sum.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.SetBytes(int64(len(page)))
			t := cputime.Start()
			for b.Loop() {
				sum.f(page)
			}
			b.ReportMetric(float64(t.Elapsed().Nanoseconds())/float64(b.N*len(page)), "cpu_ns/B")
		})
	}
}
