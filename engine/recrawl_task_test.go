package engine_test

import (
	"context"
	"errors"
	"fmt"
	"hash/crc64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	clk "lidi/engine/clock"

	"lidi/engine"
	"lidi/engine/recrawl"
	"lidi/internal/testkit"
)

// editableSite is a tiny changing web site on loopback: a test sets its
// pages' links and counts the fetches of each path. It is safe for
// concurrent use.
type editableSite struct {
	srv   *httptest.Server
	mu    sync.Mutex
	links map[string][]string // path -> the hrefs of its page
	gets  map[string]int
	edits int
}

func newEditableSite(t *testing.T) *editableSite {
	s := &editableSite{links: map[string][]string{}, gets: map[string]int{}}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

// set makes path a page linking to hrefs; a later set of it changes it.
func (s *editableSite) set(path string, hrefs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.links[path] = hrefs
	s.edits++
}

func (s *editableSite) url(path string) string { return s.srv.URL + path }

// fetches returns how often path was fetched.
func (s *editableSite) fetches(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[path]
}

func (s *editableSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hrefs, ok := s.links[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.gets[r.URL.Path]++
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><p>Version %d of %s: %s.</p>\n", r.URL.Path, s.edits, r.URL.Path, words(r.Host+r.URL.Path))
	for _, h := range hrefs {
		fmt.Fprintf(&b, "<a href=%q>%s</a>\n", h, h)
	}
	b.WriteString("</body></html>")
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprint(w, b.String())
}

// words returns a text of its own for each path, so that no two pages are
// near-duplicates.
func words(path string) string {
	vocab := strings.Fields("apple birch cedar delta ember fjord grove heron iris juniper kelp lotus maple nectar olive pine quartz raven sage thistle umber violet willow yarrow zinnia")
	h := crc64.Checksum([]byte(path), crc64.MakeTable(crc64.ECMA))
	var out []string
	for range 40 {
		out = append(out, vocab[h%uint64(len(vocab))])
		h = h*6364136223846793005 + 1442695040888963407
	}
	return strings.Join(out, " ")
}

// liveRecrawl is a crawl of editable sites recrawling on a manual clock:
// nothing is recrawled until the test moves the clock.
type liveRecrawl struct {
	eng    *engine.Engine
	clock  *clk.Fake
	cancel context.CancelFunc
	done   chan error
}

// startRecrawl crawls from seeds with warm-up probes every hour of the
// manual clock (and no Manager: the warm-up outlasts the test).
func startRecrawl(t *testing.T, seeds []string, scope recrawl.Scope) *liveRecrawl {
	t.Helper()
	return startRecrawlFor(t, seeds, scope, 1000*time.Hour)
}

// startRecrawlFor is startRecrawl with a warm-up of warmup.
func startRecrawlFor(t *testing.T, seeds []string, scope recrawl.Scope, warmup time.Duration) *liveRecrawl {
	t.Helper()
	cfg := crawlConfig(seeds)
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.Recrawl.Enabled = true
	cfg.Recrawl.Options.Policy = recrawl.IIR // these tests are of the channels' tasks
	clock := clk.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Recrawl.Clock = clock
	cfg.Recrawl.InitialInterval = time.Hour
	cfg.Recrawl.Warmup = warmup
	cfg.Recrawl.Scope = scope
	eng, release := openEngine(t, cfg, "127.0.0.1:1", filepath.Join(t.TempDir(), "crawl.db")) // IP literals need no DNS
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	r := &liveRecrawl{eng: eng, clock: clock, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- eng.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
		release()
	})
	return r
}

// waitRecrawl waits for the recrawl stats to satisfy cond.
func (r *liveRecrawl) waitRecrawl(t *testing.T, what string, cond func(*engine.RecrawlStats) bool) *engine.RecrawlStats {
	t.Helper()
	var rs *engine.RecrawlStats
	testkit.WaitFor(t, 2*time.Minute, what, func() bool {
		rs = r.eng.Stats().Recrawl
		return rs != nil && cond(rs)
	})
	return rs
}

// round moves the clock an hour on (every channel is due for a probe) and
// waits for the probes to be done.
func (r *liveRecrawl) round(t *testing.T, channels int) *engine.RecrawlStats {
	t.Helper()
	return r.roundOf(t, channels, time.Hour)
}

// roundOf moves the clock d on and waits for as many tasks as channels to
// be done.
func (r *liveRecrawl) roundOf(t *testing.T, channels int, d time.Duration) *engine.RecrawlStats {
	t.Helper()
	before := r.eng.Stats().Recrawl.Done
	r.clock.Advance(d)
	return r.waitRecrawl(t, fmt.Sprintf("%d more recrawl tasks done", channels), func(rs *engine.RecrawlStats) bool {
		return rs.Done >= before+channels
	})
}

// stop ends the crawl.
func (r *liveRecrawl) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	if err := <-r.done; !errors.Is(err, engine.ErrStopped) {
		t.Fatalf("crawl: %v", err)
	}
	r.done <- engine.ErrStopped // for the cleanup
}

