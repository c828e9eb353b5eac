package engine

import (
	"time"

	"lidi/engine/cputime"
	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/seen"
	"lidi/engine/visit"
)

// Stats is a snapshot of a crawl, returned by Engine.Stats. It is a value:
// the engine never changes a Stats after returning it, and a caller may keep
// it. The console polls it a few times a second.
type Stats struct {
	Time     time.Time // when the snapshot was taken
	Started  time.Time // when this run of the crawl started
	State    RunState
	Strategy string

	// Totals over the whole crawl, including earlier runs it resumed.
	// lidi's own soft-404 probes count in none of them (docs/detection.md).
	Pages    int64 // pages stored: distinct URLs fetched (any status), Fetches less Recrawls
	Fetches  int64 // fetches of pages, recrawls included
	Recrawls int64 // of Fetches, those of a URL fetched before
	Bytes    int64 // body bytes received
	Errors   int64 // fetches that failed or answered 4xx/5xx

	// Rates over the last few seconds.
	FetchesPerSec float64
	BytesPerSec   float64

	// Frontier.
	Discovered   int64 // URLs known (queued + fetched + skipped)
	QueueDepth   int64 // URLs queued, not yet fetched
	Sites        int   // sites known
	SitesReady   int   // sites with queued pages that may be visited now
	SitesWaiting int   // sites with queued pages waiting for their politeness delay, DNS or a busy address
	SitesParked  int   // sites given up after repeated failures
	SitesDone    int   // sites with nothing queued

	// The loop's responsiveness. LoopPause is the longest the crawl's
	// loop took over one wake-up (a batch of results, a timer, a
	// hand-over to the store), StoreWait the longest of it spent waiting
	// for the store to take a batch (the loop keeps pace with the store),
	LoopPause, StoreWait time.Duration
	// LoopWakeups is how many times the loop has woken: for a message, a
	// timer, a delay's end or the recrawls' next look.
	LoopWakeups int64
	// LoopWork is the longest wake-up less its waits for the store: the
	// loop's own work (detection, the seen set, the frontier), which a
	// slow write does not lengthen.
	LoopWork time.Duration
	// LoopWorkSteps is where that wake-up spent its time, longest first.
	LoopWorkSteps []LoopStepTime
	// StoreApply is the longest one write of a batch to the store took
	// (StoreApplyRecords the records it held), StoreHead the longest one
	// read of a site's queue head: what the loop's waits for the store
	// are made of.
	StoreApply, StoreHead time.Duration
	StoreApplyRecords     int
	// StoreApplyUsage and StoreHeadUsage are what the writer's thread
	// used during that write and that read, where the system says
	// (Linux): a write far longer than its CPU time waited for the
	// machine's CPUs (Switches) or slept (Sleeps), not for its own work.
	StoreApplyUsage, StoreHeadUsage cputime.Usage
	// StorePendingMax is the most bytes the results waiting to be written
	// held at once, in the loop's batch and the committer's (bounded by
	// storage.max_pending_mb but for one result).
	StorePendingMax int64
	// LoopSteps is where the longest wake-up (LoopPause) spent its
	// time, longest first.
	LoopSteps []LoopStepTime
	// Seen is the set of URLs seen's work; Seen.MaxPause is the longest a
	// call to it took that read its runs on disk or took over its
	// background writer's work, with what its thread did meanwhile.
	Seen seen.Stats

	// Robots.
	Robots     int // robots allowed (r)
	RobotsBusy int // visits in flight
	Visits     []VisitStats
	Waiting    []WaitingSite // the sites whose delay ends soonest (at most 32)

	DNS DNSStats
	// Conns is this run's keep-alive connections: reconnects (a visit's
	// connections after its first) mean servers close idle connections
	// sooner than politeness.delay.
	Conns fetch.ConnStats
	// MaxPages is limits.max_pages (0: none), to show progress against it.
	MaxPages int64
	// Over the whole crawl too, kept in the store (record.Tally).
	ErrorKind map[visit.FailureKind]int64 // errors by kind
	Skipped   map[record.SkipReason]int64 // URLs and links not fetched, by reason
	Sitemaps  SitemapStats                // sitemaps named, read and what they listed
	GivenUp   []string                    // sites given up for this run, each with why
	// RobotsRedirected counts the sites whose robots.txt was read after
	// redirects, or not at all for a chain given up (RFC 9309 2.3.1.2);
	// RobotsChains are the latest of them (at most 32), oldest first.
	RobotsRedirected int64
	RobotsChains     []RobotsChain

	// Duplicates: what detection found and pruned; zero when it is off.
	Dup DupStats

	// Memory is what the structures that grow with every URL hold.
	Memory MemoryStats

	// Coverage is the PageRank coverage curve, a point per recomputation
	// (thinned when long); nil until the first one, or with PageRank off.
	Coverage []record.CoveragePoint
	// Intervals are the recrawl priority groups, group 0 (the most often
	// changing) first; nil while recrawling is off or warming up.
	Intervals []IntervalGroup
	// Recrawl is the recrawl state; nil when recrawling is off.
	Recrawl *RecrawlStats

	Events     []record.Event // the most recent notable events, newest last (at most 64)
	EventCount int64          // events since Run started: Events holds the last of them

	// Why the crawl ended; EndNone while it runs.
	End     EndReason
	EndText string // End in words, with its detail
}

