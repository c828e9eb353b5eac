package engine

import (
	"context"
	"strings"
	"sync"
	"time"

	"lidi/engine/cputime"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// committer is the engine's one writer: it gathers batches from the loop and
// applies them to the Store in large transactions, and answers the loop's
// requests for a site's queue head after writing everything before them, so
// a lease holds every URL found before it was asked for.
type committer struct {
	store record.Store
	// w is store as a record.BatchWriter, nil if it is not one: then
	// every write is an Apply. With one, the committer writes what it
	// holds before each queue-head read, which reads through the open
	// transaction, and when a batch is full or a sender waits for bytes
	// (written, they are free), and commits at its flush interval, once
	// the transaction holds txMax records, and when asked to flush: the
	// crawl asks for a queue head every few dozen pages, and a commit at
	// each wrote every index leaf it had changed to the write-ahead log,
	// and again at the next.
	w       record.BatchWriter
	written []func(error) // Result.Committed of the batches written and not yet committed
	// txRecords counts the records w holds written and not yet
	// committed: a transaction is open while it is positive, and a
	// commit's time is reported with them.
	txRecords int
	// txMax is where a transaction is committed, in records, whatever
	// the flush interval: commitRecords (tests lower it).
	txMax   int
	in      chan any         // *Batch, headReq, flushReq
	now     func() time.Time // times the store's calls (time.Now; tests replace it)
	every   time.Duration
	records int
	// held bounds the bytes of the batches sent and not yet written
	// (its share of storage.max_pending_mb).
	held pendingBytes

	pool sync.Pool // of *Batch

	mu  sync.Mutex
	err error // the first Apply error; the crawl stops on it
	// The longest one write (an Apply, a Write, or a Commit with the
	// records of its transaction) and one Head took, how many records
	// that write wrote, and what the committer's thread used meanwhile:
	// the store's share of the loop's waits.
	maxApply, maxHead time.Duration
	applyRecords      int
	applyUse, headUse cputime.Usage
}

// slowest copies the longest write, the records it wrote and the longest
// Head so far, with what the committer's thread used during each, to st.
func (c *committer) slowest(st *Stats) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st.StoreApply, st.StoreApplyRecords, st.StoreApplyUsage = c.maxApply, c.applyRecords, c.applyUse
	st.StoreHead, st.StoreHeadUsage = c.maxHead, c.headUse
}

// took records how long a write of records took, or a Head (head), and
// what the committer's thread used meanwhile (u, from m).
func (c *committer) took(start time.Time, m cputime.Meter, records int, head bool) {
	u, _ := m.Stop()
	d := c.now().Sub(start)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case head:
		if d > c.maxHead {
			c.maxHead, c.headUse = d, u
		}
	case d > c.maxApply:
		c.maxApply, c.applyRecords, c.applyUse = d, records, u
	}
}

type headReq struct {
	site  int64
	n     int
	reply chan headReply
}

type headReply struct {
	site int64
	urls []record.QueuedURL
	next float64
	more bool
	err  error
}

type flushReq chan error

// commitQueue is how many batches and queue-head requests wait for the
// committer. The bytes bound what the batches hold (storage.max_pending_mb);
// the queue is long enough not to bind before them while the store writes:
// a dispatch flushes the loop's batch and asks for a site's queue head, two
// places, and with 8 places the loop's full batch waited for a write with
// 22 of 64 MiB held (485 ms at 3,000,000 URLs).
const commitQueue = 64

// commitRecords bounds a transaction: once the batches written since the
// last commit hold this many records (a crawled page makes about 16), the
// committer commits, before its flush interval. One batch larger than
// this (a chunk of PageRank's ranks, storage.flush_records) goes whole. A transaction whose dirty
// pages outgrow the writer's page cache (16 MiB) spills them to the
// write-ahead log before its commit, and a spilled page written again
// makes the commit read the log back from it and checksum it anew
// (SQLite's walRewriteChecksums). Committed only at the flush interval,
// the default `lidi bench crawl`'s transactions held about 10,000 records
// (up to 46,000) and spilled: 4.5 of its 92 CPU-s, and 10.5 reads a
// page where 6.9 do without. Bounded to 5,000, none spilled, and the
// store's writes took about 4% less CPU (the commits, twice as many,
// take back most of what the spills cost); at 3,000 more, each commit
// writing again the index leaves the next one changes too.
const commitRecords = 5000

