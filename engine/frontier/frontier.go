// Package frontier is the two-level scheduler of Castillo's Figure 6.4: a
// heap of sites, each with its own queue of pages. The page queues themselves
// live in storage (a crawl may discover millions of URLs); the Frontier keeps
// in memory only what ordering the sites needs: per site, the number of
// pages pending and the priority of the best one.
//
// A site is in exactly one of these places: idle (nothing pending), resolving
// (waiting for DNS), waiting (for its politeness delay), blocked (its address
// is busy with a visit to another site, when one connection per address is
// enforced), ready (in the heap ordered by the Strategy), busy (a visit in
// flight) or parked (given up after repeated failures).
package frontier

import (
	"container/heap"
	"net/netip"
	"time"
)

// Place says where a site is in the scheduler.
type Place uint8

const (
	Idle      Place = iota // nothing pending
	Resolving              // waiting for its address
	Waiting                // waiting for NextVisit
	Blocked                // its address is busy with another site's visit
	Ready                  // may be visited now
	Busy                   // a visit is in flight
	Parked                 // given up
)

var placeNames = [...]string{"idle", "resolving", "waiting", "blocked", "ready", "busy", "parked"}

func (p Place) String() string { return placeNames[p] }

// Site is a web site (scheme, host and port) as the scheduler sees it.
type Site struct {
	ID   int64
	Key  string // "scheme://host[:port]"
	Host string
	Seq  int64 // discovery order

	Addr     netip.Addr // valid once resolved
	Resolved bool

	Pending      int64   // pages queued in storage, not yet handed to a visit
	HeadPriority float64 // priority of the best queued page (valid when Pending > 0)

	NextVisit time.Time
	Failures  int

	place Place
	index int // in the ready or waiting heap
}

// Place reports where the site is.
func (s *Site) Place() Place { return s.place }

// Frontier holds the sites of a crawl. The zero value is not usable; call New.
// A Frontier is not safe for concurrent use: one goroutine owns it.
type Frontier struct {
	strategy    Strategy
	perAddress  bool
	sites       map[string]*Site
	byID        map[int64]*Site
	ready       siteHeap
	waiting     timeHeap
	addrBusy    map[netip.Addr]bool
	blocked     map[netip.Addr][]*Site // in the order they came to the address
	turn        map[netip.Addr]*Site   // the waiter whose turn the free address is
	counts      [Parked + 1]int
	pending     int64
	nextSiteSeq int64
}

// New returns an empty Frontier ordering sites with strategy. When
// perAddress is true, two sites that share an address are never visited at
// the same time.
func New(strategy Strategy, perAddress bool) *Frontier {
	f := &Frontier{
		strategy:   strategy,
		perAddress: perAddress,
		sites:      make(map[string]*Site),
		byID:       make(map[int64]*Site),
		addrBusy:   make(map[netip.Addr]bool),
		blocked:    make(map[netip.Addr][]*Site),
		turn:       make(map[netip.Addr]*Site),
	}
	f.ready.less = strategy.SiteLess
	return f
}

// Strategy returns the frontier's strategy.
func (f *Frontier) Strategy() Strategy { return f.strategy }

// Lookup returns the site with key, or nil.
func (f *Frontier) Lookup(key string) *Site { return f.sites[key] }

// ByID returns the site with id, or nil.
func (f *Frontier) ByID(id int64) *Site { return f.byID[id] }

// Add registers a new site, unresolved and idle unless it has pages pending.
// The site's Seq is assigned if zero.
func (f *Frontier) Add(s *Site) {
	if s.Seq == 0 {
		f.nextSiteSeq++
		s.Seq = f.nextSiteSeq
	} else if s.Seq > f.nextSiteSeq {
		f.nextSiteSeq = s.Seq
	}
	f.sites[s.Key] = s
	f.byID[s.ID] = s
	s.index = -1
	f.pending += s.Pending
	s.place = Idle
	f.counts[Idle]++
	f.settle(s, time.Time{})
}

// Len reports the number of sites.
func (f *Frontier) Len() int { return len(f.sites) }

// Count reports how many sites are in place p.
func (f *Frontier) Count(p Place) int { return f.counts[p] }

// Pending reports the pages pending over all sites.
func (f *Frontier) Pending() int64 { return f.pending }

// Each calls fn for every site, in no particular order.
func (f *Frontier) Each(fn func(*Site)) {
	for _, s := range f.sites {
		fn(s)
	}
}

// Resolved records a site's address and makes it schedulable.
func (f *Frontier) Resolved(s *Site, addr netip.Addr, now time.Time) {
	if s.place == Busy && s.Resolved {
		// A visit claimed on the address it was handed out with (Claim)
		// keeps it: the address is busy until that visit ends.
		return
	}
	if s.Resolved && s.Addr != addr && s.place != Idle && s.place != Parked {
		// Queued (or blocked) under its old address: queue it again
		// under the new one.
		f.remove(s)
		f.move(s, Idle)
		f.passTurn(s.Addr, now)
	}
	s.Addr, s.Resolved = addr, true
	if s.place == Busy && f.perAddress {
		// A visit claimed before its address was known: the address
		// is busy with it from now on.
		f.addrBusy[addr] = true
	}
	if s.place == Resolving {
		f.move(s, Idle)
	}
	f.settle(s, now)
}

