package seen

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
)

// When the worker falls behind the caller (here, its hand-overs held up
// at random), tables wait to be written, yet the runs stay bounded: the
// merges stop giving way to the waiting tables at mergeFirst runs. The set
// still answers as a map does.
func TestBacklogKeepsRunsBounded(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		s, err := Open(Options{Dir: t.TempDir(), Recent: 50})
		if err != nil {
			t.Fatal(err)
		}
		var stop atomic.Bool
		done := make(chan struct{})
		go func() {
			// Holds the lock the worker publishes under, for a while
			// at a time: the worker waits, tables pile up.
			defer close(done)
			r := rand.New(rand.NewPCG(seed, 99))
			for !stop.Load() {
				s.mu.Lock()
				for range r.IntN(2000) {
					runtime.Gosched()
				}
				s.mu.Unlock()
				for range r.IntN(200) {
					runtime.Gosched()
				}
			}
		}()
		r := rand.New(rand.NewPCG(seed, 7))
		m := map[uint64]int32{}
		mostRuns, mostQueued := 0, 0
		for i := range 60_000 {
			id := uint64(r.IntN(8000)) // zeros, and many IDs added again
			if r.IntN(3) == 0 {
				v := int32(i)
				if err := s.Add(id, v); err != nil {
					t.Fatal(err)
				}
				m[id] = v
			} else {
				v, ok, err := s.Get(id)
				wv, wok := m[id]
				if err != nil || ok != wok || v != wv {
					t.Fatalf("seed %d op %d: Get(%d) = %d %v %v; want %d %v", seed, i, id, v, ok, err, wv, wok)
				}
			}
			mostRuns, mostQueued = max(mostRuns, len(s.runs)), max(mostQueued, len(s.frozen))
		}
		stop.Store(true)
		<-done
		st := s.Stats()
		t.Logf("seed %d: at most %d runs and %d tables waiting; %d flushes, %d merges", seed, mostRuns, mostQueued, st.Flushes, st.Merges)
		// mergeFirst, and past it runs of sizes too far apart to merge
		// (a few: their sizes double): 187-215 when the tables always
		// went first.
		if mostRuns > 2*mergeFirst {
			t.Errorf("seed %d: %d runs at once (%d flushes, %d merges), want at most %d", seed, mostRuns, st.Flushes, st.Merges, 2*mergeFirst)
		}
		if mostQueued < 2 {
			t.Errorf("seed %d: at most %d tables waited: the worker never fell behind, nothing tested", seed, mostQueued)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
