// Package storage keeps a lidi crawl in one SQLite file.
//
// A DB implements engine.Store: the engine hands it batches of changes (sites,
// newly discovered URLs, fetched pages, links, events) and Apply writes each
// batch in one transaction, so after a crash the file holds every batch whose
// Apply returned and nothing of the batch that was being written.
//
// The file is in WAL mode with synchronous=NORMAL. A committed transaction
// survives kill -9 of the process (the WAL is in the operating system's
// cache and SQLite recovers it on the next open); a power loss or kernel
// crash may lose the last transactions committed before it, but never leaves
// the file inconsistent.
//
// One connection writes (Apply, Head, SetMeta); a separate pool of read-only
// connections serves readers (Stats, Page, Events, URLFingerprints, Sites,
// Counters), so a reader never holds the crawl up, and Snapshot and Export
// copy the file while it is being written. An advisory lock on a side file
// (path + ".lock") keeps a second lidi from writing the same crawl.
//
// The schema is documented for researchers in docs/schema.md.
package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"lidi/engine/record"
)

var (
	_ record.Store       = (*DB)(nil)
	_ record.DupCounter  = (*DB)(nil)
	_ record.BatchWriter = (*DB)(nil)
)

// Errors reported by the package. Typed errors below unwrap to them.
var (
	// ErrLocked reports that another process holds the crawl's lock.
	ErrLocked = errors.New("storage: database is in use by another lidi")
	// ErrNewerSchema reports a file written by a newer lidi.
	ErrNewerSchema = errors.New("storage: database schema is newer than this lidi")
	// ErrNotCrawl reports an SQLite file that is not a lidi crawl.
	ErrNotCrawl = errors.New("storage: not a lidi crawl database")
	// ErrExists reports that a snapshot's destination already exists.
	ErrExists = errors.New("storage: destination file exists")
	// ErrNoPage reports that no body is stored for a URL.
	ErrNoPage = errors.New("storage: no page body stored")
	// ErrUnknownURL reports a page recorded for a URL the store never saw.
	ErrUnknownURL = errors.New("storage: page for an unknown url")
	// ErrClosed reports use of a closed DB.
	ErrClosed = errors.New("storage: database is closed")
	// ErrReservedKey reports an attempt to set a meta key the store owns.
	ErrReservedKey = errors.New("storage: reserved meta key")
)

// LockedError reports that the crawl file is locked by another process.
// It unwraps to ErrLocked.
type LockedError struct {
	Path string // the database file
	PID  int    // process holding the lock; 0 when unknown
}

