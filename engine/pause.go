package engine

import (
	"cmp"
	"slices"
	"time"
)

// LoopStep names a part of the loop's work, for Stats.LoopSteps: where the
// loop's longest wake-up spent its time.
type LoopStep uint8

const (
	StepResults  LoopStep = iota // robots' results (pages, ends of leases) beyond the steps below
	StepDetect                   // duplicate detection's decisions on fetched pages
	StepRefilter                 // leases running cut by what detection learned
	StepDiscover                 // links followed: the seen set, new sites, the batch
	StepGraph                    // links recorded in the link graph
	StepHeads                    // queue heads turned into leases
	StepDispatch                 // sites taken from the frontier for visits
	StepStore                    // waiting for the committer to take a batch or a head request
	StepDNS                      // look-ups answered
	StepRank                     // PageRank runs started and taken
	StepRecrawl                  // the recrawl's tick
	StepTimers                   // leases expired, look-ups and parked sites retried, the console's requests
	StepPublish                  // Stats copied, the end checked
	numLoopSteps
)

var loopStepNames = [numLoopSteps]string{"results", "detect", "refilter", "discover", "graph", "heads", "dispatch", "store", "dns", "rank", "recrawl", "timers", "publish"}

func (s LoopStep) String() string {
	if s < numLoopSteps {
		return loopStepNames[s]
	}
	return "step?"
}

// LoopStepTime is the time one step took in the loop's longest wake-up.
type LoopStepTime struct {
	Step LoopStep
	Took time.Duration
}

// stepClock times the steps of the loop's wake-ups and keeps the longest
// wake-up's split. Between start and end, mark gives the time since the
// last mark to a step, so nested work marked on its own is not counted
// twice. The zero value is ready; only the loop goroutine uses it.
type stepClock struct {
	now   func() time.Time // nil: time.Now
	woke  time.Time        // when the current wake-up began
	last  time.Time
	cur   [numLoopSteps]time.Duration
	worst time.Duration // the longest wake-up (Stats.LoopPause)
	// own is the longest wake-up less its waits for the store
	// (Stats.LoopWork): the loop's own work, which a slow write does not
	// lengthen.
	own      time.Duration
	split    [numLoopSteps]time.Duration
	ownSplit [numLoopSteps]time.Duration // own's wake-up's steps
	wakeups  int64                       // wake-ups started (Stats.LoopWakeups)
}

// clock returns the time now.
func (k *stepClock) clock() time.Time {
	if k.now != nil {
		return k.now()
	}
	return time.Now()
}

// start begins a wake-up now.
func (k *stepClock) start() {
	k.wakeups++
	k.woke = k.clock()
	k.last = k.woke
	k.cur = [numLoopSteps]time.Duration{}
}

// mark gives the time since the last mark to step s.
func (k *stepClock) mark(s LoopStep) {
	t := k.clock()
	k.cur[s] += t.Sub(k.last)
	k.last = t
}

// end closes the current wake-up, its remainder going to s.
func (k *stepClock) end(s LoopStep) {
	k.mark(s)
	d := k.last.Sub(k.woke)
	if d > k.worst {
		k.worst, k.split = d, k.cur
	}
	if o := d - k.cur[StepStore]; o > k.own {
		k.own, k.ownSplit = o, k.cur
	}
}

// steps returns the longest wake-up's steps that took time, longest first.
func (k *stepClock) steps() []LoopStepTime { return stepTimes(&k.split) }

// ownSteps returns the steps of the wake-up longest without its waits for
// the store (own) that took time, longest first.
func (k *stepClock) ownSteps() []LoopStepTime { return stepTimes(&k.ownSplit) }

// stepTimes returns the steps of split that took time, longest first.
func stepTimes(split *[numLoopSteps]time.Duration) []LoopStepTime {
	var out []LoopStepTime
	for s, d := range split {
		if d > 0 {
			out = append(out, LoopStepTime{Step: LoopStep(s), Took: d})
		}
	}
	slices.SortFunc(out, func(a, b LoopStepTime) int { return cmp.Compare(b.Took, a.Took) })
	return out
}
