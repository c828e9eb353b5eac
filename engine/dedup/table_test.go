package dedup

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestPageItems checks pageItems answers as the map it replaces, for dense
// and sparse pages, across chunk boundaries.
func TestPageItems(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pages int
		every int // one page in every has items
	}{
		{"empty", 0, 1},
		{"one", 1, 1},
		{"dense", 3*itemsChunk + 17, 1},
		{"sparse", 5 * itemsChunk, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.pages)))
			var got pageItems
			want := map[uint32]uint64{}
			for p := range uint32(tc.pages) {
				if rng.IntN(tc.every) == 0 {
					v := rng.Uint64() | 1
					got.add(p, v)
					want[p] = v
				}
			}
			if got.len() != len(want) {
				t.Fatalf("len = %d, want %d", got.len(), len(want))
			}
			for p := range uint32(tc.pages + 2) {
				v, ok := got.get(p)
				w, wok := want[p]
				if v != w || ok != wok {
					t.Fatalf("get(%d) = %x, %v; want %x, %v", p, v, ok, w, wok)
				}
			}
		})
	}
}

// TestKeyTable checks keyTable against a map of each key's pages, with the
// perKey rule (a full key keeps its first page and the latest ones), at
// every size it passes through while growing, pages still in the table
// before it grew included.
func TestKeyTable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		keys   int // distinct keys the pages fall under
		perKey int
	}{
		{"distinct keys", 1 << 30, 0},
		{"shared keys", 500, 0},
		{"shared keys, 4 a key", 500, 4},
		{"few keys, 1 a key", 7, 1},
		{"few keys, 2 a key", 7, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, uint64(tc.keys)))
			var keys []uint64 // by page
			keyOf := func(p uint32) uint64 { return keys[p] }
			tab := newKeyTable(keyOf)
			want := map[uint64][]uint32{}
			check := func(n int) {
				for h, pages := range want {
					var got []uint32
					tab.each(h, func(p uint32) bool { got = append(got, p); return true })
					slices.Sort(got)
					if !slices.Equal(got, pages) {
						t.Fatalf("after %d pages, key %x holds %v, want %v", n, h, got, pages)
					}
				}
			}
			const pages = 20000
			for p := range uint32(pages) {
				// Keys with few distinct top bits crowd some home slots;
				// a quarter of them have a low byte of 0, the tag of an
				// empty slot, and share tag 1 with others.
				x := rng.Uint64N(uint64(tc.keys))
				h := x * 0x9e3779b97f4a7c15
				if x%4 == 0 {
					h &^= 0xff
				}
				keys = append(keys, h)
				tab.insert(h, p, tc.perKey)
				ps := want[h]
				if tc.perKey > 0 && len(ps) >= tc.perKey {
					// The newest page replaces the second oldest, or
					// the only one.
					ps = slices.Delete(ps, min(1, len(ps)-1), min(2, len(ps)))
				}
				want[h] = append(ps, p)
				if p%997 == 0 || tab.old.n > 0 && tab.moved == 0 {
					check(int(p) + 1)
				}
			}
			check(pages)
		})
	}
}

// TestKeyTableGrowsInSteps checks that no insert recomputes more than a
// few keys, nor allocates more than a few chunks of slots, however large
// the table: growing moves the pages a few at each insert, not all at once
// (at 3,000,000 pages that stopped the crawl's loop for seconds), and the
// larger table's slots are allocated as pages are put in them (allocated
// whole, a detector's tables took tens of megabytes in one decision).
func TestKeyTableGrowsInSteps(t *testing.T) {
	var keys []uint64
	calls := 0
	tab := newKeyTable(func(p uint32) uint64 { calls++; return keys[p] })
	rng := rand.New(rand.NewPCG(3, 3))
	most, mostAlloc, grew := 0, 0, 0
	for p := range uint32(300000) {
		keys = append(keys, rng.Uint64())
		calls = 0
		n, alloc := tab.cur.n, tab.allocated()
		tab.insert(keys[p], p, 0)
		if tab.cur.n != n {
			grew++
		}
		most = max(most, calls)
		mostAlloc = max(mostAlloc, tab.allocated()-alloc)
	}
	if grew < 10 || tab.cur.n < 10*chunkSlots {
		t.Fatalf("the table grew %d times to %d slots, want a test that makes it grow past many chunks", grew, tab.cur.n)
	}
	// moveEach (128) keys, and those of the pages met on its own key's
	// probe sequence.
	if most > 160 {
		t.Errorf("an insert recomputed %d keys, want at most 160", most)
	}
	// The chunks the moved pages go to, and the new page's.
	if mostAlloc > 4*chunkSlots {
		t.Errorf("an insert allocated %d slots, want at most %d (4 chunks)", mostAlloc, 4*chunkSlots)
	}
}

