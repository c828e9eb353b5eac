package testkit_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/internal/testkit"
)

// failT records a Fatalf instead of ending the test, so that WaitFor's
// failure can be checked.
type failT struct {
	testing.TB
	failed atomic.Bool
	msg    string
}

func (f *failT) Helper() {}

func (f *failT) Fatalf(format string, args ...any) {
	f.failed.Store(true)
	f.msg = format
	panic(f) // stands for runtime.Goexit: WaitFor must not go on
}

func TestWaitFor(t *testing.T) {
	t.Run("returns once the condition holds", func(t *testing.T) {
		var n atomic.Int32
		go func() {
			for range 3 {
				n.Add(1)
			}
		}()
		testkit.WaitFor(t, time.Minute, "three", func() bool { return n.Load() == 3 })
	})
	t.Run("fails at the limit", func(t *testing.T) {
		f := &failT{TB: t}
		calls := 0
		func() {
			defer func() {
				if r := recover(); r != f {
					panic(r)
				}
			}()
			testkit.WaitFor(f, 20*time.Millisecond, "never", func() bool { calls++; return false })
		}()
		if !f.failed.Load() || calls < 2 {
			t.Errorf("failed %v after %d checks", f.failed.Load(), calls)
		}
	})
}

func TestFailingStore(t *testing.T) {
	errFull := errors.New("disk full")
	mem := &record.MemStore{}
	s := &testkit.FailingStore{Store: mem, Fail: func(call int, b *record.Batch) error {
		if call == 2 {
			return errFull
		}
		return nil
	}}
	ctx := context.Background()
	for i, want := range []error{nil, errFull, nil} {
		b := record.Batch{URLs: []record.URLRecord{{ID: uint64(i + 1), Site: 1, URL: "http://a.test/"}}}
		if err := s.Apply(ctx, &b); !errors.Is(err, want) {
			t.Fatalf("Apply %d = %v, want %v", i+1, err, want)
		}
	}
	var ids []uint64
	mem.URLFingerprints(ctx, func(id uint64) { ids = append(ids, id) })
	if len(ids) != 2 || s.Calls() != 3 {
		t.Errorf("store holds %v after %d calls, want the first and third batches", ids, s.Calls())
	}
}
