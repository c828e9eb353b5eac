package dedup

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"lidi/internal/race"
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
// perKey rule (a full key keeps its first page and the latest ones, the
// newest in the place of the one it replaced), in the order each returns
// them, at every size it passes through while growing, pages still in the
// table before it grew included, under several growths: the order must
// not depend on when the table grows, for the detector's decisions follow
// it.
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
		for _, g := range []growth{defaultGrowth, {full: 14, step: 2}, {full: 12, step: 16}} {
			t.Run(fmt.Sprintf("%s, growth %d/16 at %d/16", tc.name, g.step, g.full), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(2, uint64(tc.keys)))
				var keys []uint64 // by page
				keyOf := func(p uint32) uint64 { return keys[p] }
				tab := newKeyTable(keyOf)
				tab.grows = g
				want := map[uint64][]uint32{}
				check := func(n int) {
					for h, pages := range want {
						var got []uint32
						tab.each(h, func(p uint32) bool { got = append(got, p); return true })
						if !slices.Equal(got, pages) {
							t.Fatalf("after %d pages, key %x holds %v, want %v", n, h, got, pages)
						}
					}
				}
				const pages = 20000
				grew := 0
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
					n := tab.cur.n
					tab.insert(h, p, tc.perKey)
					if tab.cur.n != n {
						grew++
					}
					ps := want[h]
					if tc.perKey > 0 && len(ps) >= tc.perKey {
						// The newest page replaces the second oldest, or
						// the only one, in its place.
						victim := 0
						if len(ps) > 1 {
							s := slices.Sorted(slices.Values(ps))
							victim = slices.Index(ps, s[1])
						}
						ps[victim] = p
					} else {
						want[h] = append(ps, p)
					}
					if p%997 == 0 || tab.old.n > 0 && tab.moved%(8*moveEach) == 0 {
						check(int(p) + 1)
					}
				}
				check(pages)
				if tc.keys >= 500 && grew < 2 {
					t.Fatalf("the table grew %d times, want a test that makes it grow", grew)
				}
			})
		}
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

// TestObserveWhateverGrowth observes a long random crawl full of copies
// (query variants, other directories, other hosts, lower case; the same
// digest or a simhash a few bits off) with the detector's tables growing
// by a quarter at fifteen sixteenths, by an eighth at seven eighths (as
// they did before) and by doubling, and checks that every decision is the
// same: its decisions take the first suspect of equal worth in the order
// a table returns them, which must not depend on when the tables grow.
func TestObserveWhateverGrowth(t *testing.T) {
	race.SkipSingleGoroutine(t)
	pages := 60_000
	if testing.Short() {
		pages = 15_000
	}
	ps := copyPages(pages, 9)
	var runs [][]string
	for _, g := range []growth{defaultGrowth, {full: 14, step: 2}, {full: 12, step: 16}} {
		d := New(Config{})
		for _, tab := range d.tables() {
			tab.grows = g
		}
		decisions := make([]string, len(ps))
		kinds := map[Kind]int{}
		for i, p := range ps {
			dec := d.Observe(p)
			kinds[dec.Kind]++
			decisions[i] = fmt.Sprintf("%+v", dec)
		}
		if kinds[Exact] < pages/20 || kinds[Near] < pages/20 || kinds[Unique] < pages/4 {
			t.Fatalf("growth %d/16 at %d/16: decisions by kind %v, want a test with many of each", g.step, g.full, kinds)
		}
		// As many slots as pages (the table starts at a few chunks): it
		// grew many times. A fixed 8 chunks could never be met by -short's
		// 15,000 pages.
		if n := d.ids.cur.n; n < pages {
			t.Fatalf("the URL ids' table holds %d slots, want a test whose tables grow many times", n)
		}
		runs = append(runs, decisions)
	}
	for k, decisions := range runs[1:] {
		for i := range decisions {
			if decisions[i] != runs[0][i] {
				t.Fatalf("page %d (%s): growth %d decided\n%s\nwhere the default decided\n%s", i, ps[i].URL, k+1, decisions[i], runs[0][i])
			}
		}
	}
}

// copyPages returns n pages of a crawl of 300 sites in which two pages in
// five copy an earlier page (most often a recent one) under a related URL,
// whole or with a few bits of their simhashes changed.
func copyPages(n int, seed uint64) []Page {
	r := rand.New(rand.NewPCG(seed, 13))
	g := newTextGen(seed)
	ps := make([]Page, 0, n)
	for i := range n {
		if i < 100 || r.IntN(5) >= 2 {
			site := r.IntN(300)
			url := fmt.Sprintf("http://www.site%d.example/%s/%d/%s-%d.html", site, testVocab[(site*7+r.IntN(6))%len(testVocab)], r.IntN(4), g.word(), i)
			p := Page{URL: url, Digest: r.Uint64(), Simhash: r.Uint64(), Main: r.Uint64(), Title: uint64(site*8 + r.IntN(8)), Status: 200}
			if i%7 == 0 {
				p.Items = r.Uint64() | 1
			}
			p.NoURL = p.Simhash
			p.ID = ID(p.URL)
			ps = append(ps, p)
			continue
		}
		j := len(ps) - 1 - min(len(ps)-1, int(r.ExpFloat64()*2000))
		p := ps[j]
		switch r.IntN(5) {
		case 0:
			p.URL += fmt.Sprintf("?utm_source=%s", g.word())
		case 1:
			p.URL = strings.Replace(p.URL, "/www.", "/", 1)
		case 2:
			p.URL = strings.Replace(p.URL, ".example/", fmt.Sprintf(".example/%s/", g.word()), 1)
		case 3:
			p.URL = strings.Replace(p.URL, ".example/", ".example/M", 1)
			p.URL = strings.Replace(p.URL, ".html", ".HTML", 1)
		default:
			p.URL = strings.Replace(p.URL, "site", "mirror", 1)
		}
		if r.IntN(2) == 0 {
			p.Digest = r.Uint64()
			p.Simhash ^= 1<<r.IntN(64) | 1<<r.IntN(64)
			p.Main ^= 1 << r.IntN(64)
			p.NoURL = p.Simhash
		}
		p.ID = ID(p.URL)
		ps = append(ps, p)
	}
	return ps
}
