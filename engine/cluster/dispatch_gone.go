package cluster

import (
	"context"
	"fmt"
	"time"

	"lidi/engine/visit"
)

// A Dispatcher follows the slaves' heartbeats: a lease whose slave is
// declared gone, or that no slave names, ends at once for the engine.

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
		d.m.gone(holder) // it claimed the lease and is no longer heard from: its delivered pages first
		return
	}
	d.given++
	end := d.stopFollowing(id, rl, now)
	d.mu.Unlock()
	d.m.event(SlaveEvent{Time: now, Kind: LeaseReturned,
		Text: fmt.Sprintf("lease %s of %s taken back: no slave named it within three heartbeats; %d URLs queued again", id, rl.lease.Key, len(end.End.Returned))})
	rl.report(end)
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
	var done []endedLease
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
			d.given++
			done = append(done, endedLease{id, rl, d.stopFollowing(id, rl, now)})
		}
	}
	d.mu.Unlock()
	for _, e := range done {
		go func() {
			d.m.Forget(context.Background(), e.id)
			d.m.event(SlaveEvent{Time: now, Kind: LeaseReturned, Slave: st.ID,
				Text: fmt.Sprintf("lease %s of %s given back: slave %s delivered all it had and no end came; %d URLs queued again", e.id, e.rl.lease.Key, st.ID, len(e.end.End.Returned))})
			e.rl.report(e.end)
		}()
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
	var out []endedLease
	d.mu.Lock()
	for id, rl := range d.remote {
		if rl.holder != slave {
			continue
		}
		d.given++
		e := endedLease{id, rl, d.stopFollowing(id, rl, now)}
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

// endedLease is a remote lease the dispatcher no longer follows and its
// end, to be reported once d.mu is released.
type endedLease struct {
	id  string
	rl  *remoteLease
	end visit.Result
}

// stopFollowing ends a remote lease for the dispatcher: no result of it
// is applied from now on, its deadline no longer watched. It returns the
// lease's end for the engine (endNow). Called with d.mu held.
func (d *Dispatcher) stopFollowing(id string, rl *remoteLease, now time.Time) visit.Result {
	delete(d.remote, id)
	rl.timer.Stop()
	return rl.endNow(now)
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
