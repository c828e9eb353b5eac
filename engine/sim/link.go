package sim

import (
	"cmp"
	"math"
	"slices"
)

// link is the crawler's Internet link: transfers in progress share its
// bandwidth B max-min fairly (water-filling), each also capped by its
// site's bandwidth, as TCP flows roughly do. Rates change only when a
// transfer starts or ends, so between two such events every transfer
// progresses at a constant rate.
type link struct {
	bandwidth float64    // B in bytes per second; +Inf when unlimited
	xs        []transfer // sorted by cap, then by seq
	last      int64      // virtual time (ns) the remaining counts are at
	seq       uint64
	peak      int        // most transfers at once
	done      []transfer // scratch for takeDone
}

type transfer struct {
	conn      int32
	seq       uint64
	remaining float64 // bytes
	cap       float64 // the site's bandwidth; +Inf when unlimited
	rate      float64 // current rate in bytes per second
}

// doneEpsilon is how close to zero a transfer's remaining bytes must be to
// count as finished: completion times are rounded up to the nanosecond, so
// what remains is a rounding error.
const doneEpsilon = 1e-3

func newLink(bandwidth int64) link {
	l := link{bandwidth: math.Inf(1)}
	if bandwidth > 0 {
		l.bandwidth = float64(bandwidth)
	}
	return l
}

// instant reports whether a transfer of size bytes at a site of bandwidth
// capBW takes no time at all: nothing limits it.
func (l *link) instant(size int, capBW float64) bool {
	return size <= 0 || (math.IsInf(capBW, 1) && math.IsInf(l.bandwidth, 1))
}

// advance moves every transfer forward to now.
func (l *link) advance(now int64) {
	if now == l.last {
		return
	}
	dt := float64(now-l.last) / 1e9
	for i := range l.xs {
		l.xs[i].remaining -= l.xs[i].rate * dt
	}
	l.last = now
}

// add starts a transfer at now (after advance(now)).
func (l *link) add(conn int32, size int, capBW float64) {
	l.seq++
	t := transfer{conn: conn, seq: l.seq, remaining: float64(size), cap: capBW}
	i, _ := slices.BinarySearchFunc(l.xs, t, func(a, b transfer) int {
		switch {
		case a.cap < b.cap:
			return -1
		case a.cap > b.cap:
			return 1
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	l.xs = slices.Insert(l.xs, i, t)
	l.peak = max(l.peak, len(l.xs))
	l.share()
}

// takeDone removes the finished transfers (after advance) and appends their
// connections to dst in the order the transfers started.
func (l *link) takeDone(dst []int32) []int32 {
	l.done = l.done[:0]
	k := 0
	for _, t := range l.xs {
		if t.remaining <= doneEpsilon {
			l.done = append(l.done, t)
			continue
		}
		l.xs[k] = t
		k++
	}
	if len(l.done) == 0 {
		return dst
	}
	l.xs = l.xs[:k]
	slices.SortFunc(l.done, func(a, b transfer) int { return cmp.Compare(a.seq, b.seq) })
	for _, t := range l.done {
		dst = append(dst, t.conn)
	}
	l.share()
	return dst
}

// share gives every transfer its max-min fair rate: transfers whose site is
// slower than the fair share run at the site's speed, and the others split
// what is left equally.
func (l *link) share() {
	if math.IsInf(l.bandwidth, 1) {
		for i := range l.xs {
			l.xs[i].rate = l.xs[i].cap
		}
		return
	}
	left := l.bandwidth
	for i := range l.xs {
		fair := left / float64(len(l.xs)-i)
		if l.xs[i].cap <= fair {
			l.xs[i].rate = l.xs[i].cap
			left -= l.xs[i].cap
			continue
		}
		for j := i; j < len(l.xs); j++ {
			l.xs[j].rate = fair
		}
		return
	}
}

// next returns when the first transfer in progress ends, rounded up to the
// nanosecond; ok is false when none is in progress.
func (l *link) next() (at int64, ok bool) {
	if len(l.xs) == 0 {
		return 0, false
	}
	best := math.Inf(1)
	for i := range l.xs {
		if d := l.xs[i].remaining / l.xs[i].rate; d < best {
			best = d
		}
	}
	ns := math.Ceil(max(best, 0) * 1e9)
	return l.last + int64(ns), true
}
