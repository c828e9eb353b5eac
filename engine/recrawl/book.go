package recrawl

import (
	"math"
	"regexp"
	"slices"
	"time"
)

// ChannelSpec is what a Manager is told about a channel when it is added.
type ChannelSpec struct {
	ID ChannelID
	// Rate is the channel's estimated change rate (from its fetch history,
	// with Estimate); 0 means never seen to change.
	Rate Rate
	// Weight is the channel's importance in Wolf's weighted staleness
	// (its PageRank, say); 0 means 1.
	Weight float64
	// Cost is the expected time a recrawl of the channel keeps a robot
	// busy; 0 means unknown until a recrawl reports its duration.
	Cost time.Duration

	Entry         []string         // entry pages, the first seeds
	Filters       []*regexp.Regexp // the task's URL filters
	ExpectedPages int
	MaxDepth      int
}

// Channel is a channel's record in the Manager's book (SARSS's channel
// database). Policies read it and set Interval; the rest is the Manager's.
type Channel struct {
	ChannelSpec
	Group int
	// Interval is the recrawl interval the policy wants; Effective is the
	// one used, after the rate cap and the interval bounds.
	Interval  time.Duration
	Effective time.Duration
	Added     time.Time

	// SARSS's records since the last reassignment: hSubCount, hSucCount.
	SubCount, SucCount int
	windowRef          time.Time // the last update before the window, or its start

	Submitted, Updates int // since the channel was added
	LastUpdate         time.Time

	recent    []update      // the last L+1 updates
	obs       []Observation // the last maxObservations visits, for Reestimate
	interSite []string
	seenSite  map[string]bool
	pageSeen  PageSeen

	lastSubmit time.Time
	next       time.Time
	heapIndex  int
}

type update struct {
	at  time.Time
	dur time.Duration
}

// maxObservations bounds the history Reestimate uses per channel.
const maxObservations = 64

// HInterval is SARSS's historyInterval at now: the mean gap between the
// channel's updates since the last reassignment, the first gap counted from
// the update before it. With no update yet in the window it is the time
// since that update, the gap so far.
func (c *Channel) HInterval(now time.Time) time.Duration {
	if c.SucCount == 0 {
		return now.Sub(c.windowRef)
	}
	return c.LastUpdate.Sub(c.windowRef) / time.Duration(c.SucCount)
}

// MeanDuration is the mean duration of the channel's last L recrawls, else
// its spec's Cost.
func (c *Channel) MeanDuration() time.Duration {
	n := len(c.recent)
	if n == 0 {
		return c.Cost
	}
	var sum time.Duration
	for _, u := range c.recent {
		sum += u.dur
	}
	return sum / time.Duration(n)
}

// UpdateRate is the channel's actual update rate over its last L updates
// (λ^actual), counted up to now.
func (c *Channel) UpdateRate(now time.Time, l int) Rate {
	ref, n := c.Added, len(c.recent)
	if n > l {
		ref, n = c.recent[0].at, l
	}
	span := now.Sub(ref)
	if n == 0 || span <= 0 {
		return 0
	}
	return Rate(float64(n) / span.Seconds())
}

func (c *Channel) weight() float64 {
	if c.Weight == 0 {
		return 1
	}
	return c.Weight
}

// Group is a priority group. Group 0 changes fastest.
type Group struct {
	Index    int
	Channels []*Channel
	// Interval is the interval a group policy (iir, icr) last assigned;
	// Initial is the mean of the channels' estimated change intervals.
	Interval, Initial time.Duration
	// LastSuccessRate is SARSS's lastSuccessRate, the success rate at the
	// last reassignment.
	LastSuccessRate float64
}

// window sums the group's records since the last reassignment.
func (g *Group) window() (submitted, succeeded int) {
	for _, c := range g.Channels {
		submitted += c.SubCount
		succeeded += c.SucCount
	}
	return submitted, succeeded
}

// successRate is hSucCount/hSubCount over the group; 0 with nothing
// submitted.
func (g *Group) successRate() float64 {
	sub, suc := g.window()
	if sub == 0 {
		return 0
	}
	return float64(suc) / float64(sub)
}

// Book is the state a Policy works on: the channels, their groups and what
// the Manager knows of its capacity. It is guarded by its Manager: a policy
// touches it only inside its methods.
type Book struct {
	Opt      Options
	Now      time.Time
	Channels []*Channel
	Groups   []*Group
	// Capacity is the number of robots recrawls can use at once, when the
	// program knows it (Manager.SetCapacity); 0 means unknown.
	Capacity float64
	// LastReassign is when a policy last reassigned (the Manager's start
	// before any).
	LastReassign time.Time
	// ready counts the top group's channels with more than MinUpdates
	// updates since the last reassignment.
	ready int
}

