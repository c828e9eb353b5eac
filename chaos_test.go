package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"lidi/engine/bench"
)

// runMainEnv makes the test binary run lidi's command line instead of the
// tests, so that a test can start `lidi crawl` as a child process.
const runMainEnv = "LIDI_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The short form of `lidi bench chaos`: a real `lidi crawl --headless`
// process (this test binary) crawls a small simweb with visits longer than
// storage.flush_interval + 1 s (c = 100, w = 15 ms), is killed with SIGKILL
// three times, each as the pages requested reach a seeded random count, and
// restarted, then let finish. No page answered more than flush_interval +
// 1 s before a kill may be missing or fetched again, the file must be
// intact, and the pages fetched must be the uninterrupted crawl's.
func TestChaosShort(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	opt := bench.ChaosOptions{
		Sites: 6, Pages: 400, Seed: 3, Seeds: 2,
		Kills: 3, KillSeed: 7,
		Robots: 8, PagesPerVisit: 100, Delay: 15 * time.Millisecond,
		FlushInterval: 100 * time.Millisecond,
		Limit:         2 * time.Minute,
		Dir:           t.TempDir(),
		Crawler:       []string{exe, "crawl"},
		Env:           []string{runMainEnv + "=1"},
		OpenDB:        openChaosDB,
	}
	var out bytes.Buffer
	res, err := bench.Chaos(context.Background(), opt, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Kills) != opt.Kills {
		t.Fatalf("%d kills, want %d", len(res.Kills), opt.Kills)
	}
	if last := res.Kills[len(res.Kills)-1]; last.Due == 0 {
		t.Errorf("no page was due at the last kill: the kills checked nothing")
	}
	if len(res.Lost) > 0 || len(res.Refetched) > 0 || res.Integrity != "ok" || !res.Equal {
		t.Errorf("got %s; want no page lost or refetched, integrity ok, equal", res.KeyValues())
	}
}
