package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"lidi/engine/cputime"
	"lidi/engine/record"
)

// groupStore is a record.BatchWriter over a MemStore: Write applies a batch
// (Head sees it, as storage's does through its open transaction) and
// Commit counts. The write numbered failWrite (from 1) fails.
type groupStore struct {
	record.MemStore
	failWrite int

	mu             sync.Mutex
	writes, commit int
}

func (s *groupStore) Write(ctx context.Context, b *record.Batch) error {
	s.mu.Lock()
	s.writes++
	fail := s.writes == s.failWrite
	s.mu.Unlock()
	if fail {
		return errFull
	}
	return s.MemStore.Apply(ctx, b)
}

func (s *groupStore) Commit(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commit++
	return nil
}

func (s *groupStore) commits() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commit
}

// A queue-head read writes what the committer holds and reads through it,
// but commits nothing: the crawl reads a head every few dozen pages, and a
// commit at each wrote every index leaf it changed to the log once per
// read. The results hear of their write once it is committed (at a flush
// here), or of the error of any write of the transaction, which loses the
// batches written before it too.
func TestHeadReadsWriteWithoutCommitting(t *testing.T) {
	for _, tt := range []struct {
		name      string
		failWrite int
		want      error
		commits   int
	}{
		{"committed at the flush", 0, nil, 1},
		{"a later write fails", 3, errFull, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &groupStore{failWrite: tt.failWrite}
			c := newCommitter(st, time.Hour, 1000, 0)
			done := make(chan struct{})
			go func() { c.run(context.Background()); close(done) }()
			var mu sync.Mutex
			var told []error
			for i := range 3 {
				b := c.batch()
				b.URLs = append(b.URLs, record.URLRecord{ID: uint64(i + 1), Site: 1, URL: fmt.Sprintf("http://a.test/%d", i), Seq: int64(i), State: record.URLQueued})
				b.committed = append(b.committed, func(err error) {
					mu.Lock()
					told = append(told, err)
					mu.Unlock()
				})
				c.in <- b
				reply := make(chan headReply, 1)
				c.in <- headReq{site: 1, n: 10, reply: reply}
				h := <-reply
				if i+1 == tt.failWrite {
					if !errors.Is(h.err, errFull) {
						t.Fatalf("head after the failed write: %v", h.err)
					}
					break
				}
				if h.err != nil || len(h.urls) != i+1 {
					t.Fatalf("head %d: %d URLs, %v; want %d", i, len(h.urls), h.err, i+1)
				}
				if n := st.commits(); n != 0 {
					t.Fatalf("%d commits after %d head reads, want none", n, i+1)
				}
				mu.Lock()
				if len(told) > 0 {
					t.Errorf("results told %v before any commit", told)
				}
				mu.Unlock()
			}
			if err := c.flush(); !errors.Is(err, tt.want) {
				t.Errorf("flush: %v, want %v", err, tt.want)
			}
			close(c.in)
			<-done
			if n := st.commits(); n != tt.commits {
				t.Errorf("%d commits, want %d", n, tt.commits)
			}
			if len(told) != 3 {
				t.Fatalf("%d results told, want 3", len(told))
			}
			for i, err := range told {
				if !errors.Is(err, tt.want) {
					t.Errorf("result %d told %v, want %v", i, err, tt.want)
				}
			}
		})
	}
}

// A sender waiting for bytes (storage.max_pending_mb) is let in by a
// write, which frees what the batch held, not by a commit: in the default
// crawl a commit at each such wait was most of the commits left between
// the queue-head reads.
func TestWaitForBytesWritesWithoutCommitting(t *testing.T) {
	const kib = 1 << 10
	st := &groupStore{}
	c := newCommitter(st, time.Hour, 1_000_000, 256*kib)
	done := make(chan struct{})
	go func() { c.run(context.Background()); close(done) }()
	for i, n := range []int{100 * kib, 200 * kib, 100 * kib, 200 * kib, 10 * kib} {
		b := c.batch()
		b.URLs = append(b.URLs, record.URLRecord{ID: uint64(i + 1), Site: 1, URL: fmt.Sprintf("http://a.test/%d", i), State: record.URLQueued})
		b.Pages = append(b.Pages, record.PageRecord{URL: uint64(i + 1), Site: 1, Body: make([]byte, n)})
		if !c.send(context.Background(), b, b.Bytes()) {
			t.Fatal("send refused")
		}
	}
	if n := st.commits(); n != 0 {
		t.Errorf("%d commits before the flush, want none", n)
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	close(c.in)
	<-done
	if n := st.commits(); n != 1 {
		t.Errorf("%d commits, want the flush's", n)
	}
}

// clockedStore is a groupStore whose Write and Commit advance a fake clock
// by their own durations, for the committer's timing of the store.
type clockedStore struct {
	groupStore
	clock               time.Time
	writeTook, commTook time.Duration
}

func (s *clockedStore) Write(ctx context.Context, b *record.Batch) error {
	s.clock = s.clock.Add(s.writeTook) // only the committer's goroutine calls the store
	return s.groupStore.Write(ctx, b)
}

func (s *clockedStore) Commit(ctx context.Context) error {
	s.clock = s.clock.Add(s.commTook)
	return s.groupStore.Commit(ctx)
}

// The store's longest write is reported with the records it wrote; a
// commit's are those of its transaction, written before it, where it was
// reported with none ("the store's longest write 503ms, of 0 records").
func TestLongestWriteCountsItsTransaction(t *testing.T) {
	for _, tc := range []struct {
		name                string
		writeTook, commTook time.Duration
		want                int
	}{
		{"a commit of three batches", time.Millisecond, 50 * time.Millisecond, 3},
		{"a write of one", 50 * time.Millisecond, time.Millisecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &clockedStore{clock: time.Unix(0, 0), writeTook: tc.writeTook, commTook: tc.commTook}
			c := newCommitter(st, time.Hour, 1, 0) // every batch written as it comes
			c.now = func() time.Time { return st.clock }
			s := commitURLs(t, c, 3)
			took, records := s.StoreApply, s.StoreApplyRecords
			if took != max(tc.writeTook, tc.commTook) || records != tc.want {
				t.Errorf("longest write %s of %d records, want %s of %d", took, records, max(tc.writeTook, tc.commTook), tc.want)
			}
		})
	}
}

