package engine_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"lidi/engine"
	"lidi/internal/testkit"
)

// A crawl stopped while a fetch hangs waits for it (the grace period)
// without spinning: the context's closed Done channel was ready at every
// select, and the loop woke about a million times a second, a whole core,
// until the fetch ended.
func TestStoppingWaitsWithoutSpinning(t *testing.T) {
	hung := make(chan struct{})
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang" {
			close(hung)
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><body><a href="/hang">h</a></body></html>`)
	}))
	defer ts.Close()
	unhang := sync.OnceFunc(func() { close(release) })
	defer unhang()
	cfg := crawlConfig([]string{ts.URL + "/"})
	cfg.Recrawl.Enabled = true
	eng, _ := openEngine(t, cfg, "127.0.0.1:1", filepath.Join(t.TempDir(), "crawl.db"))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	select {
	case <-hung:
	case <-time.After(time.Minute):
		t.Fatal("the hanging page was never asked for")
	}
	cancel()
	testkit.WaitFor(t, time.Minute, "the crawl stopping", func() bool { return eng.Stats().State == engine.StateStopping })
	// Stats are published a few times a second; a loop that waits wakes
	// about as often, one that spins hundreds of thousands of times.
	from := eng.Stats().LoopWakeups
	window := time.NewTimer(1500 * time.Millisecond)
	defer window.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
watch:
	for {
		select {
		case <-window.C:
			break watch
		case <-tick.C:
			if n := eng.Stats().LoopWakeups - from; n > 500 {
				t.Errorf("the loop woke %d times within 1.5 s of stopping while a fetch was in flight", n)
				break watch
			}
		}
	}
	unhang()
	if err := <-done; !errors.Is(err, engine.ErrStopped) {
		t.Fatalf("run: %v", err)
	}
}
