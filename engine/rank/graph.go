// Package rank holds a compact directed graph and computes PageRank on it.
//
// A Graph is stored in compressed sparse row (CSR) form: one offset per node
// and one int32 target per edge, so an edge costs 4 bytes. Graphs are
// immutable once built and safe for concurrent use by multiple goroutines.
package rank

import (
	"errors"
	"fmt"
	"iter"
	"math"
)

// ErrNodeRange reports an edge endpoint outside [0, n).
var ErrNodeRange = errors.New("rank: node out of range")

// ErrBadCSR reports offsets that do not describe a valid CSR layout.
var ErrBadCSR = errors.New("rank: malformed CSR arrays")

// Graph is a directed multigraph on nodes 0..n-1 in CSR form. Parallel edges
// and self-loops are kept as given; PageRank counts each edge once, so a
// page linking twice to the same target gives it twice the share.
//
// The zero Graph has no nodes. A Graph is immutable and safe for concurrent
// use.
type Graph struct {
	offsets []int64 // len n+1; edges of v are targets[offsets[v]:offsets[v+1]]
	targets []int32
}

// NewGraph builds a graph with n nodes from an edge sequence. The sequence is
// iterated twice (once to count out-degrees, once to fill), so it must yield
// the same edges both times; the edges of each node keep their order.
// Building needs no memory beyond the final graph.
func NewGraph(n int, edges iter.Seq2[int32, int32]) (*Graph, error) {
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("rank: node count %d out of range", n)
	}
	offsets := make([]int64, n+1)
	var err error
	for from, to := range edges {
		if from < 0 || int(from) >= n || to < 0 || int(to) >= n {
			err = fmt.Errorf("%w: edge %d->%d with %d nodes", ErrNodeRange, from, to, n)
			break
		}
		offsets[from+1]++
	}
	if err != nil {
		return nil, err
	}
	for v := 1; v <= n; v++ {
		offsets[v] += offsets[v-1]
	}
	targets := make([]int32, offsets[n])
	next := make([]int64, n) // fill cursor per node, relative to offsets
	for from, to := range edges {
		i := offsets[from] + next[from]
		if from < 0 || int(from) >= n || to < 0 || int(to) >= n || i >= offsets[from+1] {
			return nil, fmt.Errorf("rank: edge sequence changed between passes")
		}
		targets[i] = to
		next[from]++
	}
	for v := range n {
		if offsets[v]+next[v] != offsets[v+1] {
			return nil, fmt.Errorf("rank: edge sequence changed between passes")
		}
	}
	return &Graph{offsets: offsets, targets: targets}, nil
}

// FromCSR builds a graph that takes ownership of the given arrays: offsets
// has n+1 non-decreasing entries starting at 0 and ending at len(targets),
// and the out-edges of v are targets[offsets[v]:offsets[v+1]]. The caller
// must not modify the arrays afterwards.
func FromCSR(offsets []int64, targets []int32) (*Graph, error) {
	if len(offsets) == 0 {
		if len(targets) != 0 {
			return nil, fmt.Errorf("%w: no offsets but %d targets", ErrBadCSR, len(targets))
		}
		return &Graph{offsets: []int64{0}}, nil
	}
	n := len(offsets) - 1
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d nodes", ErrBadCSR, n)
	}
	if offsets[0] != 0 || offsets[n] != int64(len(targets)) {
		return nil, fmt.Errorf("%w: offsets span [%d,%d] for %d targets", ErrBadCSR, offsets[0], offsets[n], len(targets))
	}
	for v := range n {
		if offsets[v] > offsets[v+1] {
			return nil, fmt.Errorf("%w: offsets decrease at node %d", ErrBadCSR, v)
		}
	}
	for i, t := range targets {
		if t < 0 || int(t) >= n {
			return nil, fmt.Errorf("%w: target %d at edge %d with %d nodes", ErrNodeRange, t, i, n)
		}
	}
	return &Graph{offsets: offsets, targets: targets}, nil
}

// NumNodes returns the number of nodes.
func (g *Graph) NumNodes() int {
	if len(g.offsets) == 0 {
		return 0
	}
	return len(g.offsets) - 1
}

// NumEdges returns the number of edges.
func (g *Graph) NumEdges() int { return len(g.targets) }

// Out returns the out-neighbours of v in insertion order. The slice aliases
// the graph's storage and must not be modified.
func (g *Graph) Out(v int32) []int32 {
	return g.targets[g.offsets[v]:g.offsets[v+1]:g.offsets[v+1]]
}

// OutDegree returns the number of out-edges of v.
func (g *Graph) OutDegree(v int32) int {
	return int(g.offsets[v+1] - g.offsets[v])
}

// Edges returns all edges in node order, for use with NewGraph or export.
func (g *Graph) Edges() iter.Seq2[int32, int32] {
	return func(yield func(int32, int32) bool) {
		for v := range g.NumNodes() {
			for _, t := range g.targets[g.offsets[v]:g.offsets[v+1]] {
				if !yield(int32(v), t) {
					return
				}
			}
		}
	}
}

// Transpose returns the graph with every edge reversed. The in-edges of each
// node appear in increasing order of source.
func (g *Graph) Transpose() *Graph {
	n := g.NumNodes()
	offsets := make([]int64, n+1)
	for _, t := range g.targets {
		offsets[t+1]++
	}
	for v := 1; v <= n; v++ {
		offsets[v] += offsets[v-1]
	}
	targets := make([]int32, len(g.targets))
	cursor := make([]int64, n)
	copy(cursor, offsets[:n])
	for v := range n {
		for _, t := range g.targets[g.offsets[v]:g.offsets[v+1]] {
			targets[cursor[t]] = int32(v)
			cursor[t]++
		}
	}
	return &Graph{offsets: offsets, targets: targets}
}