// A transaction is committed once it holds txMax records, whatever the
// flush interval, whether its batches are written as they come or
// gathered first: committed only at the interval, a long one spilled the
// writer's page cache and made the loop wait for a commit of over a
// second. Its results hear of the commit then; what comes after waits
// for the next.
func TestCommitBoundsItsTransaction(t *testing.T) {
	for _, tc := range []struct {
		name    string
		records int // a batch is written once the committer holds this many
	}{
		{"written as they come", 1},
		{"gathered", 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &groupStore{}
			c := newCommitter(st, time.Hour, tc.records, 0)
			c.txMax = 3
			done := make(chan struct{})
			go func() { c.run(context.Background()); close(done) }()
			var mu sync.Mutex
			told := 0
			for i := range 7 {
				b := c.batch()
				b.URLs = append(b.URLs, record.URLRecord{ID: uint64(i + 1), Site: 1, URL: fmt.Sprintf("http://a.test/%d", i), Seq: int64(i), State: record.URLQueued})
				b.committed = append(b.committed, func(err error) {
					if err != nil {
						t.Errorf("result told %v", err)
					}
					mu.Lock()
					told++
					mu.Unlock()
				})
				if !c.send(context.Background(), b, b.Bytes()) {
					t.Fatal("send refused")
				}
			}
			// A queue-head read comes after the batches sent before it,
			// writes the one left and commits nothing itself.
			reply := make(chan headReply, 1)
			c.in <- headReq{site: 1, n: 10, reply: reply}
			if h := <-reply; h.err != nil || len(h.urls) != 7 {
				t.Fatalf("head: %d URLs, %v; want 7", len(h.urls), h.err)
			}
			mu.Lock()
			if n := st.commits(); n != 2 || told != 6 {
				t.Errorf("%d commits and %d results told after 7 records, want 2 and 6", n, told)
			}
			mu.Unlock()
			if err := c.flush(); err != nil {
				t.Fatal(err)
			}
			close(c.in)
			<-done
			if n := st.commits(); n != 3 || told != 7 {
				t.Errorf("%d commits and %d results told, want 3 and 7", n, told)
			}
		})
	}
}

// commitURLs runs c over n batches of one queued URL each, flushes and
// stops it, and returns its timing of the store.
func commitURLs(t *testing.T, c *committer, n int) Stats {
	t.Helper()
	done := make(chan struct{})
	go func() { c.run(context.Background()); close(done) }()
	for i := range n {
		b := c.batch()
		b.URLs = append(b.URLs, record.URLRecord{ID: uint64(i + 1), Site: 1, URL: fmt.Sprintf("http://a.test/%d", i), State: record.URLQueued})
		if !c.send(context.Background(), b, b.Bytes()) {
			t.Fatal("send refused")
		}
	}
	if err := c.flush(); err != nil {
		t.Fatal(err)
	}
	close(c.in)
	<-done
	var s Stats
	c.slowest(&s)
	return s
}

// spinningStore is a groupStore whose Commit keeps its thread busy for
// spin of CPU time.
type spinningStore struct {
	groupStore
	spin time.Duration
}

func (s *spinningStore) Commit(ctx context.Context) error {
	start, _ := cputime.Thread() // the committer's meter holds the goroutine on its thread
	for {
		if now, _ := cputime.Thread(); now-start >= s.spin {
			break
		}
	}
	return s.groupStore.Commit(ctx)
}

// The store's longest write comes with what the writer's thread used
// meanwhile, to tell a write that worked from one that waited for the
// machine's CPUs: the CPU time a commit spent is counted, and never more
// than the write's wall time.
func TestLongestWriteMeasuresItsThread(t *testing.T) {
	if _, ok := cputime.StartMeter().Stop(); !ok {
		t.Skip("no thread usage on this system")
	}
	const spin = 30 * time.Millisecond
	for _, tc := range []struct {
		name string
		spin time.Duration
	}{{"a commit that works", spin}, {"one that does not", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			st := &spinningStore{spin: tc.spin}
			c := newCommitter(st, time.Hour, 1, 0)
			s := commitURLs(t, c, 1)
			u := s.StoreApplyUsage
			if u.CPU > s.StoreApply {
				t.Errorf("thread CPU %s over the write's %s", u.CPU, s.StoreApply)
			}
			if tc.spin > 0 && u.CPU < tc.spin {
				t.Errorf("thread CPU %s, want at least the commit's %s", u.CPU, tc.spin)
			}
			if tc.spin == 0 && u.CPU >= spin {
				t.Errorf("thread CPU %s for a commit that did nothing", u.CPU)
			}
		})
	}
}
