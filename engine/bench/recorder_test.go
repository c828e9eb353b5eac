package bench

import (
	"context"
	"testing"

	"lidi/engine/record"
	"lidi/engine/simweb"
)

// countingWriter is a record.BatchWriter, as storage.DB is, that counts
// how it was called.
type countingWriter struct {
	record.MemStore
	applies, writes, commits int
}

func (s *countingWriter) Apply(ctx context.Context, b *record.Batch) error {
	s.applies++
	return s.MemStore.Apply(ctx, b)
}

func (s *countingWriter) Write(ctx context.Context, b *record.Batch) error {
	s.writes++
	return s.MemStore.Apply(ctx, b)
}

func (s *countingWriter) Commit(context.Context) error { s.commits++; return nil }

// The benches' recorders hand the engine their store's open transaction:
// wrapped as a plain record.Store the engine's committer applied and
// committed every write and every queue-head read, the path production
// left, and the benches measured that (found in review). Over a store
// without one a Write is an Apply.
func TestRecordersWriteThroughTheirStore(t *testing.T) {
	ctx := context.Background()
	batch := func() *record.Batch {
		return &record.Batch{Sites: []record.SiteRecord{{ID: 1, Key: "http://a.test"}},
			URLs:  []record.URLRecord{{ID: 7, Site: 1, URL: "http://a.test/"}},
			Pages: []record.PageRecord{{URL: 7, Site: 1, Status: 200}}}
	}
	for _, tt := range []struct {
		name  string
		rec   func(record.Store) record.Store
		notes func(record.Store) int
	}{
		{"recorder", func(s record.Store) record.Store { return newRecorder(s) },
			func(s record.Store) int { return len(s.(*recorder).fetched()) }},
		{"fetchRecorder", func(s record.Store) record.Store { return newFetchRecorder(s, simweb.Clock{}) },
			func(s record.Store) int { return len(s.(*fetchRecorder).fetches) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inner := &countingWriter{}
			rec := tt.rec(inner)
			w, ok := rec.(record.BatchWriter)
			if !ok {
				t.Fatal("not a record.BatchWriter")
			}
			if err := w.Write(ctx, batch()); err != nil {
				t.Fatal(err)
			}
			if err := w.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if inner.writes != 1 || inner.commits != 1 || inner.applies != 0 {
				t.Errorf("the store saw %d writes, %d commits, %d applies; want 1, 1, 0", inner.writes, inner.commits, inner.applies)
			}
			if n := tt.notes(rec); n != 1 {
				t.Errorf("%d fetches recorded, want 1", n)
			}
			plain := &record.MemStore{}
			rec = tt.rec(plain)
			if err := rec.(record.BatchWriter).Write(ctx, batch()); err != nil {
				t.Fatal(err)
			}
			if err := rec.(record.BatchWriter).Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if n := tt.notes(rec); n != 1 {
				t.Errorf("over a MemStore: %d fetches recorded, want 1", n)
			}
		})
	}
}
