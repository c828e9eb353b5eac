package cluster

import (
	"errors"
	"sort"
	"time"
)

// A stopping crawl: what it waits for, a stop without waiting, and the
// recall of the slaves' leases.

// Waiting is a lease a stopping master waits for.
type Waiting struct {
	ID    string
	Site  string
	Slave string    // "" when no heartbeat has named it yet
	Until time.Time // its deadline and grace: the master gives it up then
}

// Waiting returns the remote leases still out, by site: what a stopping
// crawl waits for. A lease of a slave declared gone is not among them.
func (d *Dispatcher) Waiting() []Waiting {
	d.mu.Lock()
	out := make([]Waiting, 0, len(d.remote))
	for id, rl := range d.remote {
		out = append(out, Waiting{ID: id, Site: rl.lease.Key, Slave: rl.holder, Until: rl.lease.Deadline.Add(d.m.opt.Timing.Grace)})
	}
	d.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Site < out[j].Site })
	return out
}

// Abandon ends every remote lease now, for the engine, with the URLs whose
// pages have not come back returned, and keeps them in the master's book:
// a crawl stopping at once leaves them to its next run, which takes them
// over and applies their results. From then on results are left in their
// stream for that run. It returns how many leases it ended.
func (d *Dispatcher) Abandon() int {
	now := time.Now()
	d.mu.Lock()
	d.abandoned = true
	var ends []endedLease
	for id, rl := range d.remote {
		ends = append(ends, endedLease{id, rl, d.stopFollowing(id, rl, now)})
	}
	d.mu.Unlock()
	for _, e := range ends {
		go e.rl.report(e.end)
	}
	return len(ends)
}

// errAbandoned leaves a result in its stream for the next run.
var errAbandoned = errors.New("cluster: the crawl stopped without waiting; the result is left for its next run")

// Recall implements visit.Recaller: slaves end their leases after their
// current page while the crawl is paused or stopping (the master's loop
// hands out no lease then), and are told again at every heartbeat, so one
// that joins or comes back hears it too.
func (d *Dispatcher) Recall(halt bool) {
	d.mu.Lock()
	d.halted = halt
	d.mu.Unlock()
	d.m.control(halt, d.state())
}
