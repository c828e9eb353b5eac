package frontier

import (
	"container/heap"
	"math"
	"time"
)

// Held is the page priority of a page that must not be fetched yet: Batch
// gives it to every page outside its current batch. A site whose best
// queued page is Held is not handed out by NextUnheld.
var Held = math.Inf(1)

// Reprioritizer is an optional extension of Strategy for strategies whose
// page priorities change as the crawl learns the web's links, such as Batch
// and Partial, which rank pages by a PageRank of the graph known so far. The
// scheduler's driver checks for it with a type assertion; Length, Depth and
// Optimal do not implement it, and nothing changes for them.
//
// # Contract
//
// The driver calls Fetched once for every page that leaves the queue:
// fetched (links are its in-scope out-links, by ID, in any order,
// duplicates allowed) or given up on (links nil). It calls Fetched before it
// asks PagePriority about any page first found on that page, so a strategy
// may prepare the priority of pages it has just learned of.
//
// Through update, Fetched reports queued pages whose priority changed. The
// driver must store each new priority with the page (re-ordering the site's
// queue) and tell the Frontier the site's new best priority with
// Frontier.Reprioritized. A strategy may report pages the driver no longer
// holds queued (already handed to a visit) or does not know yet (first found
// on this very page): the driver ignores those, because PagePriority answers
// for the new ones. A strategy that gives out Held must order sites by
// HeadPriority (Held last), and the driver must pick sites with NextUnheld.
//
// # How the engine uses it
//
// In the engine's loop (engine/reprioritize.go), before the links of a
// fetched page are discovered: Fetched(page, IDs of the links it follows,
// update), where update queues "UPDATE urls SET priority=? WHERE id=? AND
// state=0" for the store and keeps per site the best new priority, given
// to Reprioritized once per touched site (exact when every queued page of
// the site changed or priorities only improved; otherwise a little
// optimistic until the site's next visit reads its true head). Pages a
// visit skips (robots.txt), duplicates and URLs dropped under a mirror go
// to Fetched with nil links. Dispatch calls NextUnheld, and a visit cuts
// the head it reads from storage at the first Held page. The PageRank
// recomputation inside Fetched runs in the loop goroutine: for Batch the
// crawl has nothing to fetch until the next batch is known anyway.
type Reprioritizer interface {
	Strategy
	// Fetched records that the page id left the queue, linking to links,
	// and reports changed priorities of queued pages through update.
	Fetched(id uint64, links []uint64, update func(id uint64, priority float64))
}

// Unholder is implemented by Reprioritizers that hold pages back (Batch).
// A driver calls Unhold when it has nothing in flight and every page it
// could fetch is Held: the pages the strategy waits for left the queue
// without the driver seeing them go (a site given up on, a directory
// dropped as a mirror), so they never reach Fetched. Unhold gives up on
// them and releases the next pages through update, as Fetched would; it
// reports whether it released any.
type Unholder interface {
	Reprioritizer
	Unhold(update func(id uint64, priority float64)) bool
}

// Reprioritized sets the priority of s's best queued page to head and moves
// s to its place among the ready sites. It is how a driver applies a
// Reprioritizer's updates, which may make a site's head worse as well as
// better (Found only ever improves it).
func (f *Frontier) Reprioritized(s *Site, head float64) {
	if s.HeadPriority == head {
		return
	}
	s.HeadPriority = head
	if s.place == Ready && s.index >= 0 {
		heap.Fix(&f.ready, s.index)
	}
}

// NextUnheld is Next for strategies that hold pages back: it returns nil,
// leaving every site where it is, when the best ready site's head is Held.
// For a strategy that never gives out Held it is the same as Next.
func (f *Frontier) NextUnheld(now time.Time) *Site { return f.next(now, true) }
