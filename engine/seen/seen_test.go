package seen

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"lidi/engine/urlnorm"
	"lidi/internal/testkit"
)

// randomURL returns a URL of a crawl-like shape: many sites, paths and
// queries.
func randomURL(rng *rand.Rand) string {
	return fmt.Sprintf("http://s%d.example/%s/%d?p=%x", rng.IntN(5000), []string{"a", "news", "item", "tag"}[rng.IntN(4)], rng.IntN(1_000_000), rng.Uint32())
}

// TestMatchesMap runs a million random URLs through a Set and a Go map
// side by side, a small Recent forcing hundreds of runs and merges while
// it runs, and checks that every answer is the map's: looking up URLs
// added (in memory, being written, on disk), URLs never added, and URLs
// added again with another value.
func TestMatchesMap(t *testing.T) {
	const urls = 1_000_000
	s, err := Open(Options{Dir: t.TempDir(), Recent: 5000, CacheEntries: 1024})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	want := make(map[uint64]int32, urls)
	var ids []uint64
	check := func(id uint64) {
		t.Helper()
		v, ok, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		wv, wok := want[id]
		if ok != wok || v != wv {
			t.Fatalf("Get(%x) = %d, %v; the map says %d, %v", id, v, ok, wv, wok)
		}
	}
	for i := range urls {
		id := urlnorm.Fingerprint(randomURL(rng))
		check(id) // almost always absent: a URL found for the first time
		val := int32(i)
		if len(ids) > 0 && rng.IntN(100) == 0 {
			id = ids[rng.IntN(len(ids))] // added again: the new value wins
			val = -val
		}
		if _, ok := want[id]; !ok {
			ids = append(ids, id)
		}
		if err := s.Add(id, val); err != nil {
			t.Fatal(err)
		}
		want[id] = val
		// Links to URLs seen: recent ones (a site's pages) and any.
		check(ids[len(ids)-1-rng.IntN(min(len(ids), 300))])
		check(ids[rng.IntN(len(ids))])
	}
	for _, id := range ids {
		check(id)
	}
	st := s.Stats()
	t.Logf("%+v", st)
	if st.Flushes < 100 || st.Merges < 50 || st.Runs < 2 || st.DiskReads == 0 {
		t.Errorf("the test did not exercise the disk: %+v", st)
	}
	if runtime.GOOS == "linux" && (st.MaxPause <= 0 || st.MaxMeasured <= 0 || st.MaxPauseCPU <= 0 || st.MaxMeasured > st.MaxPause) {
		t.Errorf("the longest call's thread usage was not measured: %+v", st)
	}
	if st.MaxHandOff <= 0 || st.MaxHandOff > st.MaxPause {
		t.Errorf("the merges' longest hold on the caller was not measured: %+v", st)
	}
}

