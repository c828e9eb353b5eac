package storage

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"lidi/engine/record"
)

// olderPageSize is the page size of the files lidi wrote before it made
// new ones with pages of pageSize.
const olderPageSize = 4096

// openOlder opens a new file with the page size of an older lidi's.
func openOlder(t *testing.T) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "crawl.db"), Options{Now: func() time.Time { return t0 }, pageSize: olderPageSize})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// version9File returns the path of a closed version 9 file that holds
// orderBatches, and the bytes its urls and page_links take with their
// indexes, in pages of 4 KiB, as lidi wrote version 9.
func version9File(t *testing.T) (string, int64) {
	t.Helper()
	db := openOlder(t)
	for _, b := range orderBatches() {
		apply(t, db, b)
	}
	path := db.Path()
	db.Close()
	execRaw(t, path, append(slices.Clip(dropVersion10), "PRAGMA user_version = 9")...)
	return path, copiedBytes(t, path)
}

// copiedBytes returns the bytes the urls and page_links tables of the
// file at path take with their indexes.
func copiedBytes(t *testing.T, path string) int64 {
	t.Helper()
	r := rawOpen(t, path)
	defer r.Close()
	tables := queryInt(t, r, `SELECT sum(pgsize) FROM dbstat WHERE aggregate = TRUE AND name IN
		(SELECT name FROM sqlite_schema WHERE tbl_name IN ('urls', 'page_links') AND type IN ('table', 'index'))`)
	if tables == 0 {
		t.Fatal("the version 9 file's tables take no pages")
	}
	return tables
}

// An upgrade that copies the URL and link tables refuses up front, with a
// *RoomError that unwraps to ErrDiskFull, when the disk has less free
// than twice the size of their copy, and leaves the file as it was; with the room, it
// upgrades and says what it does.
func TestUpgradeChecksItsRoom(t *testing.T) {
	for _, tc := range []struct {
		name   string
		free   func(tables int64) int64
		refuse bool
	}{
		{"less than twice the copy", func(n int64) int64 { return upgradeRoom*copyBytes(n) - 1 }, true},
		{"no space at all", func(int64) int64 { return 0 }, true},
		{"twice the copy", func(n int64) int64 { return upgradeRoom * copyBytes(n) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, tables := version9File(t)
			var logged []string
			opt := Options{
				Log:      func(msg string) { logged = append(logged, msg) },
				diskFree: func(string) (int64, bool) { return tc.free(tables), true },
			}
			db, err := Open(path, opt)
			if !tc.refuse {
				if err != nil {
					t.Fatal(err)
				}
				db.Close()
				if v := queryInt(t, rawOpen(t, path), "PRAGMA user_version"); v != SchemaVersion {
					t.Errorf("user_version %d after the upgrade, want %d", v, SchemaVersion)
				}
				if len(logged) != 2 || !strings.Contains(logged[0], fmt.Sprintf("from schema version 9 to %d", SchemaVersion)) || !strings.Contains(logged[1], "upgraded") {
					t.Errorf("logged %q, want the upgrade's start and end", logged)
				}
				return
			}
			if err == nil {
				db.Close()
				t.Fatal("upgraded without the room for it")
			}
			var re *RoomError
			if !errors.As(err, &re) || !errors.Is(err, ErrDiskFull) {
				t.Fatalf("error %v (%T), want a *RoomError and ErrDiskFull", err, err)
			}
			if re.Copied != tables || re.Need != upgradeRoom*copyBytes(tables) || re.Version != SchemaVersion {
				t.Errorf("%+v, want %d bytes copied and twice the copy needed", re, tables)
			}
			if !strings.Contains(err.Error(), "free some space") {
				t.Errorf("error %q says nothing of what to do", err)
			}
			if v := queryInt(t, rawOpen(t, path), "PRAGMA user_version"); v != 9 {
				t.Errorf("user_version %d after the refusal, want 9", v)
			}
			if len(logged) != 0 {
				t.Errorf("logged %q before refusing", logged)
			}
			// With the room, the same file upgrades.
			db, err = Open(path, Options{diskFree: func(string) (int64, bool) { return upgradeRoom * copyBytes(tables), true }})
			if err != nil {
				t.Fatal(err)
			}
			db.Close()
		})
	}
}

