package rank

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// edgeList is a test helper that feeds NewGraph from a literal list.
func edgeList(edges [][2]int32) func(yield func(int32, int32) bool) {
	return func(yield func(int32, int32) bool) {
		for _, e := range edges {
			if !yield(e[0], e[1]) {
				return
			}
		}
	}
}

func mustGraph(t testing.TB, n int, edges [][2]int32) *Graph {
	t.Helper()
	g, err := NewGraph(n, edgeList(edges))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestPageRankKnownGraphs(t *testing.T) {
	const d = 0.85
	// Star: leaves 1..3 link to the dangling centre 0. With n=4 and
	// r0 = (1-d)/n + d*r0/n + d*(1-r0):
	star0 := ((1-d)/4 + d) / (1 + d - d/4)
	starLeaf := (1 - star0) / 3
	tests := []struct {
		name  string
		n     int
		edges [][2]int32
		want  []float64
	}{
		{"3-cycle", 3, [][2]int32{{0, 1}, {1, 2}, {2, 0}}, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}},
		// r0 = (1-d)/2 + d*r1/2 and r1 = 1-r0 give r0 = (1-d/2)/(1+d/2) = 0.5/1.425.
		{"two nodes, one dangling", 2, [][2]int32{{0, 1}}, []float64{0.5 / 1.425, 0.925 / 1.425}},
		{"single node", 1, nil, []float64{1}},
		{"self-loop", 1, [][2]int32{{0, 0}}, []float64{1}},
		{"no edges", 4, nil, []float64{0.25, 0.25, 0.25, 0.25}},
		{"star into dangling centre", 4, [][2]int32{{1, 0}, {2, 0}, {3, 0}}, []float64{star0, starLeaf, starLeaf, starLeaf}},
		// Two disjoint 2-cycles: symmetric, so 1/4 each.
		{"two 2-cycles", 4, [][2]int32{{0, 1}, {1, 0}, {2, 3}, {3, 2}}, []float64{0.25, 0.25, 0.25, 0.25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := mustGraph(t, tt.n, tt.edges)
			r, err := PageRank(g, Options{Tolerance: 1e-14})
			if err != nil {
				t.Fatal(err)
			}
			for v, want := range tt.want {
				if math.Abs(r.Scores[v]-want) > 1e-12 {
					t.Errorf("score[%d] = %.15f, want %.15f", v, r.Scores[v], want)
				}
			}
		})
	}
}

