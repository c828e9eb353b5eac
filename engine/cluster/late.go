package cluster

import (
	"fmt"
	"slices"
	"time"

	"lidi/engine/record"
	"lidi/engine/visit"
)

// Late pages: what a slave declared gone had fetched and delivers after
// its leases ended (it was frozen, or cut off, or killed and started again
// with its spool). The URLs of those leases went back to their sites'
// queues; a page of one of them that comes before the URL is leased again
// is applied as the first page of its site's next lease, whose robot does
// not fetch it again. A page whose URL is out in a lease already is
// dropped: that lease stores it, once.

// lateKeep is how long past a lease's deadline and grace its late pages
// are taken: a slave started again with its spool delivers within
// seconds; one started later finds its URLs fetched already.
const lateKeep = 10 * time.Minute

// ghost is a lease ended because its slave was declared gone.
type ghost struct {
	site     string
	returned map[uint64]bool // the URLs given back, not taken late yet
	until    time.Time
}

// latePage is a page a slave delivered late, waiting for its site's next
// lease.
type latePage struct {
	page  *visit.PageResult
	until time.Time
}

// haunt remembers a lease ended because its slave is gone, with the URLs
// its end returned. Called with d.mu held.
func (d *Dispatcher) haunt(id string, rl *remoteLease, end *visit.LeaseEnd) {
	if len(end.Returned) == 0 {
		return
	}
	g := &ghost{site: rl.lease.Key, returned: make(map[uint64]bool, len(end.Returned)),
		until: rl.lease.Deadline.Add(d.m.opt.Timing.Grace + lateKeep)}
	for _, u := range end.Returned {
		g.returned[u] = true
	}
	if d.ghosts == nil {
		d.ghosts = make(map[string]*ghost)
	}
	d.ghosts[id] = g
}

// keepLate takes the pages of a part of a lease that ended because its
// slave was declared gone, those whose URLs it gave back, and reports how
// many. Called with d.mu held.
func (d *Dispatcher) keepLate(id string, rs []visit.Result) int {
	g := d.ghosts[id]
	if g == nil {
		return 0
	}
	n := 0
	for _, r := range rs {
		if r.Page == nil || !g.returned[r.Page.Record.URL] {
			continue
		}
		delete(g.returned, r.Page.Record.URL)
		if d.late == nil {
			d.late = make(map[string]map[uint64]latePage)
		}
		if d.late[g.site] == nil {
			d.late[g.site] = make(map[uint64]latePage)
		}
		d.late[g.site][r.Page.Record.URL] = latePage{r.Page, g.until}
		n++
	}
	if len(g.returned) == 0 {
		delete(d.ghosts, id)
	}
	return n
}

// onLate takes a part of a lease no longer in the master's book: a late
// part of a lease whose slave was declared gone. It reports whether it
// kept a page of it.
func (d *Dispatcher) onLate(id string, part []byte) bool {
	rs, err := DecodeResults([][]byte{part})
	if err != nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.keepLate(id, rs) > 0
}

// prune forgets the ghosts and late pages past their time. Called with
// d.mu held.
func (d *Dispatcher) prune(now time.Time) {
	for id, g := range d.ghosts {
		if now.After(g.until) {
			delete(d.ghosts, id)
		}
	}
	for site, ps := range d.late {
		for u, p := range ps {
			if now.After(p.until) {
				delete(ps, u)
			}
		}
		if len(ps) == 0 {
			delete(d.late, site)
		}
	}
}

// lateFirst takes the late pages of a lease's URLs: it moves their URLs
// to the front of l.URLs (the engine's lease: Dispatch runs on its loop,
// which applies results in Seq order) and returns them as the lease's
// first results, with the lease the robot gets, the rest of the URLs.
// A late page of a recrawl, or not of one, stands only for the same kind
// of URL. Called with d.mu held.
func (d *Dispatcher) lateFirst(l *visit.Lease) (first []visit.Result, robot *visit.Lease) {
	ps := d.late[l.Key]
	if len(ps) == 0 {
		return nil, l
	}
	var head, rest []record.QueuedURL
	for _, q := range l.URLs {
		p, ok := ps[q.ID]
		if ok {
			delete(ps, q.ID)
		}
		if ok && p.page.Record.Recrawl == (q.Copy != nil) {
			head = append(head, q)
			first = append(first, visit.Result{Lease: l.ID, Seq: len(first) + 1, Page: p.page})
			continue
		}
		rest = append(rest, q)
	}
	if len(ps) == 0 {
		delete(d.late, l.Key)
	}
	if len(first) == 0 {
		return nil, l
	}
	copy(l.URLs, slices.Concat(head, rest))
	r := *l
	r.URLs = rest
	d.lateApplied += int64(len(first))
	return first, &r
}

// shifted numbers a robot's results after the late pages reported first.
func shifted(r visit.Result, k int) visit.Result {
	r.Seq += k
	if r.End != nil && k > 0 {
		e := *r.End
		e.Fetched += k
		r.End = &e
	}
	return r
}

// reportLate reports the late pages that open a lease, and says so.
func (d *Dispatcher) reportLate(l *visit.Lease, first []visit.Result, report func(visit.Result)) {
	d.m.event(SlaveEvent{Time: time.Now(), Kind: LeaseLate,
		Text: fmt.Sprintf("lease %d of %s: %d pages a slave declared gone delivered late applied, not fetched again", l.ID, l.Key, len(first))})
	for _, r := range first {
		report(r)
	}
}
