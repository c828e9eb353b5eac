package storage

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"lidi/engine/fetch"
	"lidi/engine/record"
)

// The fetch history's index is absent while a crawl writes and present
// in a file at rest: after Close, after a killed crawl's file is opened
// and closed again, and in a snapshot of a crawl being written. Queries
// by url_id answer the same either way.
func TestFetchHistoryIndexedAtRest(t *testing.T) {
	ctx := context.Background()
	const indexed = "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'fetches_url'"
	const history = "SELECT status, recrawl, verdict FROM fetches WHERE url_id = 1 ORDER BY time"
	db := openTest(t)
	path := db.Path()
	if n := queryInt(t, rawOpen(t, path), indexed); n != 1 {
		t.Fatalf("a new file has %d fetches_url, want 1", n)
	}
	apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(1, 1, 0, 1), queued(2, 1, 0, 2)},
		Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200}, {URL: 2, Site: 1, Fetched: t0, Status: 404}}})
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0.Add(time.Hour), Status: 304, Recrawl: true, Verdict: fetch.VerdictNotModified}}})
	live := rawOpen(t, path)
	if n := queryInt(t, live, indexed); n != 0 {
		t.Errorf("%d fetches_url while the crawl writes, want 0", n)
	}
	want := dumpRows(t, live, history)
	if !slices.Equal(want, []string{"[{200 true} {0 true} {none true}]", "[{304 true} {1 true} {not-modified true}]"}) {
		t.Fatalf("history while the crawl writes: %q", want)
	}
	snap := filepath.Join(t.TempDir(), "snap.db")
	if err := db.Snapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	live.Close()
	// A crawl killed while it wrote left its file without the index;
	// opening and closing it, with no write, builds it.
	killed := filepath.Join(t.TempDir(), "killed.db")
	if err := Export(ctx, path, killed); err != nil {
		t.Fatal(err)
	}
	execRaw(t, killed, sqlDropFetchesIndex, "PRAGMA journal_mode = WAL")
	again, err := Open(killed, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := again.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, snap, killed} {
		r := rawOpen(t, p)
		if n := queryInt(t, r, indexed); n != 1 {
			t.Errorf("%s at rest has %d fetches_url, want 1", filepath.Base(p), n)
		}
		if got := dumpRows(t, r, history); !slices.Equal(got, want) {
			t.Errorf("%s: history %q, want %q", filepath.Base(p), got, want)
		}
		if plan := strings.Join(dumpRows(t, r, "EXPLAIN QUERY PLAN "+history), "\n"); !strings.Contains(plan, "fetches_url") {
			t.Errorf("%s: the history of a URL is read without its index:\n%s", filepath.Base(p), plan)
		}
		r.Close()
	}
}
