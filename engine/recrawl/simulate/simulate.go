// Package simulate measures lidi's recrawl policies in virtual time: SARSS's
// simulation (Xu et al., NPC 2010, section 4) scaled to one machine, with
// lidi's own recrawl.Manager and policies, and Wolf et al.'s comparison of
// uniform, proportional and optimal crawl allocations (WWW 2002, section 5).
//
// The SARSS set-up: channels in five priority groups changing every
// θ = 60, 120, 240, 480 and 960 minutes (change.GroupMeans) with the ground
// truth from package change; crawlers with five task threads and a task
// queue of five that all join at the first step, live N(1000, 200) minutes,
// leave (a third notify and hand their tasks on, two thirds vanish with
// them) and rejoin after N(600, 200) minutes; a task waiting longer than its
// channel's interval is cancelled; a full queue forwards the task to
// another crawler. Steps are one minute. REC has as many crawlers per
// channel as SARSS's 1400 for 16000; RUC twice as many.
//
// Nothing here is safe for concurrent use; Run is deterministic in its
// Setup.
package simulate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	clk "lidi/engine/clock"

	"lidi/engine/recrawl"
	"lidi/engine/recrawl/change"
)

// Setup describes one simulation. The zero value is not usable; SARSS
// returns the defaults of a set-up.
type Setup struct {
	Name     string // "rec" or "ruc"
	Channels int
	Crawlers int
	Threads  int // task threads per crawler
	Queue    int // task queue length per crawler
	Duration time.Duration
	Seed     uint64

	Change change.Kind // the channels' change process
	// GroupShare is the share of channels in each group, fastest first.
	GroupShare []float64
	// PagesMedian is the median pages of a channel (log-normal, σ = 1);
	// PageTime the mean time a page takes (RTTs, transfer and SARSS's
	// 200 ms wait), so a recrawl takes pages·PageTime.
	PagesMedian int
	PageTime    time.Duration
	// Lifetime and Downtime of crawlers: normal, mean and deviation.
	Lifetime, LifetimeDev time.Duration
	Downtime, DowntimeDev time.Duration
	Notified              float64 // share of departures that hand their tasks on
	// OneTask gives a channel whose last task is still queued or running
	// no other, as lidi's engine does (the task is dropped, Result.Busy);
	// false lets a channel's tasks overlap.
	OneTask bool

	// Warmup is the exploratory history each channel's first estimate
	// comes from: visits every WarmupVisit ± 50% for Warmup.
	Warmup, WarmupVisit time.Duration
	// Given, if not empty, are the channels, instead of Channels drawn
	// from GroupShare, PagesMedian and Change: a real web's, so that the
	// simulation sees the very changes a real crawl of it saw.
	Given []Channel
	// WarmupCopies starts the run with each channel's copy from its last
	// warm-up visit, as a real crawl has it at the warm-up's end; false
	// starts it with every copy taken at that instant, fresh.
	WarmupCopies bool

	Options recrawl.Options // the manager's; Policy and Clock are set per run
	Sample  time.Duration   // how often the time series is sampled
}

// Channel is a channel given to a simulation (Setup.Given).
type Channel struct {
	Group int // its true group, 0 the most often changing
	Pages int
	// Changes returns a new stream of the channel's change times, from
	// virtual time 0 (the start of the warm-up).
	Changes func() *change.Stream
}

// sarssShare is the share of SARSS's channels per group, fastest first, as
// Table 1's FIXED task counts give it (tasks = channels · 90000/θ):
// 603, 4393, 7944, 4240 and 597 channels.
var sarssShare = []float64{0.034, 0.247, 0.447, 0.239, 0.033}

// SARSS returns the set-up name ("rec" or "ruc") scaled to channels: SARSS
// had 16000 channels and 1400 (REC) or 2800 (RUC) crawlers.
func SARSS(name string, channels int, days float64, seed uint64) (Setup, error) {
	crawlers := channels * 1400 / 16000
	switch name {
	case "rec":
	case "ruc":
		crawlers *= 2
	default:
		return Setup{}, fmt.Errorf("simulate: unknown set-up %q (known: rec, ruc)", name)
	}
	opt := recrawl.Defaults()
	return Setup{
		Name: name, Channels: channels, Crawlers: max(crawlers, 1), Threads: 5, Queue: 5,
		Duration: time.Duration(days * 24 * float64(time.Hour)), Seed: seed,
		Change: change.Poisson, GroupShare: sarssShare,
		PagesMedian: 3000, PageTime: time.Second,
		Lifetime: 1000 * time.Minute, LifetimeDev: 200 * time.Minute,
		Downtime: 600 * time.Minute, DowntimeDev: 200 * time.Minute, Notified: 1.0 / 3,
		Warmup: 4 * 24 * time.Hour, WarmupVisit: time.Hour,
		Options: opt, Sample: time.Hour,
	}, nil
}

