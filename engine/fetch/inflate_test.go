package fetch

import (
	"bytes"
	stdflate "compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/klauspost/compress/flate"

	"lidi/engine/cputime"
	"lidi/engine/simweb"
)

// inflateInputs returns bodies of the kinds a crawler meets and the
// corner cases of deflate: empty, one byte, text, HTML, random bytes
// (stored blocks), long runs (overlapping matches), and more than a
// window (distances up to 32 KiB, several blocks).
func inflateInputs(t testing.TB) map[string][]byte {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"crawl", "page", "link", "the", "of", "robots", "deflate", "window", "<p>", "</a>", "\n"}
	text := func(n int) []byte {
		var b bytes.Buffer
		for b.Len() < n {
			b.WriteString(words[r.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.Bytes()[:n]
	}
	random := make([]byte, 70_000)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	mixed := append(append(append([]byte(nil), text(20_000)...), random[:5000]...), bytes.Repeat([]byte("ab"), 9000)...)
	w, err := simweb.Generate(simweb.Options{Seed: 1, Sites: 20, Pages: 200})
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string][]byte{
		"empty":    {},
		"one":      {'x'},
		"short":    []byte("hello, hello, hello"),
		"text":     text(18_000),
		"big-text": text(300_000),
		"random":   random,
		"run":      bytes.Repeat([]byte{'z'}, 100_000),
		"period3":  bytes.Repeat([]byte("abc"), 30_000),
		"mixed":    mixed,
		"simweb":   w.Render(7),
		"simweb2":  w.Render(150),
	}
	for i, page := range realPages(t) {
		inputs[fmt.Sprintf("realweb-%d", i)] = page
	}
	return inputs
}

// realPages returns the real pages of testdata/realweb.
func realPages(t testing.TB) [][]byte {
	names, err := filepath.Glob("testdata/realweb/*.html.gz")
	if err != nil || len(names) == 0 {
		t.Fatal("no real pages", err)
	}
	var pages [][]byte
	for _, name := range names {
		z, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(name, err)
		}
		page, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(name, err)
		}
		pages = append(pages, page)
	}
	return pages
}

// deflated compresses b the ways servers do: klauspost's levels (its
// Huffman-only level among them), the standard library's, stored.
func deflated(t testing.TB, b []byte) map[string][]byte {
	out := map[string][]byte{}
	for _, level := range []int{flate.HuffmanOnly, flate.NoCompression, 1, 2, 5, 9} {
		var z bytes.Buffer
		w, err := flate.NewWriter(&z, level)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		w.Close()
		out[fmt.Sprintf("klauspost-%d", level)] = z.Bytes()
	}
	for _, level := range []int{stdflate.HuffmanOnly, 1, 6, 9} {
		var z bytes.Buffer
		w, _ := stdflate.NewWriter(&z, level)
		// Flushes put empty stored blocks and block ends mid-stream.
		for i := 0; i < len(b); i += 7000 {
			w.Write(b[i:min(i+7000, len(b))])
			if i%14000 == 0 {
				w.Flush()
			}
		}
		w.Close()
		out[fmt.Sprintf("std-%d", level)] = z.Bytes()
	}
	return out
}

// reference inflates z with klauspost's reader: the output and how many
// bytes the stream took, or an error.
func reference(z []byte) ([]byte, int, error) {
	br := bytes.NewReader(z)
	out, err := io.ReadAll(flate.NewReader(br))
	return out, len(z) - br.Len(), err
}

func TestInflateMatchesFlate(t *testing.T) {
	var f inflater
	for name, body := range inflateInputs(t) {
		for how, z := range deflated(t, body) {
			z = append(z, "trailer"...) // what follows the stream (gzip's CRC and size)
			out, n, err := f.inflate(nil, z, len(body))
			if err != nil || !bytes.Equal(out, body) || n != len(z)-len("trailer") {
				t.Errorf("%s, %s: %d bytes of %d, took %d of %d, %v", name, how, len(out), len(body), n, len(z)-7, err)
			}
		}
	}
}

