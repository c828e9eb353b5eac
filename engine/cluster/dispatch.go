package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"sync"
	"time"

	"lidi/engine/visit"
)

// maxPart bounds a result part's JSON before compression, well under the
// server's 8 MiB message limit.
const maxPart = 2 << 20

// EncodeLease is the lease as it travels to a slave (Master.Lease
// compresses it).
func EncodeLease(l *visit.Lease) ([]byte, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("cluster: encoding lease %d: %w", l.ID, err)
	}
	return b, nil
}

// DecodeLease is EncodeLease's inverse.
func DecodeLease(b []byte) (*visit.Lease, error) {
	var l visit.Lease
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("%w: lease: %v", ErrBadMessage, err)
	}
	if l.ID == 0 || l.Key == "" || !l.Addr.IsValid() {
		return nil, fmt.Errorf("%w: lease without id, site or address", ErrBadMessage)
	}
	return &l, nil
}

// EncodeResults batches a lease's results into parts (Cho's exchange mode,
// batched per lease): each part a JSON array under maxPart bytes, unless
// one result alone is larger.
func EncodeResults(rs []visit.Result) ([][]byte, error) {
	var parts [][]byte
	cur := []byte{'['}
	for _, r := range rs {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("cluster: encoding result %d of lease %d: %w", r.Seq, r.Lease, err)
		}
		if len(cur) > 1 && len(cur)+len(b) > maxPart {
			parts = append(parts, append(cur, ']'))
			cur = []byte{'['}
		}
		if len(cur) > 1 {
			cur = append(cur, ',')
		}
		cur = append(cur, b...)
	}
	return append(parts, append(cur, ']')), nil
}

