package engine_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"lidi/engine/simweb"
)

// A resumed crawl's figures do not mislead: its rates count only what it
// fetches (a crawl resumed at its page limit fetches nothing, so every
// snapshot's rate is zero, never the earlier runs' pages over a second),
// and its coverage curve goes on from the earlier runs' (rank_runs).
func TestResumedFigures(t *testing.T) {
	srv := testWeb(t, simweb.Options{Seed: 6, Sites: 10, Pages: 400})
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := crawlConfig(srv.SeedURLs(2))
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.MaxPages = 80
	cfg.RankEveryPages = 20
	first := runCrawl(t, cfg, srv.DNSAddr(), path)
	if len(first.Coverage) == 0 || first.MaxPages != 80 {
		t.Fatalf("first run: %d coverage points, max pages %d", len(first.Coverage), first.MaxPages)
	}

	eng, release := openEngine(t, cfg, srv.DNSAddr(), path)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	snapshots := 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		s := eng.Stats()
		snapshots++
		if s.PagesPerSec != 0 || s.BytesPerSec != 0 {
			t.Fatalf("snapshot %d (%s, %d pages): %.0f pages/s, %.0f bytes/s after a resume that fetches nothing", snapshots, s.State, s.Pages, s.PagesPerSec, s.BytesPerSec)
		}
	}
	last := eng.Stats()
	if last.Pages != 80 || len(last.Coverage) < len(first.Coverage) || last.Coverage[0] != first.Coverage[0] {
		t.Errorf("resumed: %d pages, coverage %v; the first run's curve was %v", last.Pages, last.Coverage, first.Coverage)
	}
}
