package cluster

import (
	"context"
	"encoding/json"
	"errors"
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
// the crawl pauses or stops (visit.Recaller). It is safe for concurrent
// use.
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

// unnamed checks the remote leases no heartbeat has named three
// heartbeats after they were handed out: a slave takes a lease and names
// it within milliseconds, so such a lease went to a slave that died (or
// froze) between taking it and naming it, or waits in the stream.
func (d *Dispatcher) unnamed() {
	late := time.Now().Add(-3 * d.m.opt.Timing.Heartbeat)
	d.mu.Lock()
	var ids []string
	for id, rl := range d.remote {
		if rl.holder == "" && !rl.reclaiming && rl.since.Before(late) {
			rl.reclaiming = true
			ids = append(ids, id)
		}
	}
	d.mu.Unlock()
	for _, id := range ids {
		go d.reclaim(id)
	}
}

// reclaim finds who holds a lease no heartbeat named, by its claim: a
// slave that claimed it holds it (given back at once if that slave is no
// longer heard from); one nobody claimed is taken back by the master's own
// claim, out of the slaves' reach, and ends at once, its URLs returned.
func (d *Dispatcher) reclaim(id string) {
	holder, mine, err := d.m.takeBack(context.Background(), id)
	now := time.Now()
	d.mu.Lock()
	rl := d.remote[id]
	if rl == nil {
		d.mu.Unlock()
		return
	}
	rl.reclaiming = false
	switch {
	case err != nil:
		rl.since = now // tried again three heartbeats later
		d.mu.Unlock()
		return
	case !mine:
		rl.holder = holder
		d.mu.Unlock()
		for _, s := range d.m.Slaves() {
			if s.ID == holder {
				return
			}
		}
		d.gone(holder) // it claimed the lease and is no longer heard from
		return
	}
	delete(d.remote, id)
	rl.timer.Stop()
	d.given++
	end := rl.endNow(now)
	d.mu.Unlock()
	d.m.event(SlaveEvent{Time: now, Kind: LeaseReturned,
		Text: fmt.Sprintf("lease %s of %s taken back: no slave named it within three heartbeats; %d URLs queued again", id, rl.lease.Key, len(end.End.Returned))})
	rl.report(end)
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

// status answers a slave's heartbeat: the slave holds the leases it names,
// and those the dispatcher no longer follows (it declared the slave gone,
// or gave them up at their deadline) are void: the slave drops them.
//
// A lease its holder no longer works on, once the holder has delivered all
// it spooled, has its results with the master; if no end came for two
// heartbeats after that (its end was stored and acknowledged by an earlier
// run of the master killed before it forgot the lease), it ends, the URLs
// whose pages did not come returned.
func (d *Dispatcher) status(st SlaveStatus) StatusReply {
	r := StatusReply{State: d.state()}
	now := time.Now()
	held := make(map[string]bool, len(st.Held))
	var done []*remoteLease
	var doneIDs []string
	d.mu.Lock()
	for _, h := range st.Held {
		held[h.ID] = true
		if rl := d.remote[h.ID]; rl != nil {
			rl.holder, rl.drained = st.ID, time.Time{}
			continue
		}
		if !d.fromEarlier(h.ID) {
			r.Void = append(r.Void, h.ID)
		}
	}
	for id, rl := range d.remote {
		if rl.holder != st.ID || held[id] {
			continue
		}
		switch {
		case st.Spooled > 0:
			rl.drained = time.Time{}
		case rl.drained.IsZero():
			rl.drained = now
		case now.Sub(rl.drained) >= 2*d.m.opt.Timing.Heartbeat:
			delete(d.remote, id)
			rl.timer.Stop()
			d.given++
			done = append(done, rl)
			doneIDs = append(doneIDs, id)
		}
	}
	d.mu.Unlock()
	for i, rl := range done {
		d.mu.Lock()
		end := rl.endNow(now)
		d.mu.Unlock()
		go func(id string) {
			d.m.Forget(context.Background(), id)
			d.m.event(SlaveEvent{Time: now, Kind: LeaseReturned, Slave: st.ID,
				Text: fmt.Sprintf("lease %s of %s given back: slave %s delivered all it had and no end came; %d URLs queued again", id, rl.lease.Key, st.ID, len(end.End.Returned))})
			rl.report(end)
		}(doneIDs[i])
	}
	return r
}

// fromEarlier reports whether a lease is of the earlier run's book, not
// yet taken over. Called with d.mu held.
func (d *Dispatcher) fromEarlier(id string) bool {
	for _, b := range d.earlier {
		if b.ID == id {
			return true
		}
	}
	return false
}

// gone ends the leases of a slave declared gone, or that said goodbye: the
// URLs whose pages did not come back are queued again and the site may be
// leased again after its delay. The slave fetches nothing after its
// liberty, which ends before the master declares it gone.
func (d *Dispatcher) gone(slave string) {
	now := time.Now()
	type ended struct {
		id  string
		rl  *remoteLease
		end visit.Result
	}
	var out []ended
	d.mu.Lock()
	for id, rl := range d.remote {
		if rl.holder != slave {
			continue
		}
		delete(d.remote, id)
		rl.timer.Stop()
		d.given++
		e := ended{id, rl, rl.endNow(now)}
		d.haunt(id, rl, e.end.End)
		if len(e.end.End.Returned) > 0 {
			if d.givenBack == nil {
				d.givenBack = make(map[string]time.Time)
			}
			d.givenBack[rl.lease.Key] = now
		}
		out = append(out, e)
	}
	d.mu.Unlock()
	select {
	case d.recount <- struct{}{}:
	default:
	}
	for _, e := range out {
		d.m.Forget(context.Background(), e.id)
		d.m.event(SlaveEvent{Time: now, Kind: LeaseReturned, Slave: slave,
			Text: fmt.Sprintf("lease %s of %s given back: slave %s is gone; %d pages came back, %d URLs queued again", e.id, e.rl.lease.Key, slave, e.end.End.Fetched, len(e.end.End.Returned))})
		go e.rl.report(e.end)
	}
}

// endNow is the end of a lease whose slave is gone: the pages passed to
// the loop in order are done, every other URL is returned. Called with
// d.mu held.
func (rl *remoteLease) endNow(now time.Time) visit.Result {
	done := make(map[uint64]bool)
	seq := 1
	for ; ; seq++ {
		u, ok := rl.pages[seq]
		if !ok {
			break
		}
		if u != 0 {
			done[u] = true
		}
	}
	end := &visit.LeaseEnd{Next: now.Add(rl.lease.Delay), Delay: rl.lease.Delay, Failure: visit.FailureExpired, Fetched: len(done)}
	for _, q := range rl.lease.URLs {
		if !done[q.ID] {
			end.Returned = append(end.Returned, q.ID)
		}
	}
	return visit.Result{Lease: rl.lease.ID, Seq: seq, End: end}
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

// Dispatch implements visit.Dispatcher.
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

// Abandon ends every remote lease now, for the engine, with the URLs whose
// pages have not come back returned, and keeps them in the master's book:
// a crawl stopping at once leaves them to its next run, which takes them
// over and applies their results. From then on results are left in their
// stream for that run. It returns how many leases it ended.
func (d *Dispatcher) Abandon() int {
	now := time.Now()
	d.mu.Lock()
	d.abandoned = true
	var ends []*remoteLease
	var rs []visit.Result
	for id, rl := range d.remote {
		delete(d.remote, id)
		rl.timer.Stop()
		ends = append(ends, rl)
		rs = append(rs, rl.endNow(now))
	}
	d.mu.Unlock()
	for i, rl := range ends {
		go rl.report(rs[i])
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
