package dedup

import (
	"math/rand/v2"
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