// Top returns the fastest non-empty group, or nil.
func (b *Book) Top() *Group {
	for _, g := range b.Groups {
		if len(g.Channels) > 0 {
			return g
		}
	}
	return nil
}

// QuorumReached is SARSS's trigger: Quorum (50%) of the top group's channels
// have more than MinUpdates (5) updates since the last reassignment.
func (b *Book) QuorumReached() bool {
	top := b.Top()
	return top != nil && float64(b.ready) >= b.Opt.Quorum*float64(len(top.Channels))
}

// SetGroupIntervals gives every group, and each of its channels, its
// interval.
func (b *Book) SetGroupIntervals(iv []time.Duration) {
	for i, g := range b.Groups {
		g.Interval = iv[i]
		for _, c := range g.Channels {
			c.Interval = iv[i]
		}
	}
}

// CapacityHistory is SARSS's history(Σ λ_l·t̄_l): the robot-seconds per
// second the channels' last L updates kept busy.
func (b *Book) CapacityHistory() float64 {
	var sum float64
	for _, c := range b.Channels {
		sum += float64(c.UpdateRate(b.Now, b.Opt.HistoryUpdates)) * c.MeanDuration().Seconds()
	}
	return sum
}

// meanCost is the mean known recrawl duration over the channels, for those
// with none yet; 1s when nothing is known.
func (b *Book) meanCost() time.Duration {
	var sum time.Duration
	n := 0
	for _, c := range b.Channels {
		if d := c.MeanDuration(); d > 0 {
			sum += d
			n++
		}
	}
	if n == 0 {
		return time.Second
	}
	return sum / time.Duration(n)
}

// effective applies the rate cap and the bounds to c's interval.
func (b *Book) effective(c *Channel) time.Duration {
	d := c.Interval
	if b.Opt.RateCap > 0 && c.Rate > 0 {
		d = max(d, time.Duration(float64(c.Rate.Interval())/b.Opt.RateCap))
	}
	return min(max(d, b.Opt.MinInterval), b.Opt.MaxInterval)
}

// grouping assigns channels to K groups by estimated change rate: a
// one-dimensional k-means over log(rate) (Lloyd's iterations, started from
// K equal bins between the 2nd and 98th percentiles), so that groups follow
// the clusters the rates form rather than fixed bins; channels never seen
// changing go to the slowest group. centers are log rates, fastest first.
type grouping struct {
	k       int
	centers []float64
}

func newGrouping(rates []Rate, k int) grouping {
	var logs []float64
	for _, r := range rates {
		if r > 0 {
			logs = append(logs, math.Log(float64(r)))
		}
	}
	if len(logs) == 0 {
		return grouping{k: k}
	}
	slices.Sort(logs)
	lo := logs[int(0.02*float64(len(logs)-1))]
	hi := logs[int(math.Ceil(0.98*float64(len(logs)-1)))]
	g := grouping{k: k, centers: make([]float64, k)}
	for i := range g.centers {
		g.centers[i] = hi - (float64(i)+0.5)*(hi-lo)/float64(k)
	}
	sum := make([]float64, k)
	n := make([]int, k)
	for range 100 {
		clear(sum)
		clear(n)
		for _, l := range logs {
			i := g.nearest(l)
			sum[i] += l
			n[i]++
		}
		moved := false
		for i := range g.centers {
			if n[i] > 0 && math.Abs(sum[i]/float64(n[i])-g.centers[i]) > 1e-9 {
				g.centers[i] = sum[i] / float64(n[i])
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return g
}

// nearest is the index of the center nearest to the log rate l.
func (g grouping) nearest(l float64) int {
	best, dist := 0, math.Inf(1)
	for i, c := range g.centers {
		if d := math.Abs(l - c); d < dist {
			best, dist = i, d
		}
	}
	return best
}

func (g grouping) of(r Rate) int {
	if r <= 0 || len(g.centers) == 0 {
		return g.k - 1
	}
	return g.nearest(math.Log(float64(r)))
}

// center is the change interval at group i's center, the initial interval
// of a group without channels.
func (g grouping) center(i int, fallback time.Duration) time.Duration {
	if len(g.centers) == 0 {
		return fallback
	}
	return Rate(math.Exp(g.centers[i])).Interval()
}
