package storage

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointer copies the WAL back into the database file on a connection
// of its own, so that the writer's commits include little of the copy and
// its fsyncs. SQLite lets a PASSIVE checkpoint run while the writer
// appends.
//
// SQLite starts the WAL again from its first frame only when a write
// transaction begins with every frame copied back, and the committer keeps
// a transaction open nearly all the time (it begins at the first Write
// after a commit): the checkpointer's runs never left nothing behind at
// such a moment, so the WAL only grew, and the writer's automatic
// checkpoint (the safety net, at walAutocheckpoint) started it
// again from inside a commit, copying what the checkpointer had not (up to
// 2 s of commits) and syncing the file with every page copied since the
// last checkpoint that copied all: in the default `lidi bench crawl`
// 12-21 commits of 0.25-0.9 s. So once the WAL holds restartBytes, the
// checkpointer copies until at most tailBytes are left, syncs the file
// and the WAL, copies and syncs what came meanwhile, and asks the writer
// (due) to copy the rest after its next commit (finish), before it begins
// again. The writer's automatic checkpoint stays as the safety net.
type checkpointer struct {
	conn  *sql.DB
	every time.Duration // the least time between two runs: checkpointEvery
	// restart is the WAL's frames from which the writer is asked to
	// start it again: restartBytes.
	restart int64
	// tail is the frames a run may leave for the writer: tailBytes.
	tail int64
	kick chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup
	// files are the database file and its WAL, opened for sync alone;
	// the file's heldFile closes them once no connection of the process
	// has the database open (closing a descriptor of the file drops
	// every POSIX lock the process holds on it, SQLite's included).
	files []*os.File

	runs   atomic.Int64          // checkpoints run
	frames atomic.Int64          // frames in the WAL at the latest checkpoint
	nanos  atomic.Int64          // time spent checkpointing
	err    atomic.Pointer[error] // latest checkpoint's error, nil after a success

	// due is set when the WAL holds at most tail frames not copied back:
	// the writer's next commit copies them (finish) and the transaction
	// after it starts the WAL again.
	due atomic.Bool
	// The writer's checkpoints (finish) and the time they took (Stats).
	tails, tailNanos atomic.Int64
}

// tailBytes is what a checkpoint may leave for the writer to copy after
// its next commit, and tailRuns how many checkpoints the checkpointer runs
// in a row to bring the WAL to it: each copies what the writer committed
// during the one before. The WAL starts again once it holds restartBytes:
// each start costs the writer a checkpoint with its syncs, the automatic
// one starts it at walAutocheckpoint. Open turns them into frames of the
// file's page size.
const (
	tailBytes    = 16 << 20
	tailRuns     = 4
	restartBytes = 64 << 20
)

// checkpointEvery is the least time between two background checkpoints.
// A checkpoint copies each page the WAL holds once, however many commits
// rewrote it, and a crawl rewrites the same pages all the time: the
// leaves of the indexes keyed by URL IDs (a few thousand pages that take
// an insert at a random place for each URL found and page fetched), its
// URLs' rows, the tail of each table. In the WAL of the default `lidi
// bench crawl` (210,000 pages), checkpoints every 250 ms (about 600
// pages) copied 5.4 pages a page fetched, every 2 s 3.5, of which 2.4 are
// the bodies, written once whatever the cadence.
const checkpointEvery = 2 * time.Second

func startCheckpointer(path string, h *heldFile, every time.Duration, restart, tail int64) (*checkpointer, error) {
	conn, err := sql.Open("sqlite", dsn(path, "rw", "_pragma=busy_timeout(5000)"))
	if err != nil {
		return nil, err
	}
	conn.SetMaxOpenConns(1)
	conn.SetMaxIdleConns(1)
	if err := conn.Ping(); err != nil {
		conn.Close()
		return nil, err
	}
	c := &checkpointer{conn: conn, every: every, restart: restart, tail: tail, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	for _, p := range []string{path + "-wal", path} {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			conn.Close()
			return nil, err
		}
		h.keep(f)
		c.files = append(c.files, f)
	}
	c.wg.Add(1)
	go c.loop()
	return c, nil
}

// notify tells the checkpointer that a transaction was committed. It never
// blocks.
func (c *checkpointer) notify() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) loop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		start := time.Now()
		var log, done int64
		var err error
		for range tailRuns {
			if log, done, err = checkpoint(c.conn); err != nil || log-done <= c.tail {
				break
			}
		}
		if err == nil && log >= c.restart && log-done <= c.tail {
			// Synced, then what the writer committed meanwhile copied
			// and synced: the writer's checkpoint syncs little more
			// than its last commit.
			if err = c.sync(); err == nil {
				if log, done, err = checkpoint(c.conn); err == nil {
					err = c.sync()
				}
			}
			c.due.Store(err == nil)
		}
		if log >= 0 { // -1 when another checkpoint was running
			c.frames.Store(log)
		}
		if err != nil {
			// Not fatal: the writer's automatic checkpoint still bounds
			// the WAL. Keep the error for Stats.
			err = fmt.Errorf("storage: checkpoint: %w", err)
			c.err.Store(&err)
		} else {
			c.err.Store(nil)
		}
		took := time.Since(start)
		c.runs.Add(1)
		c.nanos.Add(int64(took))
		// Rest at least as long as the run took, so that the writer's
		// own checkpoint (the safety net) finds the checkpoint lock free
		// at least half of the time.
		select {
		case <-c.stop:
			return
		case <-time.After(max(c.every-took, took)):
		}
	}
}

// checkpoint runs a PASSIVE checkpoint on conn and returns the frames in
// the WAL and how many of them are in the database file.
func checkpoint(conn *sql.DB) (log, done int64, err error) {
	var busy int64
	err = conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
	return log, done, err
}

// finish copies back, on the writer's connection w between two of its
// transactions, what the checkpointer left when it asked for it (due), so
// that the writer's next transaction starts the WAL again. An error is kept
// for Stats: the writer's automatic checkpoint still bounds the WAL.
func (c *checkpointer) finish(w *sql.DB) {
	if !c.due.Swap(false) {
		return
	}
	start := time.Now()
	_, _, err := checkpoint(w)
	if err != nil {
		err = fmt.Errorf("storage: checkpoint: %w", err)
		c.err.Store(&err)
	}
	c.tails.Add(1)
	c.tailNanos.Add(int64(time.Since(start)))
}

// sync writes the database file and the WAL to disk.
func (c *checkpointer) sync() error {
	for _, f := range c.files {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
}

func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.stop)
	c.wg.Wait()
	return c.conn.Close()
}
