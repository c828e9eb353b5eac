package rank

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// TestLinksChunks checks that every page's links and every node's ID come
// back as recorded when pages fill chunks unevenly, one page needs a chunk
// larger than linkChunk, nodes span several ID chunks (in memory, or
// spilled to disk from the start or once some are full), and a view taken
// earlier is not changed by later appends.
func TestLinksChunks(t *testing.T) {
	for _, spillAt := range []int{-1, 0, 4} {
		t.Run(fmt.Sprintf("spill at page %d", spillAt), func(t *testing.T) { testLinksChunks(t, spillAt) })
	}
}

// testLinksChunks is TestLinksChunks, spilling IDs from page spillAt on
// (never when negative).
func testLinksChunks(t *testing.T, spillAt int) {
	sizes := []int{0, 3, linkChunk/2 - 1, linkChunk / 2, 2, 0, linkChunk + 7, 5, linkChunk, 1, 0}
	var g Links
	defer func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	}()
	var want [][]int32
	var early LinksView
	var earlyPages, earlyNodes int
	for i, n := range sizes {
		if i == spillAt {
			if err := g.Spill(t.TempDir()); err != nil {
				t.Fatal(err)
			}
		}
		links := make([]int32, n)
		for j := range links {
			links[j] = int32(i*31 + j)
		}
		// Enough nodes per page that the IDs fill several chunks.
		var page int32
		for k := range chunkLen/3 + 1 {
			node, err := g.Add(uint64(i)<<32 | uint64(k))
			if err != nil {
				t.Fatal(err)
			}
			if k == 0 {
				page = node
			}
		}
		g.Fetched(page, links)
		want = append(want, links)
		if i == 3 {
			early, earlyPages, earlyNodes = g.View(), i+1, g.Nodes()
		}
	}
	check := func(v LinksView, pages, nodes int) {
		t.Helper()
		i := 0
		var err error
		for p, links := range v.Lists(&err) {
			if int(p) != i*(chunkLen/3+1) || !slices.Equal(links, want[i]) {
				t.Fatalf("page %d: got node %d with %d links, want %d links", i, p, len(links), len(want[i]))
			}
			i++
		}
		if err != nil {
			t.Fatal(err)
		}
		if i != pages || v.Pages() != pages {
			t.Fatalf("view yields %d pages and says %d, want %d", i, v.Pages(), pages)
		}
		if v.Nodes() != nodes {
			t.Fatalf("view has %d nodes, want %d", v.Nodes(), nodes)
		}
		per := chunkLen/3 + 1
		count := 0
		err = v.EachID(func(n int32, id uint64) bool {
			one, err := v.ID(n)
			if wantID := uint64(int(n)/per)<<32 | uint64(int(n)%per); int(n) != count || id != wantID || one != id || err != nil {
				t.Fatalf("node %d (the %dth): ID %x (ID() %x, %v), want %x", n, count, id, one, err, wantID)
			}
			count++
			return true
		})
		if err != nil || count != nodes {
			t.Fatalf("EachID yields %d nodes of %d: %v", count, nodes, err)
		}
	}
	check(g.View(), len(sizes), g.Nodes())
	check(early, earlyPages, earlyNodes)
	if spillAt >= 0 {
		// Only the chunks being filled are in memory.
		if inMemory := g.ids.bytes(8); g.SpillErr() != nil || inMemory > chunkLen*8 {
			t.Errorf("%d bytes of IDs in memory with %d nodes spilled (%v)", inMemory, g.Nodes()/chunkLen*chunkLen, g.SpillErr())
		}
		for k, c := range g.links[:len(g.links)-1] {
			if c != nil {
				t.Errorf("chunk %d of %d of links still in memory", k, len(g.links))
			}
		}
		// Once the files are closed, a view cannot read what was
		// spilled: PageRank says so.
		v := g.View()
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := v.PageRank(Options{}); err == nil {
			t.Error("PageRank over links no longer readable: no error")
		}
	}
	total := 0
	for _, n := range sizes {
		total += n
	}
	if g.NumLinks() != total || g.View().NumLinks() != total {
		t.Errorf("links = %d, want %d", g.NumLinks(), total)
	}
}

// TestLinksPageRankMatchesGraph checks LinksView.PageRank against PageRank
// on the same edges in CSR form, and its coverage against the scores of
// the fetched pages.
func TestLinksPageRankMatchesGraph(t *testing.T) {
	for _, tc := range []struct {
		nodes int
		spill bool
	}{{3000, false}, {150_000, true}} { // 100,000 pages: a chunk of them spilled
		t.Run(fmt.Sprintf("%d nodes, spilled %v", tc.nodes, tc.spill), func(t *testing.T) {
			testLinksPageRankMatchesGraph(t, tc.nodes, tc.spill)
		})
	}
}