// TestLen checks Len as entries go to disk and are merged.
func TestLen(t *testing.T) {
	s, err := Open(Options{Dir: t.TempDir(), Recent: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 10_000 {
		if s.Len() != i {
			t.Fatalf("Len = %d after %d adds", s.Len(), i)
		}
		s.Add(uint64(i)*0x9e3779b97f4a7c15, int32(i))
	}
}

// TestRebuildAfterKill abandons a Set as a killed process would (runs on
// disk, never closed), then opens its directory again: the old runs are
// removed, and the set the crawl rebuilds from its store answers as the
// first did.
func TestRebuildAfterKill(t *testing.T) {
	dir := t.TempDir()
	killed, err := Open(Options{Dir: dir, Recent: 1000})
	if err != nil {
		t.Fatal(err)
	}
	store := make([]uint64, 0, 20_000) // what the crawl's store holds, in order
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 20_000 {
		id := rng.Uint64()
		store = append(store, id)
		killed.Add(id, int32(i))
	}
	// Wait for runs on disk, as a crawl killed a while after starting has.
	for {
		if m, _ := filepath.Glob(filepath.Join(dir, "*"+runExt)); len(m) > 0 {
			break
		}
		killed.Add(rng.Uint64()|1<<63, -1) // a URL the store never recorded
	}
	// Killed: its worker writes no more (a goroutine cannot be killed; it
	// is stopped, leaving its files as a kill -9 would).
	close(killed.stop)
	<-killed.done
	s, err := Open(Options{Dir: dir, Recent: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Len() != 0 {
		t.Fatalf("reopened set holds %d entries, want 0", s.Len())
	}
	for i, id := range store {
		s.Add(id, int32(i))
	}
	for i, id := range store {
		if v, ok, err := s.Get(id); err != nil || !ok || v != int32(i) {
			t.Fatalf("Get(%x) = %d, %v, %v; want %d", id, v, ok, err, i)
		}
	}
	if _, ok, _ := s.Get(store[0] ^ 1); ok {
		t.Errorf("an ID never added is found")
	}
}

// TestErrors covers a directory that cannot be made and use after Close.
func TestErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(Options{Dir: filepath.Join(file, "sub")}); err == nil {
		t.Errorf("Open under a file: no error")
	}
	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.dir
	for i := range 3 * DefaultRecent {
		s.Add(uint64(i), 0)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the temporary directory is left: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, _, err := s.Get(1); !errors.Is(err, ErrClosed) {
		t.Errorf("Get after Close: %v, want ErrClosed", err)
	}
	if err := s.Add(1, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v, want ErrClosed", err)
	}
}

// TestBloom checks the filter never forgets an entry and rules out most
// IDs it was not given.
func TestBloom(t *testing.T) {
	const n = 100_000
	b := newBloom(n)
	rng := rand.New(rand.NewPCG(5, 6))
	for range n {
		b.add(rng.Uint64())
	}
	rng = rand.New(rand.NewPCG(5, 6))
	for range n {
		if !b.has(rng.Uint64()) {
			t.Fatal("an ID added is not in the filter")
		}
	}
	fp := 0
	for range n {
		if b.has(rng.Uint64()) {
			fp++
		}
	}
	if rate := float64(fp) / n; rate > 0.03 {
		t.Errorf("false positives %.3f, want at most 0.03", rate)
	}
}

// numbered is a Set under test with the IDs added to it, the i-th with
// value i.
type numbered struct {
	t   *testing.T
	s   *Set
	ids []uint64
}

// openNumbered opens a Set of recent entries in memory, closed when the
// test ends.
func openNumbered(t *testing.T, recent int) *numbered {
	s, err := Open(Options{Dir: t.TempDir(), Recent: recent})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &numbered{t: t, s: s}
}

// add adds k new IDs.
func (n *numbered) add(k int) {
	n.t.Helper()
	for range k {
		id := uint64(len(n.ids)+1) * 0x9e3779b97f4a7c15
		if err := n.s.Add(id, int32(len(n.ids))); err != nil {
			n.t.Fatal(err)
		}
		n.ids = append(n.ids, id)
	}
}

// takeOver adds the first ID again, with its value: the Add takes over
// what the worker published, and adds nothing.
func (n *numbered) takeOver() {
	n.t.Helper()
	if err := n.s.Add(n.ids[0], 0); err != nil {
		n.t.Fatal(err)
	}
}

// check checks that the Set answers for every ID added.
func (n *numbered) check() {
	n.t.Helper()
	for i, id := range n.ids {
		if v, ok, err := n.s.Get(id); err != nil || !ok || v != int32(i) {
			n.t.Fatalf("Get(%x) = %d, %v, %v; want %d", id, v, ok, err, i)
		}
	}
}

// TestHoldsByKind makes each kind of hand-over with the worker happen and
// checks that each is counted in its own Hold, with its thread's CPU
// where the system says, and that MaxHandOff is the longer of them. A
// table that fills while the worker cannot hand over the last one's run
// (it publishes under the Set's lock, which the test holds) is frozen
// and queued, the set answering for the entries of both.
func TestHoldsByKind(t *testing.T) {
	const recent = 1000
	n := openNumbered(t, recent)
	s := n.s
	s.mu.Lock()       // the worker writes the first table but cannot hand its run over
	n.add(2 * recent) // two tables fill, and are frozen
	st := s.Stats()
	frozen := len(s.frozen)
	s.mu.Unlock()
	if st.Freeze.Count != 2 || st.Install.Count != 0 || frozen != 2 || st.Recent != 2*recent {
		t.Fatalf("after two tables filled: %d frozen, %+v", frozen, st)
	}
	n.check()
	testkit.WaitFor(t, time.Minute, "the worker's runs taken over", func() bool {
		n.takeOver()
		return len(s.frozen) == 0
	})
	n.check()
	st = s.Stats()
	t.Logf("%+v", st)
	if st.Flushes != 2 || st.Entries < 2*recent { // ids[0], added again, may count twice
		t.Errorf("after the runs were taken over: %+v", st)
	}
	for _, h := range []struct {
		kind string
		Hold
	}{{"freeze", st.Freeze}, {"install", st.Install}} {
		if h.Count == 0 || h.Longest <= 0 || h.Longest > st.MaxHandOff {
			t.Errorf("%s: %+v, the longest hand-over %s", h.kind, h.Hold, st.MaxHandOff)
		}
		if runtime.GOOS == "linux" && h.CPU <= 0 {
			t.Errorf("%s: its thread's CPU not measured: %+v", h.kind, h.Hold)
		}
	}
	if longest := max(st.Freeze.Longest, st.Install.Longest); longest != st.MaxHandOff {
		t.Errorf("MaxHandOff %s, the longer of the kinds %s", st.MaxHandOff, longest)
	}
}

// TestFreezeReusesTable checks that a freeze allocates no table: the
// first takes the one Open made, the next the table the last run was
// written from, cleared, once that run is taken over; and that the set
// still answers for every ID added.
func TestFreezeReusesTable(t *testing.T) {
	const recent = 1000
	n := openNumbered(t, recent)
	s := n.s
	made := <-s.spare
	s.spare <- made
	n.add(recent)
	if s.recent != made {
		t.Errorf("the first freeze did not take the table Open made")
	}
	if len(s.frozen) != 1 {
		t.Fatalf("no table frozen after %d entries: %+v", recent, s.Stats())
	}
	first := s.frozen[0]
	testkit.WaitFor(t, time.Minute, "the first run taken over and its table cleared", func() bool {
		n.takeOver()
		return len(s.spare) == 1
	})
	before := s.Stats().Bytes
	for s.Stats().Freeze.Count < 2 {
		n.add(1)
	}
	if s.recent != first || s.recent.len() != 0 {
		t.Errorf("the second freeze did not take the first table, cleared (the same: %v, entries %d)", s.recent == first, s.recent.len())
	}
	if after := s.Stats().Bytes; after != before {
		t.Errorf("the set holds %d bytes after the freeze, %d before: the spare table is not counted", after, before)
	}
	n.check()
}

// TestCloseAfterWorkerError checks that the runs a merge retired are
// closed by Close when the worker's hand-over carried an error: install
// dropped them, and their descriptors (their files already removed, their
// blocks still held) stayed open until the process ended.
func TestCloseAfterWorkerError(t *testing.T) {
	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(t.TempDir(), "retired")
	if err != nil {
		t.Fatal(err)
	}
	(&worker{s: s}).publish(0, []*run{{f: f}}, errors.New("seen: writing a run: disk full"))
	s.install()
	if s.err == nil {
		t.Fatal("install took no error from the hand-over")
	}
	s.Close()
	if _, err := f.Stat(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("the retired run's file is still open after Close: %v", err)
	}
}