// A page newly linked only from another channel is not fetched by that
// channel's recrawl: it becomes an inter-site seed of its own channel, and
// that channel's next recrawl fetches it.
func TestRecrawlInterSiteSeeds(t *testing.T) {
	a, b := newEditableSite(t), newEditableSite(t)
	a.set("/", "/a1")
	a.set("/a1")
	b.set("/", "/b1")
	b.set("/b1")
	b.set("/new") // linked from nowhere yet
	r := startRecrawl(t, []string{a.url("/"), b.url("/")}, recrawl.Scope{})
	r.waitRecrawl(t, "4 copies", func(rs *engine.RecrawlStats) bool { return rs.Copies == 4 })

	a.set("/", "/a1", b.url("/new"))
	rs := r.round(t, 2)
	if a.fetches("/") != 2 || a.fetches("/a1") != 2 || b.fetches("/b1") != 2 {
		t.Errorf("the first recrawls fetched a/ %d, a/a1 %d, b/b1 %d times; want 2 each", a.fetches("/"), a.fetches("/a1"), b.fetches("/b1"))
	}
	if n := b.fetches("/new"); n != 0 || rs.InterSite == 0 {
		t.Fatalf("b/new fetched %d times by a's recrawl, %d inter-site URLs: want it left to b's recrawl", n, rs.InterSite)
	}
	rs = r.round(t, 2)
	if n := b.fetches("/new"); n != 1 || rs.Found != 1 {
		t.Errorf("b's next recrawl fetched b/new %d times and found %d new pages; want 1 and 1", n, rs.Found)
	}
}

// The same with the Manager's tasks: the inter-site URL reaches the
// Manager (AddInterSite), whose next task of the channel has it as a seed.
func TestRecrawlManagerTaskSeeds(t *testing.T) {
	a, b := newEditableSite(t), newEditableSite(t)
	a.set("/", "/a1")
	a.set("/a1")
	b.set("/", "/b1")
	b.set("/b1")
	b.set("/new")
	r := startRecrawlFor(t, []string{a.url("/"), b.url("/")}, recrawl.Scope{}, time.Hour)
	r.waitRecrawl(t, "4 copies", func(rs *engine.RecrawlStats) bool { return rs.Copies == 4 })
	for range 3 { // the probes that place a channel in a group
		r.round(t, 2)
	}
	r.clock.Advance(time.Minute) // the channels join the Manager
	r.waitRecrawl(t, "the Manager running", func(rs *engine.RecrawlStats) bool { return rs.WarmupEnds.IsZero() })
	testkit.WaitFor(t, 2*time.Minute, "both channels in groups", func() bool {
		n := 0
		for _, g := range r.eng.Stats().Intervals {
			n += g.Channels
		}
		return n == 2
	})

	// Past the longest interval, every channel is due once.
	a.set("/", "/a1", b.url("/new"))
	const past = 31 * 24 * time.Hour
	rs := r.roundOf(t, 2, past)
	if n := b.fetches("/new"); n != 0 || rs.InterSite == 0 {
		t.Fatalf("b/new fetched %d times by a's recrawl, %d inter-site URLs: want it left to b's recrawl", n, rs.InterSite)
	}
	rs = r.roundOf(t, 2, past)
	if n := b.fetches("/new"); n != 1 || rs.Found != 1 {
		t.Errorf("b's next recrawl fetched b/new %d times and found %d new pages; want 1 and 1", n, rs.Found)
	}
}

// A recrawl follows only the URLs its filters match, up to its maximum
// depth from the seeds; an unchanged page's links are followed from its
// copy.
func TestRecrawlFiltersAndDepth(t *testing.T) {
	s := newEditableSite(t)
	s.set("/", "/p1", "/skip/x")
	s.set("/p1", "/p2")
	s.set("/p2", "/p3")
	s.set("/p3")
	s.set("/skip/x")
	r := startRecrawl(t, []string{s.url("/")}, recrawl.Scope{Filters: []string{`/(p\d+)?$`}, MaxDepth: 2})
	r.waitRecrawl(t, "5 copies", func(rs *engine.RecrawlStats) bool { return rs.Copies == 5 })
	rs := r.round(t, 1)
	r.stop(t)
	want := map[string]int{"/": 2, "/p1": 2, "/p2": 2, "/p3": 1, "/skip/x": 1}
	for p, n := range want {
		if got := s.fetches(p); got != n {
			t.Errorf("%s fetched %d times, want %d", p, got, n)
		}
	}
	if rs.Filtered == 0 || rs.Bounded == 0 {
		t.Errorf("recrawl stats %+v: want URLs filtered and bounded", rs)
	}
}

// The expected page count bounds a recrawl: a page that suddenly links to
// many new pages gives a quarter more pages than the channel had, and the
// crawl does not discover the rest behind the task's back.
func TestRecrawlExpectedPagesBound(t *testing.T) {
	s := newEditableSite(t)
	var known, fresh []string
	for i := range 7 {
		known = append(known, fmt.Sprintf("/k%d", i))
		s.set(known[i])
	}
	for i := range 20 {
		fresh = append(fresh, fmt.Sprintf("/n%d", i))
		s.set(fresh[i])
	}
	s.set("/", known...)
	r := startRecrawl(t, []string{s.url("/")}, recrawl.Scope{})
	r.waitRecrawl(t, "8 copies", func(rs *engine.RecrawlStats) bool { return rs.Copies == 8 })

	s.set("/", append(known, fresh...)...)
	rs := r.round(t, 1)
	r.stop(t)
	newFetched := 0
	for _, p := range fresh {
		newFetched += s.fetches(p)
	}
	// 8 pages expected: a limit of 10, the 8 known and 2 new.
	if newFetched != 2 || rs.Found != 2 || rs.Copies != 10 {
		t.Errorf("%d new pages fetched, %d found, %d copies; want 2, 2, 10", newFetched, rs.Found, rs.Copies)
	}
	if rs.Bounded != len(fresh)-2 {
		t.Errorf("%d URLs refused by the bounds, want %d", rs.Bounded, len(fresh)-2)
	}
}