func (e *LockedError) Error() string {
	name := filepath.Base(e.Path)
	if e.PID <= 0 {
		return fmt.Sprintf("storage: %s is in use by another lidi", name)
	}
	return fmt.Sprintf("storage: %s is in use by another lidi (pid %d)", name, e.PID)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// VersionError reports a database whose schema version is newer than the
// one this package knows. It unwraps to ErrNewerSchema.
type VersionError struct {
	Path      string
	Version   int // found in the file (PRAGMA user_version)
	Supported int // the newest this package reads
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("storage: %s has schema version %d but this lidi understands version %d at most; use a newer lidi",
		filepath.Base(e.Path), e.Version, e.Supported)
}

// Unwrap returns ErrNewerSchema.
func (e *VersionError) Unwrap() error { return ErrNewerSchema }

// Options tunes Open. The zero value gives the defaults.
type Options struct {
	// CacheSize is the writer connection's page cache in bytes; 0 means
	// 16 MiB. Each byte of it costs about two of resident memory: the
	// SQLite allocator rounds each cached page (a page and its header) up
	// to a slot of twice the page size. A larger cache keeps more of the URL table and
	// the link index in memory, which matters once a crawl holds many
	// millions of URLs; at 1,000,000 URLs 64 MiB was no faster than 32
	// MiB in `lidi bench crawl` and cost 50 MB more RSS, and 16 MiB took
	// 35 MB less than 32.
	CacheSize int64
	// Readers bounds the read-only connection pool; 0 means 4.
	Readers int
	// Now is the clock used for the creation time recorded in a new file;
	// nil means time.Now.
	Now func() time.Time
	// MaxSize caps the file's size in bytes (SQLite's max_page_count):
	// a write past it fails with ErrDiskFull, as on a full disk. Zero
	// means no cap.
	MaxSize int64
	// Log, when not nil, is told what a long step of Open is doing: an
	// upgrade of an older file that copies its largest tables, which
	// takes minutes at millions of URLs. It is called from Open's
	// goroutine and from one of Open's own, never from both at once.
	Log func(msg string)

	// diskFree replaces diskFree in tests.
	diskFree func(path string) (int64, bool)
	// copyBytes replaces copyBytes in tests (an estimate that falls short).
	copyBytes func(int64) int64
	// checkpointEvery replaces the constant of the same name in tests,
	// and restartFrames restartBytes (in frames), when not 0.
	checkpointEvery time.Duration
	restartFrames   int64
	// pageSize replaces pageSize for a new file in tests when not 0.
	pageSize int
}

// DB is an open crawl database. Create one with Open; the zero value is not
// usable. A DB is safe for concurrent use: writes are serialised on its one
// writer connection, and reads use a separate read-only pool.
type DB struct {
	path string
	file os.FileInfo // the file opened, to notice its removal
	lock *fileLock
	w    *sql.DB // one connection: every write, and Head
	r    *sql.DB // read-only pool
	ckpt *checkpointer
	held *heldFile // this DB's handle on the file, released after its connections close

	mu     sync.Mutex // serialises Write, Commit, Head and SetMeta (they share buffers, statements and pend)
	st     statements
	raw    rawStmts // st on the writer's driver connection
	buf    applyBuffers
	pend   *openTx // the transaction Write left open; nil when none is
	lost   error   // why the open transaction ended under a failed Head; the next Write, Commit or Close reports it
	closed atomic.Bool
	// closing is set by the first Close, which commits before closed is.
	closing atomic.Bool
	// removed is set once the crawl file was found removed (checkFile).
	removed atomic.Bool
	// unindexed is set once a transaction of Write has committed
	// without the fetch history's index (sqlDropFetchesIndex), which
	// Close builds again. Guarded by mu.
	unindexed bool

	batches   atomic.Int64
	applyNano atomic.Int64
	lastNano  atomic.Int64
}

// Open opens the crawl database at path, creating it and its schema when the
// file does not exist, and takes the crawl's lock. It fails with a
// *LockedError (errors.Is(err, ErrLocked)) when another lidi holds the lock,
// and with a *VersionError (errors.Is(err, ErrNewerSchema)) when a newer lidi
// wrote the file. Open recovers a file left by a killed process.
func Open(path string, opt Options) (*DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	lk, err := lockFile(abs)
	if err != nil {
		return nil, err
	}
	db := &DB{path: abs, lock: lk}
	if err := db.open(opt); err != nil {
		db.closeAll()
		return nil, db.fault(err)
	}
	db.file = db.held.fi // the file opened, as holdFile found it
	return db, nil
}

func (db *DB) open(opt Options) error {
	cache := opt.CacheSize
	if cache <= 0 {
		cache = 16 << 20
	}
	readers := opt.Readers
	if readers <= 0 {
		readers = 4
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}

	newPage := pageSize
	if opt.pageSize > 0 {
		newPage = opt.pageSize
	}
	if err := createFile(db.path, newPage); err != nil {
		return err
	}
	// The file's own page size: an older file keeps the one it was
	// created with.
	size, err := filePageSize(db.path, newPage)
	if err != nil {
		return err
	}
	if db.held, err = holdFile(db.path); err != nil {
		return err
	}
	params := []string{
		"_txlock=immediate",
		"_pragma=busy_timeout(5000)",
		"_pragma=journal_mode(WAL)",
		"_pragma=synchronous(NORMAL)",
		"_pragma=foreign_keys(0)",
		fmt.Sprintf("_pragma=cache_size(-%d)", cache>>10),
		// The checkpointer goroutine does the checkpoints; the
		// writer's automatic one is the safety net (see checkpointer).
		// After a checkpoint the WAL file is truncated to 256 MiB.
		fmt.Sprintf("_pragma=wal_autocheckpoint(%d)", walAutocheckpoint/size),
		"_pragma=journal_size_limit(268435456)",
		"_pragma=temp_store(MEMORY)",
	}
	if opt.MaxSize > 0 {
		params = append(params, fmt.Sprintf("_pragma=max_page_count(%d)", max(opt.MaxSize/int64(size), 1)))
	}
	w, err := sql.Open("sqlite", dsn(db.path, "rwc", params...))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	db.w = w
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)

	ctx := context.Background()
	var mode string
	if err := w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("storage: open %s: journal mode is %q, not wal", db.path, mode)
	}
	if err := db.initSchema(ctx, now(), &opt); err != nil {
		return err
	}
	// A file that cannot be written fails here rather than at the crawl's
	// first write: rewriting the schema version takes a write transaction.
	var version int
	if err := w.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	if _, err := w.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version)); err != nil {
		return fmt.Errorf("storage: checking write access: %w", err)
	}
	if err := db.st.prepare(ctx, w); err != nil {
		return fmt.Errorf("storage: prepare: %w", err)
	}
	db.raw.text = db.st.text

	every, restart := checkpointEvery, int64(restartBytes/size)
	if opt.checkpointEvery > 0 {
		every = opt.checkpointEvery
	}
	if opt.restartFrames > 0 {
		restart = opt.restartFrames
	}
	if db.ckpt, err = startCheckpointer(db.path, db.held, every, restart, int64(tailBytes/size)); err != nil {
		return fmt.Errorf("storage: open checkpointer: %w", err)
	}

	r, err := sql.Open("sqlite", dsn(db.path, "ro", "_pragma=busy_timeout(5000)"))
	if err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	db.r = r
	r.SetMaxOpenConns(readers)
	r.SetMaxIdleConns(readers)
	if err := r.PingContext(ctx); err != nil {
		return fmt.Errorf("storage: open reader: %w", err)
	}
	return nil
}

