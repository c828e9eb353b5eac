package engine

import (
	"time"

	"lidi/engine/recrawl"
)

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

	// Late measures how far from their plan the page-level policy's
	// recrawls were fetched (PerPage only).
	Late recrawl.Lateness

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
