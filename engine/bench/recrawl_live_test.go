package bench

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lidi/engine"
	"lidi/storage"
)

func TestRecrawlLiveSmall(t *testing.T) {
	var o RecrawlLiveOptions
	fs := flag.NewFlagSet("recrawl-live", flag.ContinueOnError)
	o.RegisterFlags(fs)
	out := t.TempDir()
	if err := fs.Parse([]string{"--sites", "12", "--pages", "150", "--time-scale", "1200", "--duration", "12s",
		"--warmup", "2h", "--initial-interval", "30m", "--delay", "20ms", "--out", out}); err != nil {
		t.Fatal(err)
	}
	o.OpenStore = openTestStore
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var log bytes.Buffer
	res, err := RecrawlLive(ctx, o, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if res.Recrawls == 0 || len(res.Curve) < 10 {
		t.Fatalf("%d recrawls, %d curve points\n%s", res.Recrawls, len(res.Curve), log.String())
	}
	for _, f := range []float64{res.Freshness, res.SimFreshness, res.PageFreshness} {
		if !(f > 0 && f <= 1) {
			t.Errorf("freshness %v outside (0, 1]\n%s", f, log.String())
		}
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "policy=iir freshness=") || !strings.Contains(last, " sim_freshness=") {
		t.Errorf("last line %q is not the key=value line", last)
	}
	if st, err := os.Stat(filepath.Join(out, "recrawl_live.csv")); err != nil || st.Size() == 0 {
		t.Errorf("recrawl_live.csv: %v", err)
	}
}

// openTestStore opens a crawl database for the benchmarks' real crawls.
func openTestStore(path string) (engine.Store, io.Closer, error) {
	db, err := storage.Open(path, storage.Options{})
	return db, db, err
}
