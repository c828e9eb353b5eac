package rank

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
)

// ErrNotConverged is returned with the last iterate when PageRank reaches
// Options.MaxIter before the residual falls under Options.Tolerance.
var ErrNotConverged = errors.New("rank: pagerank did not converge")

// Defaults used when the corresponding Options field is zero.
const (
	DefaultDamping   = 0.85
	DefaultTolerance = 1e-9
	DefaultMaxIter   = 1000
)

// Options tunes PageRank. The zero value computes the classic PageRank with
// damping 0.85 from a uniform start to an L1 residual under 1e-9.
type Options struct {
	// Damping is the probability of following a link; it must lie in (0, 1).
	// Zero means DefaultDamping.
	Damping float64
	// Tolerance stops the iteration once the L1 distance between two
	// successive iterates falls below it. Zero means DefaultTolerance.
	Tolerance float64
	// MaxIter bounds the number of iterations. Zero means DefaultMaxIter.
	MaxIter int
	// Start, if not nil, is a warm start (for example the scores of a
	// previous, slightly different graph). Its entries must be
	// non-negative with a positive sum; it is normalised, not modified. It
	// may be shorter than the graph, as the scores of a graph that has
	// since grown are: the nodes beyond it start at 1/n.
	Start []float64
	// Start32 is a warm start kept in single precision, as a crawl keeps
	// the last scores between two recomputations (half the memory); it
	// is used when Start is nil, alike.
	Start32 []float32
	// Workers is the number of goroutines; zero means GOMAXPROCS. The
	// result does not depend on it.
	Workers int
}

// Result is the outcome of PageRank.
type Result struct {
	// Scores holds one score per node; the scores sum to 1.
	Scores []float64
	// Iterations is the number of power iterations done.
	Iterations int
	// Residual is the L1 distance between the last two iterates.
	Residual float64
}

// chunkCount fixes how the nodes are split for the parallel sums. Partial
// sums are always added in chunk order, so the result is bit-for-bit the same
// whatever the number of workers.
const chunkCount = 64

