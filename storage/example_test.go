package storage_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"lidi/engine/record"
	"lidi/storage"
)

func Example() {
	dir, err := os.MkdirTemp("", "lidi-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	db, err := storage.Open(filepath.Join(dir, "crawl.db"), storage.Options{})
	if err != nil {
		log.Fatal(err) // a *storage.LockedError if another lidi has it open
	}
	defer db.Close()

	// The engine's committer writes what it learned in batches.
	now := time.Now()
	b := &record.Batch{
		Sites: []record.SiteRecord{{ID: 1, Key: "http://example.test", Host: "example.test"}},
		URLs: []record.URLRecord{
			{ID: 101, Site: 1, URL: "http://example.test/", Priority: 0, Seq: 1, Discovered: now},
			{ID: 102, Site: 1, URL: "http://example.test/b", Depth: 1, Priority: 1, Seq: 3, Parent: 101, Discovered: now},
			{ID: 103, Site: 1, URL: "http://example.test/a", Depth: 1, Priority: 1, Seq: 2, Parent: 101, Discovered: now},
		},
		Links: []record.Link{{From: 101, To: 102}, {From: 101, To: 103}},
	}
	if err := db.Apply(ctx, b); err != nil {
		log.Fatal(err)
	}
	b.Reset()
	b.Pages = append(b.Pages, record.PageRecord{URL: 101, Site: 1, Fetched: now, Status: 200, Length: 1234})
	if err := db.Apply(ctx, b); err != nil {
		log.Fatal(err)
	}

	// Refill the site's queue: queued URLs by (priority, seq).
	urls, next, more, err := db.Head(ctx, 1, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(urls[0].URL, next, more)

	st, err := db.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("urls=%d queued=%d fetched=%d links=%d\n", st.URLs, st.Queued, st.Fetched, st.Links)

	// A consistent copy for researchers, taken without pausing the crawl.
	if err := db.Snapshot(ctx, filepath.Join(dir, "snapshot.db")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// http://example.test/a 1 true
	// urls=3 queued=2 fetched=1 links=2
}
