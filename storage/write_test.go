package storage

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"lidi/engine/record"
)

// Write leaves its transaction open: Head reads through it, readers and
// the counters see nothing of it until Commit, which commits every batch
// written since the last; an error rolls all of them back; Close commits.
func TestWriteThenCommit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	head := func(want int) {
		t.Helper()
		urls, _, _, err := db.Head(ctx, 1, 10)
		if err != nil || len(urls) != want {
			t.Fatalf("Head: %d URLs, %v; want %d", len(urls), err, want)
		}
	}
	stats := func(wantURLs, wantFetched, wantBatches int64) {
		t.Helper()
		st, err := db.Stats(ctx)
		if err != nil || st.URLs != wantURLs || st.Fetched != wantFetched || st.Batches != wantBatches {
			t.Fatalf("Stats: %d URLs, %d fetched, %d batches, %v; want %d, %d, %d", st.URLs, st.Fetched, st.Batches, err, wantURLs, wantFetched, wantBatches)
		}
	}
	write := func(b record.Batch) error { return db.Write(ctx, &b) }

	if err := write(record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(1, 1, 1, 1), queued(2, 1, 1, 2), queued(3, 1, 1, 3)}}); err != nil {
		t.Fatal(err)
	}
	head(3)
	stats(0, 0, 0)
	if err := write(record.Batch{URLs: []record.URLRecord{queued(4, 1, 1, 4)}, Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200, Body: compress(t, []byte("one"))}}}); err != nil {
		t.Fatal(err)
	}
	head(3)
	stats(0, 0, 0)
	if err := db.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	stats(4, 1, 1)
	checkConsistent(t, rawOpen(t, path))
	if err := db.Commit(ctx); err != nil { // nothing open
		t.Fatal(err)
	}
	stats(4, 1, 1)

	// A failed write takes the batches written before it with it.
	if err := write(record.Batch{URLs: []record.URLRecord{queued(5, 1, 1, 5)}}); err != nil {
		t.Fatal(err)
	}
	head(4)
	if err := write(record.Batch{Pages: []record.PageRecord{{URL: 99, Site: 1, Fetched: t0, Status: 200}}}); !errors.Is(err, ErrUnknownURL) {
		t.Fatalf("a page of an unknown URL: %v", err)
	}
	head(3)
	if err := db.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	stats(4, 1, 1)

	// Close commits what is open.
	if err := write(record.Batch{URLs: []record.URLRecord{queued(6, 1, 1, 6)}}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stats(5, 1, 0)
	checkConsistent(t, rawOpen(t, path))
}