// RunState says what the engine is doing.
type RunState int

const (
	StateStarting RunState = iota
	StateRunning
	StatePaused
	StateStopping
	StateDone // the frontier is empty or a limit was reached
	StateFailed
)

func (s RunState) String() string {
	switch s {
	case StateStarting:
		return "starting"
	case StateRunning:
		return "running"
	case StatePaused:
		return "paused"
	case StateStopping:
		return "stopping"
	case StateDone:
		return "done"
	case StateFailed:
		return "failed"
	}
	return "unknown"
}

// VisitStats describes one visit in flight: a robot on one site.
type VisitStats struct {
	Site    string
	URL     string // the URL fetched last
	Pages   int    // pages fetched on this keep-alive connection so far
	Planned int    // pages this visit may fetch (at most c)
	Bytes   int64
	Started time.Time
}

// RobotsChain is where a site's robots.txt was read: the requests that
// redirected, and the last one. It is a plain value.
type RobotsChain struct {
	Site      string      // the site's key
	Redirects []fetch.Hop // each request that redirected, with its status
	URL       string      // the last request
	Status    int         // its status; -1 when it could not be fetched
	End       fetch.ChainEnd
}

// WaitingSite is a site waiting for its next visit.
type WaitingSite struct {
	Site    string
	Pending int64
	Until   time.Time
	Reason  WaitReason
}

// WaitReason says why a site waits for its next visit.
type WaitReason int

const (
	WaitDelay     WaitReason = iota // the politeness delay between visits
	WaitRobotsTxt                   // robots.txt answered 5xx or was unreachable: nothing is fetched until it is retried
	WaitBackoff                     // failed visits, 429 or 503: backing off
)

func (r WaitReason) String() string {
	switch r {
	case WaitDelay:
		return "delay"
	case WaitRobotsTxt:
		return "robots.txt retry"
	case WaitBackoff:
		return "back-off"
	}
	return "unknown"
}

// DNSStats counts host name resolution.
type DNSStats struct {
	Lookups   int64 // look-ups asked of the cache
	Hits      int64 // answered from the cache
	Queries   int64 // queries sent to DNS servers
	Failures  int64 // look-ups that failed
	Collapsed int64 // look-ups that joined one already in flight
}

// DupStats counts what duplicate detection found and pruned.
type DupStats struct {
	Exact        int64
	Near         int64
	Soft404      int64 // pages recognised as their host's soft 404
	Soft404Hosts int64 // hosts with a soft-404 page recognised
	Rules        int64 // URL rewrite rules in force
	Withdrawn    int64 // rules withdrawn after a contradiction
	// Learned counts the rules learned of each kind (withdrawn ones
	// included), indexed by dedup.RuleKind.
	Learned [dedup.NumRuleKinds]int64
	Pruned  int64 // URLs a rule in force covers, not fetched (when found or when their turn came), in all runs of the crawl
	// Requeued counts the URLs queued again because the rule they were
	// pruned under was withdrawn (no longer in Pruned).
	Requeued int64
	// Recent lists the rules learned or withdrawn last, newest first (up
	// to RecentRules, without their pairs): what each keeps as the
	// original and why (Rule.Choice, Rule.Prior, Rule.Supports). A new
	// slice replaces it at each change, so a snapshot may keep it.
	Recent []dedup.Rule
	// Time is the CPU time detection took over the whole run (fingerprints
	// and decisions, read from the thread's CPU clock where the system has
	// one, else the wall clock); divided by Pages it is the cost per page.
	// One page in cputime.SampleEvery is timed, counted SampleEvery times:
	// an estimate, close over thousands of pages.
	Time time.Duration
}

// MemoryStats is the memory the structures that grow with the crawl hold,
// in bytes, as they estimate it (spare capacity included): what `lidi
// bench crawl` divides by the URLs discovered.
type MemoryStats struct {
	Seen      int64 // the set of URLs seen (beyond its runs on disk)
	Graph     int64 // the link graph: nodes, pages and links
	Detection int64 // duplicate detection's pages and indexes; 0 when it is off
	// Rank is PageRank's: the last run's scores, kept for the next run's
	// warm start, and while a run is in flight what it holds; 0 when
	// PageRank is off.
	Rank int64
}

// RecentRules bounds DupStats.Recent.
const RecentRules = 8

// IntervalGroup is one recrawl priority group.
type IntervalGroup struct {
	Name        string
	Index, Rank int // Rank is SARSS's: K-1 for group 0
	Channels    int
	// Interval is the group's mean recrawl interval now, Initial the mean
	// of its channels' estimated change intervals at the start.
	Interval, Initial time.Duration
	// Since the last reassignment: tasks submitted, updates (recrawls that
	// completed) and their ratio.
	Submitted, Updates int
	SuccessRate        float64
	TotalUpdates       int // since the start
	// Change is the group's estimated change interval now (0: unknown, or
	// never seen to change), and Freshness the share of its copies the
	// estimates expect current (meaningful with Change).
	Change    time.Duration
	Freshness float64
}