// PageRankLists is PageRank over a graph of n nodes given as the out-links
// of each node that has any: lists calls yield(from, targets) for them (a
// node may come more than once; its lists are one). It builds no other form
// of the graph: where PageRank pulls along a transposed copy with several
// goroutines, PageRankLists pushes each node's share along its own lists on
// the calling goroutine, and needs only two float64 and a float32 per node
// (and a few bits: a node's out-degree is the length of its list, but for
// a node that comes more than once, kept aside).
// A crawler that keeps its link graph as lists uses it to recompute
// PageRank in the background without doubling the graph's memory or taking
// every core. lists must yield the same lists each time it is called (once
// per iteration, and once to count out-degrees). Options.Workers is
// ignored. Every ten iterations it extrapolates (powerExtrapolate), which
// halves the iterations a crawl graph needs and stops nearer the true
// PageRank than power iteration does at the same residual.
func PageRankLists(n int, lists func(yield func(from int32, to []int32) bool), opt Options) (Result, error) {
	d, tol, maxIter, err := opt.check()
	if err != nil {
		return Result{}, err
	}
	if n < 0 || n > math.MaxInt32 {
		return Result{}, fmt.Errorf("rank: node count %d out of range", n)
	}
	if n == 0 {
		return Result{Scores: []float64{}}, nil
	}
	var deg outDegrees
	deg.out = make([]uint64, (n+63)/64)
	listed := make([]uint64, (n+63)/64) // nodes met so far as a list's source
	var bad error
	lists(func(from int32, to []int32) bool {
		if from < 0 || int(from) >= n {
			bad = fmt.Errorf("%w: source %d with %d nodes", ErrNodeRange, from, n)
			return false
		}
		for _, t := range to {
			if t < 0 || int(t) >= n {
				bad = fmt.Errorf("%w: edge %d->%d with %d nodes", ErrNodeRange, from, t, n)
				return false
			}
		}
		if hasBit(listed, from) {
			if deg.multi == nil {
				deg.multi = make([]uint64, (n+63)/64)
			}
			setBit(deg.multi, from)
		}
		setBit(listed, from)
		if len(to) > 0 {
			setBit(deg.out, from)
		}
		return true
	})
	if bad != nil {
		return Result{}, bad
	}
	listed = nil
	if deg.multi != nil {
		deg.sum = make(map[int32]int32)
		lists(func(from int32, to []int32) bool {
			if hasBit(deg.multi, from) {
				deg.sum[from] += int32(len(to))
			}
			return true
		})
	}
	// A node's score is base + acc[v]: acc holds the shares pushed along
	// links, base the teleport share plus the dangling nodes' mass spread
	// evenly. One pass over the nodes per iteration then takes the
	// residual, the dangling mass for the next iteration and clears the
	// array the next push fills.
	acc, err := opt.start(n)
	if err != nil {
		return Result{}, err
	}
	next := make([]float64, n)
	base, dangling := 0.0, 0.0
	for v := range n {
		if deg.dangling(v) {
			dangling += acc[v]
		}
	}
	var res float64
	// Power extrapolation, every extrapolateEvery iterations while it
	// helps: prev2 is the iterate two before, extrapolated the residual
	// just before the last extrapolation (0: none pending a check).
	extrapolate := true
	var prev2 []float32 // single precision: it only steers the extrapolation, and costs half
	var extrapolated float64
	iter := 0
	for iter < maxIter {
		nextBase := (1-d)/float64(n) + d*dangling/float64(n)
		lists(func(from int32, to []int32) bool {
			if len(to) > 0 {
				share := d * (base + acc[from]) / float64(deg.of(from, len(to)))
				for _, t := range to {
					next[t] += share
				}
			}
			return true
		})
		res, dangling = 0, 0
		for v := range n {
			x := nextBase + next[v]
			res += math.Abs(x - (base + acc[v]))
			if deg.dangling(v) {
				dangling += x
			}
			acc[v] = 0
		}
		acc, next, base = next, acc, nextBase
		iter++
		if res < tol {
			break
		}
		switch {
		case extrapolated > 0 && res > extrapolated:
			extrapolate = false // it set the iteration back: not this graph
		case extrapolate && iter%extrapolateEvery == extrapolateEvery-2:
			if prev2 == nil {
				prev2 = make([]float32, n)
			}
			for v, a := range acc {
				prev2[v] = float32(base + a)
			}
		case extrapolate && iter%extrapolateEvery == 0 && prev2 != nil:
			base, dangling = 0, powerExtrapolate(acc, prev2, base, d, &deg)
			extrapolated = res
			continue
		}
		extrapolated = 0
	}
	for v := range acc {
		acc[v] += base
	}
	return result(acc, iter, res, tol)
}

// extrapolateEvery spaces PageRankLists's power extrapolations.
const extrapolateEvery = 10

// powerExtrapolate replaces the iterate base+acc by its A² power
// extrapolation from the iterate two steps before, prev2 (Kamvar,
// Haveliwala, Manning and Golub, "Extrapolation methods for accelerating
// PageRank computations", WWW 2003): the error of power iteration lies
// mostly along the eigenvectors of the eigenvalues d and -d (a web graph's
// second eigenvalues), which x - d²·x₂ cancels. Negative entries are
// clamped and the result normalised, so it stays a distribution; acc then
// holds the whole score. It returns the mass on dangling nodes.
// On the 1,000,000-URL crawl graph it halves the iterations to a residual
// of 1e-7 and leaves a twentieth of the error.
func powerExtrapolate(acc []float64, prev2 []float32, base, d float64, deg *outDegrees) float64 {
	d2 := d * d
	sum := 0.0
	for v, a := range acc {
		x := max((base+a-d2*float64(prev2[v]))/(1-d2), 0)
		acc[v] = x
		sum += x
	}
	dangling := 0.0
	for v := range acc {
		acc[v] /= sum
		if deg.dangling(v) {
			dangling += acc[v]
		}
	}
	return dangling
}

