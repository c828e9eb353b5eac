package storage

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// checkpointer copies the WAL back into the database file on a connection
// of its own, so the writer's commits never include a checkpoint and its
// fsyncs. SQLite lets a PASSIVE checkpoint run while the writer appends.
// The writer keeps a large automatic checkpoint as a safety net: when
// commits follow each other so closely that this goroutine never catches
// up, the WAL cannot restart, and the writer's own checkpoint bounds it.
type checkpointer struct {
	conn *sql.DB
	kick chan struct{}
	stop chan struct{}
	wg   sync.WaitGroup

	runs   atomic.Int64          // checkpoints run
	frames atomic.Int64          // frames in the WAL at the latest checkpoint
	nanos  atomic.Int64          // time spent checkpointing
	err    atomic.Pointer[error] // latest checkpoint's error, nil after a success
}

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

func startCheckpointer(path string) (*checkpointer, error) {
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
	c := &checkpointer{conn: conn, kick: make(chan struct{}, 1), stop: make(chan struct{})}
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
		var busy, log, done int64
		err := c.conn.QueryRowContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done)
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
		case <-time.After(max(checkpointEvery-took, took)):
		}
	}
}

func (c *checkpointer) close() error {
	if c == nil {
		return nil
	}
	close(c.stop)
	c.wg.Wait()
	return c.conn.Close()
}
