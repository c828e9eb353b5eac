package recrawl

import (
	"container/heap"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"
	"time"

	clk "lidi/engine/clock"
)

// Outcome is what running a Task gave.
type Outcome struct {
	// Success: the recrawl ran to its end and the channel's stored copy is
	// up to date (SARSS's "update"). A lost or timed-out task need not be
	// reported at all; reporting it with Success false only counts it.
	Success bool
	// Changed: some page of the channel had changed since the last update.
	Changed  bool
	Duration time.Duration // how long the recrawl kept a robot busy
	Pages    int           // pages fetched
	Digests  []Digest      // the pages' digests, the next task's PageSeen (nil: keep)
}

// Reassignment is one recalculation of the intervals: an event.
type Reassignment struct {
	At     time.Time
	Policy PolicyName
	// Before and After are the groups' mean effective intervals.
	Before, After []time.Duration
	// SuccessRates are the groups' success rates over the window that ended.
	SuccessRates []float64
	Theta        float64 // icr's θ
	Budget       float64 // optimal's robots
}

// Policy decides the channels' recrawl intervals. Its methods run under
// the Manager's lock, so a Policy need not be safe for concurrent use.
type Policy interface {
	Name() PolicyName
	// Start sets the first intervals from the channels' estimates.
	Start(b *Book)
	// Observe sees a finished recrawl of c (its records already updated).
	Observe(b *Book, c *Channel, o Outcome)
	// Reassign recomputes the intervals if the policy's trigger fired, and
	// then returns what it did; else nil.
	Reassign(b *Book) *Reassignment
}

// NewPolicy returns the policy name names.
func NewPolicy(name PolicyName) (Policy, error) {
	switch name {
	case Fixed:
		return fixedPolicy{}, nil
	case IIR:
		return iirPolicy{}, nil
	case ICR:
		return &icrPolicy{}, nil
	case Optimal:
		return &optimalPolicy{}, nil
	case Adaptive:
		return adaptivePolicy{}, nil
	case Pages:
		return nil, fmt.Errorf("%w: policy %s schedules pages, not channels: a Scheduler runs it", ErrConfig, name)
	}
	_, err := ParsePolicyName(string(name))
	return nil, err
}

// Manager is SARSS's manager: the book of channels and groups, the policy,
// and the queue of recrawls due. The zero value is not usable: New makes
// one. It is safe for concurrent use.
type Manager struct {
	mu       sync.Mutex
	b        Book
	clock    clk.Clock
	policy   Policy
	grouping grouping
	byID     map[ChannelID]*Channel
	due      dueHeap
	taskID   uint64

	reassignments int
	recent        []Reassignment // the last maxRecent
	failed        int
}

const maxRecent = 32

// New returns a Manager of the channels in specs, grouped by their
// estimated rates, with the policy's first intervals. Every channel's first
// recrawl falls at a point of its first interval given by a hash of its ID,
// so that they do not all come due at once.
func New(opt Options, specs []ChannelSpec) (*Manager, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	p, err := NewPolicy(opt.Policy)
	if err != nil {
		return nil, err
	}
	m := &Manager{clock: opt.Clock, policy: p, byID: map[ChannelID]*Channel{}}
	if m.clock == nil {
		m.clock = clk.System
	}
	now := m.clock.Now()
	m.b = Book{Opt: opt, Now: now, LastReassign: now}
	rates := make([]Rate, len(specs))
	for i, s := range specs {
		rates[i] = s.Rate
	}
	m.grouping = newGrouping(rates, opt.Groups)
	for i := range opt.Groups {
		m.b.Groups = append(m.b.Groups, &Group{Index: i})
	}
	for _, s := range specs {
		if _, err := m.add(s, now); err != nil {
			return nil, err
		}
	}
	for i, g := range m.b.Groups {
		g.Initial = m.initial(g, i)
		g.Interval = g.Initial
	}
	m.policy.Start(&m.b)
	for _, c := range m.b.Channels {
		c.Effective = m.b.effective(c)
		c.lastSubmit = now.Add(-time.Duration(spread(c.ID) * float64(c.Effective)))
		c.next = c.lastSubmit.Add(c.Effective)
		heap.Push(&m.due, c)
	}
	return m, nil
}

