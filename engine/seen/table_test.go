package seen

import (
	"math/rand/v2"
	"testing"
)

// TestTableMatchesMap sets and gets IDs in a table and a Go map side by
// side, ID 0 (the empty slot's mark) and IDs that share a first slot
// included, up to the table's limit, and checks every answer.
func TestTableMatchesMap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		limit int
		ids   func(rng *rand.Rand, i int) uint64
	}{
		{"random", 5000, func(rng *rand.Rand, _ int) uint64 { return rng.Uint64() }},
		{"small IDs, 0 among them", 3000, func(rng *rand.Rand, _ int) uint64 { return uint64(rng.IntN(4000)) }},
		{"tiny", 1, func(_ *rand.Rand, i int) uint64 { return uint64(i) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb := newTable(tc.limit)
			want := map[uint64]int32{}
			rng := rand.New(rand.NewPCG(5, 6))
			for i := 0; len(want) < tc.limit; i++ {
				id := tc.ids(rng, i)
				v, ok := tb.get(id)
				if wv, wok := want[id]; ok != wok || v != wv {
					t.Fatalf("get(%d) = %d, %v; the map says %d, %v", id, v, ok, wv, wok)
				}
				tb.set(id, int32(i))
				want[id] = int32(i)
				if tb.len() != len(want) {
					t.Fatalf("len = %d, the map has %d", tb.len(), len(want))
				}
			}
			for id, wv := range want {
				if v, ok := tb.get(id); !ok || v != wv {
					t.Fatalf("get(%d) = %d, %v; the map says %d", id, v, ok, wv)
				}
			}
			n := 0
			tb.each(func(id uint64, v int32) {
				n++
				if want[id] != v {
					t.Errorf("each gave %d: %d, the map says %d", id, v, want[id])
				}
			})
			if n != len(want) {
				t.Errorf("each gave %d entries, want %d", n, len(want))
			}
		})
	}
}
