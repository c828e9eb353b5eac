package engine

import (
	"slices"
	"testing"
)

// TestLinkGraphChunks checks that every page's links come back as recorded
// when pages fill chunks unevenly, one page needs a chunk larger than
// linkChunk, and a view taken earlier is not changed by later appends.
func TestLinkGraphChunks(t *testing.T) {
	sizes := []int{0, 3, linkChunk/2 - 1, linkChunk / 2, 2, 0, linkChunk + 7, 5, linkChunk, 1, 0}
	var g linkGraph
	var want [][]int32
	var early graphView
	var earlyPages int
	for i, n := range sizes {
		links := make([]int32, n)
		for j := range links {
			links[j] = int32(i*31 + j)
		}
		g.add(uint64(i))
		g.fetched(int32(i), links)
		want = append(want, links)
		if i == 3 {
			early, earlyPages = g.view(), i+1
		}
	}
	check := func(v graphView, pages int) {
		t.Helper()
		i := 0
		for p, links := range v.lists {
			if int(p) != i || !slices.Equal(links, want[i]) {
				t.Fatalf("page %d: got node %d with %d links, want %d links", i, p, len(links), len(want[i]))
			}
			i++
		}
		if i != pages {
			t.Fatalf("view yields %d pages, want %d", i, pages)
		}
	}
	check(g.view(), len(sizes))
	check(early, earlyPages)
	total := 0
	for _, n := range sizes {
		total += n
	}
	if g.links != total {
		t.Errorf("links = %d, want %d", g.links, total)
	}
}