// spread maps an ID to [0,1).
func spread(id ChannelID) float64 {
	h := fnv.New64a()
	h.Write([]byte(id))
	return float64(h.Sum64()>>11) / (1 << 53)
}

func (m *Manager) initial(g *Group, i int) time.Duration {
	var sum time.Duration
	n := 0
	for _, c := range g.Channels {
		if c.Rate > 0 {
			sum += c.Rate.Interval()
			n++
		}
	}
	if n == 0 {
		return min(m.grouping.center(i, m.b.Opt.MaxInterval), m.b.Opt.MaxInterval)
	}
	return sum / time.Duration(n)
}

func (m *Manager) add(s ChannelSpec, now time.Time) (*Channel, error) {
	if s.ID == "" {
		return nil, fmt.Errorf("%w: a channel without an ID", ErrConfig)
	}
	if _, ok := m.byID[s.ID]; ok {
		return nil, fmt.Errorf("%w: channel %q added twice", ErrConfig, s.ID)
	}
	c := &Channel{ChannelSpec: s, Added: now, windowRef: now, seenSite: map[string]bool{}, heapIndex: -1}
	c.Group = m.grouping.of(s.Rate)
	g := m.b.Groups[c.Group]
	g.Channels = append(g.Channels, c)
	m.b.Channels = append(m.b.Channels, c)
	m.byID[s.ID] = c
	return c, nil
}

// Add adds a channel found after the start to the group its rate falls in,
// at the group's interval (per-channel policies start it at 1/λ̂).
func (m *Manager) Add(s ChannelSpec) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.b.Now = now
	c, err := m.add(s, now)
	if err != nil {
		return err
	}
	c.Interval = m.b.Groups[c.Group].Interval
	if m.policy.Name() != IIR && m.policy.Name() != ICR {
		c.Interval = s.Rate.Interval()
	}
	c.Effective = m.b.effective(c)
	c.lastSubmit = now.Add(-time.Duration(spread(c.ID) * float64(c.Effective)))
	c.next = c.lastSubmit.Add(c.Effective)
	heap.Push(&m.due, c)
	return nil
}

// AddInterSite records that rawURL, found while crawling another channel,
// points into channel id: it becomes one of the channel's seeds.
func (m *Manager) AddInterSite(id ChannelID, rawURL string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.byID[id]
	if c == nil || c.seenSite[rawURL] || slices.Contains(c.Entry, rawURL) {
		return
	}
	c.seenSite[rawURL] = true
	c.interSite = append(c.interSite, rawURL)
}

// SetCapacity tells the Manager how many robots recrawls can use at once
// (the optimal policy's budget); 0 means unknown, measured from history.
func (m *Manager) SetCapacity(robots float64) {
	m.mu.Lock()
	m.b.Capacity = max(robots, 0)
	m.mu.Unlock()
}

// NextDue returns when the next recrawl falls due; false with no channels.
func (m *Manager) NextDue() (time.Time, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.due) == 0 {
		return time.Time{}, false
	}
	return m.due[0].next, true
}

// Due returns the recrawl tasks due now, oldest first, and counts them as
// submitted. Each task's deadline is its submission plus the channel's
// interval. As in SARSS, a channel comes due every interval whether or not
// its last task has ended; a caller that drops such a task reports
// nothing for it.
func (m *Manager) Due() []Task {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	m.b.Now = now
	m.reassign()
	var tasks []Task
	for len(m.due) > 0 && !m.due[0].next.After(now) {
		c := m.due[0]
		m.taskID++
		seeds := append(slices.Clone(c.Entry), c.interSite...)
		tasks = append(tasks, Task{
			ID: m.taskID, Channel: c.ID, Group: c.Group, Seeds: seeds, Filters: c.Filters,
			ExpectedPages: c.ExpectedPages, MaxDepth: c.MaxDepth, PageSeen: c.pageSeen,
			Submitted: now, Deadline: now.Add(c.Effective),
		})
		c.SubCount++
		c.Submitted++
		c.lastSubmit = now
		c.next = c.next.Add(c.Effective)
		if !c.next.After(now) {
			c.next = now.Add(c.Effective)
		}
		heap.Fix(&m.due, 0)
	}
	return tasks
}