// GroupResult is one priority group of a run (by the manager's groups).
type GroupResult struct {
	Rank     int
	Channels int
	Tasks    int           // recrawl tasks submitted
	Updates  int           // successful recrawls
	Interval time.Duration // time-average of the group's mean effective interval
}

// Sample is the groups' mean effective intervals at one time.
type Sample struct {
	At        time.Duration
	Intervals []time.Duration
	Online    int // crawlers online
	Queued    int // tasks waiting in queues
	// Fresh is the share of channels whose copy is current at At, against
	// the ground truth.
	Fresh float64
}

// Result is one run of one policy on one set-up.
type Result struct {
	Setup                                    string
	Policy                                   recrawl.PolicyName
	Groups                                   []GroupResult
	Tasks, Updates, Lost, Cancelled, Dropped int
	Busy                                     int // tasks not submitted: their channel's last one still queued or running (OneTask)
	SuccessRate                              float64
	// UpdateQuality is SARSS's equation 5 with weight 1; Weighted with
	// 2^rank, rank by the channel's true group.
	UpdateQuality, UpdateQualityW float64
	// Freshness is the time-average share of channels whose copy is
	// current; Age the time-average of how long a stale copy has been
	// stale (0 when fresh), both against the ground truth.
	Freshness float64
	Age       time.Duration
	// Misgrouped is the share of channels the estimates put in another
	// group than their true one.
	Misgrouped    float64
	Reassignments int
	Pages         int64 // pages fetched
	MeanQueued    float64
	// Demand is the robots FIXED would keep busy (Σ recrawl time/θ over
	// the channels); MeanOnline the robots online on average, of Threads.
	Demand, MeanOnline float64
	Threads            int
	Series             []Sample
}

type channel struct {
	id       recrawl.ChannelID
	group    int // true group
	pages    int
	stream   *change.Stream
	snapshot time.Duration // when the stored copy was taken
	stale    time.Duration // first change after snapshot (cached Peek)
	fresh    float64       // seconds fresh, integrated
	age      float64       // stale seconds², integrated /2
	updates  int
	inFlight int // tasks queued or running
}

type task struct {
	t        recrawl.Task
	ch       *channel
	duration time.Duration
	waitTill time.Duration // cancelled if not started by then
	end      time.Duration
}

type crawler struct {
	online  bool
	until   time.Duration // leave or rejoin time
	running []*task
	queue   []*task
}

