package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"lidi/engine/visit"
)

// DispatcherOptions configures a Dispatcher.
type DispatcherOptions struct {
	// Local runs leases on the master's own robots, at most LocalRobots
	// at once; nil (or LocalRobots 0) leaves every lease to the slaves.
	Local       visit.Dispatcher
	LocalRobots int
	// SetRobots, when not nil, is told how many leases the crawl may
	// have in flight: the local robots plus the robots of the live
	// slaves (the engine's SetRobots).
	SetRobots func(int)
	// Stopping, when not nil, reports whether the crawl is stopping for
	// good (a halt is then told to slaves as "stopping", else "paused").
	Stopping func() bool
}

// Dispatcher runs a crawl's leases on slaves through a Master, and on the
// master's own robots while they have room: the engine's loop schedules
// both the same way. Results come back page by page while a lease runs.
// A lease whose slave is declared gone (three heartbeats without one) ends
// at once, with the URLs whose pages have not come back returned: the
// slave stopped fetching by itself two heartbeats after its last
// acknowledged heartbeat (its liberty), so no request of it can reach the
// site any more, and the crawl's robot count follows the live slaves. A
// lease whose holder is never heard of is given up at its deadline plus
// the grace. It hands the engine the leases an earlier run of the master
// left with slaves (visit.Resumer), and recalls the slaves' leases when
// the crawl pauses or stops (visit.Recaller). Pages a slave declared gone
// delivers afterwards open their site's next lease (late.go). It is safe
// for concurrent use.
type Dispatcher struct {
	m   *Master
	opt DispatcherOptions

	mu        sync.Mutex
	remote    map[string]*remoteLease
	localBusy int
	earlier   []Booked // the book an earlier run left, until Resume
	expired   int64
	given     int64 // leases ended because their slave was declared gone
	// givenBack are the sites of leases given back with URLs to fetch,
	// and when: their next lease is an event (how long a dead slave's
	// sites waited).
	givenBack map[string]time.Time
	robots    int
	// ghosts are the leases ended because their slave was declared gone,
	// by id, and late the pages such slaves delivered afterwards, by
	// site and URL, until their site's next lease (late.go).
	ghosts      map[string]*ghost
	late        map[string]map[uint64]latePage
	lateApplied int64
	halted      bool
	abandoned   bool // Abandon was called: results wait for the next run
	stop        chan struct{}
	recount     chan struct{}
}

type remoteLease struct {
	lease  *visit.Lease
	report func(visit.Result)
	timer  *time.Timer
	// holder is the slave working the lease, from its heartbeats ("" until
	// one names it).
	holder string
	// pages are the Seqs of the results passed to the loop, with the URL
	// of each page (0 for other results).
	pages map[int]uint64
	// since is when it was handed out (or taken over); reclaiming is set
	// while the master checks who holds a lease no heartbeat named.
	since      time.Time
	reclaiming bool
	// drained is when its holder first said, while the lease was out,
	// that it no longer works on it and has delivered all it spooled.
	drained time.Time
	// adopted: a lease of an earlier run of the master, taken over. The
	// parts that run stored never come again, so its results are passed
	// numbered anew in the order they come (the engine's run of the
	// lease starts at Seq 1); sent are the slave's Seqs seen.
	adopted bool
	sent    map[int]bool
	// offset is how many late pages opened the lease (lateFirst): the
	// robot's results come after them.
	offset int
}

// NewDispatcher returns a Dispatcher on m. Once Resume is called (the
// engine's Run does it first), m applies the slaves' results through it
// (replacing MasterOptions.Apply); until then they wait in their stream,
// so that a result of an earlier run's lease is not taken before the
// engine has taken the lease over.
func NewDispatcher(m *Master, opt DispatcherOptions) *Dispatcher {
	d := &Dispatcher{m: m, opt: opt, remote: make(map[string]*remoteLease), earlier: m.Book(),
		stop: make(chan struct{}), recount: make(chan struct{}, 1), robots: -1}
	m.mu.Lock()
	m.onStatus, m.onGone, m.onLate = d.status, d.gone, d.onLate
	m.mu.Unlock()
	go d.followSlaves()
	return d
}

// Outstanding implements visit.Resumer: the leases of the master's book
// when the Dispatcher was made, those an earlier run left with slaves.
// A lease of an older book, kept without its URLs, comes with none: its
// site is held all the same.
func (d *Dispatcher) Outstanding() []*visit.Lease {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]*visit.Lease, 0, len(d.earlier))
	for _, b := range d.earlier {
		l := new(visit.Lease)
		if len(b.Lease) == 0 || json.Unmarshal(b.Lease, l) != nil {
			l = &visit.Lease{Key: b.Site}
			l.ID, _ = strconv.ParseUint(b.ID, 10, 64)
			l.Addr, _ = netip.ParseAddr(b.Addr)
		}
		l.Deadline = b.Deadline
		out = append(out, l)
	}
	return out
}

