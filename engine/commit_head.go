package engine

import (
	"cmp"
	"context"
	"slices"

	"lidi/engine/record"
)

// unwritten indexes what the committer has gathered but not yet written
// that changes sites' queues, so that a queue head is read as the store
// plus that batch (committer.head) instead of after writing it. Writing
// before every head read made a write per lease: a few dozen pages each,
// every one rewriting the same pages of the store's URL and link indexes.
// The zero value indexes an empty batch; only the committer's goroutine
// uses it.
type unwritten struct {
	queued map[int64][]int32   // by site: the batch's URLs it queues, as indices into Batch.URLs
	gone   map[uint64]struct{} // URLs the batch takes out of their queue: fetched (Pages) or skipped (Skips)
	pages  map[int64]int       // by site: the batch's pages, rows a head read of the store will find gone
	// opaque: the batch holds changes to queues that the index does not
	// follow (URLs queued again, unskipped or re-ordered); a head read
	// then writes the batch first, as before.
	opaque bool
}

// add indexes the records b gained at the offsets given (its lengths of
// URLs, Pages and Skips before src was appended to it).
func (u *unwritten) add(b *record.Batch, src *record.Batch, urls, pages, skips int) {
	if len(src.UnskipRules)+len(src.Unskips)+len(src.Requeues)+len(src.Priorities) > 0 {
		u.opaque = true
	}
	if u.opaque {
		return // the next head read writes the batch: nothing to index
	}
	if u.queued == nil {
		u.queued, u.gone, u.pages = make(map[int64][]int32), make(map[uint64]struct{}), make(map[int64]int)
	}
	for i := urls; i < len(b.URLs); i++ {
		if r := &b.URLs[i]; r.State == record.URLQueued {
			u.queued[r.Site] = append(u.queued[r.Site], int32(i))
		}
	}
	for i := pages; i < len(b.Pages); i++ {
		p := &b.Pages[i]
		u.gone[p.URL] = struct{}{}
		u.pages[p.Site]++
	}
	for _, sk := range b.Skips[skips:] {
		u.gone[sk.URL] = struct{}{}
	}
}

// reset empties the index once its batch is written.
func (u *unwritten) reset() {
	clear(u.queued)
	clear(u.gone)
	clear(u.pages)
	u.opaque = false
}

// head answers a queue-head request as Store.Head would once acc were
// written: the store's queued URLs of site without those acc fetched or
// skipped, with the URLs acc queues on site, in (Priority, Seq) order and
// with acc's slow-down tries. The URLs acc queues are new to the store
// (the seen set records each URL once), so none is also among its rows.
//
// The store's rows past the n+1 asked for are not read, so an unwritten
// URL ordered after the last row read cannot be placed yet: when fewer
// than n+1 URLs are known to come first, it reads more rows.
func (c *committer) head(ctx context.Context, acc *record.Batch, site int64, n int) ([]record.QueuedURL, float64, bool, error) {
	u := &c.unwritten
	mine := u.queued[site]
	if len(mine) == 0 && len(u.gone) == 0 {
		urls, next, more, err := c.store.Head(ctx, site, n)
		if err == nil {
			slowDowns(acc, urls)
		}
		return urls, next, more, err
	}
	want := n + 1 + u.pages[site]
	for {
		rows, _, more, err := c.store.Head(ctx, site, want)
		if err != nil {
			return nil, 0, false, err
		}
		var last record.QueuedURL // the last row read, when the store holds more
		if more && len(rows) > 0 {
			last = rows[len(rows)-1]
		}
		out := rows[:0]
		for _, q := range rows {
			if _, ok := u.gone[q.ID]; !ok {
				out = append(out, q)
			}
		}
		for _, i := range mine {
			r := &acc.URLs[i]
			if _, ok := u.gone[r.ID]; ok {
				continue
			}
			if more && queueOrder(r.Priority, r.Seq, last.Priority, last.Seq) > 0 {
				continue // rows not read may come first
			}
			out = append(out, record.QueuedURL{ID: r.ID, URL: r.URL, Depth: r.Depth, Priority: r.Priority, Seq: r.Seq})
		}
		if more && len(out) <= n {
			want *= 2
			continue
		}
		slices.SortFunc(out, func(a, b record.QueuedURL) int { return queueOrder(a.Priority, a.Seq, b.Priority, b.Seq) })
		slowDowns(acc, out)
		if len(out) > n {
			return out[:n:n], out[n].Priority, true, nil
		}
		return out, 0, false, nil
	}
}

// queueOrder compares two queued URLs by (Priority, Seq), a site's queue
// order (Store.Head).
func queueOrder(pa float64, sa int64, pb float64, sb int64) int {
	return cmp.Or(cmp.Compare(pa, pb), cmp.Compare(sa, sb))
}

// slowDowns sets the slow-down tries acc records on the queued URLs
// given, the last of a URL's counting, as writing acc would.
func slowDowns(acc *record.Batch, urls []record.QueuedURL) {
	if len(acc.SlowDowns) == 0 || len(urls) == 0 {
		return
	}
	tries := make(map[uint64]int, len(acc.SlowDowns))
	for _, sd := range acc.SlowDowns {
		tries[sd.URL] = sd.Tries
	}
	for i := range urls {
		if t, ok := tries[urls[i].ID]; ok {
			urls[i].SlowDowns = t
		}
	}
}
