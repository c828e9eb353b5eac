package recrawl

import (
	"container/heap"
	"fmt"
	"math"
	"time"
)

// ChannelState is what a Manager knows of a channel that outlives the
// process: what ChannelStates saves and Restore puts back after a restart.
type ChannelState struct {
	ID    ChannelID
	Group int
	// Interval is the policy's interval for the channel (before the cap).
	Interval           time.Duration
	Rate               Rate
	Submitted, Updates int
	LastUpdate         time.Time // zero: never updated
}

// ChannelStates returns every channel's state, in the order they were
// added.
func (m *Manager) ChannelStates() []ChannelState {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]ChannelState, len(m.b.Channels))
	for i, c := range m.b.Channels {
		out[i] = ChannelState{ID: c.ID, Group: c.Group, Interval: c.Interval, Rate: c.Rate,
			Submitted: c.Submitted, Updates: c.Updates, LastUpdate: c.LastUpdate}
	}
	return out
}

// Restore puts back states saved by ChannelStates into a Manager made by
// New over the same channels: each channel's group, rate, interval,
// counters and last update. A group's interval becomes the mean of its
// channels' restored intervals (what iir and icr last assigned); its
// initial interval is recomputed from the restored rates. A channel's next
// recrawl falls one interval after its last update (now, if that is past).
// The window since the last reassignment starts again now. States of
// channels the Manager does not know are an error, and nothing is changed.
func (m *Manager) Restore(states []ChannelState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range states {
		if m.byID[s.ID] == nil {
			return fmt.Errorf("%w: restore: unknown channel %q", ErrConfig, s.ID)
		}
		if s.Group < 0 || s.Group >= len(m.b.Groups) {
			return fmt.Errorf("%w: restore: channel %q in group %d of %d", ErrConfig, s.ID, s.Group, len(m.b.Groups))
		}
	}
	now := m.clock.Now()
	m.b.Now = now
	for _, s := range states {
		c := m.byID[s.ID]
		m.move(c, s.Group)
		c.Rate, c.Submitted, c.Updates, c.LastUpdate = s.Rate, s.Submitted, s.Updates, s.LastUpdate
		if s.Interval > 0 {
			c.Interval = s.Interval
		}
		c.windowRef = now
		if !c.LastUpdate.IsZero() {
			c.windowRef = c.LastUpdate
			c.lastSubmit = c.LastUpdate
		}
		c.SubCount, c.SucCount = 0, 0
	}
	for i, g := range m.b.Groups {
		g.Initial = m.initial(g, i)
		var sum time.Duration
		for _, c := range g.Channels {
			sum += c.Interval
		}
		if n := len(g.Channels); n > 0 {
			g.Interval = sum / time.Duration(n)
		}
	}
	m.b.ready = 0
	m.b.LastReassign = now
	for _, c := range m.b.Channels {
		c.Effective = m.b.effective(c)
		c.next = c.lastSubmit.Add(c.Effective)
		if c.next.Before(now) {
			c.next = now
		}
		heap.Fix(&m.due, c.heapIndex)
	}
	return nil
}

// move puts c in group g.
func (m *Manager) move(c *Channel, g int) {
	if c.Group == g {
		return
	}
	old := m.b.Groups[c.Group]
	for i, x := range old.Channels {
		if x == c {
			old.Channels = append(old.Channels[:i], old.Channels[i+1:]...)
			break
		}
	}
	c.Group = g
	m.b.Groups[g].Channels = append(m.b.Groups[g].Channels, c)
}

// Regroup groups the channels again by their current estimated rates
// (after Reestimate, or once channels added with no estimate have one) and
// starts the policy again from the new groups' initial intervals: a
// reassignment of its own, counted as one. Use it when the channels known
// at New were few or had no estimates.
func (m *Manager) Regroup() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.b.Now = m.clock.Now()
	before := m.groupIntervals()
	rates := make([]Rate, len(m.b.Channels))
	for i, c := range m.b.Channels {
		rates[i] = c.Rate
	}
	m.grouping = newGrouping(rates, len(m.b.Groups))
	for _, c := range m.b.Channels {
		m.move(c, m.grouping.of(c.Rate))
	}
	for i, g := range m.b.Groups {
		g.Initial = m.initial(g, i)
		g.Interval = g.Initial
		g.LastSuccessRate = 0
	}
	m.policy.Start(&m.b)
	m.record(&Reassignment{}, before)
}

// EstimatedFreshness is the probability that a copy taken at last of an
// item changing at rate r is still current at now, e^(−r·(now−last)): the
// freshness the console shows where no oracle knows the truth.
func EstimatedFreshness(r Rate, last, now time.Time) float64 {
	if last.IsZero() {
		return 0
	}
	d := now.Sub(last).Seconds()
	if d <= 0 || r <= 0 {
		return 1
	}
	return math.Exp(-float64(r) * d)
}