func testLinksPageRankMatchesGraph(t *testing.T, n int, spill bool) {
	rng := rand.New(rand.NewPCG(11, 12))
	var g Links
	defer g.Close()
	if spill {
		if err := g.Spill(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		g.Add(uint64(i) * 7919)
	}
	var edges [][2]int32
	fetched := map[int32]bool{}
	for _, p := range rng.Perm(n)[:n*2/3] {
		links := make([]int32, rng.IntN(12))
		for j := range links {
			links[j] = int32(rng.IntN(n))
			edges = append(edges, [2]int32{int32(p), links[j]})
		}
		g.Fetched(int32(p), links)
		fetched[int32(p)] = true
	}
	// Pages are recorded in fetch order, not node order; NewGraph keeps
	// each node's edges together whatever the order of the sequence.
	want, err := PageRank(mustGraph(t, n, edges), Options{Tolerance: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	if spill && (g.pages.c[0] != nil || g.ends.c[0] != nil || g.SpillErr() != nil) {
		t.Fatalf("the first chunk of pages is still in memory (%v)", g.SpillErr())
	}
	got, share, err := g.View().PageRank(Options{Tolerance: 1e-12})
	if err != nil {
		t.Fatal(err)
	}
	wantShare := 0.0
	for v := range n {
		if math.Abs(got.Scores[v]-want.Scores[v]) > 1e-10 {
			t.Fatalf("node %d: %g, want %g", v, got.Scores[v], want.Scores[v])
		}
		if fetched[int32(v)] {
			wantShare += want.Scores[v]
		}
	}
	if math.Abs(share-wantShare) > 1e-9 {
		t.Errorf("coverage %g, want %g", share, wantShare)
	}
}

// crawlLinks builds a Links shaped like the 1,000,000-URL crawl of lidi
// bench crawl: n URLs known, the first fetched of them fetched in discovery
// order, each with about deg links (near the page, to popular pages, or
// anywhere).
func crawlLinks(n, fetched, deg int, seed uint64, spill string) *Links {
	rng := rand.New(rand.NewPCG(seed, 3))
	g := &Links{}
	if spill != "" {
		if err := g.Spill(spill); err != nil {
			panic(err)
		}
	}
	for i := range n {
		g.Add(uint64(i) + 1)
	}
	links := make([]int32, 0, 4*deg)
	for p := range fetched {
		links = links[:0]
		for range rng.IntN(2*deg + 1) {
			var t int
			switch rng.IntN(3) {
			case 0:
				t = min(max(p+rng.IntN(200)-50, 0), n-1)
			case 1:
				t = int(math.Exp(rng.Float64()*math.Log(float64(n)+1))) - 1
			default:
				t = rng.IntN(n)
			}
			links = append(links, int32(t))
		}
		g.Fetched(int32(p), links)
	}
	return g
}

// BenchmarkLinksPageRank1M is one recomputation as a crawl runs it, on a
// Links of 1,000,000 URLs, 820,000 of them fetched, with about 10,000,000
// links: PageRankLists to 1e-7 on one goroutine, cold (uniform start) and
// warm (from the scores before 1% more pages were fetched), the links read
// back from their spill file at every iteration. It ends with a key=value
// line.
func BenchmarkLinksPageRank1M(b *testing.B) {
	const n, fetched = 1_000_000, 820_000
	full := crawlLinks(n, fetched, 12, 1, b.TempDir()) // its chunks spilled, as a crawl's
	defer full.Close()
	before := full.View()
	before.pages.len -= fetched / 100 // the same graph 1% of pages ago
	opt := Options{Tolerance: 1e-7, MaxIter: 200}
	var cold, warm Result
	var coldS, warmS, coldCPU float64
	b.Run("cold", func(b *testing.B) {
		c0 := cpuTime()
		for b.Loop() {
			var err error
			if cold, _, err = full.View().PageRank(opt); err != nil {
				b.Fatal(err)
			}
		}
		coldS = b.Elapsed().Seconds() / float64(b.N)
		coldCPU = (cpuTime() - c0).Seconds() / float64(b.N)
		b.ReportMetric(float64(cold.Iterations), "iterations")
	})
	b.Run("warm", func(b *testing.B) {
		last, _, err := before.PageRank(opt)
		if err != nil {
			b.Fatal(err)
		}
		wopt := opt
		wopt.Start = last.Scores
		for b.Loop() {
			if warm, _, err = full.View().PageRank(wopt); err != nil {
				b.Fatal(err)
			}
		}
		warmS = b.Elapsed().Seconds() / float64(b.N)
		b.ReportMetric(float64(warm.Iterations), "iterations")
	})
	runtime.GC()
	fmt.Printf("pagerank nodes=%d fetched=%d links=%d graph_mb=%.1f cold_s=%.3f cold_cpu_s=%.3f cold_iterations=%d warm_s=%.3f warm_iterations=%d\n",
		full.Nodes(), full.Pages(), full.NumLinks(), float64(full.Bytes())/(1<<20), coldS, coldCPU, cold.Iterations, warmS, warm.Iterations)
}

// TestLinksViewWhileGrowing reads views on other goroutines while the
// graph grows and spills its chunks (run with -race): a view sees exactly
// the pages it was taken with.
func TestLinksViewWhileGrowing(t *testing.T) {
	var g Links
	if err := g.Spill(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	done := make(chan error, 8)
	started := 0
	links := make([]int32, 20) // 2,800,000 links in all: two chunks spilled, and two of pages
	for i := range 140_000 {
		g.Add(uint64(i))
		links[0], links[1] = int32(i/2), int32(i/3)
		g.Fetched(int32(i), links)
		if i%20000 == 19999 {
			v, pages := g.View(), i+1
			started++
			go func() {
				seen := 0
				var err error
				for p, links := range v.Lists(&err) {
					if int(p) != seen || len(links) != 20 || links[0] != p/2 || links[1] != p/3 {
						done <- fmt.Errorf("page %d: node %d links %v", seen, p, links[:min(len(links), 2)])
						return
					}
					seen++
				}
				if err != nil || seen != pages {
					done <- fmt.Errorf("view of %d pages yields %d: %v", pages, seen, err)
					return
				}
				_, _, err = v.PageRank(Options{Tolerance: 1e-6})
				done <- err
			}()
		}
	}
	for range started {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
