package engine

import "time"

// RecrawlStats is the recrawl state in a Stats snapshot.
type RecrawlStats struct {
	Policy   string // recrawl.policy
	Now      time.Time
	Channels int // channels known
	Copies   int // URLs with a copy to recrawl
	// WarmupEnds is when the warm-up ends (by the recrawl clock): the
	// channels are recrawled every recrawl.initial_interval until then,
	// and grouped after. Zero once the policy runs.
	WarmupEnds time.Time

	Tasks, Done, Dropped int // recrawl tasks started, finished, and dropped (busy, empty or past their deadline); PerPage: pages requeued, and recrawled
	Found                int // new pages the tasks fetched
	InterSite            int // inter-site URLs recorded: links into channels other than their page's, seeds of those channels' tasks
	Filtered, Bounded    int // links the tasks refused: by their filters; by their maximum depth or page limit

	// PerPage is set for a policy that schedules pages rather than
	// channels (pages): it has no tasks, reassignments or success rates,
	// its groups aggregate its pages' own estimates, and each channel
	// leaves its warm-up when its evidence suffices (WarmupEnds is zero).
	// Budget is then the recrawls an hour (recrawl clock) its plan spends,
	// and Warming the channels still warming up.
	PerPage bool
	Budget  float64
	Warming int

	Reassignments int       // by the policy, since the start of this run
	LastReassign  time.Time // when the latest happened (recrawl clock); zero for none
	LastPolicy    string    // and by which policy

	// Freshness is the share of copies still current: against the web's
	// ground truth when FreshnessExact (lidi demo), else estimated from
	// the channels' change rates. -1 until measured.
	Freshness      float64
	FreshnessExact bool

	// Late measures how late the page-level policy's recrawls were
	// fetched against their plan (PerPage only).
	Late RecrawlLateness

	// History is the groups' intervals over time (a point per
	// reassignment, and at least every quarter of recrawl.initial_interval),
	// oldest first, at most maxIntervalPoints.
	History []IntervalPoint
}

// IntervalPoint is the groups' intervals at one time.
type IntervalPoint struct {
	Time      time.Time
	Intervals []time.Duration // per group, group 0 first
	Freshness float64         // as in RecrawlStats, -1 unknown
}

const maxIntervalPoints = 240

// RecrawlLateness measures how late the page-level policy's recrawls were
// fetched, by the recrawl clock, and how many went to pages still warming
// up. Its counts and sums run from the crawl's start, so that the
// difference of two snapshots (Sub) measures the time between them.
type RecrawlLateness struct {
	// Released are the pages the plan released to the crawl's queues, and
	// Warm those of them whose channel was still warming up.
	Released, Warm int
	// Fetched are the released pages fetched since; Pace sums the time
	// each waited in the plan for its site's turn (released − planned, 0
	// for a page released early into a turn that would have gone unused),
	// Queue the time it waited in its site's queue and for a robot
	// (fetched − released), and OfInterval their sum as a share of the
	// page's planned interval.
	Fetched     int
	Pace, Queue time.Duration
	OfInterval  float64
	// Buckets count the fetched by lateness as a share of the planned
	// interval: below LateBounds[i] in Buckets[i], the rest in the last.
	Buckets [len(LateBounds) + 1]int
}

// LateBounds are the upper bounds of RecrawlLateness.Buckets.
var LateBounds = [...]float64{0.05, 0.1, 0.25, 0.5, 1}

// add counts a fetch released pace after its planned time and fetched
// queue after its release, of a page planned every interval.
func (l *RecrawlLateness) add(pace, queue, interval time.Duration) {
	l.Fetched++
	l.Pace += pace
	l.Queue += queue
	share := 0.0
	if interval > 0 {
		share = float64(pace+queue) / float64(interval)
	}
	l.OfInterval += share
	b := 0
	for b < len(LateBounds) && share >= LateBounds[b] {
		b++
	}
	l.Buckets[b]++
}

// Sub returns what l counted since the earlier snapshot o.
func (l RecrawlLateness) Sub(o RecrawlLateness) RecrawlLateness {
	d := RecrawlLateness{Released: l.Released - o.Released, Warm: l.Warm - o.Warm, Fetched: l.Fetched - o.Fetched,
		Pace: l.Pace - o.Pace, Queue: l.Queue - o.Queue, OfInterval: l.OfInterval - o.OfInterval}
	for i := range d.Buckets {
		d.Buckets[i] = l.Buckets[i] - o.Buckets[i]
	}
	return d
}
