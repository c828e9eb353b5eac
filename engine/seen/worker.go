package seen

import (
	"cmp"
	"os"
	"slices"
)

// worker writes the tables a Set freezes as runs, in the order they were
// frozen, and merges runs, on its own goroutine. It owns the list of runs;
// the Set's caller takes each new list over at its next Add (install).
type worker struct {
	s       *Set
	dir     string
	runs    []*run // newest first
	seq     int    // the last run file's number
	flushes int64
	merges  int64
}

func (w *worker) run() {
	defer close(w.s.done)
	for {
		select {
		case <-w.s.stop:
			return
		case <-w.s.queued:
		}
		// A merge gives way to the tables frozen meanwhile.
		for again := true; again && !w.stopped(); again = w.waiting() {
			for m := w.nextTable(); m != nil; m = w.nextTable() {
				r, err := w.flush(m)
				if err != nil {
					w.publish(0, nil, err)
					return
				}
				w.runs = append([]*run{r}, w.runs...)
				w.flushes++
				w.publish(1, nil, nil)
			}
			if err := w.merge(); err != nil {
				w.publish(0, nil, err)
				return
			}
		}
	}
}

// stopped reports whether the Set is closing.
func (w *worker) stopped() bool {
	select {
	case <-w.s.stop:
		return true
	default:
		return false
	}
}

// next takes the oldest table from the queue, or returns nil when it is
// empty or the Set is closing.
func (w *worker) next() *table {
	if w.stopped() {
		return nil
	}
	s := w.s
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if len(s.queue) == 0 {
		return nil
	}
	m := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[1:]
	return m
}

// nextTable returns the next table to write as a run, nil when none waits
// or when the runs, mergeFirst or more, are to be merged first.
func (w *worker) nextTable() *table {
	if len(w.runs) >= mergeFirst && w.mergeable() {
		return nil
	}
	return w.next()
}

// mergeable reports whether the two newest runs are to be merged (merge).
func (w *worker) mergeable() bool {
	return len(w.runs) >= 2 && w.runs[0].n*2 >= w.runs[1].n
}

// waiting reports whether a table waits in the queue.
func (w *worker) waiting() bool {
	w.s.qmu.Lock()
	defer w.s.qmu.Unlock()
	return len(w.s.queue) > 0
}

// flush writes m as a run.
func (w *worker) flush(m *table) (*run, error) {
	type entry struct {
		id  uint64
		val int32
	}
	es := make([]entry, 0, m.len())
	m.each(func(id uint64, v int32) { es = append(es, entry{id, v}) })
	slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.id, b.id) })
	w.seq++
	rw, err := newRunWriter(w.dir, w.seq, len(es))
	if err != nil {
		return nil, err
	}
	for _, e := range es {
		if err := rw.add(e.id, e.val); err != nil {
			rw.abort()
			return nil, err
		}
	}
	return rw.finish()
}

// merge merges the two newest runs while the newer holds at least half as
// many entries as the older: the runs' sizes then grow geometrically, so
// there are about log2(n/Recent) of them and each entry is rewritten as
// often. It stops early when the Set is closing, and when a table waits to
// be written while there are fewer than mergeFirst runs (its entries are
// in memory until it is: the merge goes on after it).
func (w *worker) merge() error {
	for w.mergeable() {
		if w.stopped() || w.waiting() && len(w.runs) < mergeFirst {
			return nil
		}
		newer, older := w.runs[0], w.runs[1]
		r, err := w.mergeTwo(newer, older)
		if err != nil {
			return err
		}
		w.runs = append([]*run{r}, w.runs[2:]...)
		os.Remove(newer.f.Name()) // the open files stay readable until the caller closes them
		os.Remove(older.f.Name())
		w.merges++
		w.publish(0, []*run{newer, older}, nil)
	}
	return nil
}

// mergeFirst is how many runs there may be before the tables waiting to be
// written no longer go before the merges: from it on, the runs are merged
// first and the tables wait in memory. Otherwise a writer slower than the caller (a slow
// disk) never merged, and runs piled up, each an open file and a filter
// that every look-up of a new URL reads, and one such look-up in a
// hundred a block read from disk. Geometric merging keeps about
// log2(n/Recent) runs: 9 at 100,000,000 URLs.
const mergeFirst = 16

// mergeTwo merges two runs; for an ID in both, the newer's value wins, as
// the newer assignment does in a map.
func (w *worker) mergeTwo(newer, older *run) (*run, error) {
	w.seq++
	rw, err := newRunWriter(w.dir, w.seq, newer.n+older.n)
	if err != nil {
		return nil, err
	}
	a, b := newRunReader(newer), newRunReader(older)
	for a.ok || b.ok {
		switch {
		case a.ok && (!b.ok || a.id <= b.id):
			if b.ok && a.id == b.id {
				b.next()
			}
			err = rw.add(a.id, a.val)
			a.next()
		default:
			err = rw.add(b.id, b.val)
			b.next()
		}
		if err != nil {
			rw.abort()
			return nil, err
		}
	}
	if err := cmp.Or(a.err, b.err); err != nil {
		rw.abort()
		return nil, err
	}
	return rw.finish()
}

// publish hands the current runs to the caller, with the runs retired since
// the last hand-over and how many more frozen tables are now runs.
func (w *worker) publish(flushed int, retired []*run, err error) {
	s := w.s
	s.mu.Lock()
	s.pub.runs = slices.Clone(w.runs)
	s.pub.retired = append(s.pub.retired, retired...)
	s.pub.flushed += flushed
	s.pub.flushes, s.pub.merges = w.flushes, w.merges
	if err != nil {
		s.pub.err = err
	}
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}
