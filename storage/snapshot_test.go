package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/internal/testkit"
)

// writeWhile applies workload batches until stop is closed (at most limit
// batches), returning how many it applied.
func writeWhile(t *testing.T, db *DB, stop <-chan struct{}, limit int) (wait func() int) {
	t.Helper()
	var n atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := newWorkload(11, 20, 2048)
		var b record.Batch
		for range limit {
			select {
			case <-stop:
				return
			default:
			}
			b.Reset()
			w.fill(&b, 50, 20, 5)
			if err := db.Apply(context.Background(), &b); err != nil {
				t.Error(err)
				return
			}
			n.Add(1)
		}
	}()
	return func() int { wg.Wait(); return int(n.Load()) }
}

// checkCopy opens a snapshot as researchers would and as lidi would.
func checkCopy(t *testing.T, path string) Stats {
	t.Helper()
	r := rawOpen(t, path)
	checkConsistent(t, r)
	var mode string
	r.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if mode != "delete" {
		t.Errorf("snapshot journal_mode = %q", mode)
	}
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Errorf("snapshot user_version = %d", v)
	}
	r.Close()
	// The copy is a crawl database in its own right.
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("Open snapshot: %v", err)
	}
	defer db.Close()
	st, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestSnapshotWhileWriting(t *testing.T) {
	t.Parallel() // writes for seconds to a file of its own
	db := openTest(t)
	ctx := context.Background()
	// Some data before, so the copy is never empty.
	w := newWorkload(1, 5, 512)
	var b record.Batch
	w.fill(&b, 20, 10, 3)
	apply(t, db, b)

	stop := make(chan struct{})
	wait := writeWhile(t, db, stop, 2000)
	dir := t.TempDir()
	var copies []Stats
	for i := range 3 {
		out := filepath.Join(dir, "snap"+string(rune('a'+i))+".db")
		if err := db.Snapshot(ctx, out); err != nil {
			close(stop)
			wait()
			t.Fatal(err)
		}
		copies = append(copies, checkCopy(t, out))
	}
	close(stop)
	written := wait()
	t.Logf("%d batches written during the snapshots", written)
	for i := 1; i < len(copies); i++ {
		if copies[i].URLs < copies[i-1].URLs {
			t.Errorf("snapshot %d has fewer URLs than the one before", i)
		}
	}
	final, _ := db.Stats(ctx)
	if last := copies[len(copies)-1]; last.URLs > final.URLs || last.URLs < 20 {
		t.Errorf("snapshot URLs %d, database %d", last.URLs, final.URLs)
	}

	out := filepath.Join(dir, "snapa.db")
	before, _ := os.ReadFile(out)
	if err := db.Snapshot(ctx, out); !errors.Is(err, ErrExists) {
		t.Errorf("Snapshot over an existing file: %v", err)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Error("refused snapshot changed the existing file")
	}
	if err := db.Snapshot(ctx, db.Path()); err == nil {
		t.Error("Snapshot onto the database itself succeeded")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestExport(t *testing.T) {
	t.Parallel() // writes for seconds to a file of its own
	db := openTest(t)
	ctx := context.Background()
	stop := make(chan struct{})
	wait := writeWhile(t, db, stop, 2000)
	// Let a few batches land.
	testkit.WaitFor(t, 30*time.Second, "three batches written", func() bool {
		st, err := db.Stats(ctx)
		return err != nil || st.Batches >= 3
	})
	out := filepath.Join(t.TempDir(), "export.db")
	// Export takes no lock: it works while db holds it.
	err := Export(ctx, db.Path(), out)
	close(stop)
	wait()
	if err != nil {
		t.Fatal(err)
	}
	if st := checkCopy(t, out); st.URLs == 0 || st.Pages == 0 {
		t.Errorf("export is empty: %+v", st)
	}
	if err := Export(ctx, db.Path(), out); !errors.Is(err, ErrExists) {
		t.Errorf("Export over an existing file: %v", err)
	}
}

func TestExportErrors(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if err := Export(ctx, filepath.Join(dir, "missing.db"), filepath.Join(dir, "out.db")); err == nil {
		t.Error("Export of a missing file succeeded")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); !errors.Is(err, os.ErrNotExist) {
		t.Error("Export created the missing source")
	}
	other := filepath.Join(dir, "other.db")
	raw := rawOpenRW(t, other)
	raw.Exec("CREATE TABLE t (x)")
	raw.Close()
	if err := Export(ctx, other, filepath.Join(dir, "out.db")); !errors.Is(err, ErrNotCrawl) {
		t.Errorf("Export of a foreign file: %v", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	db := openTest(t)
	if err := db.Snapshot(cancelled, filepath.Join(dir, "c.db")); err == nil {
		t.Error("Snapshot with a cancelled context succeeded")
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 1 {
		t.Errorf("files left behind: %v", m)
	}
}
