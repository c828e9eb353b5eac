package storage_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/simweb"
	"lidi/storage"
)

// Storage faults, end to end: a crawl of a synthetic web into a real
// SQLite file meets a full disk, a read-only file and the file's removal.
// Each time lidi stops with an error naming the file and the fault, what
// was stored before stays (and is never fetched again), and a run after the
// fault is fixed finishes the crawl with every page the uninterrupted crawl
// has.

// faultWeb is small, so that the crawls are quick, but has enough pages
// for a fault to land in the middle.
var faultWeb = simweb.Options{Seed: 21, Sites: 6, Pages: 240}

// shared is faultWeb served once for every fault test, and what an
// uninterrupted crawl of it fetches: the first test that needs them builds
// them, the others only read them (each crawls into files of its own).
var shared struct {
	once sync.Once
	srv  *simweb.Server
	full map[string]int64
	// fullBytes and emptyBytes are the sizes of the uninterrupted crawl's
	// closed file and of a file with the schema alone.
	fullBytes, emptyBytes int64
}

// sharedWeb returns the server of faultWeb and what an uninterrupted crawl
// of it fetches. The server outlives the test: the process's end stops it.
func sharedWeb(t *testing.T) (*simweb.Server, map[string]int64) {
	t.Helper()
	shared.once.Do(func() {
		web, err := simweb.Generate(faultWeb)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := simweb.Start(context.Background(), web, simweb.ServerConfig{})
		if err != nil {
			t.Fatal(err)
		}
		shared.full, shared.fullBytes = fullCrawl(t, srv)
		shared.emptyBytes = emptyFile(t)
		shared.srv = srv
	})
	if shared.srv == nil {
		t.Fatal("the shared web or its uninterrupted crawl failed (see the first fault test)")
	}
	return shared.srv, shared.full
}

func faultConfig(srv *simweb.Server) engine.Config {
	cfg := engine.Defaults()
	cfg.Seeds = srv.SeedURLs(2)
	cfg.Robots = 4
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.PagesPerVisit = 10
	cfg.FlushEvery = 10 * time.Millisecond
	cfg.RobotsRetry = 50 * time.Millisecond
	cfg.Rank = false
	return cfg
}

