package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"lidi/engine/record"
)

// failingStore fails its first Apply and counts them all.
type failingStore struct {
	record.Store
	applied int
}

var errFull = errors.New("disk full")

func (s *failingStore) Apply(ctx context.Context, b *record.Batch) error {
	s.applied++
	if s.applied == 1 {
		return errFull
	}
	return nil
}

// After a failed write the committer writes nothing more: a later batch
// (a site's back-off after its visit failed on the error, a page whose
// URL was in the lost batch) must not reach the file without it.
func TestCommitterStopsWritingAfterAFailure(t *testing.T) {
	st := &failingStore{}
	c := newCommitter(st, time.Hour, 1000)
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
	if st.applied != 1 {
		t.Errorf("%d writes, want only the failed one", st.applied)
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
			st := &countingStore{fail: tt.fail}
			c := newCommitter(st, time.Hour, 1000)
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
					applied = append(applied, st.applied)
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

// countingStore counts its writes, and fails them when fail is set.
type countingStore struct {
	record.Store
	fail    bool
	applied int
}

func (s *countingStore) Apply(ctx context.Context, b *record.Batch) error {
	s.applied++
	if s.fail {
		return errFull
	}
	return nil
}