// solveExact computes PageRank by Gaussian elimination on the linear system
// r = d*M*r + (d*dangling(r) + 1-d)/n, an independent method from the power
// iteration in PageRank.
func solveExact(n int, edges [][2]int32, d float64) []float64 {
	outdeg := make([]float64, n)
	for _, e := range edges {
		outdeg[e[0]]++
	}
	// A r = b with A = I - d*P^T - d*D/n, where D spreads dangling mass; then
	// normalise. b = (1-d)/n.
	a := make([][]float64, n)
	for i := range a {
		a[i] = make([]float64, n+1)
		a[i][i] = 1
		a[i][n] = (1 - d) / float64(n)
	}
	for _, e := range edges {
		a[e[1]][e[0]] -= d / outdeg[e[0]]
	}
	for j := range n {
		if outdeg[j] == 0 {
			for i := range n {
				a[i][j] -= d / float64(n)
			}
		}
	}
	for col := range n {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		a[col], a[piv] = a[piv], a[col]
		for r := range n {
			if r == col {
				continue
			}
			f := a[r][col] / a[col][col]
			for c := col; c <= n; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	x := make([]float64, n)
	sum := 0.0
	for i := range n {
		x[i] = a[i][n] / a[i][i]
		sum += x[i]
	}
	for i := range x {
		x[i] /= sum
	}
	return x
}

func randomEdges(rng *rand.Rand, n, m int) [][2]int32 {
	edges := make([][2]int32, 0, m)
	for range m {
		from := int32(rng.IntN(n))
		// Leave some nodes dangling and keep self-loops and duplicates.
		if from%5 == 4 {
			continue
		}
		edges = append(edges, [2]int32{from, int32(rng.IntN(n))})
	}
	return edges
}

func TestPageRankMatchesExactSolution(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 2 + rng.IntN(40)
		edges := randomEdges(rng, n, rng.IntN(4*n))
		for _, d := range []float64{0.5, 0.85, 0.95} {
			want := solveExact(n, edges, d)
			r, err := PageRank(mustGraph(t, n, edges), Options{Damping: d, Tolerance: 1e-13})
			if err != nil {
				t.Fatal(err)
			}
			for v := range n {
				if math.Abs(r.Scores[v]-want[v]) > 1e-10 {
					t.Fatalf("trial %d d=%v: score[%d] = %v, exact %v", trial, d, v, r.Scores[v], want[v])
				}
			}
		}
	}
}

// bigGraph builds a graph with a heavy-tailed in-degree, big enough for
// PageRank to use several workers.
func bigGraph(tb testing.TB, n, avgDeg int, seed uint64) *Graph {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	offsets := make([]int64, n+1)
	targets := make([]int32, 0, n*avgDeg)
	for v := range n {
		deg := 0
		if v%10 != 9 { // a tenth of the nodes are dangling
			deg = rng.IntN(2*avgDeg*10/9 + 1)
		}
		for range deg {
			var t int
			switch rng.IntN(3) {
			case 0: // near neighbour, like a link inside one site
				t = v + rng.IntN(64) - 32
				t = min(max(t, 0), n-1)
			case 1: // Zipf-like popularity: low ids are popular
				t = int(math.Exp(rng.Float64()*math.Log(float64(n)+1))) - 1
			default:
				t = rng.IntN(n)
			}
			targets = append(targets, int32(t))
		}
		offsets[v+1] = int64(len(targets))
	}
	g, err := FromCSR(offsets, targets)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

func TestPageRankSumsToOneAndIgnoresWorkerCount(t *testing.T) {
	g := bigGraph(t, 60_000, 8, 3)
	var first Result
	for i, w := range []int{1, 2, 5} {
		r, err := PageRank(g, Options{Workers: w})
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, x := range r.Scores {
			if !(x > 0) {
				t.Fatalf("non-positive score %v", x)
			}
			sum += x
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("workers=%d: scores sum to %.15f", w, sum)
		}
		if r.Residual >= DefaultTolerance {
			t.Errorf("residual %v not under tolerance", r.Residual)
		}
		if i == 0 {
			first = r
			continue
		}
		if r.Iterations != first.Iterations || !slices.Equal(r.Scores, first.Scores) {
			t.Errorf("workers=%d gives a different result than workers=1", w)
		}
	}
}

func TestPageRankWarmStartConvergesFaster(t *testing.T) {
	g := bigGraph(t, 60_000, 8, 4)
	cold, err := PageRank(g, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Perturb the graph slightly: add a few edges, as a growing crawl would.
	var edges [][2]int32
	for from, to := range g.Edges() {
		edges = append(edges, [2]int32{from, to})
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for range 300 {
		edges = append(edges, [2]int32{int32(rng.IntN(60_000)), int32(rng.IntN(60_000))})
	}
	slices.SortStableFunc(edges, func(a, b [2]int32) int { return int(a[0] - b[0]) })
	g2 := mustGraph(t, 60_000, edges)
	fresh, err := PageRank(g2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	warm, err := PageRank(g2, Options{Start: cold.Scores})
	if err != nil {
		t.Fatal(err)
	}
	if warm.Iterations >= fresh.Iterations {
		t.Errorf("warm start took %d iterations, cold start %d", warm.Iterations, fresh.Iterations)
	}
	l1 := 0.0
	for v := range warm.Scores {
		l1 += math.Abs(warm.Scores[v] - fresh.Scores[v])
	}
	if l1 > 1e-8 {
		t.Errorf("warm and cold results differ by %v in L1", l1)
	}
	t.Logf("cold %d iterations, warm %d", fresh.Iterations, warm.Iterations)
}

// TestPageRankShortStart checks that a warm start shorter than the graph
// (the scores of the graph before it grew) starts the new nodes at 1/n.
func TestPageRankShortStart(t *testing.T) {
	g := mustGraph(t, 4, [][2]int32{{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 1}})
	start := []float64{0.5, 0.2, 0.1}
	long := append(slices.Clone(start), 0.25)
	for _, maxIter := range []int{1, 0} {
		a, errA := PageRank(g, Options{Start: start, MaxIter: maxIter})
		b, errB := PageRank(g, Options{Start: long, MaxIter: maxIter})
		if (errA == nil) != (errB == nil) || !slices.Equal(a.Scores, b.Scores) {
			t.Errorf("MaxIter %d: short start %v (%v), extended %v (%v)", maxIter, a.Scores, errA, b.Scores, errB)
		}
	}
	if len(start) != 3 || start[0] != 0.5 {
		t.Errorf("start modified: %v", start)
	}
}

func TestPageRankErrors(t *testing.T) {
	g := mustGraph(t, 3, [][2]int32{{0, 1}, {1, 2}})
	tests := []struct {
		name string
		opt  Options
	}{
		{"damping 1", Options{Damping: 1}},
		{"negative damping", Options{Damping: -0.5}},
		{"negative tolerance", Options{Tolerance: -1}},
		{"negative MaxIter", Options{MaxIter: -1}},
		{"long start", Options{Start: []float64{1, 1, 1, 1}}},
		{"negative short start", Options{Start: []float64{-1}}},
		{"negative start", Options{Start: []float64{1, -1, 1}}},
		{"NaN start", Options{Start: []float64{1, math.NaN(), 1}}},
		{"zero start", Options{Start: []float64{0, 0, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := PageRank(g, tt.opt); err == nil {
				t.Error("no error")
			}
		})
	}
	r, err := PageRank(g, Options{MaxIter: 2})
	if !errors.Is(err, ErrNotConverged) {
		t.Fatalf("MaxIter 2: err = %v, want ErrNotConverged", err)
	}
	if r.Iterations != 2 || len(r.Scores) != 3 {
		t.Errorf("non-converged result: %d iterations, %d scores", r.Iterations, len(r.Scores))
	}
	r, err = PageRank(&Graph{}, Options{})
	if err != nil || len(r.Scores) != 0 {
		t.Errorf("empty graph: %v, %v", r, err)
	}
}

func TestGraphConstruction(t *testing.T) {
	edges := [][2]int32{{0, 2}, {2, 1}, {0, 1}, {2, 2}, {0, 2}}
	g := mustGraph(t, 4, edges)
	if g.NumNodes() != 4 || g.NumEdges() != 5 {
		t.Fatalf("got %d nodes %d edges", g.NumNodes(), g.NumEdges())
	}
	wantOut := [][]int32{{2, 1, 2}, nil, {1, 2}, nil}
	for v, want := range wantOut {
		if got := g.Out(int32(v)); !slices.Equal(got, want) || g.OutDegree(int32(v)) != len(want) {
			t.Errorf("Out(%d) = %v, want %v", v, got, want)
		}
	}
	tr := g.Transpose()
	wantIn := [][]int32{nil, {0, 2}, {0, 0, 2}, nil}
	for v, want := range wantIn {
		if got := tr.Out(int32(v)); !slices.Equal(got, want) {
			t.Errorf("transpose Out(%d) = %v, want %v", v, got, want)
		}
	}
	same, err := FromCSR([]int64{0, 3, 3, 5, 5}, []int32{2, 1, 2, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	var a, b [][2]int32
	for f, to := range g.Edges() {
		a = append(a, [2]int32{f, to})
	}
	for f, to := range same.Edges() {
		b = append(b, [2]int32{f, to})
	}
	if !slices.Equal(a, b) {
		t.Errorf("NewGraph edges %v, FromCSR edges %v", a, b)
	}

	bad := []struct {
		name    string
		offsets []int64
		targets []int32
	}{
		{"offsets not starting at 0", []int64{1, 2}, []int32{0, 0}},
		{"offsets short of targets", []int64{0, 1}, []int32{0, 0}},
		{"decreasing offsets", []int64{0, 2, 1, 2}, []int32{0, 0}},
		{"target out of range", []int64{0, 1}, []int32{1}},
		{"negative target", []int64{0, 1}, []int32{-1}},
		{"targets without offsets", nil, []int32{0}},
	}
	for _, tt := range bad {
		if _, err := FromCSR(tt.offsets, tt.targets); err == nil {
			t.Errorf("FromCSR %s: no error", tt.name)
		}
	}
	if _, err := NewGraph(2, edgeList([][2]int32{{0, 2}})); !errors.Is(err, ErrNodeRange) {
		t.Errorf("NewGraph out of range: err = %v", err)
	}
	calls := 0
	unstable := func(yield func(int32, int32) bool) {
		calls++
		for range calls {
			if !yield(0, 1) {
				return
			}
		}
	}
	if _, err := NewGraph(2, unstable); err == nil {
		t.Error("NewGraph accepted a sequence that changed between passes")
	}
}

func TestPageRankListsMatchesPageRank(t *testing.T) {
	g := bigGraph(t, 20_000, 6, 7)
	// Against PageRank converged far past the default tolerance:
	// PageRankLists extrapolates, so it does not follow the same path.
	want, err := PageRank(g, Options{Tolerance: 1e-13})
	if err != nil {
		t.Fatal(err)
	}
	// The lists in another order than the nodes', one node split in two,
	// one listed first without links (a page recorded twice), one
	// without links listed twice.
	lists := func(yield func(int32, []int32) bool) {
		for v := int32(g.NumNodes()) - 1; v >= 0; v-- {
			out := g.Out(v)
			if v == 3 && len(out) > 1 {
				if !yield(v, out[:1]) || !yield(v, out[1:]) {
					return
				}
				continue
			}
			if v == 5 && !yield(v, nil) {
				return
			}
			if len(out) == 0 && v%1000 == 0 && (!yield(v, nil) || !yield(v, nil)) {
				return
			}
			if len(out) > 0 && !yield(v, out) {
				return
			}
		}
	}
	got, err := PageRankLists(g.NumNodes(), lists, Options{})
	if err != nil {
		t.Fatal(err)
	}
	l1 := 0.0
	for v := range want.Scores {
		l1 += math.Abs(got.Scores[v] - want.Scores[v])
	}
	if l1 > 1e-8 {
		t.Errorf("PageRankLists differs from PageRank by %v in L1", l1)
	}
	warm, err := PageRankLists(g.NumNodes(), lists, Options{Start: want.Scores})
	if err != nil || warm.Iterations >= got.Iterations {
		t.Errorf("warm start: %d iterations (cold %d), %v", warm.Iterations, got.Iterations, err)
	}
	// The same warm start in single precision, short of the last nodes
	// (a graph grown since): the same answer as from its float64 copy.
	short := make([]float32, len(want.Scores)-100)
	wide := make([]float64, len(short))
	for v := range short {
		short[v] = float32(want.Scores[v])
		wide[v] = float64(short[v])
	}
	w32, err32 := PageRankLists(g.NumNodes(), lists, Options{Start32: short})
	w64, err64 := PageRankLists(g.NumNodes(), lists, Options{Start: wide})
	if err32 != nil || err64 != nil || w32.Iterations != w64.Iterations || !slices.Equal(w32.Scores, w64.Scores) {
		t.Errorf("Start32: %d iterations, %v; Start: %d iterations, %v; scores equal %v",
			w32.Iterations, err32, w64.Iterations, err64, slices.Equal(w32.Scores, w64.Scores))
	}
	for _, tc := range []struct {
		name  string
		n     int
		lists func(func(int32, []int32) bool)
		opt   Options
	}{
		{"source out of range", 2, func(y func(int32, []int32) bool) { y(2, nil) }, Options{}},
		{"target out of range", 2, func(y func(int32, []int32) bool) { y(0, []int32{5}) }, Options{}},
		{"bad damping", 2, lists, Options{Damping: 1}},
		{"long warm start", 2, func(func(int32, []int32) bool) {}, Options{Start: []float64{1, 1, 1}}},
		{"long warm start32", 2, func(func(int32, []int32) bool) {}, Options{Start32: []float32{1, 1, 1}}},
		{"negative warm start32", 2, func(func(int32, []int32) bool) {}, Options{Start32: []float32{1, -1}}},
	} {
		if _, err := PageRankLists(tc.n, tc.lists, tc.opt); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	if r, err := PageRankLists(0, lists, Options{}); err != nil || len(r.Scores) != 0 {
		t.Errorf("empty graph: %v %v", r, err)
	}
}

// TestPageRankListsExtrapolation checks what power extrapolation buys: to
// a residual of 1e-7, plain power iteration stops about 5e-7 (in L1) from
// the true PageRank, residual·d/(1-d); PageRankLists, extrapolating, stops
// closer than 1e-7, on a periodic graph too (where ±d are not the only
// second eigenvalues and its check must stop extrapolating if it hurts).
func TestPageRankListsExtrapolation(t *testing.T) {
	ring := make([][2]int32, 0, 1100)
	for v := range int32(999) {
		ring = append(ring, [2]int32{v, (v + 1) % 999})
		if v%10 == 5 {
			ring = append(ring, [2]int32{v, 0}) // shortcuts: scores not uniform
		}
	}
	for _, tc := range []struct {
		name string
		g    *Graph
	}{
		{"crawl-like", bigGraph(t, 20_000, 6, 9)},
		{"ring of 999 with shortcuts", mustGraph(t, 999, ring)},
	} {
		exact, err := PageRank(tc.g, Options{Tolerance: 1e-14})
		if err != nil {
			t.Fatal(err)
		}
		lists := func(yield func(int32, []int32) bool) {
			for v := range int32(tc.g.NumNodes()) {
				if !yield(v, tc.g.Out(v)) {
					return
				}
			}
		}
		got, err := PageRankLists(tc.g.NumNodes(), lists, Options{Tolerance: 1e-7})
		if err != nil {
			t.Fatal(err)
		}
		l1 := 0.0
		for v := range exact.Scores {
			l1 += math.Abs(got.Scores[v] - exact.Scores[v])
		}
		t.Logf("%s: %d iterations, %.3g from the true PageRank", tc.name, got.Iterations, l1)
		if l1 > 1e-7 {
			t.Errorf("%s: %.3g from the true PageRank after %d iterations, want under 1e-7", tc.name, l1, got.Iterations)
		}
	}
}
