package engine

import (
	"math/rand/v2"
	"testing"

	"lidi/engine/rank"
)

// TestRankSlices cuts the IDs of a graph's nodes into slices for
// storeRanks: every node's ID falls in exactly one slice, no slice holds
// more than asked (the IDs are spread, no 16-bit bucket is that large), and
// nodes past the count asked for are left out.
func TestRankSlices(t *testing.T) {
	for _, tc := range []struct {
		name        string
		nodes, most int
		id          func(rng *rand.Rand) uint64
	}{
		{"spread IDs, many slices", 50_000, 4000, func(rng *rand.Rand) uint64 { return rng.Uint64() }},
		{"one slice", 3000, 4000, func(rng *rand.Rand) uint64 { return rng.Uint64() }},
		{"small IDs: one bucket", 3000, 100, func(rng *rand.Rand) uint64 { return rng.Uint64N(1 << 40) }},
		{"negative in the store's order", 20_000, 1000, func(rng *rand.Rand) uint64 { return rng.Uint64() | 1<<63 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g rank.Links
			rng := rand.New(rand.NewPCG(1, 2))
			var ids []uint64
			for range tc.nodes + 500 { // 500 added after the view's count
				id := tc.id(rng)
				ids = append(ids, id)
				if _, err := g.Add(id); err != nil {
					t.Fatal(err)
				}
			}
			bounds, err := rankSlices(g.View(), tc.nodes, tc.most)
			if err != nil {
				t.Fatal(err)
			}
			if bounds[0] != 0 || bounds[len(bounds)-1] != 1<<(64-rankKeyShift) {
				t.Fatalf("bounds %v do not cover the IDs", bounds)
			}
			in := make([]int, len(bounds)-1)
			for _, id := range ids[:tc.nodes] {
				x := rankKey(id) >> rankKeyShift
				found := 0
				for k := range in {
					if x >= bounds[k] && x < bounds[k+1] {
						in[k]++
						found++
					}
				}
				if found != 1 {
					t.Fatalf("ID %x in %d slices", id, found)
				}
			}
			wantMax := tc.most
			if tc.name == "small IDs: one bucket" {
				wantMax = tc.nodes // every ID in bucket 1<<15: one slice, however large
			}
			for k, n := range in {
				if n > wantMax || n == 0 && len(in) > 1 {
					t.Errorf("slice %d holds %d IDs, want 1 to %d", k, n, wantMax)
				}
			}
			if tc.nodes > tc.most && len(in) < tc.nodes/tc.most && wantMax == tc.most {
				t.Errorf("%d slices for %d IDs at most %d a slice", len(in), tc.nodes, tc.most)
			}
		})
	}
}
