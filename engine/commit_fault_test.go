package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/internal/testkit"
)

var errFull = errors.New("disk full")

// failFirst fails the first Apply.
func failFirst(call int, _ *record.Batch) error {
	if call == 1 {
		return errFull
	}
	return nil
}

// After a failed write the committer writes nothing more: a later batch
// (a site's back-off after its visit failed on the error, a page whose
// URL was in the lost batch) must not reach the file without it.
func TestCommitterStopsWritingAfterAFailure(t *testing.T) {
	st := &testkit.FailingStore{Store: &record.MemStore{}, Fail: failFirst}
	c := newCommitter(st, time.Hour, 1000, 0)
	done := make(chan struct{})
	go func() { c.run(context.Background()); close(done) }()
	for i := range 3 {
		b := c.batch()
		b.Events = append(b.Events, record.Event{Kind: "test"})
		c.in <- b
		if err := c.flush(); !errors.Is(err, errFull) {
			t.Fatalf("flush %d: %v, want the first write's error", i, err)
		}
	}
	close(c.in)
	<-done
	if st.Calls() != 1 {
		t.Errorf("%d writes, want only the failed one", st.Calls())
	}
}

// A result's Committed hears of the write that holds it, after the write:
// nil once it is in the store, the write's error when it failed, and for
// a batch with nothing to write (results dropped) the outcome of what came
// before.
func TestCommittedFollowsTheWrite(t *testing.T) {
	tests := []struct {
		name    string
		records int // records in the batch besides the results
		fail    bool
		want    error
	}{
		{"written", 3, false, nil},
		{"failed", 3, true, errFull},
		{"nothing to write", 0, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &testkit.FailingStore{Store: &record.MemStore{}, Fail: func(int, *record.Batch) error {
				if tt.fail {
					return errFull
				}
				return nil
			}}
			c := newCommitter(st, time.Hour, 1000, 0)
			done := make(chan struct{})
			go func() { c.run(context.Background()); close(done) }()
			b := c.batch()
			for range tt.records {
				b.Events = append(b.Events, record.Event{Kind: "test"})
			}
			told := make(chan error, 2)
			var applied []int
			for range 2 {
				b.committed = append(b.committed, func(err error) {
					applied = append(applied, st.Calls())
					told <- err
				})
			}
			c.in <- b
			c.flush()
			close(c.in)
			<-done
			for range 2 {
				if err := <-told; !errors.Is(err, tt.want) {
					t.Errorf("told %v, want %v", err, tt.want)
				}
			}
			wantApplied := 1
			if tt.records == 0 {
				wantApplied = 0
			}
			for _, n := range applied {
				if n != wantApplied {
					t.Errorf("told after %d writes, want %d", n, wantApplied)
				}
			}
		})
	}
}
