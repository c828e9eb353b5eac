package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestMillionKeys(t *testing.T) {
	mark := func(mb int64) millionMark { return millionMark{peak: mb * 1e6} }
	for _, tc := range []struct {
		name     string
		millions []millionMark
		want     string
	}{
		{"before the first million", nil, ""},
		{"one million", []millionMark{mark(390)}, " peak_rss_mb_1m=390"},
		{"three millions", []millionMark{mark(390), mark(600), mark(850)},
			" peak_rss_mb_1m=390 peak_rss_mb_2m=600 peak_rss_mb_3m=850 rss_growth_mb_per_million=230"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := millionKeys(tc.millions); got != tc.want {
				t.Errorf("millionKeys = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestTraceLastEndsAtStop(t *testing.T) {
	start := time.Unix(0, 0)
	var tr trace
	for i := range 10 {
		tr.points = append(tr.points, tracePoint{at: start.Add(time.Duration(i) * time.Second), pages: int64(i) * 100})
	}
	tr.stopped()
	tr.stopped() // the first request counts
	// Closing the crawl: time passes, few pages more.
	tr.points = append(tr.points, tracePoint{at: start.Add(30 * time.Second), pages: 910})
	sp := tr.last(300)
	if sp.from.pages != 600 || sp.to.pages != 900 {
		t.Fatalf("last(300) = pages %d to %d, want 600 to 900", sp.from.pages, sp.to.pages)
	}
	if got := sp.pagesPerSec(); got != 100 {
		t.Errorf("pages/s over the last window = %v, want 100", got)
	}
	var whole trace
	whole.points = tr.points
	if sp := whole.last(300); sp.to.pages != 910 {
		t.Errorf("without a stop, last ends at %d pages, want 910", sp.to.pages)
	}
}

func TestCPUProfilesRotate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	var p cpuProfiles
	if err := p.start(path, 100); err != nil {
		t.Fatal(err)
	}
	for _, pages := range []int64{0, 50, 100, 150, 250} {
		p.next(pages)
	}
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	for k, want := range []bool{true, true, true, false} {
		_, err := os.Stat(fmt.Sprintf("%s-%03d", path, k))
		if got := err == nil; got != want {
			t.Errorf("profile %d written: %v, want %v", k, got, want)
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s written, want only the numbered profiles", path)
	}
}
