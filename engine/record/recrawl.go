package record

import (
	"time"
)

// What the store keeps of recrawling: the history of every fetch (one row
// per PageRecord, written by Apply), the channels, the priority groups and
// the reassignments of their intervals.

// RecrawlURL is a fetched URL that a recrawl may queue again.
type RecrawlURL struct {
	ID      uint64
	Site    int64
	URL     string
	Fetched time.Time
	LastMod time.Time // URLRecord.LastMod: a sitemap's <lastmod>, a change hint; zero for none
	// Discovered is URLRecord.Discovered: the page was quiet from LastMod
	// to then at least, however often it was fetched since.
	Discovered time.Time
}

// Requeue queues a fetched URL again for a recrawl, at Priority (its
// site's queue is read in (priority, seq) order).
type Requeue struct {
	URL      uint64
	Priority float64
	Seq      int64
}

// ChannelRecord is a channel's state in the recrawl manager.
type ChannelRecord struct {
	ID         string // recrawl.ChannelID: a host, or a rule's name
	Group      int    // priority group, 0 the most often changing
	Interval   time.Duration
	Rate       float64 // estimated changes per second; 0 never seen to change
	Submitted  int     // recrawl tasks submitted
	Updates    int     // recrawls that completed
	LastUpdate time.Time
	Updated    time.Time // when the record was written
}

// GroupRecord is a priority group's state.
type GroupRecord struct {
	Index    int // 0 the most often changing
	Channels int
	Initial  time.Duration // the mean of its channels' change intervals at the start
	Interval time.Duration // the group's mean interval now
	Updated  time.Time
}

// ReassignmentRecord is one recalculation of the groups' intervals by the
// recrawl policy.
type ReassignmentRecord struct {
	Time          time.Time
	Policy        string
	Before, After []time.Duration // per group
	SuccessRates  []float64       // per group, over the window that ended
	Theta         float64         // icr's θ; 0 for the other policies
	Budget        float64         // optimal's robots; 0 for the others
}