// An upgrade that would take the file past its size cap (Options.MaxSize,
// storage.max_size) refuses up front, with a *RoomError that names the
// cap, even on a disk with room; with the cap leaving room for the copy,
// the same file upgrades within it. A packed version 9 file (vacuumed, as
// a snapshot is) has full pages, and version 10 adds an index of the
// URLs' IDs: its copy takes more than its tables did (14% more here), and
// the check asks for the room that copy takes. Should an estimate fall
// short, the copy's "database or disk is full" comes back as the same
// *RoomError, with SQLite's error, the file unchanged.
func TestUpgradeChecksItsCap(t *testing.T) {
	roomy := func(string) (int64, bool) { return 1 << 50, true }
	for _, tc := range []struct {
		name     string
		file     func(*testing.T) (string, int64)
		estimate func(int64) int64        // nil: copyBytes
		room     func(tables int64) int64 // bytes the cap leaves above the file's used pages
		refuse   bool
		midCopy  bool // refused by SQLite during the copy, not up front
	}{
		{"a page short of the copy", version9File, nil, func(n int64) int64 { return copyBytes(n) - olderPageSize }, true, false},
		{"the copy", version9File, nil, func(n int64) int64 { return copyBytes(n) }, false, false},
		{"packed, the tables", packedVersion9File, nil, func(n int64) int64 { return n }, true, false},
		{"packed, the copy", packedVersion9File, nil, func(n int64) int64 { return copyBytes(n) }, false, false},
		{"packed, an estimate that falls short", packedVersion9File, func(n int64) int64 { return n }, func(n int64) int64 { return n }, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, tables := tc.file(t)
			r := rawOpen(t, path)
			used := (queryInt(t, r, "PRAGMA page_count") - queryInt(t, r, "PRAGMA freelist_count")) * queryInt(t, r, "PRAGMA page_size")
			r.Close()
			capBytes := used + tc.room(tables)
			db, err := Open(path, Options{MaxSize: capBytes, diskFree: roomy, copyBytes: tc.estimate})
			if !tc.refuse {
				if err != nil {
					t.Fatalf("%v; the cap left %d bytes for %d of tables", err, tc.room(tables), tables)
				}
				db.Close()
				return
			}
			if err == nil {
				db.Close()
				t.Fatal("upgraded past the file's size cap")
			}
			var re *RoomError
			if !errors.As(err, &re) || !errors.Is(err, ErrDiskFull) {
				t.Fatalf("error %v (%T), want a *RoomError and ErrDiskFull", err, err)
			}
			if re.MaxSize != capBytes || re.Copied != tables || re.Free != tc.room(tables) || (re.Err != nil) != tc.midCopy {
				t.Errorf("%+v, want the cap %d, %d bytes copied, %d left, SQLite's error only if the copy was refused midway (%v)",
					re, capBytes, tables, tc.room(tables), tc.midCopy)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "storage: upgrading") || !strings.Contains(msg, "raise storage.max_size") {
				t.Errorf("error %q, want the *RoomError's own words, saying to raise the cap", err)
			}
			if v := queryInt(t, rawOpen(t, path), "PRAGMA user_version"); v != 9 {
				t.Errorf("user_version %d after the refusal, want 9", v)
			}
		})
	}
}

// packedVersion9File returns the path of a closed, vacuumed version 9
// file of 8,000 queued URLs with random IDs, and the bytes its urls and
// page_links take with their indexes.
func packedVersion9File(t *testing.T) (string, int64) {
	t.Helper()
	db := openOlder(t)
	r := rand.New(rand.NewPCG(1, 2))
	for b := range 4 {
		var batch record.Batch
		if b == 0 {
			batch.Sites = []record.SiteRecord{site(1)}
		}
		for i := range 2000 {
			batch.URLs = append(batch.URLs, queued(r.Uint64()|1, 1, 0, int64(b*2000+i+1)))
		}
		apply(t, db, batch)
	}
	path := db.Path()
	db.Close()
	execRaw(t, path, append(slices.Clip(dropVersion10), "PRAGMA user_version = 9", "VACUUM")...)
	return path, copiedBytes(t, path)
}

// The free space of a real file system is read, the same through a file
// and its directory, and a path that does not exist has none to tell.
func TestDiskFree(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/crawl.db"
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	free, ok := diskFree(dir)
	if !ok {
		t.Skip("this system does not tell the free space")
	}
	if free <= 0 {
		t.Errorf("%d bytes free in a directory the test writes to", free)
	}
	// Other processes write to the disk meanwhile: within 1 GiB.
	if ff, ok := diskFree(file); !ok || ff < free-1<<30 || ff > free+1<<30 {
		t.Errorf("%d bytes free through the file (ok %v), %d through its directory", ff, ok, free)
	}
	if _, ok := diskFree(dir + "/missing/crawl.db"); ok {
		t.Error("free space told for a path that does not exist")
	}
}