// DecodeResults is EncodeResults's inverse: the results of all parts, in
// Seq order.
func DecodeResults(parts [][]byte) ([]visit.Result, error) {
	var out []visit.Result
	for _, p := range parts {
		var rs []visit.Result
		if err := json.Unmarshal(p, &rs); err != nil {
			return nil, fmt.Errorf("%w: results: %v", ErrBadMessage, err)
		}
		out = append(out, rs...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out, nil
}

// DispatcherOptions configures a Dispatcher.
type DispatcherOptions struct {
	// Local runs leases on the master's own robots, at most LocalRobots
	// at once; nil (or LocalRobots 0) leaves every lease to the slaves.
	Local       visit.Dispatcher
	LocalRobots int
	// SetRobots, when not nil, is told how many leases the crawl may
	// have in flight: the local robots plus the robots of the slaves
	// heard from (the engine's SetRobots).
	SetRobots func(int)
}

// Dispatcher runs a crawl's leases on slaves through a Master, and on the
// master's own robots while they have room: the engine's loop schedules
// both the same way. It gives up a remote lease whose result has not come
// by its deadline plus the grace (the engine's loop does the same and
// leases the site again). It hands the engine the leases an earlier run of
// the master left with slaves (visit.Resumer), and recalls the slaves'
// leases when the crawl pauses or stops (visit.Recaller). It is safe for
// concurrent use.
type Dispatcher struct {
	m   *Master
	opt DispatcherOptions

	mu        sync.Mutex
	remote    map[string]*remoteLease
	localBusy int
	earlier   []Booked // the book an earlier run left, until Resume
	expired   int64
	robots    int
	halted    bool
	stop      chan struct{}
}

type remoteLease struct {
	lease  *visit.Lease
	report func(visit.Result)
	timer  *time.Timer
}

// NewDispatcher returns a Dispatcher on m. Once Resume is called (the
// engine's Run does it first), m applies the slaves' results through it
// (replacing MasterOptions.Apply); until then they wait in their stream,
// so that a result of an earlier run's lease is not taken before the
// engine has taken the lease over.
func NewDispatcher(m *Master, opt DispatcherOptions) *Dispatcher {
	d := &Dispatcher{m: m, opt: opt, remote: make(map[string]*remoteLease), earlier: m.Book(),
		stop: make(chan struct{}), robots: -1}
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
// takes over are reported to it as those of its own, until the lease's
// deadline and grace; the earlier run's other leases are forgotten (their
// results, should they come, are dropped).
func (d *Dispatcher) Resume(leases []*visit.Lease, report func(visit.Result)) {
	d.mu.Lock()
	earlier := d.earlier
	d.earlier = nil
	taken := make(map[string]bool, len(leases))
	for _, l := range leases {
		id := strconv.FormatUint(l.ID, 10)
		taken[id] = true
		d.follow(id, l, report)
	}
	d.mu.Unlock()
	for _, b := range earlier {
		if !taken[b.ID] {
			d.m.Forget(context.Background(), b.ID)
		}
	}
	d.m.setApply(d.apply)
}

// follow waits for a remote lease's result until its deadline and grace.
// Called with d.mu held.
func (d *Dispatcher) follow(id string, l *visit.Lease, report func(visit.Result)) {
	rl := &remoteLease{lease: l, report: report}
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
// slaves' robots.
func (d *Dispatcher) followSlaves() {
	t := time.NewTicker(d.m.opt.Timing.Heartbeat / 2)
	defer t.Stop()
	for {
		n := d.opt.LocalRobots
		for _, s := range d.m.Slaves() {
			n += s.Robots
		}
		d.mu.Lock()
		changed := n != d.robots
		d.robots = n
		halted := d.halted
		d.mu.Unlock()
		if halted {
			d.m.control(true)
		}
		if changed && d.opt.SetRobots != nil {
			d.opt.SetRobots(n)
		}
		select {
		case <-t.C:
		case <-d.stop:
			return
		}
	}
}

// DispatcherStats are a Dispatcher's figures, a value snapshot.
type DispatcherStats struct {
	Remote  int   // leases with slaves
	Local   int   // leases on the master's own robots
	Expired int64 // remote leases given up at their deadline and grace
	Robots  int   // leases the crawl may have in flight
}

// Stats returns the dispatcher's figures.
func (d *Dispatcher) Stats() DispatcherStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return DispatcherStats{Remote: len(d.remote), Local: d.localBusy, Expired: d.expired, Robots: max(d.robots, 0)}
}

// Dispatch implements visit.Dispatcher.
func (d *Dispatcher) Dispatch(ctx context.Context, l *visit.Lease, report func(visit.Result)) {
	d.mu.Lock()
	pinned := d.m.TagFor(l.Host, l.Addr) != ""
	if d.opt.Local != nil && d.localBusy < d.opt.LocalRobots && !pinned {
		d.localBusy++
		d.mu.Unlock()
		d.opt.Local.Dispatch(ctx, l, func(r visit.Result) {
			if r.End != nil {
				d.mu.Lock()
				d.localBusy--
				d.mu.Unlock()
			}
			report(r)
		})
		return
	}
	id := strconv.FormatUint(l.ID, 10)
	d.follow(id, l, report)
	d.mu.Unlock()
	go d.publish(ctx, id, l)
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
		// whose slave died, so the site is never leased twice at once.
		d.m.event(SlaveEvent{Time: time.Now(), Kind: LeaseExpired, Text: fmt.Sprintf("lease %s of %s: %v; it is given up at its deadline", id, l.Key, err)})
	}
}

// expire gives up a remote lease at its deadline plus the grace.
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

// apply hands a slave's results to the loop, once: a lease given up, or
// applied already, drops them. stored hears when the crawl's store has
// them.
func (d *Dispatcher) apply(_ context.Context, id string, parts [][]byte, stored func(error)) error {
	rs, err := DecodeResults(parts)
	if err != nil {
		return err
	}
	d.mu.Lock()
	rl := d.remote[id]
	delete(d.remote, id)
	d.mu.Unlock()
	if rl == nil {
		stored(nil) // nothing to store
		return nil
	}
	rl.timer.Stop()
	mine := rs[:0]
	for _, r := range rs {
		if r.Lease == rl.lease.ID {
			mine = append(mine, r)
		}
	}
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

// Recall implements visit.Recaller: slaves end their leases after their
// current page while the crawl is paused or stopping (the master's loop
// hands out no lease then), and are told again at every heartbeat, so one
// that joins or comes back hears it too.
func (d *Dispatcher) Recall(halt bool) {
	d.mu.Lock()
	d.halted = halt
	d.mu.Unlock()
	d.m.control(halt)
}