// TestInflateEndsAndLimits: a stream cut short decodes to a prefix of its
// output and says so (errShort, not an invalid stream), and an output
// limit stops it with exactly the limit's bytes.
func TestInflateEndsAndLimits(t *testing.T) {
	var f inflater
	for name, body := range inflateInputs(t) {
		if len(body) > 100_000 {
			continue
		}
		for how, z := range deflated(t, body) {
			for _, cut := range []int{0, 1, 2, 3, 5, len(z) / 3, len(z) / 2, len(z) - 2, len(z) - 1} {
				if cut < 0 || cut >= len(z) {
					continue
				}
				out, _, err := f.inflate(nil, z[:cut], len(body)+1)
				if !errors.Is(err, errShort) || !bytes.HasPrefix(body, out) {
					t.Errorf("%s, %s cut at %d of %d: %v, output a prefix: %v", name, how, cut, len(z), err, bytes.HasPrefix(body, out))
				}
			}
			if len(body) < 2 {
				continue
			}
			for _, limit := range []int{0, 1, min(512, len(body)-1), len(body) - 1} {
				out, _, err := f.inflate(nil, z, limit)
				if !errors.Is(err, errLimit) || !bytes.Equal(out, body[:limit]) {
					t.Errorf("%s, %s limited to %d: %d bytes, %v", name, how, limit, len(out), err)
				}
			}
		}
	}
}

// TestInflateNeverDiffers corrupts streams and checks that inflate never
// accepts one the streaming reader rejects, nor decodes one differently.
func TestInflateNeverDiffers(t *testing.T) {
	var f inflater
	r := rand.New(rand.NewPCG(3, 4))
	checked, accepted := 0, 0
	for name, body := range inflateInputs(t) {
		if len(body) > 100_000 {
			continue
		}
		for how, z := range deflated(t, body) {
			for range 40 {
				bad := bytes.Clone(z)
				for range 1 + r.IntN(3) {
					if len(bad) > 0 {
						bad[r.IntN(len(bad))] ^= 1 << r.IntN(8)
					}
				}
				checked++
				out, n, err := f.inflate(nil, bad, 1<<20)
				if err != nil {
					continue
				}
				accepted++
				want, wantN, werr := reference(bad)
				if werr != nil || !bytes.Equal(out, want) || n != wantN {
					t.Errorf("%s, %s corrupted: inflate took it (%d bytes, %d in), the reader: %v (%d bytes, %d in)", name, how, len(out), n, werr, len(want), wantN)
				}
			}
		}
	}
	t.Logf("%d corrupted streams, %d decoded (each as the streaming reader does)", checked, accepted)
}

