package storage

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"lidi/engine/record"
)

// posixLocks returns the lines of /proc/locks this process holds on the
// file at path.
func posixLocks(t *testing.T, path string) []string {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/locks")
	if err != nil {
		t.Skip(err)
	}
	ino, pid := fmt.Sprintf(":%d", fi.Sys().(*syscall.Stat_t).Ino), fmt.Sprint(os.Getpid())
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 6 && f[1] == "POSIX" && f[4] == pid && strings.HasSuffix(f[5], ino) {
			out = append(out, l)
		}
	}
	return out
}

// openDescriptors counts this process's descriptors of the file at path
// and of its WAL.
func openDescriptors(t *testing.T, path string) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	n := 0
	for _, fd := range fds {
		if to, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && (to == path || to == path+"-wal") {
			n++
		}
	}
	return n
}

// Closing the DB leaves the locks of the process's other handles on the
// crawl file (a snapshot being taken, captures being read for an export):
// the checkpointer's own descriptors of the file, which it syncs through,
// close only with the last handle, since closing any descriptor of a file
// drops every POSIX lock the process holds on it (found in review: ec80bba
// closed them with the DB). And they do close then.
func TestCloseKeepsOtherHandlesLocks(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	before := openDescriptors(t, path)
	db := openApplied(t, path)
	c, err := OpenCaptures(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Size(ctx); err != nil {
		t.Fatal(err)
	}
	locks := posixLocks(t, path)
	if len(locks) == 0 {
		t.Fatal("the captures' read transaction holds no lock on the file: nothing to check")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if after := posixLocks(t, path); len(after) == 0 {
		t.Errorf("the captures' POSIX locks on the crawl file were dropped when the DB closed: %q before, none after", locks)
	}
	if _, _, err := c.Size(ctx); err != nil {
		t.Errorf("captures after the DB closed: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openDescriptors(t, path); n != before {
		t.Errorf("%d descriptors of the file and its WAL open after every handle closed, want %d", n, before)
	}
}

// The writer's driver statements (rawStmts) are finalized when the DB
// closes: SQLite keeps a connection with statements left open, and with
// it the file's descriptors and the WAL, which the last connection's
// close would have checkpointed and removed.
func TestCloseFinalizesRawStatements(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openApplied(t, path)
	if len(db.raw.stmts) == 0 {
		t.Fatal("Apply prepared no driver statement: nothing to check")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Error("the WAL is left after Close: a connection stayed open")
	}
	if n := openDescriptors(t, path); n != 0 {
		t.Errorf("%d descriptors of the file and its WAL open after Close", n)
	}
}

// A caller's context cancelled while Head or SetMeta runs must not cost
// the writer its connection: SQLite's interrupt left on it made
// database/sql replace it, and the driver statements prepared on the old
// one kept it open (its descriptors, its cache) until the process ended
// (session 39's review: replaced within 1 to 944 cancelled calls, 5
// descriptors left after Close). Nothing is lost either way.
func TestCancelledCallsKeepTheWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db := openApplied(t, path)
	driverConn := func() any {
		c, err := db.w.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var ci any
		c.Raw(func(x any) error { ci = x; return nil })
		return ci
	}
	first := driverConn()
	for _, call := range []struct {
		name string
		run  func(context.Context)
	}{
		{"Head", func(ctx context.Context) { db.Head(ctx, 1, 10) }},
		{"SetMeta", func(ctx context.Context) { db.SetMeta(ctx, "test", "x") }},
	} {
		for i := range 2000 {
			ctx, cancel := context.WithCancel(context.Background())
			go cancel() // at any point of the call, or before it
			call.run(ctx)
			cancel()
			if driverConn() != first {
				t.Fatalf("%s: the writer's connection replaced after %d cancelled calls", call.name, i+1)
			}
		}
	}
	w := newWorkload(2, 5, 1<<10)
	var b record.Batch
	w.fill(&b, 10, 4, 2)
	if err := db.Apply(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if n := openDescriptors(t, path); n != 0 {
		t.Errorf("%d descriptors of the file and its WAL open after Close", n)
	}
}