// pageSize is the page size of new files; a file keeps the page size it
// was created with (SQLite cannot change it in WAL mode), so a file made
// by an older lidi stays at 4 KiB, and Open sizes what it counts in pages
// (the size cap, the checkpoints' thresholds) by the file's own.
//
// 16 KiB rather than SQLite's 4: a crawl's largest writes are its bodies
// (about 10 KiB compressed in the default `lidi bench crawl`), which at 4
// KiB spill into overflow chains of 2-3 pages, each written to the WAL as
// a frame of its own (two system calls, a checksum) and copied again by
// the checkpoint; at 16 KiB a body is one cell of one page. A page at a
// random place of the URL table or its ID index, which a fetch dirties,
// costs four times the bytes but no more calls. In the default `lidi bench
// crawl` (load 3.1-4.5, one profile each, 4 KiB then 16 KiB), storage's
// CPU was 18.9 s against 15.7 (Write 7.87/7.09, Commit 5.65/4.75, the
// checkpointer 4.37/2.94, Head 0.97/0.91); the whole crawl's CPU per 1,000
// pages was within its noise (4 KiB 0.393 0.360 0.382, 16 KiB 0.371 0.377
// 0.362 in three pairs at load 3-7). The file is 10% larger (12,410 bytes
// a page against 11,240): a body shorter than a page, and longer than
// what its last page has left, starts a page of its own. 8 KiB was no
// better than 4 (0.392 against 0.393, one run), 32 KiB as 16 (0.365). In
// BenchmarkApply, whose bodies are all 8 KiB (one a page at 16 KiB, the
// file 57% larger), 16 KiB took 8% more CPU.
const pageSize = 16 << 10

// walAutocheckpoint is the WAL size, in bytes, at which the writer
// checkpoints by itself: well above what the checkpointer lets the WAL
// reach between two of its runs (checkpointEvery), which at 3,000 pages a
// second and 20 KiB of WAL a page is about 120 MiB.
const walAutocheckpoint = 256 << 20