// crawlOnce opens path with opt and crawls; during, if not nil, runs while
// the crawl does. It returns the error of Open or of Run.
func crawlOnce(t *testing.T, srv *simweb.Server, cfg engine.Config, path string, opt storage.Options, during func(*engine.Engine)) error {
	t.Helper()
	db, err := storage.Open(path, opt)
	if err != nil {
		return err
	}
	defer db.Close()
	resolver, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer resolver.Close()
	eng, err := engine.New(cfg, db, resolver, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if during != nil {
		done := make(chan struct{})
		defer func() { <-done }()
		go func() { defer close(done); during(eng) }()
	}
	if err := eng.Run(ctx); err != nil {
		return err
	}
	if st := eng.Stats(); st.State != engine.StateDone {
		t.Fatalf("state = %s, want done", st.State)
	}
	return nil
}

// fetchedAt maps the URLs the file at path holds as fetched to the time
// they were fetched, after checking the file's integrity.
func fetchedAt(t *testing.T, path string) map[string]int64 {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check of %s: %q %v", path, check, err)
	}
	rows, err := db.Query("SELECT url, fetched FROM urls WHERE state = 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var u string
		var at int64
		if err := rows.Scan(&u, &at); err != nil {
			t.Fatal(err)
		}
		out[u] = at
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkFault checks that err reports fault on path in a message that names
// the file.
func checkFault(t *testing.T, err error, fault error, path string) *storage.FaultError {
	t.Helper()
	var fe *storage.FaultError
	if !errors.As(err, &fe) || !errors.Is(err, fault) {
		t.Fatalf("err = %v, want a %v", err, fault)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "run lidi again") {
		t.Errorf("message %q does not name %s or say what to do", err, path)
	}
	t.Logf("lidi said: %v", err)
	return fe
}

// resume runs the crawl at path again, the fault fixed, and checks that
// it ends with every page the uninterrupted crawl fetched, and that the
// pages stored before the fault were not fetched again.
func resume(t *testing.T, srv *simweb.Server, path string, before, full map[string]int64) {
	t.Helper()
	if err := crawlOnce(t, srv, faultConfig(srv), path, storage.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	final := fetchedAt(t, path)
	if len(before) == 0 {
		t.Fatal("nothing stored before the fault: the test tests nothing")
	}
	if len(before) >= len(full) {
		t.Fatalf("%d of %d pages stored before the fault: it came too late", len(before), len(full))
	}
	for u, at := range before {
		if got, ok := final[u]; !ok || got != at {
			t.Errorf("%s: fetched at %d before the fault, at %d (stored %v) after", u, at, got, ok)
		}
	}
	for u := range full {
		if _, ok := final[u]; !ok {
			t.Errorf("%s never fetched", u)
		}
	}
	if len(final) != len(full) {
		t.Errorf("%d pages fetched in the end, the uninterrupted crawl %d", len(final), len(full))
	}
	t.Logf("%d pages stored before the fault, %d in the end", len(before), len(final))
}

// fullCrawl is what an uninterrupted crawl of srv fetches, and the size
// of its file once closed.
func fullCrawl(t *testing.T, srv *simweb.Server) (map[string]int64, int64) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "full.db")
	if err := crawlOnce(t, srv, faultConfig(srv), path, storage.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	return fetchedAt(t, path), fileSize(t, path)
}

// emptyFile is the size of a crawl file with its schema and nothing else.
func emptyFile(t *testing.T) int64 {
	t.Helper()
	path := filepath.Join(t.TempDir(), "empty.db")
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return fileSize(t, path)
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// The file system fills up: SQLite's max_page_count stands for a full
// disk (SQLITE_FULL either way), which needs no privileges.
func TestFaultDiskFull(t *testing.T) {
	t.Parallel()
	srv, full := sharedWeb(t)
	path := filepath.Join(t.TempDir(), "crawl.db")
	// Room for the schema and a third of what the whole crawl stores: a
	// fixed 400 KiB held the schema and a page or two once new files had
	// 16 KiB pages, and none at all when the first batch was large.
	limit := shared.emptyBytes + (shared.fullBytes-shared.emptyBytes)/3
	err := crawlOnce(t, srv, faultConfig(srv), path, storage.Options{MaxSize: limit}, nil)
	checkFault(t, err, storage.ErrDiskFull, path)
	before := fetchedAt(t, path)
	// Space freed (no cap): the crawl continues.
	resume(t, srv, path, before, full)
}

// The file becomes read-only between two runs: the second does not start
// (storage.Open says so); after the fix the third finishes the crawl.
func TestFaultReadOnlyFile(t *testing.T) {
	t.Parallel()
	srv, full := sharedWeb(t)
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := faultConfig(srv)
	cfg.MaxPages = 60
	if err := crawlOnce(t, srv, cfg, path, storage.Options{}, nil); err != nil {
		t.Fatal(err)
	}
	before := fetchedAt(t, path)
	undo := makeReadOnly(t, path)
	err := crawlOnce(t, srv, faultConfig(srv), path, storage.Options{}, nil)
	checkFault(t, err, storage.ErrReadOnly, path)
	if strings.HasPrefix(err.Error(), "engine:") {
		t.Error("a read-only file found only when the crawl first wrote, not when it opened")
	}
	undo()
	resume(t, srv, path, before, full)
}

// The file is removed while the crawl runs: lidi notices at its next
// write, copies what the open connection still sees (everything stored,
// up to that write) beside it, and stops; with the copy moved back, the
// next run finishes the crawl.
func TestFaultFileRemoved(t *testing.T) {
	t.Parallel()
	srv, full := sharedWeb(t)
	path := filepath.Join(t.TempDir(), "crawl.db")
	removed := make(chan struct{})
	err := crawlOnce(t, srv, faultConfig(srv), path, storage.Options{}, func(eng *engine.Engine) {
		defer close(removed)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		deadline := time.After(30 * time.Second)
		for eng.Stats().Pages < 40 {
			select {
			case <-tick.C:
			case <-deadline:
				t.Error("the crawl never reached 40 pages")
				return
			}
		}
		if err := os.Remove(path); err != nil {
			t.Error(err)
		}
	})
	<-removed
	fe := checkFault(t, err, storage.ErrFileRemoved, path)
	if fe.Rescued != path+".rescued" {
		t.Fatalf("rescued to %q", fe.Rescued)
	}
	// What SQLite left under the removed file's name would be replayed
	// into the rescued copy moved back there.
	for _, p := range []string{path + "-wal", path + "-shm"} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s left beside the removed file after Close", filepath.Base(p))
		}
	}
	before := fetchedAt(t, fe.Rescued)
	if err := os.Rename(fe.Rescued, path); err != nil {
		t.Fatal(err)
	}
	resume(t, srv, path, before, full)
}