// Resume implements visit.Resumer: the results of the leases the engine
// takes over are reported to it as those of its own, until their end, the
// slave working them declared gone, or their deadline and grace; the
// earlier run's other leases are forgotten (their results, should they
// come, are dropped).
func (d *Dispatcher) Resume(leases []*visit.Lease, report func(visit.Result)) {
	d.mu.Lock()
	earlier := d.earlier
	d.earlier = nil
	taken := make(map[string]bool, len(leases))
	for _, l := range leases {
		id := strconv.FormatUint(l.ID, 10)
		taken[id] = true
		d.follow(id, l, report)
		d.remote[id].adopted, d.remote[id].sent = true, make(map[int]bool)
	}
	d.mu.Unlock()
	for _, b := range earlier {
		if !taken[b.ID] {
			d.m.Forget(context.Background(), b.ID)
		}
	}
	d.m.setApply(d.apply)
}

// follow waits for a remote lease's results. Called with d.mu held.
func (d *Dispatcher) follow(id string, l *visit.Lease, report func(visit.Result)) {
	rl := &remoteLease{lease: l, report: report, pages: make(map[int]uint64), since: time.Now()}
	d.remote[id] = rl
	rl.timer = time.AfterFunc(time.Until(l.Deadline.Add(d.m.opt.Timing.Grace)), func() { d.expire(id) })
}

// Close stops following the slaves; leases in flight are left to the
// master's book.
func (d *Dispatcher) Close() {
	close(d.stop)
	d.mu.Lock()
	for _, r := range d.remote {
		r.timer.Stop()
	}
	d.mu.Unlock()
}

// followSlaves keeps the crawl's robot count at the local robots plus the
// live slaves' robots, and tells the slaves again of a halt at every
// heartbeat.
func (d *Dispatcher) followSlaves() {
	t := time.NewTicker(d.m.opt.Timing.Heartbeat / 4)
	defer t.Stop()
	beat := time.NewTicker(d.m.opt.Timing.Heartbeat)
	defer beat.Stop()
	for {
		n := d.opt.LocalRobots
		for _, s := range d.m.Slaves() {
			if !s.Stopping {
				n += s.Robots
			}
		}
		d.mu.Lock()
		changed := n != d.robots
		d.robots = n
		d.mu.Unlock()
		if changed && d.opt.SetRobots != nil {
			d.opt.SetRobots(n)
		}
		d.unnamed()
		d.mu.Lock()
		d.prune(time.Now())
		d.mu.Unlock()
		select {
		case <-t.C:
		case <-d.recount:
		case <-beat.C:
			d.mu.Lock()
			halted := d.halted
			d.mu.Unlock()
			if halted {
				d.m.control(true, d.state())
			}
		case <-d.stop:
			return
		}
	}
}

// state is the crawl's state as slaves are told it.
func (d *Dispatcher) state() string {
	d.mu.Lock()
	halted := d.halted
	d.mu.Unlock()
	switch {
	case d.opt.Stopping != nil && d.opt.Stopping():
		return "stopping"
	case halted:
		return "paused"
	}
	return "running"
}

// DispatcherStats are a Dispatcher's figures, a value snapshot.
type DispatcherStats struct {
	Remote  int   // leases with slaves
	Local   int   // leases on the master's own robots
	Expired int64 // remote leases given up at their deadline and grace
	Given   int64 // remote leases ended because their slave was declared gone
	Late    int64 // pages a slave declared gone delivered late, applied in its site's next lease
	Robots  int   // leases the crawl may have in flight
}

// Stats returns the dispatcher's figures.
func (d *Dispatcher) Stats() DispatcherStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return DispatcherStats{Remote: len(d.remote), Local: d.localBusy, Expired: d.expired, Given: d.given, Late: d.lateApplied, Robots: max(d.robots, 0)}
}