// outDegrees are the out-degrees of PageRankLists's nodes, in a few bits a
// node where an int32 each took 4 bytes: a node's degree is the length of
// its list, but for the nodes that come more than once, whose degrees are
// kept aside.
type outDegrees struct {
	out   []uint64        // bit v: node v has out-links
	multi []uint64        // bit v: node v comes in more than one list (nil: none does)
	sum   map[int32]int32 // the out-degrees of those nodes
}

// of returns the out-degree of node from, one of whose lists has n links.
func (o *outDegrees) of(from int32, n int) int {
	if o.multi != nil && hasBit(o.multi, from) {
		return int(o.sum[from])
	}
	return n
}

// dangling reports whether node v has no out-links.
func (o *outDegrees) dangling(v int) bool { return o.out[v/64]&(1<<(v%64)) == 0 }

func hasBit(b []uint64, v int32) bool { return b[v/64]&(1<<(v%64)) != 0 }
func setBit(b []uint64, v int32)      { b[v/64] |= 1 << (v % 64) }

// result normalises the last iterate (rounding drifts its sum) and reports
// whether it converged.
func result(rank []float64, iter int, res, tol float64) (Result, error) {
	sum := 0.0
	for _, x := range rank {
		sum += x
	}
	for v := range rank {
		rank[v] /= sum
	}
	r := Result{Scores: rank, Iterations: iter, Residual: res}
	if !(res < tol) {
		return r, fmt.Errorf("%w: residual %.3g after %d iterations", ErrNotConverged, res, iter)
	}
	return r, nil
}

// check returns the damping, tolerance and iteration bound opt asks for.
func (opt Options) check() (d, tol float64, maxIter int, err error) {
	d = opt.Damping
	if d == 0 {
		d = DefaultDamping
	}
	if !(d > 0 && d < 1) {
		return 0, 0, 0, fmt.Errorf("rank: damping %v outside (0,1)", d)
	}
	tol = opt.Tolerance
	if tol == 0 {
		tol = DefaultTolerance
	}
	if !(tol > 0) {
		return 0, 0, 0, fmt.Errorf("rank: tolerance %v not positive", tol)
	}
	maxIter = opt.MaxIter
	if maxIter == 0 {
		maxIter = DefaultMaxIter
	}
	if maxIter < 0 {
		return 0, 0, 0, fmt.Errorf("rank: negative MaxIter %d", maxIter)
	}
	return d, tol, maxIter, nil
}

// start returns the first iterate: opt.Start (or Start32) normalised, or
// uniform.
func (opt Options) start(n int) ([]float64, error) {
	rank := make([]float64, n)
	given := len(opt.Start)
	switch {
	case opt.Start != nil:
		copy(rank[:min(given, n)], opt.Start)
	case opt.Start32 != nil:
		given = len(opt.Start32)
		for v, x := range opt.Start32[:min(given, n)] {
			rank[v] = float64(x)
		}
	default:
		for v := range rank {
			rank[v] = 1 / float64(n)
		}
		return rank, nil
	}
	if given > n {
		return nil, fmt.Errorf("rank: warm start has %d entries for %d nodes", given, n)
	}
	for v := given; v < n; v++ {
		rank[v] = 1 / float64(n)
	}
	sum := 0.0
	for v, x := range rank {
		if !(x >= 0) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("rank: warm start entry %d is %v", v, x)
		}
		sum += x
	}
	if !(sum > 0) || math.IsInf(sum, 0) {
		return nil, fmt.Errorf("rank: warm start sums to %v", sum)
	}
	for v := range rank {
		rank[v] /= sum
	}
	return rank, nil
}