// TestKeyTableWarm checks that a table that warms its pages' memory
// before recomputing their keys (keyTable.move) holds its pages in the
// same slots as one that does not, and that every page warmed had its key
// recomputed in the same insert.
func TestKeyTableWarm(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var keys []uint64
	plain := newKeyTable(func(p uint32) uint64 { return keys[p] })
	warmed := map[uint32]bool{} // warmed, key not yet recomputed
	warm := newKeyTable(func(p uint32) uint64 {
		delete(warmed, p)
		return keys[p]
	})
	warm.warm = func(p uint32) uint64 { warmed[p] = true; return keys[p] }
	grew := 0
	for p := range uint32(100000) {
		k := rng.Uint64()
		if p > 0 && rng.IntN(4) == 0 {
			k = keys[rng.IntN(int(p))] // some keys shared
		}
		keys = append(keys, k)
		n := warm.cur.n
		plain.insert(keys[p], p, 4)
		warm.insert(keys[p], p, 4)
		if warm.cur.n != n {
			grew++
		}
		if len(warmed) != 0 {
			t.Fatalf("insert %d: %d pages warmed whose keys were not recomputed", p, len(warmed))
		}
	}
	if grew < 5 || warm.warmed == 0 {
		t.Fatalf("the table grew %d times, warmed sum %d: want a test that moves pages", grew, warm.warmed)
	}
	for _, pair := range [][2]*slotArray{{&plain.cur, &warm.cur}, {&plain.old, &warm.old}} {
		a, b := pair[0], pair[1]
		if a.n != b.n {
			t.Fatalf("%d slots without warming, %d with", a.n, b.n)
		}
		for i := range a.n {
			if a.tag(i) != b.tag(i) || a.tag(i) != 0 && a.page(i) != b.page(i) {
				t.Fatalf("slot %d: tag %d page %d without warming, tag %d page %d with", i, a.tag(i), a.page(i), b.tag(i), b.page(i))
			}
		}
	}
}

// TestSlotArray checks that a slot is empty until set, that a set
// allocates its chunk alone, and that the last chunk is cut to the array.
func TestSlotArray(t *testing.T) {
	n := 2*chunkSlots + 100
	a := makeSlots(n)
	for _, i := range []int{0, chunkSlots - 1, chunkSlots, n - 1} {
		if a.tag(i) != 0 {
			t.Fatalf("slot %d not empty in a new array", i)
		}
	}
	a.set(n-1, 7, 3)
	if a.alloc != 100 || a.tag(n-1) != 3 || a.page(n-1) != 7 {
		t.Fatalf("after a set in the last chunk: %d slots allocated, tag %d, page %d; want 100, 3, 7", a.alloc, a.tag(n-1), a.page(n-1))
	}
	a.set(5, 9, 1)
	a.setPage(5, 10)
	if a.alloc != 100+chunkSlots || a.page(5) != 10 || a.tag(chunkSlots) != 0 {
		t.Fatalf("after a set in the first chunk: %d slots allocated, page %d, tag of the middle chunk %d", a.alloc, a.page(5), a.tag(chunkSlots))
	}
}

// BenchmarkKeyTable inserts pages under distinct keys and looks each up,
// as a detector's tables do, and reports the table's bytes a page averaged
// over the sizes it passes through (bytes_per_page: what a crawl holds at
// a random moment), and the most at any size (max_bytes_per_page: just
// after a growth, the table before not yet freed).
func BenchmarkKeyTable(b *testing.B) {
	const pages = 1 << 20
	rng := rand.New(rand.NewPCG(5, 5))
	keys := make([]uint64, pages)
	for i := range keys {
		keys[i] = rng.Uint64()
	}
	var mean, most float64
	for b.Loop() {
		tab := newKeyTable(func(p uint32) uint64 { return keys[p] })
		var sum float64
		var n int
		most = 0
		for p := range uint32(pages) {
			tab.insert(keys[p], p, 8)
			if _, ok := tab.first(keys[p/2], func(uint32) bool { return true }); !ok {
				b.Fatalf("page %d not found", p/2)
			}
			if p >= pages/8 {
				per := float64(tab.bytes()) / float64(p+1)
				sum += per
				n++
				most = max(most, per)
			}
		}
		mean = sum / float64(n)
	}
	b.ReportMetric(mean, "bytes_per_page")
	b.ReportMetric(most, "max_bytes_per_page")
}
