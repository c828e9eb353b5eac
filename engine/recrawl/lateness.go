package recrawl

import (
	"math"
	"time"
)

// Lateness measures how far from their plan a Planner's recrawls were
// fetched, and how many went to pages still warming up. Its counts and
// sums run from the Planner's start, so that the difference of two
// snapshots (Sub) measures the time between them. The zero value counts
// nothing.
type Lateness struct {
	// Released are the pages the plan released (Due), and Warm those of
	// them whose channel was still warming up.
	Released, Warm int
	// Early are the released pages a full site's free turn took ahead of
	// their time (Planner.Early).
	Early int
	// Fetched are the released pages visited since. Pace sums the time
	// each waited in the plan for its site's turn (released − planned, 0
	// for a page released early into a turn near its time), Queue the time
	// from its release to its fetch (the crawl's queues, a robot), and
	// OfInterval |fetched − planned| as a share of the page's planned
	// interval.
	Fetched     int
	Pace, Queue time.Duration
	OfInterval  float64
	// Buckets count the fetched by |fetched − planned| as a share of the
	// planned interval: below LateBounds[i] in Buckets[i], the rest in the
	// last.
	Buckets [len(LateBounds) + 1]int
}

// LateBounds are the upper bounds of Lateness.Buckets.
var LateBounds = [...]float64{0.05, 0.1, 0.25, 0.5, 1}

// add counts a visit planned at due, released at released and fetched at
// fetched, of a page planned every interval.
func (l *Lateness) add(due, released, fetched time.Time, interval time.Duration) {
	l.Fetched++
	l.Pace += max(released.Sub(due), 0)
	l.Queue += max(fetched.Sub(released), 0)
	share := 0.0
	if interval > 0 {
		share = math.Abs(float64(fetched.Sub(due))) / float64(interval)
	}
	l.OfInterval += share
	b := 0
	for b < len(LateBounds) && share >= LateBounds[b] {
		b++
	}
	l.Buckets[b]++
}

// Over returns the share of the fetched whose |fetched − planned| was at
// least LateBounds[i] of their interval.
func (l Lateness) Over(i int) float64 {
	if l.Fetched == 0 {
		return math.NaN()
	}
	n := 0
	for _, c := range l.Buckets[i+1:] {
		n += c
	}
	return float64(n) / float64(l.Fetched)
}

// Sub returns what l counted since the earlier snapshot o.
func (l Lateness) Sub(o Lateness) Lateness {
	d := Lateness{Released: l.Released - o.Released, Warm: l.Warm - o.Warm, Early: l.Early - o.Early, Fetched: l.Fetched - o.Fetched,
		Pace: l.Pace - o.Pace, Queue: l.Queue - o.Queue, OfInterval: l.OfInterval - o.OfInterval}
	for i := range d.Buckets {
		d.Buckets[i] = l.Buckets[i] - o.Buckets[i]
	}
	return d
}