// createFile creates an empty database file in WAL mode with the given page
// size. SQLite fixes the page size when the first page is written, and
// switching to WAL writes it, so the two must come in this order, which
// the driver's DSN pragmas (run sorted by name) cannot do.
func createFile(path string, pageSize int) error {
	if fi, err := os.Stat(path); err == nil && fi.Size() > 0 {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("storage: %w", err)
	}
	// A reader that opened the empty file first (sqlite3, lidi export, a
	// test polling for progress) holds a shared lock for a moment; the
	// switch to WAL waits for it rather than failing with SQLITE_BUSY.
	c, err := sql.Open("sqlite", dsn(path, "rwc", "_pragma=busy_timeout(5000)"))
	if err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	defer c.Close()
	if _, err := c.Exec(fmt.Sprintf("PRAGMA page_size = %d", pageSize)); err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	if _, err := c.Exec("PRAGMA journal_mode = WAL"); err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	if err := c.Close(); err != nil {
		return fmt.Errorf("storage: create %s: %w", path, err)
	}
	return nil
}

// filePageSize reads the page size of the database file at path from its
// header (bytes 16-17, big-endian; 1 means 65536), or returns def for a
// file that is not an SQLite database, which SQLite then refuses.
func filePageSize(path string, def int) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("storage: %w", err)
	}
	defer f.Close()
	var h [18]byte
	if _, err := f.ReadAt(h[:], 0); err != nil || string(h[:16]) != "SQLite format 3\x00" {
		return def, nil
	}
	n := int(h[16])<<8 | int(h[17])
	if n == 1 {
		n = 65536
	}
	return n, nil
}

// dsn builds a file: URI for path. mode is SQLite's mode parameter ("ro",
// "rw" or "rwc"); params are the driver's own parameters.
func dsn(path, mode string, params ...string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	q := "mode=" + mode
	if len(params) > 0 {
		q += "&" + strings.Join(params, "&")
	}
	u.RawQuery = q
	return u.String()
}

// Path reports the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database and releases the crawl's lock. Closing the last
// connection checkpoints the WAL into the main file. Close is idempotent.
func (db *DB) Close() error {
	if db.closing.Swap(true) {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	// What Write left open is committed: the file has every batch
	// written, as after Apply.
	cerr := db.commit()
	db.closed.Store(true)
	// A file at rest has the fetch history's index, whether this DB
	// dropped it or a killed crawl left the file without it.
	if !db.removed.Load() {
		if _, err := db.w.ExecContext(bg, sqlBuildFetchesIndex); err != nil {
			cerr = errors.Join(cerr, fmt.Errorf("storage: close: indexing the fetch history: %w", err))
		}
	}
	return errors.Join(cerr, db.closeAll())
}

func (db *DB) closeAll() error {
	var errs []error
	errs = append(errs, db.closeRaw())
	db.st.close()
	errs = append(errs, db.ckpt.close())
	if db.r != nil {
		errs = append(errs, db.r.Close())
	}
	if db.w != nil {
		errs = append(errs, db.w.Close())
	}
	errs = append(errs, db.held.release()) // after every connection
	errs = append(errs, db.forgetRemovedFile())
	if db.lock != nil {
		errs = append(errs, db.lock.unlock())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("storage: close: %w", err)
	}
	return nil
}

// closeRaw closes the writer's driver statements (rawStmts), before its
// connection closes. The caller holds db.mu, with no transaction open.
func (db *DB) closeRaw() error {
	if db.w == nil || db.raw.stmts == nil {
		return nil
	}
	c, err := db.w.Conn(bg)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Raw(func(ci any) error { return db.raw.close(ci) })
}

// fileSize is the size of the database file and its WAL, for Stats.
func fileSize(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// millis converts a time to unix milliseconds, the unit of every time
// column; the zero time is stored as NULL.
func millis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// fromMillis is the inverse of millis.
func fromMillis(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return time.UnixMilli(v.Int64)
}

// nullID stores an ID of 0 (none) as NULL.
func nullID(id uint64) any {
	if id == 0 {
		return nil
	}
	return int64(id)
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
