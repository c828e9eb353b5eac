package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Snapshot writes a consistent copy of the database to out while the crawl
// goes on writing: it runs VACUUM INTO on a connection of its own, which
// reads one snapshot of the WAL and never blocks the writer. The copy holds
// exactly the batches committed when it started. It refuses to replace an
// existing file (ErrExists). The copy is compact (free
// pages dropped) and in rollback-journal mode, ready to be opened read-only.
func (db *DB) Snapshot(ctx context.Context, out string) error {
	if db.closed.Load() {
		return ErrClosed
	}
	return vacuumInto(ctx, db.path, out)
}

// Export writes a consistent copy of the crawl database at dbPath to outPath,
// as Snapshot does, from any process: it does not take the crawl's lock, so
// it works while a lidi crawls into dbPath (lidi export --db crawl.db --out
// snapshot.db). It refuses to replace an existing file (ErrExists) and
// fails with ErrNotCrawl when dbPath is not a lidi crawl.
func Export(ctx context.Context, dbPath, outPath string) error {
	return vacuumInto(ctx, dbPath, outPath)
}

func vacuumInto(ctx context.Context, src, out string) (err error) {
	src, err = filepath.Abs(src)
	if err != nil {
		return fmt.Errorf("storage: snapshot: %w", err)
	}
	out, err = filepath.Abs(out)
	if err != nil {
		return fmt.Errorf("storage: snapshot: %w", err)
	}
	if out == src {
		return fmt.Errorf("storage: snapshot: %s is the database itself", out)
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, out)
	}
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("storage: snapshot: %w", err)
	}

	// VACUUM INTO accepts an existing empty file; creating it here gives a
	// unique name next to out, so the final rename stays on one file system.
	f, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return fmt.Errorf("storage: snapshot: %w", err)
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
			os.Remove(tmp + "-journal")
		}
	}()

	// A normal read-write connection: VACUUM INTO is refused on a
	// query_only one. mode=rw never creates src. No lock file is taken.
	h, err := holdFile(src)
	if err != nil {
		return err
	}
	defer h.release() // after conn closes
	conn, err := sql.Open("sqlite", dsn(src, "rw", "_pragma=busy_timeout(5000)"))
	if err != nil {
		return fmt.Errorf("storage: snapshot: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	var appID int
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return fmt.Errorf("storage: snapshot of %s: %w", src, err)
	}
	if appID != ApplicationID {
		return fmt.Errorf("%w: %s", ErrNotCrawl, src)
	}
	if _, err := conn.ExecContext(ctx, "VACUUM INTO ?", tmp); err != nil {
		return fmt.Errorf("storage: snapshot of %s: %w", src, err)
	}
	if err := conn.Close(); err != nil {
		return fmt.Errorf("storage: snapshot of %s: %w", src, err)
	}
	if err := finishCopy(ctx, tmp); err != nil {
		return fmt.Errorf("storage: snapshot: %w", err)
	}
	if err := renameNoReplace(tmp, out); err != nil {
		return err
	}
	syncDir(filepath.Dir(out))
	return nil
}

// finishCopy puts the copy in rollback-journal mode (VACUUM INTO keeps the
// source's WAL flag, and a WAL file cannot be opened read-only without its
// -shm) and flushes it to disk before it is renamed into place.
func finishCopy(ctx context.Context, path string) error {
	c, err := sql.Open("sqlite", dsn(path, "rw"))
	if err != nil {
		return err
	}
	defer c.Close()
	var mode string
	if err := c.QueryRowContext(ctx, "PRAGMA journal_mode = DELETE").Scan(&mode); err != nil {
		return err
	}
	if !strings.EqualFold(mode, "delete") {
		return fmt.Errorf("copy left in journal mode %q", mode)
	}
	// A copy of a file a crawl writes lacks the fetch history's index
	// (see sqlDropFetchesIndex); a file older than the history lacks
	// the table.
	var history int
	if err := c.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'fetches'").Scan(&history); err != nil {
		return err
	}
	if history > 0 {
		if _, err := c.ExecContext(ctx, sqlBuildFetchesIndex); err != nil {
			return fmt.Errorf("indexing the fetch history: %w", err)
		}
	}
	if err := c.Close(); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// renameNoReplace moves tmp to out unless out exists, atomically where the
// file system has hard links.
func renameNoReplace(tmp, out string) error {
	err := os.Link(tmp, out)
	if err == nil {
		os.Remove(tmp)
		return nil
	}
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w: %s", ErrExists, out)
	}
	// No hard links here: check, then rename (a small race, only on such
	// file systems).
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, out)
	}
	if err := os.Rename(tmp, out); err != nil {
		return fmt.Errorf("storage: snapshot: %w", err)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
