package engine

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/internal/testkit"
)

// While the store writes, a PageRank run's chunks (storeRanks: 20,000
// ranks a chunk at the default flush_records) leave the committer's queue
// and the bytes its writes free to the loop: its full batch gets in after
// a chunk or two. Sent as the loop's batches are, the chunks filled the
// queue of 64 (40 of them, 32.8 of 33.5 MB held) and took every byte freed,
// and the loop's batch got in after all 80 (found by review).
func TestRankChunksLeaveTheQueueToTheLoop(t *testing.T) {
	const records, chunks = 20000, 80
	st := &gatedStore{gate: make(chan struct{})}
	c := newCommitter(st, time.Hour, records, splitPending(64<<20).committer)
	done := make(chan struct{})
	go func() { c.run(context.Background()); close(done) }()
	ctx, cancel := context.WithCancel(context.Background())
	var sent atomic.Int32
	senderDone := make(chan struct{})
	go func() {
		defer close(senderDone)
		for range chunks {
			b := c.batch()
			b.Ranks = make([]record.RankRecord, records)
			if !c.sendBehind(ctx, b, b.Bytes(), rankChunksAhead) {
				return
			}
			sent.Add(1)
		}
	}()
	testkit.WaitFor(t, time.Minute, "a write at the gate with chunks queued", func() bool {
		waiting, _, _ := st.state()
		return waiting && len(c.in) >= rankChunksAhead
	})
	if depth := len(c.in); depth > rankChunksAhead {
		t.Errorf("%d rank chunks queued behind the write, want %d at most", depth, rankChunksAhead)
	}
	before := sent.Load()
	var loopIn atomic.Bool
	var sentWhenIn atomic.Int32
	go func() {
		b := c.batch()
		b.Pages = append(b.Pages, record.PageRecord{URL: 1, Site: 1, Body: make([]byte, 4<<20)})
		c.send(context.Background(), b, b.Bytes())
		sentWhenIn.Store(sent.Load())
		loopIn.Store(true)
	}()
	for !loopIn.Load() {
		testkit.WaitFor(t, time.Minute, "a write at the gate or the loop's batch in", func() bool {
			waiting, _, _ := st.state()
			return waiting || loopIn.Load()
		})
		if loopIn.Load() {
			break
		}
		st.letOne(t)
	}
	if ahead := sentWhenIn.Load() - before; ahead > 2*rankChunksAhead {
		t.Errorf("%d rank chunks went in before the loop's batch (%d sent in all)", ahead, sent.Load())
	}
	cancel()
	close(st.gate)
	<-senderDone
	close(c.in)
	<-done
}
