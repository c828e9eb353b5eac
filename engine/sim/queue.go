package sim

// pageQueue is one site's queue of pages, a binary heap ordered by the
// strategy's page priority (lower first), ties by discovery order. pos
// (shared by all sites, indexed by page) tracks where each page sits so a
// Reprioritizer's update can move it.
type pageQueue struct {
	h []queued
}

type queued struct {
	prio float64
	seq  int64 // discovery order
	page int32
}

func (a queued) less(b queued) bool {
	if a.prio != b.prio {
		return a.prio < b.prio
	}
	return a.seq < b.seq
}

func (q *pageQueue) len() int { return len(q.h) }

func (q *pageQueue) top() queued { return q.h[0] }

func (q *pageQueue) push(e queued, pos []int32) {
	q.h = append(q.h, e)
	pos[e.page] = int32(len(q.h) - 1)
	q.up(len(q.h)-1, pos)
}

func (q *pageQueue) pop(pos []int32) queued {
	e := q.h[0]
	last := len(q.h) - 1
	q.swap(0, last, pos)
	q.h = q.h[:last]
	if last > 0 {
		q.down(0, pos)
	}
	if len(q.h) == 0 {
		q.h = nil // a finished site gives its memory back
	}
	return e
}

// set changes the priority of the entry at i.
func (q *pageQueue) set(i int, prio float64, pos []int32) {
	q.h[i].prio = prio
	if !q.up(i, pos) {
		q.down(i, pos)
	}
}

func (q *pageQueue) swap(i, j int, pos []int32) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	pos[q.h[i].page] = int32(i)
	pos[q.h[j].page] = int32(j)
}

func (q *pageQueue) up(i int, pos []int32) bool {
	moved := false
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].less(q.h[p]) {
			break
		}
		q.swap(i, p, pos)
		i = p
		moved = true
	}
	return moved
}

func (q *pageQueue) down(i int, pos []int32) {
	n := len(q.h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && q.h[r].less(q.h[l]) {
			j = r
		}
		if !q.h[j].less(q.h[i]) {
			return
		}
		q.swap(i, j, pos)
		i = j
	}
}

// event kinds.
const (
	evFirstByte uint8 = iota // a request's response starts
	evLink                   // the first transfer in progress ends
)

type event struct {
	at   int64 // virtual time in ns
	seq  uint64
	kind uint8
	conn int32
	ver  uint64 // for evLink: stale unless it matches the simulator's
}

func (a event) less(b event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// eventHeap is the simulator's agenda, earliest first, ties in the order
// the events were scheduled.
type eventHeap []event

func (h *eventHeap) push(e event) {
	*h = append(*h, e)
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !s[i].less(s[p]) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *eventHeap) pop() event {
	s := *h
	e := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	i, n := 0, last
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && s[r].less(s[l]) {
			j = r
		}
		if !s[j].less(s[i]) {
			break
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
	*h = s
	return e
}