// Run simulates policy on s.
func Run(s Setup, policy recrawl.PolicyName) (*Result, error) {
	if len(s.Given) > 0 {
		s.Channels = len(s.Given)
	}
	if s.Channels < 1 || s.Crawlers < 1 || s.Threads < 1 || s.Duration <= 0 || len(s.GroupShare) == 0 {
		return nil, fmt.Errorf("simulate: set-up %q is incomplete", s.Name)
	}
	r := rand.New(rand.NewPCG(s.Seed, 0x7265637261776c))
	means := change.GroupMeans()
	if len(s.GroupShare) > len(means) {
		return nil, fmt.Errorf("simulate: %d groups, SARSS has %d", len(s.GroupShare), len(means))
	}
	// Channels, their true groups and their warm-up estimates.
	chans := make([]*channel, s.Channels)
	specs := make([]recrawl.ChannelSpec, s.Channels)
	byID := map[recrawl.ChannelID]*channel{}
	cum := make([]float64, len(s.GroupShare))
	var total float64
	for i, sh := range s.GroupShare {
		total += sh
		cum[i] = total
	}
	start := s.Warmup // the run's time 0 is the warm-up's end
	for i := range chans {
		u := r.Float64() * total
		g, _ := slices.BinarySearch(cum, u)
		g = min(g, len(cum)-1)
		m := change.Model{Kind: s.Change, Mean: means[g]}
		c := &channel{id: recrawl.ChannelID(fmt.Sprintf("c%05d.example", i)), group: g,
			pages: max(1, int(float64(s.PagesMedian)*math.Exp(r.NormFloat64()))), stream: m.Stream(s.Seed, uint64(i))}
		if len(s.Given) > 0 {
			gc := s.Given[i]
			if gc.Group < 0 || gc.Group >= len(s.GroupShare) || gc.Changes == nil {
				return nil, fmt.Errorf("simulate: set-up %q: given channel %d: group %d of %d, or no changes", s.Name, i, gc.Group, len(s.GroupShare))
			}
			c.group, c.pages, c.stream = gc.Group, max(1, gc.Pages), gc.Changes()
		}
		// Warm-up visits at irregular intervals.
		var obs []recrawl.Observation
		var at, last time.Duration
		stale := time.Duration(0) // the first change after the last visit before start
		for at < s.Warmup {
			gap := time.Duration((0.5 + r.Float64()) * float64(s.WarmupVisit))
			at += gap
			changed := false
			for c.stream.Peek() <= at {
				c.stream.Next()
				changed = true
			}
			if at <= start {
				stale = c.stream.Peek()
			}
			obs = append(obs, recrawl.Observation{Interval: at - last, Changed: changed})
			last = at
		}
		for c.stream.Peek() <= start {
			c.stream.Next()
		}
		c.snapshot, c.stale = start, c.stream.Peek()
		if s.WarmupCopies && stale > 0 {
			c.stale = stale
		}
		est, err := recrawl.Estimate(obs)
		if err != nil {
			return nil, err
		}
		chans[i] = c
		byID[c.id] = c
		specs[i] = recrawl.ChannelSpec{ID: c.id, Rate: est, ExpectedPages: c.pages,
			Cost: time.Duration(c.pages) * s.PageTime}
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clk.NewFake(epoch.Add(start))
	opt := s.Options
	opt.Policy, opt.Clock, opt.Groups = policy, clock, len(s.GroupShare)
	mgr, err := recrawl.New(opt, specs)
	if err != nil {
		return nil, err
	}
	res := &Result{Setup: s.Name, Policy: policy}
	st := mgr.Stats()
	res.Groups = make([]GroupResult, len(st.Groups))
	for i, g := range st.Groups {
		res.Groups[i] = GroupResult{Rank: g.Rank, Channels: g.Channels}
	}
	misgrouped := 0
	for _, c := range chans {
		if grp, ok := mgr.GroupOf(c.id); ok && grp != c.group {
			misgrouped++
		}
	}
	res.Misgrouped = float64(misgrouped) / float64(len(chans))

	crawlers := make([]*crawler, s.Crawlers)
	var online []int
	normal := func(mean, dev time.Duration) time.Duration {
		return max(time.Minute, time.Duration(float64(mean)+r.NormFloat64()*float64(dev)))
	}
	for i := range crawlers {
		crawlers[i] = &crawler{online: true, until: normal(s.Lifetime, s.LifetimeDev)}
		online = append(online, i)
	}
	capacity := func() { mgr.SetCapacity(float64(len(online) * s.Threads)) }
	capacity()

	// assign gives a task to a random online crawler, forwarding it up to
	// twice when the queue is full (SARSS forwards to a less loaded one).
	assign := func(t *task) bool {
		if len(online) == 0 {
			return false
		}
		for range 3 {
			c := crawlers[online[r.IntN(len(online))]]
			if len(c.running) < s.Threads {
				c.running = append(c.running, t)
				return true
			}
			if len(c.queue) < s.Queue {
				c.queue = append(c.queue, t)
				return true
			}
		}
		return false
	}
	var now time.Duration // since start
	groupSum := make([]float64, len(res.Groups))
	var samples int
	var queuedSum, onlineSum float64
	for now = 0; now < s.Duration; now += time.Minute {
		abs := start + now
		clock.Set(epoch.Add(abs))
		// Churn.
		changed := false
		for i, c := range crawlers {
			if now < c.until {
				continue
			}
			changed = true
			if c.online {
				c.online = false
				c.until = now + normal(s.Downtime, s.DowntimeDev)
				handed := append(c.running, c.queue...)
				c.running, c.queue = nil, nil
				online = slices.DeleteFunc(online, func(j int) bool { return j == i })
				if r.Float64() < s.Notified {
					for _, t := range handed {
						t.end = 0
						if !assign(t) {
							res.Dropped++
							t.ch.inFlight--
						}
					}
				} else {
					res.Lost += len(handed)
					for _, t := range handed {
						t.ch.inFlight--
					}
				}
			} else {
				c.online = true
				c.until = now + normal(s.Lifetime, s.LifetimeDev)
				online = append(online, i)
			}
		}
		if changed {
			capacity()
		}
		// Finish and start tasks.
		queued := 0
		for _, ci := range online {
			c := crawlers[ci]
			kept := c.running[:0]
			for _, t := range c.running {
				if t.end == 0 {
					t.end = now + t.duration
				}
				if t.end <= now {
					finish(mgr, t, abs, res)
					continue
				}
				kept = append(kept, t)
			}
			c.running = kept
			for len(c.running) < s.Threads && len(c.queue) > 0 {
				t := c.queue[0]
				c.queue = c.queue[1:]
				if now > t.waitTill {
					res.Cancelled++
					t.ch.inFlight--
					continue
				}
				t.end = now + t.duration
				c.running = append(c.running, t)
			}
			queued += len(c.queue)
		}
		queuedSum += float64(queued)
		onlineSum += float64(len(online) * s.Threads)
		// Submit what is due.
		for _, rt := range mgr.Due() {
			ch := byID[rt.Channel]
			if s.OneTask && ch.inFlight > 0 {
				mgr.Done(rt, recrawl.Outcome{})
				res.Busy++
				continue
			}
			res.Tasks++
			res.Groups[rt.Group].Tasks++
			t := &task{t: rt, ch: ch, duration: time.Duration(ch.pages) * s.PageTime,
				waitTill: now + rt.Deadline.Sub(rt.Submitted)}
			ch.inFlight++
			if !assign(t) {
				res.Dropped++
				ch.inFlight--
			}
		}
		if now%s.Sample == 0 {
			st := mgr.Stats()
			smp := Sample{At: now, Online: len(online), Queued: queued}
			for _, c := range chans {
				if c.stale > abs {
					smp.Fresh++
				}
			}
			smp.Fresh /= float64(len(chans))
			for i, g := range st.Groups {
				smp.Intervals = append(smp.Intervals, g.Interval)
				groupSum[i] += float64(g.Interval)
			}
			samples++
			res.Series = append(res.Series, smp)
		}
	}
	end := start + s.Duration
	// Close the freshness and age integrals, and the update quality.
	var fresh, age, q, qw float64
	span := s.Duration.Seconds()
	for _, c := range chans {
		c.close(end)
		fresh += c.fresh / span
		age += c.age / span
		actual := float64(c.updates) / span
		expected := 1 / means[c.group].Seconds()
		q += actual / expected
		qw += math.Pow(2, float64(recrawl.Rank(c.group, len(s.GroupShare)))) * actual / expected
	}
	n := float64(len(chans))
	res.Freshness, res.Age = fresh/n, time.Duration(age/n*float64(time.Second))
	res.UpdateQuality, res.UpdateQualityW = q/n, qw/n
	st = mgr.Stats()
	res.Reassignments = st.Reassignments
	for i := range res.Groups {
		res.Groups[i].Updates = st.Groups[i].TotalUpdates
		if samples > 0 {
			res.Groups[i].Interval = time.Duration(groupSum[i] / float64(samples))
		}
	}
	res.Updates = 0
	for _, c := range chans {
		res.Updates += c.updates
	}
	if res.Tasks > 0 {
		res.SuccessRate = float64(res.Updates) / float64(res.Tasks)
	}
	steps := float64(max(1, int(s.Duration/time.Minute)))
	res.MeanQueued, res.MeanOnline, res.Threads = queuedSum/steps, onlineSum/steps, s.Crawlers*s.Threads
	for _, c := range chans {
		res.Demand += (time.Duration(c.pages) * s.PageTime).Seconds() / means[c.group].Seconds()
	}
	return res, nil
}

// finish completes t at abs: the channel's copy becomes its state at abs.
func finish(mgr *recrawl.Manager, t *task, abs time.Duration, res *Result) {
	c := t.ch
	c.inFlight--
	changed := c.advance(abs)
	c.updates++
	res.Pages += int64(c.pages)
	mgr.Done(t.t, recrawl.Outcome{Success: true, Changed: changed, Duration: t.duration, Pages: c.pages})
}

// advance integrates freshness and age up to a new snapshot at t and
// reports whether the channel changed since the last one.
func (c *channel) advance(t time.Duration) bool {
	changed := c.stale <= t
	c.integrate(t)
	for c.stream.Peek() <= t {
		c.stream.Next()
	}
	c.snapshot, c.stale = t, c.stream.Peek()
	return changed
}

// integrate adds [snapshot, t] to the integrals. A copy may be stale
// before its snapshot (Setup.WarmupCopies): its age then counts from its
// first change.
func (c *channel) integrate(t time.Duration) {
	if c.stale >= t {
		c.fresh += (t - c.snapshot).Seconds()
		return
	}
	from := max(c.stale, c.snapshot)
	c.fresh += (from - c.snapshot).Seconds()
	a, b := (from - c.stale).Seconds(), (t - c.stale).Seconds()
	c.age += (b*b - a*a) / 2
}

func (c *channel) close(end time.Duration) { c.integrate(end) }