// PageRank computes the PageRank of g by power iteration on the in-edge
// (transposed) graph. A random surfer follows one of the current page's
// out-links with probability Damping and jumps to a uniformly chosen page
// otherwise; from a page without out-links (dangling) it always jumps, so
// that page's score is spread uniformly over all pages. Each edge counts:
// a page with two edges to the same target gives it two shares.
//
// PageRank allocates the transposed graph (4 bytes per edge) plus five
// float64 arrays of one entry per node. It is safe to call concurrently.
func PageRank(g *Graph, opt Options) (Result, error) {
	d, tol, maxIter, err := opt.check()
	if err != nil {
		return Result{}, err
	}
	n := g.NumNodes()
	if n == 0 {
		return Result{Scores: []float64{}}, nil
	}
	rank, err := opt.start(n)
	if err != nil {
		return Result{}, err
	}
	in := g.Transpose()
	inv := make([]float64, n) // 1/outdegree, 0 for dangling nodes
	contrib := make([]float64, n)
	dangling := 0.0
	for v := range n {
		if deg := g.OutDegree(int32(v)); deg > 0 {
			inv[v] = 1 / float64(deg)
			contrib[v] = rank[v] * inv[v]
		} else {
			dangling += rank[v]
		}
	}
	next := make([]float64, n)
	nextContrib := make([]float64, n)

	bounds := splitByWork(in, chunkCount)
	chunks := len(bounds) - 1
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > chunks {
		workers = chunks
	}
	if int64(n)+int64(in.NumEdges()) < 50_000 {
		workers = 1 // goroutine hand-off costs more than the work
	}
	partRes := make([]float64, chunks)
	partDang := make([]float64, chunks)

	step := func(c int, base float64) {
		res, dang := 0.0, 0.0
		for v := bounds[c]; v < bounds[c+1]; v++ {
			x := base + d*gather(contrib, in.targets[in.offsets[v]:in.offsets[v+1]])
			next[v] = x
			res += math.Abs(x - rank[v])
			if w := inv[v]; w != 0 {
				nextContrib[v] = x * w
			} else {
				nextContrib[v] = 0
				dang += x
			}
		}
		partRes[c], partDang[c] = res, dang
	}

	var res float64
	iter := 0
	for iter < maxIter {
		// Every node gets the teleport share plus its share of the mass
		// that sat on dangling nodes, which jumps uniformly.
		base := (1-d)/float64(n) + d*dangling/float64(n)
		if workers == 1 {
			for c := range chunks {
				step(c, base)
			}
		} else {
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for c := w; c < chunks; c += workers {
						step(c, base)
					}
				})
			}
			wg.Wait()
		}
		res, dangling = 0, 0
		for c := range chunks {
			res += partRes[c]
			dangling += partDang[c]
		}
		rank, next = next, rank
		contrib, nextContrib = nextContrib, contrib
		iter++
		if res < tol {
			break
		}
	}
	return result(rank, iter, res, tol)
}

// splitByWork cuts the node range into at most k contiguous chunks of about
// equal work, counting one unit per node and one per in-edge.
func splitByWork(in *Graph, k int) []int32 {
	n := in.NumNodes()
	total := int64(n) + int64(in.NumEdges())
	bounds := []int32{0}
	v := 0
	for c := 1; c < k && v < n; c++ {
		goal := total * int64(c) / int64(k)
		for v < n && int64(v)+in.offsets[v] < goal {
			v++
		}
		if int32(v) > bounds[len(bounds)-1] {
			bounds = append(bounds, int32(v))
		}
	}
	if bounds[len(bounds)-1] != int32(n) {
		bounds = append(bounds, int32(n))
	}
	return bounds
}

// gather returns the sum of contrib over the sources. Four independent
// accumulators let the loads overlap instead of waiting on one chain of
// additions.
func gather(contrib []float64, sources []int32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(sources); i += 4 {
		s0 += contrib[sources[i]]
		s1 += contrib[sources[i+1]]
		s2 += contrib[sources[i+2]]
		s3 += contrib[sources[i+3]]
	}
	for ; i < len(sources); i++ {
		s0 += contrib[sources[i]]
	}
	return (s0 + s1) + (s2 + s3)
}