// Found records n new pages queued for s, the best of them with priority p.
func (f *Frontier) Found(s *Site, n int64, p float64, now time.Time) {
	if s.Pending == 0 || p < s.HeadPriority {
		s.HeadPriority = p
	}
	s.Pending += n
	f.pending += n
	switch s.place {
	case Ready:
		heap.Fix(&f.ready, s.index)
	case Idle:
		f.settle(s, now)
	}
}

// Take hands n pages of s to a visit; next is the priority of the best page
// left (ignored when none is left).
func (f *Frontier) Take(s *Site, n int64, next float64) {
	if n > s.Pending {
		n = s.Pending
	}
	s.Pending -= n
	f.pending -= n
	s.HeadPriority = next
}

// Drop forgets n pending pages of s that storage no longer holds queued (the
// engine found fewer than Pending when it asked for the head).
func (f *Frontier) Drop(s *Site, n int64) { f.Take(s, n, s.HeadPriority) }

// Next returns the best site that may be visited at now and marks it busy,
// or nil. Sites whose delay has passed move from waiting to ready first.
func (f *Frontier) Next(now time.Time) *Site { return f.next(now, false) }

// next is Next; with holdBack it stops, leaving every site in place, when the
// best ready site's head is Held (NextUnheld).
func (f *Frontier) next(now time.Time, holdBack bool) *Site {
	f.wake(now)
	for f.ready.Len() > 0 {
		if holdBack && f.ready.sites[0].HeadPriority == Held {
			if f.dropHeldTurns(now) {
				continue // the sites let go may have pages to fetch
			}
			return nil
		}
		s := heap.Pop(&f.ready).(*Site)
		f.move(s, Idle) // transient
		if f.perAddress && (f.addrBusy[s.Addr] || f.turn[s.Addr] != nil && f.turn[s.Addr] != s) {
			f.move(s, Blocked)
			f.blocked[s.Addr] = append(f.blocked[s.Addr], s)
			continue
		}
		f.move(s, Busy)
		if f.perAddress {
			f.addrBusy[s.Addr] = true
			delete(f.turn, s.Addr)
		}
		return s
	}
	return nil
}

// Claim marks s busy wherever it is, for a visit already in flight (one an
// earlier run handed out), and reports whether it could: a site parked,
// busy, or whose address is busy with another visit cannot be claimed.
func (f *Frontier) Claim(s *Site) bool {
	if s.place == Busy || s.place == Parked || f.perAddress && s.Resolved && (f.addrBusy[s.Addr] || f.turn[s.Addr] != nil && f.turn[s.Addr] != s) {
		return false
	}
	f.remove(s)
	f.move(s, Busy)
	if f.perAddress && s.Resolved {
		f.addrBusy[s.Addr] = true
	}
	return true
}

// Release ends the visit to s; it may be visited again at next.
func (f *Frontier) Release(s *Site, next time.Time, now time.Time) {
	if s.place != Busy {
		return
	}
	s.NextVisit = next
	f.move(s, Idle)
	if f.perAddress {
		delete(f.addrBusy, s.Addr)
		f.passTurn(s.Addr, now)
	}
	f.settle(s, now)
}

// passTurn gives a free address to the first site that waited for it and
// can be visited now: sites sharing an address take turns in the order
// they came to it, whatever the strategy's order (under "length" the site
// with most pages queued, a big site whose recrawls keep its queue full,
// would otherwise win every turn and a small site on its address wait for
// ever). The site just visited, and any other that finds the turn taken,
// queues behind. A waiter that cannot go at once (a politeness delay, no
// pages left, only pages held back) leaves the queue without the turn, so
// it never holds the address idle; it queues again when it is ready (see
// dropHeldTurns for a holder whose pages are held back after it got the
// turn).
func (f *Frontier) passTurn(addr netip.Addr, now time.Time) {
	if !f.perAddress || f.addrBusy[addr] || f.turn[addr] != nil {
		return
	}
	waiters := f.blocked[addr]
	for len(waiters) > 0 {
		w := waiters[0]
		waiters = waiters[1:]
		f.move(w, Idle)
		f.settle(w, now)
		if w.place == Ready && w.HeadPriority != Held {
			f.turn[addr] = w
			break
		}
	}
	if len(waiters) > 0 {
		f.blocked[addr] = waiters
	} else {
		delete(f.blocked, addr)
	}
}

// dropHeldTurns lets every site blocked on an address go when the site
// whose turn the address is has only pages held back (NextUnheld stops
// at it; every ready site is held when it does, the turns' holders
// included): the address is never left free for a site that will not be
// handed out while others wait for it. It reports whether any site was
// let go.
func (f *Frontier) dropHeldTurns(now time.Time) bool {
	let := false
	for addr, t := range f.turn {
		if t.HeadPriority != Held {
			continue
		}
		delete(f.turn, addr)
		for _, w := range f.blocked[addr] {
			f.move(w, Idle)
			f.settle(w, now)
			let = true
		}
		delete(f.blocked, addr)
	}
	return let
}

