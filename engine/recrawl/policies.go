package recrawl

import (
	"time"
)

// fixedPolicy is SARSS's FIXED: each channel every 1/λ̂, whatever the
// capacity; it follows the estimate when Reestimate changes it.
type fixedPolicy struct{}

func (fixedPolicy) Name() PolicyName { return Fixed }

func (fixedPolicy) Start(b *Book) {
	for _, c := range b.Channels {
		c.Interval = c.Rate.Interval()
	}
}

func (fixedPolicy) Observe(_ *Book, c *Channel, _ Outcome) { c.Interval = c.Rate.Interval() }

func (fixedPolicy) Reassign(*Book) *Reassignment { return nil }

// startGroups gives every channel its group's initial interval, where
// SARSS's group policies start.
func startGroups(b *Book) {
	iv := make([]time.Duration, len(b.Groups))
	for i, g := range b.Groups {
		iv[i] = g.Initial
	}
	b.SetGroupIntervals(iv)
}

// iirPolicy is SARSS's Iterated Interval Reassignment (section 3.1).
type iirPolicy struct{}

func (iirPolicy) Name() PolicyName { return IIR }

func (iirPolicy) Start(b *Book) { startGroups(b) }

func (iirPolicy) Observe(*Book, *Channel, Outcome) {}

// Reassign follows SARSS's InheritedIntervalReassignment: each group's new
// interval is the mean of its channels' historyIntervals, multiplied by δ
// when the group's success rate rose since the last reassignment; then
// checkPriorities. (The pseudocode never resets RecrawlCount and
// SuccessCount between groups; this sums them per group, as the text says.)
// A group without channels keeps its interval.
func (iirPolicy) Reassign(b *Book) *Reassignment {
	if !b.QuorumReached() {
		return nil
	}
	iv := make([]time.Duration, len(b.Groups))
	rates := make([]float64, len(b.Groups))
	for i, g := range b.Groups {
		iv[i] = g.Interval
		if len(g.Channels) == 0 {
			continue
		}
		var sum time.Duration
		for _, c := range g.Channels {
			sum += c.HInterval(b.Now)
		}
		iv[i] = sum / time.Duration(len(g.Channels))
		rates[i] = encourage(b, g, &iv[i])
	}
	CheckPriorities(iv, b.Opt.SmallestMultiple, b.Opt.BiggestMultiple)
	b.SetGroupIntervals(iv)
	return &Reassignment{SuccessRates: rates}
}

// encourage is SARSS's encourage mechanism: if g's success rate rose since
// the last reassignment, its new interval is multiplied by δ. It returns
// the success rate and remembers it as lastSuccessRate.
func encourage(b *Book, g *Group, interval *time.Duration) float64 {
	rate := g.successRate()
	if rate > g.LastSuccessRate {
		*interval = time.Duration(float64(*interval) * b.Opt.Encourage)
	}
	g.LastSuccessRate = rate
	return rate
}

// CheckPriorities is SARSS's checkPriorities over intervals, fastest group
// first: a group's interval is never under the previous group's (if it is,
// it becomes the previous one's times σ), nor over the previous one's times
// μ. Groups whose interval is 0 (no channels) are skipped.
func CheckPriorities(iv []time.Duration, sigma, mu float64) {
	prev := -1
	for p := range iv {
		if iv[p] <= 0 {
			continue
		}
		if prev >= 0 {
			if iv[p] < iv[prev] {
				iv[p] = time.Duration(float64(iv[prev]) * sigma)
			}
			if limit := time.Duration(float64(iv[prev]) * mu); iv[p] > limit {
				iv[p] = limit
			}
		}
		prev = p
	}
}

// icrPolicy is SARSS's Iterated Capacity Reassignment (section 3.2).
type icrPolicy struct{ theta float64 }

func (*icrPolicy) Name() PolicyName { return ICR }

func (p *icrPolicy) Start(b *Book) {
	p.theta = 1
	startGroups(b)
}

func (*icrPolicy) Observe(*Book, *Channel, Outcome) {}

// Reassign computes θ by equation 4. The groups' intervals are
// ΔT_k = Π_{j<k} ω_j · θ · Δt with Δt the top group's initial interval and
// ω_j the ratio of the initial intervals of groups j+1 and j, so
// Π_{j<k} ω_j · Δt is group k's initial interval and equation 4 reads
//
//	θ = Σ_k (Σ_{PGP(k)} t̄_j) / Initial_k  /  history(Σ_l λ_l·t̄_l),
//
// the robot time the initial intervals would need over the robot time the
// last L updates of each channel actually used. Then, as the paper adds,
// the encourage mechanism and checkPriorities.
func (p *icrPolicy) Reassign(b *Book) *Reassignment {
	if !b.QuorumReached() {
		return nil
	}
	history := b.CapacityHistory()
	if history <= 0 {
		return nil
	}
	fallback := b.meanCost().Seconds()
	var demand float64
	for _, g := range b.Groups {
		if len(g.Channels) == 0 || g.Initial <= 0 {
			continue
		}
		var sum float64
		for _, c := range g.Channels {
			if d := c.MeanDuration(); d > 0 {
				sum += d.Seconds()
			} else {
				sum += fallback
			}
		}
		demand += sum / g.Initial.Seconds()
	}
	p.theta = demand / history
	iv := make([]time.Duration, len(b.Groups))
	rates := make([]float64, len(b.Groups))
	for i, g := range b.Groups {
		iv[i] = time.Duration(p.theta * float64(g.Initial))
		if len(g.Channels) == 0 {
			iv[i] = 0
			continue
		}
		rates[i] = encourage(b, g, &iv[i])
	}
	CheckPriorities(iv, b.Opt.SmallestMultiple, b.Opt.BiggestMultiple)
	for i, g := range b.Groups {
		if iv[i] == 0 {
			iv[i] = g.Interval
		}
	}
	b.SetGroupIntervals(iv)
	return &Reassignment{SuccessRates: rates, Theta: p.theta}
}

// adaptivePolicy is the multiplicative rule of Nutch's AdaptiveFetchSchedule
// (and StormCrawler's AdaptiveScheduler): after each recrawl the channel's
// interval shrinks by dec_rate if it changed and grows by inc_rate if not,
// within the bounds. It ignores capacity and never reassigns groups.
type adaptivePolicy struct{}

func (adaptivePolicy) Name() PolicyName { return Adaptive }

func (adaptivePolicy) Start(b *Book) {
	for _, c := range b.Channels {
		c.Interval = min(c.Rate.Interval(), b.Opt.MaxInterval)
	}
}

func (adaptivePolicy) Observe(b *Book, c *Channel, o Outcome) {
	f := 1 + b.Opt.IncRate
	if o.Changed {
		f = 1 - b.Opt.DecRate
	}
	c.Interval = min(max(time.Duration(float64(c.Interval)*f), b.Opt.MinInterval), b.Opt.MaxInterval)
}

func (adaptivePolicy) Reassign(*Book) *Reassignment { return nil }
