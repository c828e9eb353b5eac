package engine

import (
	"math"
	"sync"
	"time"
	"unsafe"

	"lidi/engine/visit"
)

// pendingShares splits storage.max_pending_mb among the three places where
// results wait to be written while the store is busy: the robots' results
// queued for the loop (a quarter), the batch the loop gathers (a quarter:
// past it the loop hands it over and waits), and the batches handed to
// the committer and not yet written (the rest). Each wait ends when the
// next one moves on, and the committer's when the store has written: a
// store that falls behind slows the loop, and the loop the robots, while
// what they hold stays within the limit (but for one result or batch
// larger than its share, let in alone). 0: no limit.
type pendingShares struct {
	results, loop, committer int64
}

func splitPending(limit int64) pendingShares {
	if limit <= 0 {
		return pendingShares{loop: math.MaxInt64}
	}
	q := limit / 4
	return pendingShares{results: q, loop: q, committer: limit - 2*q}
}

// pendingBytes bounds the bytes of what waits in one place (see
// pendingShares): a sender waits while they would pass the limit. What
// comes is let in whenever nothing is held, however large, so that a
// result larger than the limit still passes, and what holds nothing (a
// visit's end) always is. The zero limit means none.
// Safe for concurrent use; make it with newPendingBytes.
type pendingBytes struct {
	limit int64
	mu    sync.Mutex
	held  int64
	peak  int64         // the most held at once
	freed chan struct{} // closed and replaced when bytes are released
	// waiting counts the senders waiting; wait wakes the receiver when
	// one starts to (the committer: it writes what it holds without
	// waiting for its timer or its batch to fill).
	waiting int
	wait    chan struct{}
}

func newPendingBytes(limit int64) pendingBytes {
	return pendingBytes{limit: limit, freed: make(chan struct{}), wait: make(chan struct{}, 1)}
}

// fits reports whether n bytes more would be let in now.
func (h *pendingBytes) fits(n int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fitsLocked(n)
}

func (h *pendingBytes) fitsLocked(n int64) bool {
	return h.limit <= 0 || n == 0 || h.held == 0 || h.held+n <= h.limit
}

// tryTake counts n bytes more as held if they fit now.
func (h *pendingBytes) tryTake(n int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.takeLocked(n)
}

// takeLocked counts n bytes more as held if they fit now.
func (h *pendingBytes) takeLocked(n int64) bool {
	if !h.fitsLocked(n) {
		return false
	}
	h.held += n
	h.peak = max(h.peak, h.held)
	return true
}

// take counts n bytes more as held once they fit, unless done is closed
// first.
func (h *pendingBytes) take(done <-chan struct{}, n int64) bool {
	for {
		h.mu.Lock()
		if h.takeLocked(n) {
			h.mu.Unlock()
			return true
		}
		freed := h.waitLocked()
		h.mu.Unlock()
		select {
		case h.wait <- struct{}{}:
		default:
		}
		if !h.await(freed, done, nil) {
			return false
		}
	}
}

// waitRelease waits until bytes are released, at most max (a sender that
// waits for something else a release comes with, such as a place in the
// committer's queue), and reports false if done is closed first.
func (h *pendingBytes) waitRelease(done <-chan struct{}, max time.Duration) bool {
	h.mu.Lock()
	freed := h.waitLocked()
	h.mu.Unlock()
	t := time.NewTimer(max)
	defer t.Stop()
	return h.await(freed, done, t.C)
}

// waitLocked counts a sender as waiting and returns the channel the next
// release closes.
func (h *pendingBytes) waitLocked() <-chan struct{} {
	h.waiting++
	return h.freed
}

// await waits, as a sender waitLocked counted, for freed to close or for
// timeout (nil: none), and reports false if done is closed first.
func (h *pendingBytes) await(freed, done <-chan struct{}, timeout <-chan time.Time) bool {
	defer func() {
		h.mu.Lock()
		h.waiting--
		h.mu.Unlock()
	}()
	select {
	case <-freed:
	case <-timeout:
	case <-done:
		return false
	}
	return true
}

// blocking reports whether a sender waits for bytes to be released.
func (h *pendingBytes) blocking() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.waiting > 0
}

// release counts n bytes as gone on (written, taken, or dropped).
func (h *pendingBytes) release(n int64) {
	if n == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held -= n
	if h.waiting > 0 {
		close(h.freed)
		h.freed = make(chan struct{})
	}
}

// bytes returns what is held now.
func (h *pendingBytes) bytes() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// most returns the most held at once.
func (h *pendingBytes) most() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.peak
}

// resultBytes estimates the memory a robot's result holds: its page's
// record (body and heads) and links. The links count by their capacity:
// a robot gives a page's links room for every link it has, followed or
// not, so a page of thousands of links it does not follow (nofollow, out
// of scope) holds room for them all.
func resultBytes(r visit.Result) int64 {
	p := r.Page
	if p == nil {
		return 0
	}
	n := p.Record.Bytes() + int64(len(p.URL)) + int64(cap(p.Links))*linkSize
	for i := range p.Links {
		n += int64(len(p.Links[i].URL) + len(p.Links[i].Key) + len(p.Links[i].Host))
	}
	return n
}

// linkSize is a visit.FoundLink's own size.
const linkSize = int64(unsafe.Sizeof(visit.FoundLink{}))