// Park gives up on s: it is never scheduled again by this Frontier.
func (f *Frontier) Park(s *Site, now time.Time) {
	if s.place == Busy {
		f.Release(s, now, now)
	}
	f.remove(s)
	f.move(s, Parked)
	f.passTurn(s.Addr, now) // in case the turn was s's
}

// Unpark puts a parked site back in the scheduler, where its pending pages
// and its address put it.
func (f *Frontier) Unpark(s *Site, now time.Time) {
	if s.place != Parked {
		return
	}
	f.move(s, Idle)
	f.settle(s, now)
}

// NextWake returns when the first waiting site may be visited; ok is false
// when no site is waiting.
func (f *Frontier) NextWake() (t time.Time, ok bool) {
	if len(f.waiting) == 0 {
		return time.Time{}, false
	}
	return f.waiting[0].NextVisit, true
}

// WaitingSoonest returns up to n waiting sites, soonest first.
func (f *Frontier) WaitingSoonest(n int) []*Site {
	out := make([]*Site, 0, min(n, len(f.waiting)))
	// The heap's first levels hold the soonest; a copy sorted partially
	// would cost more than the few sites the console shows.
	tmp := make(timeHeap, len(f.waiting))
	copy(tmp, f.waiting)
	for len(out) < n && len(tmp) > 0 {
		s := tmp[0]
		out = append(out, s)
		last := len(tmp) - 1
		tmp[0] = tmp[last]
		tmp = tmp[:last]
		tmp.down(0)
	}
	return out
}

// settle puts an idle site where it belongs.
func (f *Frontier) settle(s *Site, now time.Time) {
	if s.place != Idle {
		return
	}
	switch {
	case s.Pending <= 0:
		// stays idle
	case !s.Resolved:
		f.move(s, Resolving)
	case s.NextVisit.After(now):
		f.move(s, Waiting)
		heap.Push(&f.waiting, s)
	default:
		f.move(s, Ready)
		heap.Push(&f.ready, s)
	}
}

// wake moves the sites whose delay has passed into the ready heap.
func (f *Frontier) wake(now time.Time) {
	for len(f.waiting) > 0 && !f.waiting[0].NextVisit.After(now) {
		s := heap.Pop(&f.waiting).(*Site)
		f.move(s, Ready)
		heap.Push(&f.ready, s)
	}
}

func (f *Frontier) remove(s *Site) {
	switch s.place {
	case Ready:
		heap.Remove(&f.ready, s.index)
		if f.turn[s.Addr] == s {
			delete(f.turn, s.Addr) // the caller passes it on
		}
	case Waiting:
		heap.Remove(&f.waiting, s.index)
	case Blocked:
		list := f.blocked[s.Addr]
		for i, w := range list {
			if w == s {
				f.blocked[s.Addr] = append(list[:i], list[i+1:]...)
				break
			}
		}
	case Busy:
		if f.perAddress {
			delete(f.addrBusy, s.Addr)
		}
	}
	s.index = -1
}

func (f *Frontier) move(s *Site, p Place) {
	f.counts[s.place]--
	s.place = p
	f.counts[p]++
}

// siteHeap orders ready sites by the strategy.
type siteHeap struct {
	sites []*Site
	less  func(a, b *Site) bool
}

func (h *siteHeap) Len() int           { return len(h.sites) }
func (h *siteHeap) Less(i, j int) bool { return h.less(h.sites[i], h.sites[j]) }
func (h *siteHeap) Swap(i, j int) {
	h.sites[i], h.sites[j] = h.sites[j], h.sites[i]
	h.sites[i].index, h.sites[j].index = i, j
}
func (h *siteHeap) Push(x any) {
	s := x.(*Site)
	s.index = len(h.sites)
	h.sites = append(h.sites, s)
}
func (h *siteHeap) Pop() any {
	n := len(h.sites) - 1
	s := h.sites[n]
	h.sites[n] = nil
	h.sites = h.sites[:n]
	s.index = -1
	return s
}

// timeHeap orders waiting sites by NextVisit.
type timeHeap []*Site

func (h timeHeap) Len() int { return len(h) }
func (h timeHeap) Less(i, j int) bool {
	if !h[i].NextVisit.Equal(h[j].NextVisit) {
		return h[i].NextVisit.Before(h[j].NextVisit)
	}
	return h[i].Seq < h[j].Seq
}
func (h timeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timeHeap) Push(x any) {
	s := x.(*Site)
	s.index = len(*h)
	*h = append(*h, s)
}
func (h *timeHeap) Pop() any {
	old := *h
	n := len(old) - 1
	s := old[n]
	old[n] = nil
	*h = old[:n]
	s.index = -1
	return s
}

// down restores the heap property below i in a copy used for reading only;
// it does not touch the sites' indexes.
func (h timeHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && h.Less(r, l) {
			j = r
		}
		if !h.Less(j, i) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}
