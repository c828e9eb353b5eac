package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Faults of the file system under the crawl file. A *FaultError unwraps to
// one of them (and to the error SQLite or the system reported).
var (
	// ErrDiskFull reports that the file system is full, or that the file
	// reached Options.MaxSize.
	ErrDiskFull = errors.New("storage: the database or the disk is full")
	// ErrReadOnly reports a crawl file, or its directory, that cannot be
	// written.
	ErrReadOnly = errors.New("storage: the database file is read-only")
	// ErrFileRemoved reports that the crawl file was removed or replaced
	// while the crawl ran.
	ErrFileRemoved = errors.New("storage: the database file was removed while the crawl ran")
	// ErrIO reports any other failure to read or write the file.
	ErrIO = errors.New("storage: disk I/O error")
)

// FaultError reports that the crawl file could not be written. What the
// file held before the failed write is intact (each write is one
// transaction); the crawl continues from there when lidi runs again after
// the fault is fixed.
type FaultError struct {
	Path  string // the crawl file
	Fault error  // ErrDiskFull, ErrReadOnly, ErrFileRemoved or ErrIO
	// Rescued is, after ErrFileRemoved, the file that everything stored
	// was copied to (the removed file stays readable to the process that
	// has it open); empty if the copy failed.
	Rescued string
	Err     error // what SQLite or the system reported; may be nil
}

func (e *FaultError) Error() string {
	var what, fix string
	switch e.Fault {
	case ErrDiskFull:
		what, fix = "the database or the disk is full", "free some space (or raise storage.max_size)"
	case ErrReadOnly:
		what, fix = "the file or its directory is read-only", "make both writable"
	case ErrFileRemoved:
		what = "the file was removed or replaced while the crawl ran"
		if e.Rescued != "" {
			return fmt.Sprintf("storage: cannot write %s: %s; everything stored was saved to %s: move it back to %s and run lidi again to continue",
				e.Path, what, e.Rescued, e.Path)
		}
		return fmt.Sprintf("storage: cannot write %s: %s, and saving what was stored elsewhere failed: %v", e.Path, what, e.Err)
	default:
		what, fix = "disk I/O error", "check the disk"
	}
	msg := fmt.Sprintf("storage: cannot write %s: %s", e.Path, what)
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg + "; nothing stored before is lost: " + fix + " and run lidi again to continue"
}

// Unwrap returns the fault and the underlying error.
func (e *FaultError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Fault}
	}
	return []error{e.Fault, e.Err}
}

// fault turns err, from writing the crawl file, into a *FaultError when
// it is a fault of the file or its file system, and returns it unchanged
// otherwise.
func (db *DB) fault(err error) error {
	if err == nil {
		return nil
	}
	var fe *FaultError
	var re *RoomError // says already what lacks room and what to do
	if errors.As(err, &fe) || errors.As(err, &re) {
		return err
	}
	var se *sqlite.Error
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.EFBIG):
		return &FaultError{Path: db.path, Fault: ErrDiskFull, Err: err}
	case errors.Is(err, syscall.EROFS), errors.Is(err, fs.ErrPermission):
		return &FaultError{Path: db.path, Fault: ErrReadOnly, Err: err}
	case !errors.As(err, &se):
		return err
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_FULL:
		return &FaultError{Path: db.path, Fault: ErrDiskFull, Err: err}
	case sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN:
		return &FaultError{Path: db.path, Fault: ErrReadOnly, Err: err}
	case sqlite3.SQLITE_IOERR:
		// SQLite does not say why a write failed: a file made read-only
		// (or immutable) under an open connection is the likely cause
		// when it can no longer be opened for writing.
		if f, oerr := os.OpenFile(db.path, os.O_WRONLY, 0); oerr != nil {
			if errors.Is(oerr, fs.ErrPermission) || errors.Is(oerr, syscall.EROFS) || errors.Is(oerr, syscall.EPERM) {
				return &FaultError{Path: db.path, Fault: ErrReadOnly, Err: err}
			}
		} else {
			f.Close()
		}
		return &FaultError{Path: db.path, Fault: ErrIO, Err: err}
	}
	return err
}

// checkFile reports whether the crawl file is still the one that was
// opened. If it was removed or replaced, what the open connection still
// sees is copied to a new file beside it and a *FaultError says where.
func (db *DB) checkFile(ctx context.Context) error {
	fi, err := os.Stat(db.path)
	if err == nil && os.SameFile(fi, db.file) {
		return nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return db.fault(err)
	}
	fe := &FaultError{Path: db.path, Fault: ErrFileRemoved}
	db.removed.Store(true)
	// Empty the WAL into the removed file first: a WAL left beside a file
	// of the same name would be replayed into it.
	db.w.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	for i := 0; i < 100; i++ {
		name := db.path + ".rescued"
		if i > 0 {
			name = fmt.Sprintf("%s.rescued-%d", db.path, i)
		}
		if _, err := os.Lstat(name); err == nil {
			continue
		}
		if _, err := db.w.ExecContext(ctx, "VACUUM INTO ?", name); err != nil {
			fe.Err = err
			return fe
		}
		fe.Rescued = name
		return fe
	}
	fe.Err = errors.New("no free name for the copy")
	return fe
}

// forgetRemovedFile removes, at Close, the WAL and shared-memory files
// left under the crawl file's name after the file itself was removed.
// SQLite does not checkpoint a database that moved when it closes it, so
// they stay behind, and the rescued copy moved back under that name would
// have the removed file's WAL replayed into it ("database disk image is
// malformed"). A file that replaced the crawl file keeps what is beside
// it: that may be its own.
func (db *DB) forgetRemovedFile() error {
	if !db.removed.Load() {
		return nil
	}
	if _, err := os.Lstat(db.path); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var errs []error
	for _, p := range []string{db.path + "-wal", db.path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