func FuzzInflate(f *testing.F) {
	for _, body := range inflateInputs(f) {
		if len(body) > 20_000 {
			continue
		}
		for _, z := range deflated(f, body) {
			f.Add(z)
		}
	}
	var inf inflater
	f.Fuzz(func(t *testing.T, z []byte) {
		out, n, err := inf.inflate(nil, z, 1<<20)
		want, wantN, werr := reference(z)
		switch {
		case err == nil && (werr != nil || !bytes.Equal(out, want) || n != wantN):
			t.Fatalf("inflate took it (%d bytes, %d in), the reader: %v (%d bytes, %d in)", len(out), n, werr, len(want), wantN)
		case errors.Is(err, errShort) && (werr == nil || !bytes.HasPrefix(want, out) && !bytes.HasPrefix(out, want)):
			// Each decoder's output before a failure is what it had
			// flushed: one is a prefix of the other.
			t.Fatalf("cut short with %d bytes; the reader: %v, %d bytes, neither a prefix of the other", len(out), werr, len(want))
		case err == nil, errors.Is(err, errShort), errors.Is(err, errInflate), errors.Is(err, errLimit):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// FuzzInflateAnyBuffer decodes any stream with any output limit into a
// buffer of any capacity holding bytes that are no output (fastCodes
// writes past the output into the capacity, and reads and writes it
// without bounds checks): what it decodes is what the streaming reader
// decodes, to the limit.
func FuzzInflateAnyBuffer(f *testing.F) {
	for _, body := range inflateInputs(f) {
		if len(body) > 20_000 {
			continue
		}
		for _, z := range deflated(f, body) {
			f.Add(z, uint32(len(body)), uint16(len(body)+fastRoom))
			f.Add(z, uint32(len(body)/2), uint16(len(body)/3))
		}
	}
	var inf inflater
	f.Fuzz(func(t *testing.T, z []byte, limit uint32, capacity uint16) {
		lim := int(limit % (1 << 20))
		dst := bytes.Repeat([]byte{0xa5}, int(capacity))[:0]
		out, n, err := inf.inflate(dst, z, lim)
		want, wantN, werr := reference(z)
		// The streaming reader's output before a failure is what it
		// had flushed: then either may be a prefix of the other.
		agree := bytes.HasPrefix(want, out) || werr != nil && bytes.HasPrefix(out, want)
		switch {
		case err == nil && (werr != nil || !bytes.Equal(out, want) || n != wantN || len(out) > lim):
			t.Fatalf("inflate took it (%d bytes, %d in, limit %d), the reader: %v (%d bytes, %d in)", len(out), n, lim, werr, len(want), wantN)
		case errors.Is(err, errLimit) && (len(out) != lim || !agree):
			t.Fatalf("limited to %d: %d bytes, a prefix of the reader's %d (%v): %v", lim, len(out), len(want), werr, agree)
		case (errors.Is(err, errShort) || errors.Is(err, errInflate)) && (len(out) > lim || !agree):
			t.Fatalf("%v with %d bytes (limit %d); the reader: %v, %d bytes, neither a prefix of the other", err, len(out), lim, werr, len(want))
		case err == nil, errors.Is(err, errShort), errors.Is(err, errInflate), errors.Is(err, errLimit):
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}

// BenchmarkInflate decodes simweb's pages, deflated as simweb serves
// them (level 1), with inflate and with the streaming reader, and ends
// with a key=value line: CPU per page of each.
func BenchmarkInflate(b *testing.B) {
	benchInflate(b, "inflate", simwebDeflated(b))
}

// BenchmarkInflateRealweb decodes real pages (testdata/realweb: data.gov.uk,
// a magazine, a blog, a university, the Jargon File; 8 pages, 7 to 95 KB)
// deflated as simweb serves its own (klauspost's level 1) and as zlib's
// default level does (compress/flate's 6), as BenchmarkInflate does.
func BenchmarkInflateRealweb(b *testing.B) {
	pages := realPages(b)
	for _, c := range []struct {
		name  string
		coder func(io.Writer) io.WriteCloser
	}{
		{"klauspost-1", func(w io.Writer) io.WriteCloser { zw, _ := flate.NewWriter(w, 1); return zw }},
		{"std-6", func(w io.Writer) io.WriteCloser { zw, _ := stdflate.NewWriter(w, 6); return zw }},
	} {
		b.Run(c.name, func(b *testing.B) { benchInflate(b, "inflate-realweb-"+c.name, coded(pages, c.coder)) })
	}
}

// benchInflate decodes the deflate streams pages with inflate and with
// the streaming reader, and ends with a key=value line that starts with
// name: CPU per page of each.
func benchInflate(b *testing.B, name string, pages [][]byte) {
	decoded := 0
	for _, z := range pages {
		out, _, _ := new(inflater).inflate(nil, z, 1<<20)
		decoded += len(out)
	}
	var f inflater
	var buf []byte
	var ours, theirs float64
	var err error
	zr := flate.NewReader(nil)
	var out bytes.Buffer
	for b.Loop() {
		t := cputime.Start()
		for _, z := range pages {
			if buf, _, err = f.inflate(buf, z, 1<<20); err != nil {
				b.Fatal(err)
			}
		}
		ours += float64(t.Elapsed().Nanoseconds())
		t = cputime.Start()
		for _, z := range pages {
			zr.(flate.Resetter).Reset(bytes.NewReader(z), nil)
			out.Reset()
			if _, err := out.ReadFrom(zr); err != nil {
				b.Fatal(err)
			}
		}
		theirs += float64(t.Elapsed().Nanoseconds())
	}
	n := float64(b.N * len(pages))
	b.ReportMetric(ours/n/1000, "inflate_us_per_page")
	b.ReportMetric(theirs/n/1000, "reader_us_per_page")
	fmt.Printf("%s pages=%d bytes_per_page=%d inflate_us_per_page=%.1f reader_us_per_page=%.1f\n",
		name, len(pages), decoded/len(pages), ours/n/1000, theirs/n/1000)
}

// BenchmarkInflateTables reads the code lengths of the first block of
// simweb's pages, as BenchmarkInflate deflates them (one dynamic block a
// page, then an empty fixed one), and builds its tables: what a page
// costs before its first code is decoded. It reports the thread's CPU
// per block.
func BenchmarkInflateTables(b *testing.B) {
	pages := simwebDeflated(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var f inflater
	t := cputime.Start()
	for b.Loop() {
		for _, z := range pages {
			f.src, f.pos, f.bits, f.nbits = z, 0, 0, 0
			f.refill()
			if f.take(3)>>1 != 2 {
				b.Fatal("not a dynamic block")
			}
			if err := f.dynamic(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(t.Elapsed().Nanoseconds())/float64(b.N*len(pages))/1000, "cpu_us_per_block")
}

// simwebPages returns 200 of simweb's pages (seed 1), for benchmarks.
func simwebPages(b testing.TB) [][]byte {
	w, err := simweb.Generate(simweb.Options{Seed: 1, Sites: 100, Pages: 2000})
	if err != nil {
		b.Fatal(err)
	}
	var pages [][]byte
	for i := range 200 {
		pages = append(pages, w.AppendHTML(nil, i*7%w.NumPages(), 8080))
	}
	return pages
}

// simwebDeflated returns simwebPages deflated as simweb serves them
// (level 1).
func simwebDeflated(b testing.TB) [][]byte {
	return simwebCoded(b, func(w io.Writer) io.WriteCloser { zw, _ := flate.NewWriter(w, 1); return zw })
}

// simwebCoded returns simwebPages, each written through a writer from
// coder.
func simwebCoded(b testing.TB, coder func(io.Writer) io.WriteCloser) [][]byte {
	return coded(simwebPages(b), coder)
}

// coded returns pages, each written through a writer from coder.
func coded(pages [][]byte, coder func(io.Writer) io.WriteCloser) [][]byte {
	var out [][]byte
	for _, page := range pages {
		var z bytes.Buffer
		zw := coder(&z)
		zw.Write(page)
		zw.Close()
		out = append(out, z.Bytes())
	}
	return out
}

// randomCorpora returns n bodies of shapes drawn at random that take
// every way of copying a match: periods of 1 to 20 bytes with a mutation
// now and then (overlapping copies at every short distance), a small
// alphabet (short matches among literals), words, and random bytes
// (stored blocks), at lengths from none to a few windows.
func randomCorpora(r *rand.Rand, n int) [][]byte {
	var out [][]byte
	for range n {
		size := r.IntN(1 << (1 + r.IntN(17)))
		b := make([]byte, size)
		switch r.IntN(4) {
		case 0:
			p := 1 + r.IntN(20)
			for i := range b {
				if i < p || r.IntN(500) == 0 {
					b[i] = byte(r.Uint32())
				} else {
					b[i] = b[i-p]
				}
			}
		case 1:
			k := 2 + r.IntN(6)
			for i := range b {
				b[i] = 'a' + byte(r.IntN(k))
			}
		case 2:
			words := []string{"lidi ", "crawls ", "the ", "web ", "<a href=\"/x\">", "</a>\n", "deflate "}
			for i := 0; i < len(b); {
				i += copy(b[i:], words[r.IntN(len(words))])
			}
		default:
			for i := range b {
				b[i] = byte(r.Uint32())
			}
		}
		out = append(out, b)
	}
	return out
}

// TestInflateAsFlateAtEveryLevel: the streams of every level of both
// compressors (compress/flate's and klauspost's), of the test bodies and
// of random ones, decode as compress/flate's reader decodes them, into an
// output buffer of any capacity holding any bytes, and an output limit
// drawn at random stops them at exactly the limit.
func TestInflateAsFlateAtEveryLevel(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	bodies := randomCorpora(r, 60)
	for _, b := range inflateInputs(t) {
		bodies = append(bodies, b)
	}
	var f inflater
	for i, body := range bodies {
		for level := -2; level <= 9; level++ {
			var kz, sz bytes.Buffer
			kw, _ := flate.NewWriter(&kz, level)
			kw.Write(body)
			kw.Close()
			sw, _ := stdflate.NewWriter(&sz, level)
			sw.Write(body)
			sw.Close()
			for how, z := range map[string][]byte{"klauspost": kz.Bytes(), "std": sz.Bytes()} {
				want, err := io.ReadAll(stdflate.NewReader(bytes.NewReader(z)))
				if err != nil || !bytes.Equal(want, body) {
					t.Fatalf("body %d, %s level %d: compress/flate reads %d bytes of %d, %v", i, how, level, len(want), len(body), err)
				}
				// Any capacity, filled with bytes that are no output.
				dst := bytes.Repeat([]byte{0xa5}, []int{0, len(body), len(body) + fastRoom, r.IntN(len(body) + 1)}[r.IntN(4)])[:0]
				out, n, err := f.inflate(dst, z, len(body))
				if err != nil || !bytes.Equal(out, want) || n != len(z) {
					t.Errorf("body %d (%d bytes), %s level %d: %d bytes, took %d of %d, %v", i, len(body), how, level, len(out), n, len(z), err)
				}
				limit := r.IntN(len(body) + 1)
				out, _, err = f.inflate(dst, z, limit)
				if wantErr := map[bool]error{true: errLimit, false: nil}[limit < len(body)]; err != wantErr || !bytes.Equal(out, want[:limit]) {
					t.Errorf("body %d (%d bytes), %s level %d, limited to %d: %d bytes, %v", i, len(body), how, level, limit, len(out), err)
				}
			}
		}
	}
}
