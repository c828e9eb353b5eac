package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"lidi/engine/record"
)

// A queue-head read in the transaction Write left open may have to spill
// the transaction's pages to the log to make room in a small cache. On a
// full disk (here a file size limit: EFBIG, whose signal Go's runtime
// ignores) that write fails and SQLite rolls the whole transaction back
// by itself. The store must say so at the next Write and not run that
// Write's statements outside any transaction (each durable at once, a
// page's state without its links), nor commit the lost batches' counters.
// Found in review; before the fix readers saw the second Write's URL
// before any Commit and meta counted 3,001 URLs for a table of one.
//
// Not parallel: the size limit is the whole process's.
func TestHeadOnFullDiskEndsTheOpenTransaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(path, Options{CacheSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	b := record.Batch{Sites: []record.SiteRecord{site(1), site(2)}}
	for i := range 3000 {
		u := queued(uint64(i+1), 1+int64(i%2), float64(i%97), int64(i))
		u.URL = fmt.Sprintf("http://a.test/%d/some-long-path-segment-to-fill-pages", i)
		b.URLs = append(b.URLs, u)
	}
	if err := db.Write(ctx, &b); err != nil {
		t.Fatal(err)
	}
	// The disk is full: no file may grow.
	fi, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	full := old
	full.Cur = uint64(fi.Size())
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &full); err != nil {
		t.Fatal(err)
	}
	var herr error
	for _, s := range []int64{1, 2, 1, 2} {
		if _, _, _, herr = db.Head(ctx, s, 1500); herr != nil {
			break
		}
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if herr == nil {
		t.Fatal("no head read failed on the full disk: the transaction no longer fills the 64 KiB cache")
	}
	var fe *FaultError // SQLite says only "disk I/O error" of a write refused
	if !errors.As(herr, &fe) {
		t.Errorf("Head: %v, want a FaultError", herr)
	}

	second := record.Batch{URLs: []record.URLRecord{queued(900001, 1, 1, 900001)}}
	second.URLs[0].URL = "http://a.test/second"
	if err := db.Write(ctx, &second); !errors.As(err, &fe) {
		t.Errorf("the Write after the failed Head: %v, want the lost transaction's fault", err)
	}
	if n := queryInt(t, db.r, "SELECT count(*) FROM urls"); n != 0 {
		t.Errorf("%d URLs visible to readers before any Commit", n)
	}
	if err := db.Commit(ctx); err != nil {
		t.Errorf("Commit after the loss was reported: %v", err)
	}
	// The store goes on from its last commit.
	if err := db.Write(ctx, &second); err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db.r, "SELECT count(*) FROM urls"); n != 1 {
		t.Errorf("%d URLs after the next commit, want 1", n)
	}
	checkConsistent(t, rawOpen(t, path))
}

// BatchWriter's contract: an error rolls back the whole transaction, the
// batches written before included. A Write refused for its context left
// the transaction open, so the next Commit committed batches whose
// writer had been told they failed (found in review).
func TestWriteErrorRollsBackEarlierBatches(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "crawl.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	first := record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(1, 1, 1, 1)}}
	if err := db.Write(ctx, &first); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	second := record.Batch{URLs: []record.URLRecord{queued(2, 1, 1, 2)}}
	if err := db.Write(cancelled, &second); err == nil {
		t.Fatal("a Write with a cancelled context succeeded")
	}
	if err := db.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n := queryInt(t, db.r, "SELECT count(*) FROM urls"); n != 0 {
		t.Errorf("%d URLs committed after a failed Write, want its transaction rolled back", n)
	}
}
