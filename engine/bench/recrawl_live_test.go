package bench

import (
	"bytes"
	"context"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lidi/engine"
	"lidi/storage"
)

func TestRecrawlLiveSmall(t *testing.T) {
	t.Parallel() // 12 s of wall time on its web's clock, mostly waiting
	var o RecrawlLiveOptions
	fs := flag.NewFlagSet("recrawl-live", flag.ContinueOnError)
	o.RegisterFlags(fs)
	out := t.TempDir()
	if err := fs.Parse([]string{"--sites", "12", "--pages", "150", "--time-scale", "1200", "--duration", "12s",
		"--warmup", "2h", "--initial-interval", "30m", "--delay", "20ms", "--out", out}); err != nil {
		t.Fatal(err)
	}
	o.OpenStore = openTestStore
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log bytes.Buffer
	runs, err := RecrawlLive(ctx, o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	res := runs[0]
	if res.Recrawls == 0 || len(res.Curve) < 10 {
		t.Fatalf("%d recrawls, %d curve points\n%s", res.Recrawls, len(res.Curve), log.String())
	}
	for _, f := range []float64{res.Freshness, res.SimFreshness, res.PageFreshness} {
		if !(f > 0 && f <= 1) {
			t.Errorf("freshness %v outside (0, 1]\n%s", f, log.String())
		}
	}
	// The curves are compared at the same times: every real point after
	// the simulation's first sample has its simulated twin.
	if len(res.SimCurve) < len(res.Curve)-1 {
		t.Errorf("%d simulated points for %d real ones", len(res.SimCurve), len(res.Curve))
	}
	var sum float64
	for i, p := range res.SimCurve {
		if i > 0 && p.At <= res.SimCurve[i-1].At || !(p.Channels >= 0 && p.Channels <= 1) {
			t.Fatalf("simulated curve point %d: %+v", i, p)
		}
		for _, q := range res.Curve {
			if q.At == p.At {
				sum += math.Abs(q.Channels - p.Channels)
			}
		}
	}
	if mean := sum / float64(len(res.SimCurve)); math.Abs(mean-res.CurveMeanDiff) > 1e-9 || res.CurveMaxDiff < mean {
		t.Errorf("curve differences: mean %v (recomputed %v), max %v", res.CurveMeanDiff, mean, res.CurveMaxDiff)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "policy=iir freshness=") || !strings.Contains(last, " sim_freshness=") {
		t.Errorf("last line %q is not the key=value line", last)
	}
	if !strings.Contains(last, " curve_mean_diff=") {
		t.Errorf("last line %q does not compare the curves", last)
	}
	for _, name := range []string{"recrawl_live.csv", "recrawl_live.png"} {
		if st, err := os.Stat(filepath.Join(out, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// openTestStore opens a crawl database for the benchmarks' real crawls.
func openTestStore(path string) (engine.Store, io.Closer, error) {
	db, err := storage.Open(path, storage.Options{})
	return db, db, err
}