// Dispatch implements visit.Dispatcher. A lease of a site for which a
// slave declared gone delivered pages late opens with those pages (see
// lateFirst); its robot gets the other URLs.
func (d *Dispatcher) Dispatch(ctx context.Context, l *visit.Lease, report func(visit.Result)) {
	d.mu.Lock()
	if at, ok := d.givenBack[l.Key]; ok {
		delete(d.givenBack, l.Key)
		now := time.Now()
		go d.m.event(SlaveEvent{Time: now, Kind: LeaseAgain,
			Text: fmt.Sprintf("lease %d of %s handed out again %s after its slave was declared gone", l.ID, l.Key, now.Sub(at).Round(time.Millisecond))})
	}
	first, robot := d.lateFirst(l)
	if len(first) > 0 {
		go d.reportLate(l, first, report)
	}
	k := len(first)
	pinned := d.m.TagFor(l.Host, l.Addr) != ""
	if d.opt.Local != nil && d.localBusy < d.opt.LocalRobots && !pinned {
		d.localBusy++
		d.mu.Unlock()
		d.opt.Local.Dispatch(ctx, robot, func(r visit.Result) {
			if r.End != nil {
				d.mu.Lock()
				d.localBusy--
				d.mu.Unlock()
			}
			report(shifted(r, k))
		})
		return
	}
	id := strconv.FormatUint(l.ID, 10)
	d.follow(id, l, report)
	rl := d.remote[id]
	rl.offset = k
	for i, r := range first {
		rl.pages[i+1] = r.Page.Record.URL
	}
	d.mu.Unlock()
	go d.publish(ctx, id, robot)
}

func (d *Dispatcher) publish(ctx context.Context, id string, l *visit.Lease) {
	payload, err := EncodeLease(l)
	var book []byte
	if err == nil {
		// What a master started again needs to take the lease over:
		// robots.txt, which may be large, comes back with the result.
		kept := *l
		kept.Robots = nil
		book, err = EncodeLease(&kept)
	}
	if err == nil {
		err = d.m.Lease(ctx, LeaseMsg{ID: id, Site: l.Key, Host: l.Host, Addr: l.Addr, Deadline: l.Deadline, Payload: payload, Book: book})
	}
	if err != nil && ctx.Err() == nil {
		// Not known to be out, nor known not to be (an acknowledgement
		// lost): the lease runs out at its deadline and grace like one
		// whose slave is never heard of, so the site is never leased
		// twice at once.
		d.m.event(SlaveEvent{Time: time.Now(), Kind: LeaseExpired, Text: fmt.Sprintf("lease %s of %s: %v; it is given up at its deadline", id, l.Key, err)})
	}
}

// expire gives up a remote lease at its deadline plus the grace: no slave
// named it in a heartbeat and no end came.
func (d *Dispatcher) expire(id string) {
	d.mu.Lock()
	rl := d.remote[id]
	delete(d.remote, id)
	if rl != nil {
		d.expired++
	}
	d.mu.Unlock()
	if rl == nil {
		return
	}
	d.m.Forget(context.Background(), id)
	d.m.event(SlaveEvent{Time: time.Now(), Kind: LeaseExpired,
		Text: fmt.Sprintf("lease %s of %s expired: no result by its deadline %s and the grace; its URLs are queued again", id, rl.lease.Key, rl.lease.Deadline.Format(time.TimeOnly))})
}

// apply hands a part of a slave's results to the loop, once each: a lease
// ended (or given up) drops them. stored hears when the crawl's store has
// them.
func (d *Dispatcher) apply(_ context.Context, id string, part []byte, stored func(error)) error {
	rs, err := DecodeResults([][]byte{part})
	if err != nil {
		return err
	}
	d.mu.Lock()
	if d.abandoned {
		d.mu.Unlock()
		return errAbandoned
	}
	rl := d.remote[id]
	if rl == nil {
		// Ended: a late part of a slave declared gone keeps its pages
		// for the site's next lease.
		d.keepLate(id, rs)
		d.mu.Unlock()
		stored(nil) // nothing to store now
		return nil
	}
	mine := rs[:0]
	for _, r := range rs {
		if r.Lease != rl.lease.ID {
			continue
		}
		r = shifted(r, rl.offset)
		if rl.adopted {
			if rl.sent[r.Seq] {
				continue
			}
			rl.sent[r.Seq] = true
			r.Seq = len(rl.pages) + 1
		} else if _, dup := rl.pages[r.Seq]; dup {
			continue
		}
		var u uint64
		if r.Page != nil {
			u = r.Page.Record.URL
		}
		rl.pages[r.Seq] = u
		mine = append(mine, r)
		if r.End != nil {
			delete(d.remote, id)
			rl.timer.Stop()
		}
	}
	d.mu.Unlock()
	if len(mine) == 0 {
		stored(nil)
		return nil
	}
	// The loop applies a lease's results in order and writes them in
	// order: the last one stored, all are.
	mine[len(mine)-1].Committed = stored
	for _, r := range mine {
		rl.report(r)
	}
	return nil
}
