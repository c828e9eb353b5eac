package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

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
			bounds, _, err := rankSlices(t.Context(), g.View(), tc.nodes, tc.most)
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

// countingIDs counts the IDs a reader of a graph's node IDs is given,
// and calls at (when not nil) once it has given atRead of them.
type countingIDs struct {
	v      rank.LinksView
	reads  int
	atRead int
	at     func()
}

func (c *countingIDs) EachID(fn func(n int32, id uint64) bool) error {
	return c.v.EachID(func(n int32, id uint64) bool {
		c.reads++
		if c.reads == c.atRead && c.at != nil {
			c.at()
		}
		return fn(n, id)
	})
}

// TestEachInRankOrder gives every node of a spilled graph once, in the
// store's order of their IDs, a slice at a time, and reads the IDs at most
// twice over however many slices they make: reading them once per slice,
// as storeRanks did, reads them 3 to 42 times here.
func TestEachInRankOrder(t *testing.T) {
	for _, tc := range []struct {
		name        string
		nodes, most int
		id          func(rng *rand.Rand) uint64
	}{
		{"spread IDs, many slices", 200_000, 5000, func(rng *rand.Rand) uint64 { return rng.Uint64() }},
		{"negative in the store's order", 70_000, 3000, func(rng *rand.Rand) uint64 { return rng.Uint64() | 1<<63 }},
		{"two slices", 9000, 5000, func(rng *rand.Rand) uint64 { return rng.Uint64() }},
		{"one slice", 3000, 4000, func(rng *rand.Rand) uint64 { return rng.Uint64() }},
		{"small IDs: one bucket larger than a slice", 30_000, 1000, func(rng *rand.Rand) uint64 { return rng.Uint64N(1 << 40) }},
		{"mixed: one large bucket and spread IDs", 60_000, 2000, func(rng *rand.Rand) uint64 {
			if rng.IntN(2) == 0 {
				return rng.Uint64N(1 << 40)
			}
			return rng.Uint64()
		}},
		{"no nodes", 0, 1000, func(rng *rand.Rand) uint64 { return rng.Uint64() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g rank.Links
			if err := g.Spill(t.TempDir()); err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			rng := rand.New(rand.NewPCG(3, 4))
			var ids []uint64
			for range tc.nodes + 700 { // 700 added after the count asked for
				id := tc.id(rng)
				ids = append(ids, id)
				if _, err := g.Add(id); err != nil {
					t.Fatal(err)
				}
			}
			src := &countingIDs{v: g.View()}
			given := make([]bool, tc.nodes)
			var last uint64
			got, slices := 0, 0
			err := eachInRankOrder(t.Context(), src, tc.nodes, tc.most, t.TempDir(), func(s []nodeID) bool {
				slices++
				for _, x := range s {
					if int(x.n) >= tc.nodes || x.n < 0 {
						t.Fatalf("node %d given, want below %d", x.n, tc.nodes)
					}
					if given[x.n] {
						t.Fatalf("node %d given twice", x.n)
					}
					given[x.n] = true
					if x.id != ids[x.n] {
						t.Fatalf("node %d given with ID %x, want %x", x.n, x.id, ids[x.n])
					}
					if k := rankKey(x.id); got > 0 && k < last {
						t.Fatalf("ID %x after %x: not in the store's order", x.id, last)
					} else {
						last = k
					}
					got++
				}
				return true
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.nodes {
				t.Errorf("%d nodes given, want %d", got, tc.nodes)
			}
			if src.reads > 2*tc.nodes+2 {
				t.Errorf("%d IDs read for %d nodes in %d slices, want at most twice each", src.reads, tc.nodes, slices)
			}
		})
	}
}

// TestEachInRankOrderStops ends when its caller says so, and reports an
// ID spill that can no longer be read.
func TestEachInRankOrderStops(t *testing.T) {
	var g rank.Links
	if err := g.Spill(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300_000 {
		if _, err := g.Add(rng.Uint64()); err != nil {
			t.Fatal(err)
		}
	}
	calls := 0
	if err := eachInRankOrder(t.Context(), g.View(), 300_000, 10_000, t.TempDir(), func([]nodeID) bool { calls++; return calls < 3 }); err != nil {
		t.Fatal(err)
	}
	if calls != 3 {
		t.Errorf("%d slices given after the caller stopped at the third", calls)
	}
	v := g.View()
	g.Close()
	if err := eachInRankOrder(t.Context(), v, 300_000, 10_000, t.TempDir(), func([]nodeID) bool { return true }); err == nil {
		t.Error("IDs read from a closed spill: no error")
	}
}

// TestEachInRankOrderEndsWithItsContext stops reading the IDs soon after
// its context ends, in either read of them and with one slice or many:
// it read them all, twice, whatever the context, which at a hundred
// million nodes held a crawl's stop some 30 s.
func TestEachInRankOrderEndsWithItsContext(t *testing.T) {
	var g rank.Links
	if err := g.Spill(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	rng := rand.New(rand.NewPCG(7, 8))
	const nodes = 400_000
	for range nodes {
		if _, err := g.Add(rng.Uint64()); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name         string
		most, cancel int // cancel: the ID read at which the context ends
	}{
		{"counting the slices", 10_000, 100_000},
		{"writing the slices", 10_000, nodes + 100_000},
		{"one slice", nodes, 100_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			src := &countingIDs{v: g.View(), atRead: tc.cancel, at: cancel}
			given := 0
			err := eachInRankOrder(ctx, src, nodes, tc.most, t.TempDir(), func(s []nodeID) bool {
				given += len(s)
				return true
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v, want context.Canceled", err)
			}
			if src.reads > tc.cancel+rankCheckEvery {
				t.Errorf("%d IDs read, the context ended at the %d-th: want at most %d more", src.reads, tc.cancel, rankCheckEvery)
			}
			if given > 0 {
				t.Errorf("%d nodes given after the context ended", given)
			}
		})
	}
}

// BenchmarkRankOrder puts the nodes of spilled graphs of 1,000,000 and
// 4,000,000 random URL IDs in the store's order, as storeRanks does, and
// ends with a key=value line: the time a node at each size (flat when the
// cost is linear), the IDs read a node, and the largest slice.
func BenchmarkRankOrder(b *testing.B) {
	sizes := []int{1_000_000, 4_000_000}
	nsPer := make([]float64, len(sizes))
	readsPer := make([]float64, len(sizes))
	most := 0
	for i, nodes := range sizes {
		b.Run(fmt.Sprint(nodes), func(b *testing.B) {
			var g rank.Links
			if err := g.Spill(b.TempDir()); err != nil {
				b.Fatal(err)
			}
			defer g.Close()
			rng := rand.New(rand.NewPCG(1, uint64(nodes)))
			for range nodes {
				if _, err := g.Add(rng.Uint64()); err != nil {
					b.Fatal(err)
				}
			}
			src := &countingIDs{v: g.View()}
			var sum uint64
			t0 := time.Now()
			for b.Loop() {
				err := eachInRankOrder(b.Context(), src, nodes, rankSliceNodes, b.TempDir(), func(s []nodeID) bool {
					most = max(most, len(s))
					for _, x := range s {
						sum += uint64(x.n)
					}
					return true
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			nsPer[i] = float64(time.Since(t0).Nanoseconds()) / float64(b.N) / float64(nodes)
			readsPer[i] = float64(src.reads) / float64(b.N) / float64(nodes)
			if want := uint64(nodes) * uint64(nodes-1) / 2 * uint64(b.N); sum != want {
				b.Fatalf("node sum %d, want %d", sum, want)
			}
		})
	}
	fmt.Printf("rank_order nodes_small=%d nodes_large=%d ns_per_node_small=%.1f ns_per_node_large=%.1f ids_read_per_node_small=%.2f ids_read_per_node_large=%.2f slice_most=%d\n",
		sizes[0], sizes[1], nsPer[0], nsPer[1], readsPer[0], readsPer[1], most)
}