// Done records the outcome of task t.
func (m *Manager) Done(t Task, o Outcome) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.byID[t.Channel]
	if c == nil {
		return
	}
	now := m.clock.Now()
	m.b.Now = now
	if !o.Success {
		m.failed++
		return
	}
	if !c.LastUpdate.IsZero() {
		c.obs = append(c.obs, Observation{Interval: now.Sub(c.LastUpdate), Changed: o.Changed})
		if len(c.obs) > maxObservations {
			c.obs = slices.Delete(c.obs, 0, len(c.obs)-maxObservations)
		}
	}
	c.SucCount++
	c.Updates++
	c.LastUpdate = now
	if c.SucCount == m.b.Opt.MinUpdates+1 && c.Group == m.b.Top().Index {
		m.b.ready++
	}
	c.recent = append(c.recent, update{now, o.Duration})
	if len(c.recent) > m.b.Opt.HistoryUpdates+1 {
		c.recent = slices.Delete(c.recent, 0, len(c.recent)-m.b.Opt.HistoryUpdates-1)
	}
	if o.Pages > 0 {
		c.ExpectedPages = o.Pages
	}
	if o.Digests != nil {
		c.pageSeen = NewPageSeen(o.Digests)
	}
	m.policy.Observe(&m.b, c, o)
	m.reschedule(c)
	m.reassign()
}

// reschedule applies a changed interval to c's next due time.
func (m *Manager) reschedule(c *Channel) {
	eff := m.b.effective(c)
	if eff == c.Effective {
		return
	}
	c.Effective = eff
	c.next = c.lastSubmit.Add(eff)
	if c.heapIndex >= 0 {
		heap.Fix(&m.due, c.heapIndex)
	}
}

// reassign asks the policy and, if it reassigned, applies the intervals and
// opens a new window.
func (m *Manager) reassign() {
	before := m.groupIntervals()
	if r := m.policy.Reassign(&m.b); r != nil {
		m.record(r, before)
	}
}

// record applies a reassignment's intervals, keeps it as an event and opens
// a new window.
func (m *Manager) record(r *Reassignment, before []time.Duration) {
	for _, c := range m.b.Channels {
		m.reschedule(c)
	}
	r.At, r.Policy, r.Before, r.After = m.b.Now, m.policy.Name(), before, m.groupIntervals()
	m.reassignments++
	m.recent = append(m.recent, *r)
	if len(m.recent) > maxRecent {
		m.recent = slices.Delete(m.recent, 0, len(m.recent)-maxRecent)
	}
	for _, c := range m.b.Channels {
		c.SubCount, c.SucCount = 0, 0
		c.windowRef = m.b.Now
		if !c.LastUpdate.IsZero() {
			c.windowRef = c.LastUpdate
		}
	}
	m.b.ready = 0
	m.b.LastReassign = m.b.Now
}

// groupIntervals returns each group's mean effective interval (0 for an
// empty group).
func (m *Manager) groupIntervals() []time.Duration {
	out := make([]time.Duration, len(m.b.Groups))
	for i, g := range m.b.Groups {
		var sum time.Duration
		for _, c := range g.Channels {
			sum += c.Effective
		}
		if n := len(g.Channels); n > 0 {
			out[i] = sum / time.Duration(n)
		}
	}
	return out
}

// Reestimate recomputes each channel's change rate from the visits it has
// seen (at least minVisits of them), with Estimate. Groups stay as they are.
func (m *Manager) Reestimate(minVisits int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.b.Now = m.clock.Now()
	for _, c := range m.b.Channels {
		if len(c.obs) < max(minVisits, 1) {
			continue
		}
		if r, err := Estimate(c.obs); err == nil {
			c.Rate = r
			m.reschedule(c)
		}
	}
}

