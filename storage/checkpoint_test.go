package storage

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/internal/testkit"
)

// The WAL starts again from its first frame while the writer keeps a
// transaction open nearly all the time, as the committer does: a commit
// is followed at once by the next batch's Write. SQLite restarts the WAL
// only at a transaction that begins with every frame copied back, which
// the checkpointer's runs beside the writer never left, so the WAL grew
// by every frame written until the writer's own automatic checkpoint (at
// 256 MiB) copied, inside a commit, all that the checkpointer had not.
func TestWALRestartsBetweenTransactions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(path, Options{checkpointEvery: 5 * time.Millisecond, restartFrames: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// restarts counts the WAL's starts: its header's checkpoint sequence
	// number moves at each.
	var first uint32
	restarts := func() uint32 {
		f, err := os.Open(path + "-wal")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var h [16]byte
		if _, err := f.ReadAt(h[:], 0); err != nil {
			return 0 // nothing written yet
		}
		return binary.BigEndian.Uint32(h[12:]) - first
	}
	w := newWorkload(9, 20, 8<<10)
	// Each transaction stays open until the checkpointer ran once since
	// the last commit (whose notify starts a run), and the next begins
	// right after the commit: the checkpointer copies everything
	// committed while the writer is in a transaction. Written until the
	// WAL started again three times, or until 500 transactions (about 15
	// MiB; the writer's automatic checkpoint starts it at 256 MiB).
	var b record.Batch
	w.fill(&b, 10, 4, 2)
	if err := db.Write(ctx, &b); err != nil {
		t.Fatal(err)
	}
	first = restarts()
	for rounds := 0; restarts() < 3; rounds++ {
		if rounds == 500 {
			t.Fatalf("after %d transactions and %d checkpoints, the WAL started again %d times, not 3", rounds, db.ckpt.runs.Load(), restarts())
		}
		// Read before the commit: its notify may start a run that
		// ends before Commit returns, and none would follow.
		runs := db.ckpt.runs.Load()
		if err := db.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		b = record.Batch{}
		w.fill(&b, 10, 4, 2)
		if err := db.Write(ctx, &b); err != nil {
			t.Fatal(err)
		}
		// A minute for each checkpoint, not one for them all: each syncs
		// the file, which on a disk busy with other tests (CI runs
		// packages at once) took seconds, and 60 s ran out in CI.
		// Polled, not spun: a spinning waiter takes a core from the
		// checkpointer it waits for.
		testkit.WaitFor(t, time.Minute, fmt.Sprintf("a checkpoint after transaction %d", rounds), func() bool {
			return db.ckpt.runs.Load() != runs
		})
	}
}
