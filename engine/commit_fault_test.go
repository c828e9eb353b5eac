package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// failingStore fails its first Apply and counts them all.
type failingStore struct {
	Store
	applied int
}

var errFull = errors.New("disk full")

func (s *failingStore) Apply(ctx context.Context, b *Batch) error {
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
		b.Events = append(b.Events, Event{Kind: "test"})
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
