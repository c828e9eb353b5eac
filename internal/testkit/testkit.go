// Package testkit holds what lidi's tests share: a wait on a condition
// with a deadline (tests never synchronise by sleeping) and a Store whose
// writes fail on demand. The fake clock is engine/clock's Fake.
package testkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"lidi/engine/record"
)

// WaitFor checks its condition after a millisecond, then twice as long
// after each failed check, up to pollMax: a condition that soon holds is
// seen at once, one that is costly to check (a query of an SQLite file)
// does not starve what it waits for, and one that holds only for a while
// (an event among a crawl's last 64) is still seen on a loaded machine.
const pollMax = 5 * time.Millisecond

// WaitFor returns as soon as cond holds, and fails the test (t.Fatalf,
// naming what it waited for) if cond does not hold within limit. The
// limit only bounds a broken test: make it generous, a loaded machine is
// slow and a condition that never holds fails anyway. cond is called from
// the test's goroutine.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	wait := time.Millisecond
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s, still waiting for %s", limit, what)
		}
		<-time.After(wait)
		wait = min(2*wait, pollMax)
	}
}

// FailingStore is a record.Store whose Apply fails when Fail says so: it
// stands for a disk that fills or goes away under a crawl. Fail is called
// with the number of Apply calls so far (this one included) and the
// batch, under the store's lock; when it returns an error Apply returns it
// and Store never sees the batch, otherwise the batch goes to Store. The
// other methods are Store's. Set Store and Fail before first use; a
// FailingStore is then safe for concurrent use (Apply calls are
// serialised).
type FailingStore struct {
	record.Store
	Fail func(call int, b *record.Batch) error

	mu    sync.Mutex
	calls int
}

// Apply passes b to Store unless Fail returns an error.
func (s *FailingStore) Apply(ctx context.Context, b *record.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if err := s.Fail(s.calls, b); err != nil {
		return err
	}
	return s.Store.Apply(ctx, b)
}

// Calls returns the number of Apply calls so far, failed ones included.
func (s *FailingStore) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}
