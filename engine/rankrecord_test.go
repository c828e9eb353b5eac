package engine

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"lidi/engine/rank"
	"lidi/engine/record"
)

// runsStore keeps the RankRuns of the batches it is given.
type runsStore struct {
	record.Store
	mu   sync.Mutex
	runs []record.RankRun
}

func (s *runsStore) Apply(_ context.Context, b *record.Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, b.RankRuns...)
	return nil
}

// A stored run's record reaches the store before its point is on the
// coverage curve, whatever stops its ranks: a stop while storeRanks reads
// the IDs (seconds at millions of nodes, before its first chunk) left the
// curve of the stopped crawl with a point its store, and so the resumed
// crawl's curve, lacked. A run that is not stopped ends with the record
// saying its ranks are complete.
func TestStoppedRunKeepsItsRecord(t *testing.T) {
	for _, stop := range []bool{true, false} {
		var g rank.Links
		if err := g.Spill(t.TempDir()); err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		rng := rand.New(rand.NewPCG(1, 2))
		const nodes = 2 * rankSliceNodes // more than one slice: the IDs are read twice before the first chunk
		for range nodes {
			if _, err := g.Add(rng.Uint64()); err != nil {
				t.Fatal(err)
			}
		}
		st := &runsStore{}
		e := &Engine{cfg: Config{FlushRecords: 1000}, commit: newCommitter(st, time.Hour, 1000, 0)}
		done := make(chan struct{})
		go func() { e.commit.run(context.Background()); close(done) }()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		src := &countingIDs{v: g.View()}
		if stop {
			src.atRead, src.at = nodes/2, cancel // the crawl stops while the IDs are counted
		}
		run := record.RankRun{Time: time.Unix(1000, 0), Nodes: nodes, Coverage: 0.5}
		var mu sync.Mutex
		if !e.recordRun(ctx, run) {
			t.Fatal("the record did not go")
		}
		e.storeRanks(ctx, &mu, src, nodes, func(int32) float64 { return 1.0 / nodes }, run)
		close(e.commit.in)
		<-done
		if len(st.runs) == 0 {
			t.Fatalf("stop %v: the run's record was never written", stop)
		}
		if got := st.runs[len(st.runs)-1].Ranks; got == stop {
			t.Errorf("stop %v: the last record says its ranks are complete: %v, want %v (%+v)", stop, got, !stop, st.runs)
		}
	}
}