func newCommitter(store record.Store, every time.Duration, records int, limit int64) *committer {
	// limit: the committer's share of storage.max_pending_mb (0: none).
	// A bound on the bytes the queue and the batch being gathered hold:
	// when the store falls behind, the loop waits, robots wait on the
	// loop, and memory stays bounded.
	c := &committer{store: store, in: make(chan any, commitQueue), every: every, records: records, txMax: commitRecords, held: newPendingBytes(limit), now: time.Now}
	c.w, _ = store.(record.BatchWriter)
	c.pool.New = func() any { return new(pending) }
	return c
}

func (c *committer) batch() *pending { return c.pool.Get().(*pending) }

// pending is a batch on its way to the store, with the Result.Committed of
// the results it holds (and of those dropped since the last batch): told
// once it is written, or fails to be.
type pending struct {
	record.Batch
	committed []func(error)
	bytes     int64 // what it counts in committer.held, once sent
}

// reset empties p, keeping its storage.
func (p *pending) reset() {
	p.Batch.Reset()
	clear(p.committed)
	p.committed = p.committed[:0]
	p.bytes = 0
}

// empty reports whether p holds nothing to write and no one to tell.
func (p *pending) empty() bool { return p.Len() == 0 && len(p.committed) == 0 }

// run writes until in is closed, then writes what is left.
func (c *committer) run(ctx context.Context) {
	acc := c.batch()
	timer := time.NewTimer(c.every)
	defer timer.Stop()
	// write hands what acc holds to the store, and with commit (or for a
	// store that is no BatchWriter) commits it with everything written
	// before, telling their results.
	write := func(commit bool) error {
		defer c.held.release(acc.bytes) // what it held is written, or never will be
		c.written = append(c.written, acc.committed...)
		if err := c.Err(); err != nil || acc.Len() == 0 && (c.w == nil || commit && c.txRecords == 0) {
			// After a failed write nothing more is written: a later
			// batch may refer to what the lost one held, and the file
			// must stay as it was before it. With nothing to write,
			// what came before is committed already.
			c.tell(err)
			acc.reset()
			return err
		}
		if acc.Len() == 0 && !commit {
			acc.reset() // its results wait for the commit of what came before
			return nil
		}
		start, m, n := c.now(), cputime.StartMeter(), acc.Len()
		c.txRecords += n
		if c.txRecords >= c.txMax {
			commit = true
		}
		var err error
		switch {
		case c.w == nil:
			err = c.store.Apply(context.WithoutCancel(ctx), &acc.Batch)
			commit = true
		case n > 0:
			err = c.w.Write(context.WithoutCancel(ctx), &acc.Batch)
		}
		if err == nil && commit && c.w != nil && c.txRecords > 0 {
			err = c.w.Commit(context.WithoutCancel(ctx))
		}
		if commit {
			// A commit's time is its whole transaction's: the pages
			// its records dirtied go to the WAL then.
			n = c.txRecords
		}
		if commit || err != nil {
			c.txRecords = 0 // committed, or rolled back
		}
		c.took(start, m, n, false)
		if err != nil {
			c.mu.Lock()
			if c.err == nil {
				c.err = err
			}
			c.mu.Unlock()
		}
		if commit || err != nil {
			c.tell(c.Err())
		}
		acc.reset()
		return c.Err()
	}
	apply := func() error { return write(true) }
	for {
		select {
		case m, ok := <-c.in:
			if !ok {
				apply()
				return
			}
			switch m := m.(type) {
			case *pending:
				merge(acc, m)
				m.reset()
				c.pool.Put(m)
				if acc.Len() >= c.records || c.txRecords+acc.Len() >= c.txMax || acc.bytes >= c.held.limit/2 && c.held.limit > 0 || acc.Len() == 0 && len(acc.committed) > 0 || c.held.blocking() {
					// Written, its bytes are free; committed with the
					// rest at the flush interval, or now if that makes
					// the transaction txMax records. (Results dropped,
					// with nothing to write, are told with what came
					// before.)
					write(false)
				}
			case headReq:
				r := headReply{site: m.site}
				if r.err = write(false); r.err == nil {
					start, meter := c.now(), cputime.StartMeter()
					r.urls, r.next, r.more, r.err = c.store.Head(context.WithoutCancel(ctx), m.site, m.n) // a stopping crawl still answers
					c.took(start, meter, 0, true)
				}
				m.reply <- r
			case flushReq:
				m <- apply()
			}
		case <-c.held.wait:
			// A sender waits for bytes: what is gathered goes now, and
			// what is still queued as soon as it is taken (blocking).
			write(false)
		case <-timer.C:
			apply()
			timer.Reset(c.every)
		}
	}
}

