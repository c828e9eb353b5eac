package frontier

import (
	"math"
	"testing"

	"lidi/engine/rank"
)

// updates records what a Reprioritizer reports, in order.
type updates struct {
	ids   []uint64
	prios map[uint64]float64
}

func (u *updates) fn(id uint64, p float64) {
	if u.prios == nil {
		u.prios = make(map[uint64]float64)
	}
	u.ids = append(u.ids, id)
	u.prios[id] = p
}

// pagerankOf is the reference PageRank of a small graph on nodes 0..n-1,
// with the strategies' tolerance.
func pagerankOf(t *testing.T, n int, edges [][2]int32) []float64 {
	t.Helper()
	g, err := rank.NewGraph(n, func(yield func(int32, int32) bool) {
		for _, e := range edges {
			if !yield(e[0], e[1]) {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := rank.PageRank(g, rank.Options{Tolerance: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	return res.Scores
}

func TestOptimalOrdersByOracle(t *testing.T) {
	oracle := map[uint64]float64{1: 0.1, 2: 0.5, 3: 0.3, 4: 0.1}
	o := NewOptimal(func(p PageInfo) float64 { return oracle[p.ID] })
	if o.Name() != "optimal" {
		t.Errorf("name %q", o.Name())
	}
	for id, pr := range oracle {
		if got := o.PagePriority(PageInfo{ID: id, Depth: 7}); got != -pr {
			t.Errorf("priority of %d = %v, want %v", id, got, -pr)
		}
	}
	// Sites go by their best page: the one holding page 2 first.
	f := New(o, false)
	sites := newSites(f, []int64{1, 1, 2}, []float64{-0.1, -0.5, -0.3})
	if got := order(f, t0); len(got) != 3 || got[0] != sites[1].ID || got[1] != sites[2].ID || got[2] != sites[0].ID {
		t.Errorf("site order %v, want [2 3 1]", got)
	}
}

func TestBatchFormsBatchesByKnownPageRank(t *testing.T) {
	// Seeds 1 and 2 form the first batch. 1 links to 3 and 4, 2 to 4 and
	// 5. With K = 2 the second batch is 4 (two in-links) and 3 (ties with
	// 5, found first); 5 stays held.
	b := NewBatch(2)
	for _, id := range []uint64{1, 2} {
		if p := b.PagePriority(PageInfo{ID: id}); p == Held {
			t.Fatalf("seed %d held", id)
		}
	}
	var u updates
	b.Fetched(1, []uint64{3, 4}, u.fn)
	if len(u.ids) != 0 {
		t.Fatalf("updates before the batch ended: %v", u.ids)
	}
	for _, id := range []uint64{3, 4} {
		if p := b.PagePriority(PageInfo{ID: id, Parent: 1, Depth: 1}); p != Held {
			t.Errorf("page %d found mid-batch has priority %v, want Held", id, p)
		}
	}
	b.Fetched(2, []uint64{4, 5}, u.fn)
	// Known graph: nodes 1,2,3,4,5 = 0..4; edges 1->3, 1->4, 2->4, 2->5.
	pr := pagerankOf(t, 5, [][2]int32{{0, 2}, {0, 3}, {1, 3}, {1, 4}})
	if len(u.ids) != 2 || u.ids[0] != 4 || u.ids[1] != 3 {
		t.Fatalf("second batch %v, want [4 3]", u.ids)
	}
	for id, node := range map[uint64]int{4: 3, 3: 2} {
		if math.Abs(u.prios[id]+pr[node]) > 1e-5 {
			t.Errorf("priority of %d = %v, want about %v", id, u.prios[id], -pr[node])
		}
	}
	if p := b.PagePriority(PageInfo{ID: 5, Parent: 2, Depth: 1}); p != Held {
		t.Errorf("page 5 outside the batch has priority %v, want Held", p)
	}
	// The batch ends when 3 and 4 are fetched; then 5 is all there is.
	u = updates{}
	b.Fetched(4, nil, u.fn)
	if len(u.ids) != 0 {
		t.Fatalf("batch ended early: %v", u.ids)
	}
	b.Fetched(3, nil, u.fn)
	if len(u.ids) != 1 || u.ids[0] != 5 || u.prios[5] == Held {
		t.Fatalf("third batch %v %v, want [5]", u.ids, u.prios)
	}
	if st := b.Stats(); st.Recomputations != 2 || st.Nodes != 5 || st.Edges != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestBatchReopensWhenNothingIsQueued(t *testing.T) {
	b := NewBatch(10)
	b.PagePriority(PageInfo{ID: 1})
	var u updates
	b.Fetched(1, nil, u.fn) // nothing known is left: the next page opens a batch
	if p := b.PagePriority(PageInfo{ID: 9}); p == Held {
		t.Errorf("a page found with no batch in progress is held")
	}
}

func TestPartialTemporaryScores(t *testing.T) {
	p := NewPartial(3)
	if got := p.PagePriority(PageInfo{ID: 1}); got != -1 {
		t.Fatalf("seed priority %v, want -1", got)
	}
	var u updates
	p.Fetched(1, []uint64{2, 3}, u.fn) // 2 and 3 get 1/2 each
	if len(u.ids) != 0 {
		t.Errorf("updates for pages not queued yet: %v", u.ids)
	}
	for _, id := range []uint64{2, 3} {
		if got := p.PagePriority(PageInfo{ID: id, Parent: 1, Depth: 1}); got != -0.5 {
			t.Errorf("priority of %d = %v, want -0.5", id, got)
		}
	}
	p.Fetched(2, []uint64{3, 4}, u.fn) // 3: 1/2 + 1/4; 4: 1/4
	if len(u.ids) != 1 || u.ids[0] != 3 || u.prios[3] != -0.75 {
		t.Fatalf("updates %v %v, want 3 -> -0.75", u.ids, u.prios)
	}
	if got := p.PagePriority(PageInfo{ID: 4, Parent: 2, Depth: 2}); got != -0.25 {
		t.Errorf("priority of 4 = %v, want -0.25", got)
	}
	// The third fetch triggers PageRank over nodes 1,2,3,4,5 (0..4) with
	// edges 1->2, 1->3, 2->3, 2->4, 3->5; every queued page (4, 5) is
	// reported with its PageRank.
	u = updates{}
	p.Fetched(3, []uint64{5}, u.fn)
	pr := pagerankOf(t, 5, [][2]int32{{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 4}})
	if len(u.ids) != 1 || u.ids[0] != 4 {
		t.Fatalf("recompute reported %v, want [4]", u.ids)
	}
	if math.Abs(u.prios[4]+pr[3]) > 1e-5 {
		t.Errorf("priority of 4 = %v, want about %v", u.prios[4], -pr[3])
	}
	if got := p.PagePriority(PageInfo{ID: 5, Parent: 3, Depth: 2}); math.Abs(got+pr[4]) > 1e-5 {
		t.Errorf("priority of 5 = %v, want about %v", got, -pr[4])
	}
	// Ranked pages keep their PageRank until the next recomputation.
	u = updates{}
	p.Fetched(4, []uint64{5}, u.fn)
	if len(u.ids) != 0 {
		t.Errorf("a ranked page was re-scored: %v", u.prios)
	}
}

func TestRankStrategiesByName(t *testing.T) {
	for _, name := range []string{"batch", "partial"} {
		s, err := NewStrategy(name, StrategyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Name() != name {
			t.Errorf("NewStrategy(%q).Name() = %q", name, s.Name())
		}
		if _, ok := s.(Reprioritizer); !ok {
			t.Errorf("%s is not a Reprioritizer", name)
		}
	}
	if NewBatch(0).K() != DefaultK || NewPartial(-1).K() != DefaultK {
		t.Error("k < 1 does not mean DefaultK")
	}
}

func TestReprioritizedMovesReadySite(t *testing.T) {
	f := New(Depth{}, false)
	s := newSites(f, []int64{1, 1, 1}, []float64{1, 2, 3})
	f.Reprioritized(s[0], 5) // worse than the others now
	f.Reprioritized(s[2], 0) // best now
	if got := order(f, t0); len(got) != 3 || got[0] != 3 || got[1] != 2 || got[2] != 1 {
		t.Errorf("order after reprioritizing %v, want [3 2 1]", got)
	}
}

func TestNextUnheldStopsAtHeldSites(t *testing.T) {
	f := New(NewBatch(1), false)
	s := newSites(f, []int64{1, 1}, []float64{Held, -0.5})
	if got := f.NextUnheld(t0); got != s[1] {
		t.Fatalf("NextUnheld = %v, want site 2", got)
	}
	if got := f.NextUnheld(t0); got != nil {
		t.Fatalf("NextUnheld handed out a held site %d", got.ID)
	}
	if f.Count(Ready) != 1 {
		t.Fatalf("held site left the ready heap: ready=%d", f.Count(Ready))
	}
	f.Reprioritized(s[0], -0.1)
	if got := f.NextUnheld(t0); got != s[0] {
		t.Fatalf("released site not handed out: %v", got)
	}
}

// Batch pages that leave the queue unseen would hold the crawl forever;
// Unhold gives up on them and releases the next batch.
func TestBatchUnholdReleasesTheNextBatch(t *testing.T) {
	b := NewBatch(2)
	var u updates
	if p := b.PagePriority(PageInfo{ID: 1}); p == Held {
		t.Fatal("the seed is held")
	}
	// The seed links to 2, 3 and 4; 2 and 3 form the next batch.
	b.Fetched(1, []uint64{2, 3, 4}, u.fn)
	for id := uint64(2); id <= 4; id++ {
		b.PagePriority(PageInfo{ID: id, Parent: 1})
	}
	if len(u.ids) != 2 {
		t.Fatalf("first batch after the seed: %v", u.ids)
	}
	batch := u.ids
	// One of them is fetched; the other vanishes (its site is parked).
	u = updates{}
	b.Fetched(batch[0], nil, u.fn)
	if len(u.ids) != 0 {
		t.Fatalf("a batch reported before its end: %v", u.ids)
	}
	if !b.Unhold(u.fn) || len(u.ids) != 1 || u.ids[0] != 4 || u.prios[4] == Held {
		t.Fatalf("Unhold released %v, want page 4", u.prios)
	}
	// Page 4 is the last one known: once it goes, nothing is left.
	u = updates{}
	if b.Unhold(u.fn) || len(u.ids) != 0 {
		t.Errorf("Unhold released %v with nothing left", u.ids)
	}
}
