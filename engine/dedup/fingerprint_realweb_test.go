package dedup

import (
	"os"
	"path/filepath"
	"testing"

	"lidi/engine/cputime"
)

// BenchmarkFingerprintRealWeb fingerprints the real pages of
// testdata/realweb (the Jargon File's entries as www.catb.org serves them,
// ISO-8859-1, and as an HTTrack mirror does, UTF-8), whose markup is a
// larger share than simweb's, and reports the thread's CPU time a page.
func BenchmarkFingerprintRealWeb(b *testing.B) {
	var bodies [][]byte
	size := 0
	err := filepath.WalkDir("testdata/realweb", func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".html" {
			return err
		}
		body, err := os.ReadFile(p)
		bodies = append(bodies, body)
		size += len(body)
		return err
	})
	if err != nil || len(bodies) < 20 {
		b.Fatalf("%d pages: %v", len(bodies), err)
	}
	b.SetBytes(int64(size))
	t := cputime.Start()
	for b.Loop() {
		for _, body := range bodies {
			Fingerprint(body, "http://www.catb.org/jargon/html/a.html")
		}
	}
	b.ReportMetric(float64(t.Elapsed().Nanoseconds())/float64(b.N)/float64(len(bodies)), "cpu_ns_per_page")
}
