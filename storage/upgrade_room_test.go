package storage

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// version9File returns the path of a closed version 9 file that holds
// orderBatches, and the bytes its urls and page_links take with their
// indexes.
func version9File(t *testing.T) (string, int64) {
	t.Helper()
	db := openTest(t)
	for _, b := range orderBatches() {
		apply(t, db, b)
	}
	path := db.Path()
	db.Close()
	execRaw(t, path, append(slices.Clip(dropVersion10), "PRAGMA user_version = 9")...)
	r := rawOpen(t, path)
	defer r.Close()
	tables := queryInt(t, r, `SELECT sum(pgsize) FROM dbstat WHERE aggregate = TRUE AND name IN
		(SELECT name FROM sqlite_schema WHERE tbl_name IN ('urls', 'page_links') AND type IN ('table', 'index'))`)
	if tables == 0 {
		t.Fatal("the version 9 file's tables take no pages")
	}
	return path, tables
}

// An upgrade that copies the URL and link tables refuses up front, with a
// *RoomError that unwraps to ErrDiskFull, when the disk has less free
// than twice their size, and leaves the file as it was; with the room, it
// upgrades and says what it does.
func TestUpgradeChecksItsRoom(t *testing.T) {
	for _, tc := range []struct {
		name   string
		free   func(tables int64) int64
		refuse bool
	}{
		{"less than twice the tables", func(n int64) int64 { return 2*n - 1 }, true},
		{"no space at all", func(int64) int64 { return 0 }, true},
		{"twice the tables", func(n int64) int64 { return 2 * n }, false},
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
				if len(logged) != 2 || !strings.Contains(logged[0], "from schema version 9 to 10") || !strings.Contains(logged[1], "upgraded") {
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
			if re.Copied != tables || re.Need != 2*tables || re.Version != SchemaVersion {
				t.Errorf("%+v, want %d bytes copied and twice that needed", re, tables)
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
			db, err = Open(path, Options{diskFree: func(string) (int64, bool) { return 2 * tables, true }})
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
// the same file upgrades within it.
func TestUpgradeChecksItsCap(t *testing.T) {
	roomy := func(string) (int64, bool) { return 1 << 50, true }
	for _, tc := range []struct {
		name   string
		room   func(tables int64) int64 // bytes the cap leaves above the file's used pages
		refuse bool
	}{
		{"a page short of the tables", func(n int64) int64 { return n - pageSize }, true},
		{"the tables", func(n int64) int64 { return n }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, tables := version9File(t)
			r := rawOpen(t, path)
			used := (queryInt(t, r, "PRAGMA page_count") - queryInt(t, r, "PRAGMA freelist_count")) * pageSize
			r.Close()
			capBytes := used + tc.room(tables)
			db, err := Open(path, Options{MaxSize: capBytes, diskFree: roomy})
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
			if re.MaxSize != capBytes || re.Copied != tables || re.Free != tc.room(tables) {
				t.Errorf("%+v, want the cap %d, %d bytes copied, %d left", re, capBytes, tables, tc.room(tables))
			}
			if !strings.Contains(err.Error(), "raise storage.max_size") {
				t.Errorf("error %q does not say to raise the cap", err)
			}
			if v := queryInt(t, rawOpen(t, path), "PRAGMA user_version"); v != 9 {
				t.Errorf("user_version %d after the refusal, want 9", v)
			}
		})
	}
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