// Interval returns channel id's effective recrawl interval; false if the
// channel is unknown.
func (m *Manager) Interval(id ChannelID) (time.Duration, bool) {
	var d time.Duration
	ok := m.with(id, func(c *Channel) { d = c.Effective })
	return d, ok
}

// with calls f with channel id's record under the lock; false if the
// channel is unknown.
func (m *Manager) with(id ChannelID, f func(*Channel)) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.byID[id]
	if c != nil {
		f(c)
	}
	return c != nil
}

// GroupOf returns channel id's group index (0 the fastest); false if the
// channel is unknown.
func (m *Manager) GroupOf(id ChannelID) (int, bool) {
	var g int
	ok := m.with(id, func(c *Channel) { g = c.Group })
	return g, ok
}

// GroupStats is one priority group in a Stats snapshot.
type GroupStats struct {
	Index, Rank int // Rank is SARSS's: K-1 for the fastest group
	Channels    int
	// Interval is the group's mean effective interval now; Initial the
	// mean of its channels' change intervals at the start.
	Interval, Initial time.Duration
	// Since the last reassignment.
	Submitted, Updates int
	SuccessRate        float64
	// Since the start.
	TotalSubmitted, TotalUpdates int
	// Freshness is the mean EstimatedFreshness of the group's channels now.
	Freshness float64
	// Change is the group's estimated change interval now: 1 over the
	// mean of its channels' estimated rates (0 when none is seen to
	// change).
	Change time.Duration
}

// Stats is a snapshot of the Manager, a value the console polls.
type Stats struct {
	Policy        PolicyName
	At            time.Time
	Channels      int
	Groups        []GroupStats
	Reassignments int
	// Recent are the last reassignments, oldest first; the last is the
	// latest.
	Recent   []Reassignment
	Failed   int     // recrawls reported as failed
	Capacity float64 // robots, when known
	// Freshness is the mean EstimatedFreshness over the channels: the
	// share of copies the estimates expect to be current.
	Freshness float64
}

// Stats returns a snapshot.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Stats{Policy: m.policy.Name(), At: m.clock.Now(), Channels: len(m.b.Channels),
		Reassignments: m.reassignments, Failed: m.failed, Capacity: m.b.Capacity}
	s.Recent = slices.Clone(m.recent)
	iv := m.groupIntervals()
	for i, g := range m.b.Groups {
		sub, suc := g.window()
		gs := GroupStats{Index: i, Rank: Rank(i, len(m.b.Groups)), Channels: len(g.Channels),
			Interval: iv[i], Initial: g.Initial, Submitted: sub, Updates: suc, SuccessRate: g.successRate()}
		var rates Rate
		for _, c := range g.Channels {
			gs.TotalSubmitted += c.Submitted
			gs.TotalUpdates += c.Updates
			gs.Freshness += EstimatedFreshness(c.Rate, c.LastUpdate, s.At)
			rates += c.Rate
		}
		if len(g.Channels) > 0 {
			if rates > 0 {
				gs.Change = (rates / Rate(len(g.Channels))).Interval()
			}
			gs.Freshness /= float64(len(g.Channels))
			s.Freshness += gs.Freshness * float64(len(g.Channels))
		}
		s.Groups = append(s.Groups, gs)
	}
	if len(m.b.Channels) > 0 {
		s.Freshness /= float64(len(m.b.Channels))
	}
	return s
}

// Rank converts a group index (0 fastest) to SARSS's rank (K-1 fastest).
func Rank(index, k int) int { return k - 1 - index }

// dueHeap orders channels by next due time.
type dueHeap []*Channel

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].next.Before(h[j].next) }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIndex, h[j].heapIndex = i, j
}
func (h *dueHeap) Push(x any) {
	c := x.(*Channel)
	c.heapIndex = len(*h)
	*h = append(*h, c)
}
func (h *dueHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	c.heapIndex = -1
	*h = old[:len(old)-1]
	return c
}
