package simweb

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"lidi/engine/clock"
)

// webCache shares generated webs between tests: generation is deterministic,
// so sharing cannot couple tests.
var webCache sync.Map // Options -> *Web

func testWeb(t testing.TB, opt Options) *Web {
	t.Helper()
	if w, ok := webCache.Load(opt); ok {
		return w.(*Web)
	}
	w, err := Generate(opt)
	if err != nil {
		t.Fatal(err)
	}
	webCache.Store(opt, w)
	return w
}

func startServer(t testing.TB, w *Web, cfg ServerConfig) *Server {
	t.Helper()
	s, err := Start(context.Background(), w, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// resolvingClient returns an HTTP client that resolves host names through
// the server's DNS, as a crawler would.
func resolvingClient(s *Server, maxConnsPerHost int) *http.Client {
	resolver := &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, s.DNSAddr())
		},
	}
	dialer := &net.Dialer{Resolver: resolver, Timeout: 5 * time.Second}
	return &http.Client{
		Timeout: 20 * time.Second,
		Transport: &http.Transport{
			DialContext:         dialer.DialContext,
			MaxIdleConnsPerHost: maxConnsPerHost,
			MaxConnsPerHost:     maxConnsPerHost,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// newFakeClock returns a fake clock at the tests' epoch.
func newFakeClock() *clock.Fake {
	return clock.NewFake(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
}