// tell passes a commit's outcome to the results of the batches written
// since the last one.
func (c *committer) tell(err error) {
	for _, f := range c.written {
		f(err)
	}
	clear(c.written)
	c.written = c.written[:0]
}

// Err returns the first write error, if any.
func (c *committer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func merge(dst, src *pending) {
	dst.Append(&src.Batch)
	dst.committed = append(dst.committed, src.committed...)
	dst.bytes += src.bytes
}

// send passes b, of n bytes (b.Bytes()), to the committer once the bytes
// held let it in, unless ctx ends first.
func (c *committer) send(ctx context.Context, b *pending, n int64) bool {
	b.bytes = n
	if !c.held.take(ctx.Done(), b.bytes) {
		return false
	}
	select {
	case c.in <- b:
		return true
	case <-ctx.Done():
		c.held.release(b.bytes)
		return false
	}
}

// sendBehind passes b, of n bytes, to the committer as send does, once
// fewer than ahead batches or requests wait in its queue: a long series of
// batches (a PageRank run's ranks, hundreds of chunks) leaves the queue,
// and the bytes its writes free, to the loop's batches and head requests,
// which would otherwise wait behind all of it. The queue's length is
// looked at again at each write's release of bytes, or every
// behindRetry when none comes.
func (c *committer) sendBehind(ctx context.Context, b *pending, n int64, ahead int) bool {
	for len(c.in) >= ahead {
		if !c.held.waitRelease(ctx.Done(), behindRetry) {
			return false
		}
	}
	return c.send(ctx, b, n)
}

// behindRetry bounds sendBehind's wait for a release: a queue of requests
// that hold no bytes (head requests, flushes) drains with none.
const behindRetry = 50 * time.Millisecond

// trySend passes b, of n bytes (b.Bytes()), to the committer if the bytes
// held and the queue let it in now, and the queue is empty. The committer
// takes what is queued at once unless it is writing, and a batch queued
// during a write waits for it anyway: queued then, the loop's small
// batches of each wake-up (hundreds in a write of half a second) filled
// the queue, and the loop's next full batch (send) waited for the write
// to end. Kept in the loop instead, they go with that batch.
func (c *committer) trySend(b *pending, n int64) bool {
	if len(c.in) > 0 {
		return false
	}
	b.bytes = n
	if !c.held.tryTake(b.bytes) {
		return false
	}
	select {
	case c.in <- b:
		return true
	default:
		c.held.release(b.bytes)
		return false
	}
}

// flush writes everything sent so far and reports the result.
func (c *committer) flush() error {
	req := make(flushReq, 1)
	c.in <- req
	return <-req
}

// takeEvents moves the events recorded since the last call into the batch.
func (c *crawl) takeEvents() {
	e := c.e
	e.mu.Lock()
	c.batch.Events = append(c.batch.Events, e.unsaved...)
	clear(e.unsaved)
	e.unsaved = e.unsaved[:0]
	e.mu.Unlock()
}

// Keys of the figures a continued crawl takes back (record.Tally): errors
// by kind, URLs and links not fetched by reason, and the sitemaps'.
const (
	tallyError   = "error."
	tallySkipped = "skipped."
)

// figure is one of the sitemaps' figures kept across runs, and its key.
type figure struct {
	key string
	v   *int64
}

// sitemapTallies are the sitemaps' figures kept across runs.
func (c *crawl) sitemapTallies() [5]figure {
	sm := &c.retries.sitemaps
	return [5]figure{{"sitemaps.named", &sm.Named}, {"sitemaps.read", &sm.Read}, {"sitemaps.refused", &sm.Refused},
		{"sitemaps.urls", &sm.URLs}, {"sitemaps.off_site", &sm.OffSite}}
}

// tallyKey is a kept figure's key in two parts, prefix+name, so that
// takeTallies, which runs at every hand-off, builds the string only for
// a figure that moved.
type tallyKey struct{ prefix, name string }

// takeTallies adds to the batch what the figures kept across runs moved
// since the last time. It runs at every hand-off, and most hand-offs move
// no figure: the figures only grow, so while their sum stands still none
// moved, and the sum costs one pass over the values, without the key
// look-ups that finding what moved takes.
func (c *crawl) takeTallies() {
	t := &c.tally
	sm := c.sitemapTallies()
	var sum int64
	for _, v := range t.errKinds {
		sum += v
	}
	for _, v := range t.skipped {
		sum += v
	}
	for _, f := range sm {
		sum += *f.v
	}
	if sum == t.keptSum && t.kept != nil {
		return
	}
	t.keptSum = sum
	if t.kept == nil {
		t.kept = make(map[tallyKey]int64)
	}
	note := func(k tallyKey, v int64) {
		if d := v - t.kept[k]; d != 0 {
			c.batch.Tallies = append(c.batch.Tallies, record.Tally{Key: k.prefix + k.name, Add: d})
			t.kept[k] = v
		}
	}
	for k, v := range t.errKinds {
		note(tallyKey{tallyError, string(k)}, v)
	}
	for r, v := range t.skipped {
		note(tallyKey{tallySkipped, string(r)}, v)
	}
	for _, f := range sm {
		note(tallyKey{f.key, ""}, *f.v)
	}
}

// restoreTallies takes back the figures of earlier runs (see takeTallies).
func (c *crawl) restoreTallies(ts map[string]int64) {
	t := &c.tally
	if t.kept == nil {
		t.kept = make(map[tallyKey]int64)
	}
	sm := c.sitemapTallies()
	for k, v := range ts {
		if kind, ok := strings.CutPrefix(k, tallyError); ok {
			t.errKinds[visit.FailureKind(kind)] = v
			t.kept[tallyKey{tallyError, kind}] = v
		} else if why, ok := strings.CutPrefix(k, tallySkipped); ok {
			t.skipped[record.SkipReason(why)] = v
			t.kept[tallyKey{tallySkipped, why}] = v
		} else {
			t.kept[tallyKey{k, ""}] = v
		}
		for _, f := range sm {
			if f.key == k {
				*f.v = v
			}
		}
	}
}

// handOff passes the batch gathered so far to the committer if it can take
// it now. The loop hands off after every event it handles, so a result
// waits in the loop only while the committer is busy, and the committer's
// own timer bounds the rest: every page reaches the store within
// storage.flush_interval whatever visits, pauses and page rates do. A
// batch that holds its share of the records or of storage.max_pending_mb
// waits for the committer instead (flush): the loop keeps pace with the
// store.
func (c *crawl) handOff() {
	e := c.e
	c.takeEvents()
	var n int64
	if !c.batch.empty() {
		c.takeTallies()
		n = c.batch.Bytes()
	}
	c.pendingMost = max(c.pendingMost, e.results.bytes()+n+e.commit.held.bytes())
	switch {
	case c.batch.empty():
	case c.batch.Len() >= e.cfg.FlushRecords/4 || n >= e.pending.loop:
		c.send(n)
	case e.commit.trySend(c.batch, n):
		c.batch = e.commit.batch()
	}
}

// flush hands the batch gathered so far to the committer.
func (c *crawl) flush() {
	c.takeEvents()
	c.takeTallies()
	if c.batch.empty() {
		return
	}
	c.send(c.batch.Bytes())
}

// send hands the batch, of n bytes, to the committer, waiting for it.
func (c *crawl) send(n int64) {
	start := time.Now()
	c.e.commit.send(context.Background(), c.batch, n)
	c.tally.storeWait = max(c.tally.storeWait, time.Since(start))
	c.batch = c.e.commit.batch()
}
