package engine_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/record"
	"lidi/engine/visit"
	"lidi/internal/testkit"
	"lidi/storage"
)

// Duplicate detection's decisions that wait on a later page (the URLs a
// rule skipped, until it is withdrawn; a page's links, until a probe
// answers) survive a crawl killed in between: the kill is played by a
// store that takes no batch from a given moment, as a process killed -9
// writes nothing more, and the crawl is then run again on the file.

// dyingStore is a crawl's SQLite file that no batch reaches once killed.
type dyingStore struct {
	*storage.DB
	dead atomic.Bool
}

var errKilled = errors.New("killed")

func (s *dyingStore) Apply(ctx context.Context, b *record.Batch) error {
	if s.dead.Load() {
		return errKilled
	}
	return s.DB.Apply(ctx, b)
}

// Write is Apply's check on the way in of the committer's writes.
func (s *dyingStore) Write(ctx context.Context, b *record.Batch) error {
	if s.dead.Load() {
		return errKilled
	}
	return s.DB.Write(ctx, b)
}

// gate holds the requests whose URI match until opened, and tells when
// the first arrives.
type gate struct {
	what    string
	match   func(uri string) bool
	reached chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate(what string, match func(uri string) bool) *gate {
	return &gate{what: what, match: match, reached: make(chan struct{}), open: make(chan struct{})}
}

// pass holds a request for uri, if it matches, until the gate opens.
func (g *gate) pass(uri string) {
	if !g.match(uri) {
		return
	}
	g.once.Do(func() { close(g.reached) })
	<-g.open
}

// crashAt crawls cfg into path until every gate holds a request and
// stored holds in the file, then kills the crawl: nothing it does after
// is written. wrap, if not nil, is the crawl's dispatcher.
func crashAt(t *testing.T, cfg engine.Config, path string, gates []*gate, stored func() bool, wrap func(*visit.Robot) visit.Dispatcher) {
	t.Helper()
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	resolver, err := dns.NewCache(dns.Config{Servers: []string{"127.0.0.1:1"}}) // IP literals only
	if err != nil {
		t.Fatal(err)
	}
	defer resolver.Close()
	st := &dyingStore{DB: db}
	eng, err := engine.New(cfg, st, resolver, nil)
	if err != nil {
		t.Fatal(err)
	}
	if wrap != nil {
		eng.SetDispatcher(wrap(eng.Robot()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	opened := false
	defer func() {
		if !opened {
			for _, g := range gates {
				close(g.open)
			}
		}
	}()
	for _, g := range gates {
		select {
		case <-g.reached:
		case err := <-done:
			t.Fatalf("the crawl ended (%v) before %s was asked for", err, g.what)
		}
	}
	testkit.WaitFor(t, time.Minute, "the decisions to reach the file before the kill", stored)
	st.dead.Store(true)
	opened = true
	for _, g := range gates {
		close(g.open)
	}
	if err := <-done; !errors.Is(err, errKilled) {
		t.Fatalf("killed crawl: %v, want the store's %v", err, errKilled)
	}
}

// queryCount runs a count on the crawl file at path.
func queryCount(t *testing.T, path, query string, args ...any) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// leaseRecorder dispatches leases to a local robot and keeps them as a
// master hands them to slaves (JSON).
type leaseRecorder struct {
	visit.LocalDispatcher
	mu     sync.Mutex
	leases [][]byte
}

func (d *leaseRecorder) Dispatch(ctx context.Context, l *visit.Lease, report func(visit.Result)) {
	wire, err := json.Marshal(l)
	if err == nil {
		d.mu.Lock()
		d.leases = append(d.leases, wire)
		d.mu.Unlock()
	}
	d.LocalDispatcher.Dispatch(ctx, l, report)
}

// with returns the last lease handed out with the URL ending in suffix.
func (d *leaseRecorder) with(t *testing.T, suffix string) *visit.Lease {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, wire := range slices.Backward(d.leases) {
		var l visit.Lease
		if err := json.Unmarshal(wire, &l); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(l.URLs, func(q record.QueuedURL) bool { return strings.HasSuffix(q.URL, suffix) }) {
			return &l
		}
	}
	t.Fatalf("no lease held %s", suffix)
	return nil
}

// withdrawalWeb serves a site whose "/a", "/b" and "/c" give the same
// page at another spelling (copyOf(page), "/print/a" for "/a"), which
// teaches a rule that rewrites it; "/next" links the copy of "/q", found
// after the rule; the copy of "/z" is another page than "/z", which
// withdraws the rule once fetched. The copies' spelling is a directory
// of their own, which no URL of a lease is taken for a variant of before
// a pair proposes it (see dedup.Detector.Variants): the lease is fetched
// in the order the home page links it.
func withdrawalWeb(copyOf func(page string) string) func(uri string) (int, string) {
	copies := map[string]string{}
	for _, p := range []string{"a", "b", "c", "q", "z"} {
		copies[copyOf(p)] = "/" + p
	}
	return func(uri string) (int, string) {
		if page, ok := copies[uri]; ok {
			if page == "/z" || page == "/q" {
				return 200, htmlPage(uri, prose(uint64(page[1])<<8+1, 120)) // another page
			}
			uri = page // the same page
		}
		switch uri {
		case "/":
			return 200, htmlPage("Home", prose(1, 80), "/a", copyOf("a"), "/b", copyOf("b"),
				"/c", copyOf("c"), "/next", "/z", copyOf("z"))
		case "/next":
			return 200, htmlPage("Next", prose(2, 80), copyOf("q"), "/q")
		case "/a", "/b", "/c":
			return 200, htmlPage(uri, prose(uint64(uri[1]), 120))
		case "/z", "/q":
			return 200, htmlPage(uri, prose(uint64(uri[1])<<8, 120))
		}
		return 404, htmlPage("Not found", "no such page")
	}
}

// A rule withdrawn after a restart queues again what it skipped before,
// on withdrawalWeb with mobile copies ("/m/a"), so that one rule is
// learned (the /m/ directory is /): "/m/q", found after it, is skipped
// under it. The crawl is killed while its lease fetches "/z" (a cluster
// master killed while a slave crawls). Run again, it takes over that
// lease, whose "/m/z" differs from "/z": the rule is withdrawn, and
// "/m/q", skipped before the kill, is fetched.
func TestRuleWithdrawnAfterRestartRequeuesWhatItSkipped(t *testing.T) {
	z := newGate("/z", func(uri string) bool { return uri == "/z" })
	web := withdrawalWeb(func(page string) string { return "/m/" + page })
	site, base := startTinySite(t, func(uri string) (int, string) {
		z.pass(uri)
		return web(uri)
	})
	cfg := tinyConfig([]string{base + "/"}, 1, 20)
	cfg.Strategy = "depth" // breadth-first: the order above
	path := filepath.Join(t.TempDir(), "crawl.db")
	const skippedQ = "SELECT count(*) FROM urls WHERE url = ? AND state = 2 AND skip_reason = 'rule'"
	rec := &leaseRecorder{}
	crashAt(t, cfg, path, []*gate{z}, func() bool { return queryCount(t, path, skippedQ, base+"/m/q") == 1 },
		func(r *visit.Robot) visit.Dispatcher { rec.Robot = r; return rec })
	if n := queryCount(t, path, "SELECT count(*) FROM rules WHERE withdrawn = 0"); n == 0 {
		t.Fatal("no rule in force at the kill, want one that rewrites /m/")
	}

	earlier := rec.with(t, "/m/z")
	earlier.NotBefore, earlier.Deadline = time.Now(), time.Now().Add(time.Minute)
	eng, release := openEngine(t, cfg, "127.0.0.1:1", path)
	defer release()
	eng.SetDispatcher(&resumer{LocalDispatcher: visit.LocalDispatcher{Robot: eng.Robot()}, earlier: earlier})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	st := eng.Stats()
	if st.Dup.Withdrawn != 1 || st.Dup.Rules != 0 {
		t.Fatalf("%d rules withdrawn, %d in force; want the one withdrawn; stats %+v", st.Dup.Withdrawn, st.Dup.Rules, st.Dup)
	}
	if n := site.count(func(uri string) bool { return uri == "/m/q" }); n != 1 {
		t.Errorf("/m/q fetched %d times, want 1 (skipped under the rule before the kill, then queued again)", n)
	}
	if why, ok := skipReasons(t, path)[base+"/m/q"]; ok {
		t.Errorf("/m/q left skipped (%q)", why)
	}
	if st.Dup.Requeued != 1 || st.Dup.Pruned != 0 {
		t.Errorf("requeued %d, pruned %d; want 1 and 0", st.Dup.Requeued, st.Dup.Pruned)
	}
	for _, p := range []string{"/", "/q"} {
		if n := site.count(func(uri string) bool { return uri == p }); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
}

// The links of pages held for a probe's answer survive a kill before
// the answer. Two broken links of a host answer 200 with a "not found"
// page that suggests other pages (its own suggestions for each), which
// points detection to a soft 404: the host is probed, the links of the
// not-found pages fetched meanwhile wait for the answer, and the crawl
// is killed while the probe is asked for. Run again, the probe is
// fetched and decides the links: a host that answers it with its
// not-found page ("soft") makes the held pages soft 404s, whose
// suggestions are not followed; one that answers a real 404 ("honest")
// shows that they were genuine, and their suggestions are fetched, once.
func TestHeldLinksSurviveARestart(t *testing.T) {
	suggestions := func(path string) []string {
		h := fnv.New32a()
		h.Write([]byte(path))
		return []string{fmt.Sprintf("/suggest/%08x-1.html", h.Sum32()), fmt.Sprintf("/suggest/%08x-2.html", h.Sum32())}
	}
	for _, soft := range []bool{true, false} {
		name := map[bool]string{true: "soft", false: "honest"}[soft]
		t.Run(name, func(t *testing.T) {
			// The probe's name is lidi's own (dedup.ProbeURL); its
			// prefix tells it.
			probe := newGate("the probe", func(uri string) bool { return strings.Contains(uri, "lidi-no-such-page") })
			site, base := startTinySite(t, func(uri string) (int, string) {
				probe.pass(uri)
				switch {
				case uri == "/":
					return 200, htmlPage("Home", prose(1, 120), "/a.html", "/old/gone.html", "/archive/missing.php")
				case uri == "/a.html":
					return 200, htmlPage("A", prose(2, 120))
				case uri == "/old/gone.html" || uri == "/archive/missing.php" || soft:
					return 200, htmlPage("Page not found", "Sorry, the page "+uri+" does not exist on this server. It may have moved, or the link that brought you here is broken. Try one of these pages instead.", suggestions(uri)...)
				case strings.HasPrefix(uri, "/suggest/"):
					return 200, htmlPage("Suggested "+uri, prose(uint64(len(uri))<<8+uint64(uri[len(uri)-6]), 120))
				}
				return 404, htmlPage("404", "no such page")
			})
			cfg := tinyConfig([]string{base + "/"}, 1, 20)
			cfg.Strategy = "depth"
			path := filepath.Join(t.TempDir(), "crawl.db")
			crashAt(t, cfg, path, []*gate{probe}, func() bool { return queryCount(t, path, "SELECT count(*) FROM held_links") > 0 }, nil)
			var pages []string // the pages whose links wait
			eachRow(t, path, "SELECT u.url FROM held_links h JOIN urls u ON u.id = h.url_id", func(rows *sql.Rows) error {
				var u string
				err := rows.Scan(&u)
				pages = append(pages, strings.TrimPrefix(u, base))
				return err
			})

			runCrawl(t, cfg, "127.0.0.1:1", path)
			for _, page := range pages {
				fetched := 0
				for _, s := range suggestions(page) {
					fetched += site.count(func(uri string) bool { return uri == s })
				}
				recorded := queryCount(t, path, "SELECT count(*) FROM duplicates d JOIN urls u ON u.id = d.url_id WHERE d.kind = 'soft-404' AND u.url = ?", base+page) == 1
				if soft && (fetched != 0 || !recorded) {
					t.Errorf("%s (soft 404 recorded: %v) had its links fetched %d times, want a soft 404 whose links are not followed", page, recorded, fetched)
				}
				if !soft && (fetched != 2 || recorded) {
					t.Errorf("%s (soft 404 recorded: %v) had its 2 links fetched %d times, want each once", page, recorded, fetched)
				}
			}
			if n := queryCount(t, path, "SELECT count(*) FROM held_links"); n != 0 {
				t.Errorf("%d pages still hold their links after the probe answered", n)
			}
			if n := queryCount(t, path, "SELECT count(*) FROM soft404s WHERE withdrawn = 0"); n != map[bool]int{true: 1, false: 0}[soft] {
				t.Errorf("%d soft-404 signatures in force", n)
			}
			t.Logf("held at the kill: %v", pages)
		})
	}
}

// A URL skipped in favour of a canonical URL that has not answered yet
// waits for that answer across a kill: on dirCopyWeb, /copy/extra is
// skipped for /docs/extra, and the crawl killed while /docs/extra is
// asked for. Run again, /docs/extra answers 404 and /copy/extra is
// fetched, once.
func TestCanonicalAnswerAfterRestart(t *testing.T) {
	missing := newGate("/docs/extra", func(uri string) bool { return uri == "/docs/extra" })
	site, base := startTinySite(t, func(uri string) (int, string) {
		missing.pass(uri)
		return dirCopyWeb(uri)
	})
	cfg := tinyConfig([]string{base + "/"}, 1, 20)
	cfg.Strategy = "depth" // breadth-first: /copy/extra after every copy
	path := filepath.Join(t.TempDir(), "crawl.db")
	const skippedQ = "SELECT count(*) FROM urls WHERE url = ? AND state = 2 AND skip_reason = 'rule'"
	crashAt(t, cfg, path, []*gate{missing}, func() bool { return queryCount(t, path, skippedQ, base+"/copy/extra") == 1 }, nil)

	eng, release := openEngine(t, cfg, "127.0.0.1:1", path)
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := site.count(func(uri string) bool { return uri == "/copy/extra" }); n != 1 {
		t.Errorf("/copy/extra fetched %d times, want 1 (skipped before the kill, queued again when /docs/extra answered 404 after it)", n)
	}
	if why, ok := skipReasons(t, path)[base+"/copy/extra"]; ok {
		t.Errorf("/copy/extra left skipped (%q)", why)
	}
	if st := eng.Stats(); st.Dup.Requeued != 1 {
		t.Errorf("requeued %d, want 1; stats %+v", st.Dup.Requeued, st.Dup)
	}
}
