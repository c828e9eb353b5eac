package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"lidi/engine"
)

// maxPart bounds a result part's JSON before compression, well under the
// server's 8 MiB message limit.
const maxPart = 2 << 20

// EncodeLease is the lease as it travels to a slave (Master.Lease
// compresses it).
func EncodeLease(l *engine.Lease) ([]byte, error) {
	b, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("cluster: encoding lease %d: %w", l.ID, err)
	}
	return b, nil
}

// DecodeLease is EncodeLease's inverse.
func DecodeLease(b []byte) (*engine.Lease, error) {
	var l engine.Lease
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
func EncodeResults(rs []engine.Result) ([][]byte, error) {
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
func DecodeResults(parts [][]byte) ([]engine.Result, error) {
	var out []engine.Result
	for _, p := range parts {
		var rs []engine.Result
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
	Local       engine.Dispatcher
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
// leases the site again). It is safe for concurrent use.
type Dispatcher struct {
	m   *Master
	opt DispatcherOptions

	mu        sync.Mutex
	remote    map[string]*remoteLease
	localBusy int
	// held are the sites of leases of an earlier run of the master
	// (from its book): a slave may still crawl them until their
	// deadline and grace, so no new lease of the site starts before.
	held    map[string]time.Time // by site key, and by address (a shared host)
	heldIDs map[string]Booked    // the earlier run's leases, by id
	expired int64
	robots  int
	stop    chan struct{}
}

type remoteLease struct {
	lease  *engine.Lease
	report func(engine.Result)
	timer  *time.Timer
}

// NewDispatcher returns a Dispatcher on m, and makes m apply the slaves'
// results through it (replacing MasterOptions.Apply).
func NewDispatcher(m *Master, opt DispatcherOptions) *Dispatcher {
	d := &Dispatcher{m: m, opt: opt, remote: make(map[string]*remoteLease), held: make(map[string]time.Time),
		heldIDs: make(map[string]Booked), stop: make(chan struct{}), robots: -1}
	for _, b := range m.Book() {
		d.hold(b, b.Deadline.Add(m.opt.Timing.Grace))
		d.heldIDs[b.ID] = b
	}
	m.setApply(d.apply)
	go d.followSlaves()
	return d
}

// hold keeps new leases off an earlier lease's site and address until
// until. Called with d.mu held, or before d is shared.
func (d *Dispatcher) hold(b Booked, until time.Time) {
	for _, k := range []string{b.Site, "addr " + b.Addr} {
		if until.After(d.held[k]) {
			d.held[k] = until
		}
	}
}

// heldUntil is when a lease of l may start, by the earlier run's leases;
// the zero time when it may now. Called with d.mu held.
func (d *Dispatcher) heldUntil(l *engine.Lease, now time.Time) time.Time {
	var until time.Time
	for _, k := range []string{l.Key, "addr " + l.Addr.String()} {
		t, ok := d.held[k]
		switch {
		case !ok:
		case now.Before(t):
			until = maxTime(until, t)
		default:
			delete(d.held, k)
		}
	}
	return until
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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
		d.mu.Unlock()
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

// Dispatch implements engine.Dispatcher.
func (d *Dispatcher) Dispatch(ctx context.Context, l *engine.Lease, report func(engine.Result)) {
	now := time.Now()
	d.mu.Lock()
	if until := d.heldUntil(l, now); !until.IsZero() {
		d.mu.Unlock()
		// A slave may still be on the site or its address: back in
		// the queue until the earlier lease is done for.
		go report(engine.Result{Lease: l.ID, Seq: 1, End: &engine.LeaseEnd{Next: until, Delay: l.Delay, Returned: urlIDs(l.URLs)}})
		return
	}
	pinned := d.m.TagFor(l.Host, l.Addr) != ""
	if d.opt.Local != nil && d.localBusy < d.opt.LocalRobots && !pinned {
		d.localBusy++
		d.mu.Unlock()
		d.opt.Local.Dispatch(ctx, l, func(r engine.Result) {
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
	rl := &remoteLease{lease: l, report: report}
	d.remote[id] = rl
	rl.timer = time.AfterFunc(time.Until(l.Deadline.Add(d.m.opt.Timing.Grace)), func() { d.expire(id) })
	d.mu.Unlock()
	go d.publish(ctx, id, l)
}

func (d *Dispatcher) publish(ctx context.Context, id string, l *engine.Lease) {
	payload, err := EncodeLease(l)
	if err == nil {
		err = d.m.Lease(ctx, LeaseMsg{ID: id, Site: l.Key, Host: l.Host, Addr: l.Addr, Deadline: l.Deadline, Payload: payload})
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
// applied already, drops them.
func (d *Dispatcher) apply(_ context.Context, id string, parts [][]byte) error {
	rs, err := DecodeResults(parts)
	if err != nil {
		return err
	}
	d.mu.Lock()
	rl := d.remote[id]
	delete(d.remote, id)
	if b, ok := d.heldIDs[id]; ok {
		// An earlier run's lease is done: its site and address are
		// free once the delay after its last request has passed (its
		// end says when; the engine never hears of it).
		delete(d.heldIDs, id)
		next := time.Now()
		for _, r := range rs {
			if r.End != nil && r.End.Next.After(next) {
				next = r.End.Next
			}
		}
		d.held[b.Site] = next
		// Other earlier leases on the address still hold it.
		addr := next
		for _, o := range d.heldIDs {
			if o.Addr == b.Addr {
				addr = maxTime(addr, o.Deadline.Add(d.m.opt.Timing.Grace))
			}
		}
		d.held["addr "+b.Addr] = addr
	}
	d.mu.Unlock()
	if rl == nil {
		return nil
	}
	rl.timer.Stop()
	for _, r := range rs {
		if r.Lease != rl.lease.ID {
			continue
		}
		rl.report(r)
	}
	return nil
}

func urlIDs(urls []engine.QueuedURL) []uint64 {
	ids := make([]uint64, len(urls))
	for i, q := range urls {
		ids[i] = q.ID
	}
	return ids
}
