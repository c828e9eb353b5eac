package storage

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/record"
)

// chunkSizes are the row counts of the multi-row INSERT statements, largest
// first. A run of rows is written with as many of the largest statement as
// fit and the remainder in binary pieces, so no run costs more than
// len(chunkSizes)-1 extra statements.
var chunkSizes = [...]int{64, 32, 16, 8, 4, 2, 1}

// multiStmt is one INSERT prepared for each of chunkSizes.
type multiStmt [len(chunkSizes)]*sql.Stmt

const urlCols = 12

const sqlURLInsert = `INSERT OR IGNORE INTO urls (id, site, url, depth, priority, seq, parent, discovered, state, skip_reason, skip_rule, lastmod) VALUES `

// sqlLinks inserts pages' links (see pageLinksTable), which their URLs'
// rows then name (urls.links_id), many pages a statement (firstRows); a
// page whose links are there already (a refetch) has them merged by
// sqlLinksMerge, after sqlLinksCount counted them.
const sqlLinks = `INSERT INTO page_links (from_id, to_ids) VALUES `

// A refetch whose links are those stored (most recrawls) stops at
// sqlLinksCount: its to_ids read the same text, and need no merge.
const sqlLinksCount = `SELECT json_array_length(to_ids), to_ids = ? FROM page_links WHERE id = ?`

const sqlLinksMerge = `UPDATE page_links SET to_ids = (SELECT json_group_array(value) FROM
	(SELECT value FROM json_each(page_links.to_ids) UNION SELECT value FROM json_each(?) ORDER BY 1))
WHERE id = ? RETURNING json_array_length(to_ids)`

// sqlLinksRef names a URL's links on its row, for links that come
// without a fetch of their page (a held page's, released).
const sqlLinksRef = `UPDATE urls SET links_id = ? WHERE rowid = ?`

// sqlPageRow finds a URL's row by its ID: the rowid the updates of a
// fetch use, its state, and the rows of its body and links.
const sqlPageRow = `SELECT rowid, state, body_id, links_id FROM urls WHERE id = ?`

const sqlSiteUpsert = `INSERT INTO sites (id, key, host, addr, robots_status, robots_body, robots_fetched, next_visit, failures, parked, fetched,
	robots_wire, robots_ip, robots_url, robots_redirects, robots_end)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET key = excluded.key, host = excluded.host, addr = excluded.addr,
	robots_status = excluded.robots_status, robots_body = excluded.robots_body,
	robots_fetched = excluded.robots_fetched, next_visit = excluded.next_visit,
	failures = excluded.failures, parked = excluded.parked, fetched = excluded.fetched,
	robots_wire = excluded.robots_wire, robots_ip = excluded.robots_ip, robots_url = excluded.robots_url,
	robots_redirects = excluded.robots_redirects, robots_end = excluded.robots_end`

// sqlPageSet records a fetch on its URL's row, moving it to the state
// given (1, or 3 for a probe), with the rows of its body and links:
// sqlPageUpdate on the row sqlPageRow found, sqlPageFirst on a queued
// URL that names no body nor links yet (its first fetch, the usual case,
// with no look-up before).
const sqlPageSet = `UPDATE urls SET state = ?, fetched = ?, status = ?, content_type = ?, length = ?,
	truncated = ?, digest = ?, error = ?, redirect = ?, noindex = ?, duration_ms = ?, outlinks = ?,
	simhash = ?, type_check = ?, etag = ?, last_modified = ?, main_simhash = ?, nourl_simhash = ?, title_hash = ?,
	body_id = ?, links_id = ?`

const (
	sqlPageUpdate = sqlPageSet + ` WHERE rowid = ?`
	sqlPageFirst  = sqlPageSet + ` WHERE id = ? AND state = 0 AND body_id IS NULL AND links_id IS NULL`
)

// sqlBodyInsert stores bodies, many a statement (firstRows).
const sqlBodyInsert = `INSERT INTO pages (url_id, body) VALUES `

const sqlBodyDelete = `DELETE FROM pages WHERE id = ? RETURNING length(body)`

// sqlLinksDelete takes back the links firstFetch wrote for a URL that
// was not as it expected.
const sqlLinksDelete = `DELETE FROM page_links WHERE id = ?`

// sqlSkip drops a queued URL, saying why (and under which rule).
const sqlSkip = `UPDATE urls SET state = 2, skip_reason = ?, skip_rule = ? WHERE id = ? AND state = 0`

// sqlSlowDown keeps a queued URL's 429/503 tries.
const sqlSlowDown = `UPDATE urls SET slow_downs = ? WHERE id = ? AND state = 0`

// sqlUnskip queues again the URLs skipped under a rule since withdrawn
// (through the index urls_rule_skips).
const sqlUnskip = `UPDATE urls SET state = 0, skip_reason = NULL, skip_rule = NULL WHERE skip_rule = ? AND state = 2`

// sqlUnskipURL queues again one URL skipped under a rule.
const sqlUnskipURL = `UPDATE urls SET state = 0, skip_reason = NULL, skip_rule = NULL WHERE id = ? AND state = 2 AND skip_reason = 'rule'`

// sqlHold keeps the links of a page until a probe answers; sqlRelease
// lets go of the pages held for a probe.
const sqlHold = `INSERT OR REPLACE INTO held_links (probe_id, url_id, links) VALUES (?, ?, ?)`

const sqlRelease = `DELETE FROM held_links WHERE probe_id = ?`

const sqlEvent = `INSERT INTO events (time, kind, site, text) VALUES (?, ?, ?, ?)`

const sqlDup = `INSERT OR REPLACE INTO duplicates (url_id, of_id, kind, test, similarity, time) VALUES (?, ?, ?, ?, ?, ?)`

// sqlRule records a rule when learned and updates it when withdrawn.
const sqlRule = `INSERT INTO rules (key, kind, origin, name, value, seg_index, from_part, to_part, supports, support,
	contradictions, withdrawn, covered, learned, withdrawn_at, hash, choice, prior) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (key) DO UPDATE SET supports = excluded.supports, support = excluded.support,
	contradictions = excluded.contradictions, withdrawn = excluded.withdrawn, covered = excluded.covered,
	withdrawn_at = excluded.withdrawn_at, hash = excluded.hash, choice = excluded.choice, prior = excluded.prior`

// sqlSoft404 records a host's soft-404 page; a probe's answer replaces
// the row (confirmed, replaced or withdrawn).
const sqlSoft404 = `INSERT OR REPLACE INTO soft404s (origin, title_hash, simhash, of_id, evidence, time, probe_id, probe_status, withdrawn)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// sqlPriority re-orders a queued URL (a strategy that re-ranks its queue).
const sqlPriority = `UPDATE urls SET priority = ? WHERE id = ? AND state = 0`

const sqlRankRun = `INSERT OR REPLACE INTO rank_runs (computed_at, pages, nodes, edges, iterations, coverage, oracle, ranks)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

const sqlRankInsert = `INSERT OR REPLACE INTO pagerank (url_id, rank, computed_at) VALUES `

const sqlCounter = `UPDATE meta SET value = value + ? WHERE key = ?`

// sqlHead reads a site's queue. Its limit is a CAST: SQLite plans a
// statement again (parses it, and all) at each new value bound to a bare
// `LIMIT ?`, which it may plan by; an expression it plans without.
// Parsing was a third of a Head of a few URLs.
const sqlHead = `SELECT id, url, depth, priority, seq, fetched, digest, simhash, etag, last_modified, slow_downs FROM urls
WHERE site = ? AND state = 0 ORDER BY priority, seq LIMIT CAST(? AS INTEGER)`

// sqlTally adds to one of the engine's figures in meta.
const sqlTally = `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = value + excluded.value`

const sqlSetMeta = `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`

// statements are prepared once on the writer pool. database/sql reuses a
// statement prepared on the pool's only connection inside a transaction
// (Tx.StmtContext finds it), so nothing is parsed again per batch.
type statements struct {
	urls, ranks, bodies, links                    multiStmt
	site, page, bodyDelete, skip, event, counter  *sql.Stmt
	linksCount, linksMerge, linksRef, pageRow     *sql.Stmt
	pageFirst, linksDelete                        *sql.Stmt
	dup, rule, soft404, priority, rankRun, unskip *sql.Stmt
	unskipURL, slowDown, tally                    *sql.Stmt
	head, setMeta, hold, release                  *sql.Stmt
	recrawl                                       recrawlStatements
	all                                           []*sql.Stmt
	// text is each statement's SQL, which rawStmts prepares.
	text map[*sql.Stmt]string
	// uniqueBodies is set for a file upgraded from version 10 or
	// before, whose pages.url_id keeps its unique index: a URL's new
	// body can go in only after its old one went.
	uniqueBodies bool
}

func (s *statements) prepare(ctx context.Context, db *sql.DB) error {
	prep := func(dst **sql.Stmt, q string) error {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("%s: %w", firstLine(q), err)
		}
		*dst = st
		s.all = append(s.all, st)
		s.text[st] = q
		return nil
	}
	s.text = map[*sql.Stmt]string{}
	for i, n := range chunkSizes {
		if err := prep(&s.urls[i], sqlURLInsert+rowsPlaceholders(n, urlCols)); err != nil {
			return err
		}
		if err := prep(&s.ranks[i], sqlRankInsert+rowsPlaceholders(n, 3)); err != nil {
			return err
		}
		if err := prep(&s.recrawl.fetches[i], sqlFetchInsert+rowsPlaceholders(n, fetchCols)); err != nil {
			return err
		}
		if err := prep(&s.bodies[i], sqlBodyInsert+rowsPlaceholders(n, 2)); err != nil {
			return err
		}
		if err := prep(&s.links[i], sqlLinks+rowsPlaceholders(n, 2)); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&s.site, sqlSiteUpsert},
		{&s.linksCount, sqlLinksCount},
		{&s.linksMerge, sqlLinksMerge},
		{&s.linksRef, sqlLinksRef},
		{&s.pageRow, sqlPageRow},
		{&s.page, sqlPageUpdate},
		{&s.pageFirst, sqlPageFirst},
		{&s.linksDelete, sqlLinksDelete},
		{&s.bodyDelete, sqlBodyDelete},
		{&s.skip, sqlSkip},
		{&s.unskip, sqlUnskip},
		{&s.unskipURL, sqlUnskipURL},
		{&s.slowDown, sqlSlowDown},
		{&s.tally, sqlTally},
		{&s.event, sqlEvent},
		{&s.dup, sqlDup},
		{&s.rule, sqlRule},
		{&s.soft404, sqlSoft404},
		{&s.priority, sqlPriority},
		{&s.rankRun, sqlRankRun},
		{&s.counter, sqlCounter},
		{&s.head, sqlHead},
		{&s.setMeta, sqlSetMeta},
		{&s.hold, sqlHold},
		{&s.release, sqlRelease},
	} {
		if err := prep(p.dst, p.q); err != nil {
			return err
		}
	}
	for _, p := range s.recrawl.queries() {
		if err := prep(p.dst, p.q); err != nil {
			return err
		}
	}
	var indexes int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'pages'").Scan(&indexes); err != nil {
		return err
	}
	s.uniqueBodies = indexes > 0
	return nil
}

func (s *statements) close() {
	for _, st := range s.all {
		st.Close()
	}
	s.all, s.text = nil, nil
}

// rowsPlaceholders returns "(?, ?), (?, ?)" for rows rows of cols columns.
func rowsPlaceholders(rows, cols int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", cols), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", rows), ", ")
}

// applyBuffers are reused by every Apply to keep allocations down.
type applyBuffers struct {
	args    []any
	byState [3][]int             // indices into Batch.URLs by URLState
	links   []record.Link        // Batch.Links sorted, each once
	groups  []linkGroup          // links by page, in the order of links
	history []*record.PageRecord // the batch's fetches, for the history
	first   []firstRow           // by page of the batch, the rows firstRows wrote for it
	rowIdx  []int                // pages of a statement of many rows
	rowIDs  []int64              // their rows' ids
	texts   []string             // their links' to_ids
	json    []byte               // a page's to_ids
}

// firstRow is what firstRows wrote for a page: its body's row and its
// links' (g), NULL for none.
type firstRow struct {
	body, links sql.NullInt64
	g           *linkGroup
}

// linkGroup is a page's links in a batch: applyBuffers.links[lo:hi].
type linkGroup struct {
	from    uint64
	lo, hi  int
	written bool // with the page's fetch
}

// applier is the state of one Apply.
type applier struct {
	ctx context.Context // the caller's; checked between statements
	tx  *sql.Tx
	txs map[*sql.Stmt]*sql.Stmt // Head's statements in tx
	// raw runs the statements on tx's connection while an Apply (or
	// the counters of its commit) holds it: see DB.inRaw.
	raw   *rawStmts
	buf   *applyBuffers
	count [nCounters]int64
}

// bg is the context statements run with. The driver starts a goroutine per
// statement for a context that can be cancelled; at tens of thousands of
// rows per second that costs more than the row. Apply checks the caller's
// context between statements instead and rolls the whole batch back.
var bg = context.Background()

func (a *applier) stmt(s *sql.Stmt) *sql.Stmt {
	if t, ok := a.txs[s]; ok {
		return t
	}
	t := a.tx.StmtContext(bg, s)
	a.txs[s] = t
	return t
}

// unskip runs stmt, which moves skipped URLs back to the queue, for each
// of ids, and counts what moved.
func (a *applier) unskip(stmt *sql.Stmt, ids []uint64, what string) error {
	for _, id := range ids {
		n, err := a.exec(stmt, int64(id))
		if err != nil {
			return fmt.Errorf("%s %016x: %w", what, id, err)
		}
		a.count[cQueued] += n
		a.count[cSkipped] -= n
	}
	return nil
}

// run runs s with args, unless the caller's context is done.
func (a *applier) run(s *sql.Stmt, args ...any) (driver.Result, error) {
	if err := a.ctx.Err(); err != nil {
		return nil, err
	}
	return a.raw.exec(s, args)
}

// queryRow runs s with args and scans its first row into dest (see
// rawStmts.queryRow), unless the caller's context is done.
func (a *applier) queryRow(s *sql.Stmt, args []any, dest ...any) error {
	if err := a.ctx.Err(); err != nil {
		return err
	}
	return a.raw.queryRow(s, args, dest...)
}

// exec runs s and returns the rows it changed.
func (a *applier) exec(s *sql.Stmt, args ...any) (int64, error) {
	res, err := a.run(s, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// insert runs s, an INSERT of one row, and returns the row's id.
func (a *applier) insert(s *sql.Stmt, args ...any) (int64, error) {
	res, err := a.run(s, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// multi writes n rows through m; fill appends the values of row i to args.
// It returns the number of rows inserted.
func (a *applier) multi(m *multiStmt, n int, fill func(args []any, i int) []any) (int64, error) {
	var total int64
	err := a.chunks(m, n, fill, func(res driver.Result, pos, size int) error {
		c, err := res.RowsAffected()
		total += c
		return err
	})
	return total, err
}

// multiIDs inserts n rows through m, as multi, into a table whose rows
// SQLite numbers (INTEGER PRIMARY KEY), and sets ids[i] to row i's id:
// a statement's rows are numbered one after the other, up to the last,
// which it reports.
func (a *applier) multiIDs(m *multiStmt, n int, fill func(args []any, i int) []any, ids []int64) error {
	return a.chunks(m, n, fill, func(res driver.Result, pos, size int) error {
		last, err := res.LastInsertId()
		for j := range size {
			ids[pos+j] = last - int64(size-1-j)
		}
		return err
	})
}

// chunks runs m on n rows, as many of the largest statement as fit and
// the rest in binary pieces; fill appends the values of row i to args,
// and done is told each statement's result and rows.
func (a *applier) chunks(m *multiStmt, n int, fill func(args []any, i int) []any, done func(res driver.Result, pos, size int) error) error {
	pos := 0
	for k, size := range chunkSizes {
		for n-pos >= size {
			args := a.buf.args[:0]
			for i := pos; i < pos+size; i++ {
				args = fill(args, i)
			}
			a.buf.args = args
			res, err := a.run(m[k], args...)
			clear(args) // let the GC have the boxed values
			if err == nil {
				err = done(res, pos, size)
			}
			if err != nil {
				return err
			}
			pos += size
		}
	}
	return nil
}

// Apply writes b in one transaction: all of it or, on error, none of it.
// Sites are inserted or updated, URLs inserted unless already present,
// pages recorded on their URLs (which move to URLFetched) with their bodies
// stored as given (already zlib-compressed), links inserted unless present,
// skipped URLs moved from URLQueued to URLSkipped, and events appended. The
// crawl's counters in meta are updated in the same transaction. A page, or
// links, of a URL the store has never seen fail the batch with
// ErrUnknownURL.
//
// A transaction left open by Write is the one Apply writes in and commits.
// Cancelling ctx abandons the batch. Apply is safe for concurrent use, but
// batches are applied one at a time.
func (db *DB) Apply(ctx context.Context, b *record.Batch) error {
	if err := db.Write(ctx, b); err != nil {
		return err
	}
	return db.Commit(ctx)
}

// Write writes b as Apply does, in the writer's open transaction (begun
// if none is), and leaves it open: readers do not see b, nor does the file
// after a crash, until Commit. Head reads through it. Batches written
// before Commit cost less than as many Applies: a page of a B-tree that
// several of them change (an index's leaf, the tail of the table of
// bodies) goes to the write-ahead log once per commit. An error rolls back
// the whole transaction, with the batches written before b in it.
func (db *DB) Write(ctx context.Context, b *record.Batch) error {
	if b == nil || b.Len() == 0 {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	if err := db.takeLost(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		db.rollback() // as any error does: the caller was told the batches failed
		return err
	}
	start := time.Now()
	a, err := db.begin(ctx)
	if err != nil {
		return db.fault(fmt.Errorf("storage: apply: begin: %w", err))
	}
	defer func() { a.ctx = nil }()
	if err := db.inRaw(func(a *applier) error { return a.apply(&db.st, b) }); err != nil {
		db.rollback()
		return db.fault(fmt.Errorf("storage: apply: %w", err))
	}
	db.applyNano.Add(int64(time.Since(start)))
	db.pend.took += time.Since(start)
	return nil
}

// Commit commits the transaction Write left open, if any.
func (db *DB) Commit(ctx context.Context) error {
	db.mu.Lock()
	defer db.mu.Unlock()
	return db.commit()
}

// openTx is the transaction Write left open, on its connection, with its
// statements and how long its batches took to write.
type openTx struct {
	applier
	conn *sql.Conn // the writer's connection, held until the transaction ends
	took time.Duration
}

// inRaw runs f with the open transaction's applier, whose statements
// then run on the driver's connection (rawStmts). The caller holds db.mu.
// f must not use database/sql on the writer: sql.Conn.Raw holds the
// connection's lock while f runs, and such a call would wait for ever.
func (db *DB) inRaw(f func(a *applier) error) error {
	o := db.pend
	return o.conn.Raw(func(ci any) error {
		r, err := db.raw.on(ci)
		if err != nil {
			return err
		}
		o.raw = r
		defer func() { o.raw = nil }()
		return f(&o.applier)
	})
}

// end ends the open transaction, which commit (Commit) or roll back, and
// gives its connection back to the writer's pool. The caller holds db.mu.
func (db *DB) end(o *openTx, commit bool) error {
	db.pend = nil
	var err error
	if commit {
		err = o.tx.Commit()
	} else {
		err = o.tx.Rollback()
	}
	return errors.Join(err, o.conn.Close())
}

// begin returns the open transaction's applier for a batch, beginning a
// transaction if none is open. The caller holds db.mu.
func (db *DB) begin(ctx context.Context) (*applier, error) {
	if db.pend == nil {
		conn, err := db.w.Conn(bg)
		if err != nil {
			return nil, err
		}
		tx, err := conn.BeginTx(bg, nil)
		if err != nil {
			conn.Close()
			return nil, err
		}
		o := &openTx{applier: applier{tx: tx, txs: make(map[*sql.Stmt]*sql.Stmt, 2), buf: &db.buf}, conn: conn}
		if !db.unindexed {
			// Until Close: see sqlDropFetchesIndex.
			if _, err := tx.ExecContext(bg, sqlDropFetchesIndex); err != nil {
				db.end(o, false)
				return nil, err
			}
		}
		db.pend = o
	}
	a := &db.pend.applier
	a.ctx = ctx
	return a, nil
}

// takeLost returns, once, why the open transaction ended under a failed
// Head (headError). The caller holds db.mu.
func (db *DB) takeLost() error {
	err := db.lost
	db.lost = nil
	return err
}

// rollback abandons the open transaction. The caller holds db.mu.
func (db *DB) rollback() {
	if db.pend != nil {
		db.end(db.pend, false)
	}
}

// commit commits the open transaction, if any, with the counters its
// batches moved. The caller holds db.mu.
func (db *DB) commit() error {
	if err := db.takeLost(); err != nil {
		return err
	}
	o := db.pend
	if o == nil {
		return nil
	}
	if db.closed.Load() {
		return ErrClosed
	}
	start := time.Now()
	o.ctx = bg
	if err := db.inRaw(func(a *applier) error { return a.counters(&db.st) }); err != nil {
		db.rollback()
		return db.fault(fmt.Errorf("storage: apply: %w", err))
	}
	if err := db.end(o, true); err != nil {
		return db.fault(fmt.Errorf("storage: apply: commit: %w", err))
	}
	db.unindexed = true
	// The batch is in the file the connection has open; if that file is
	// no longer at db.path, it is copied out before the crawl stops.
	if err := db.checkFile(bg); err != nil {
		return err
	}
	db.ckpt.finish(db.w)
	db.ckpt.notify()
	d := time.Since(start)
	db.batches.Add(1)
	db.applyNano.Add(int64(d))
	db.lastNano.Store(int64(o.took + d))
	return nil
}

func (a *applier) apply(st *statements, b *record.Batch) error {
	for i := range b.Sites {
		s := &b.Sites[i]
		if _, err := a.exec(st.site, s.ID, s.Key, s.Host, nullString(s.Addr), int64(s.RobotsStatus),
			s.RobotsBody, millis(s.RobotsFetched), millis(s.NextVisit), int64(s.Failures),
			boolInt(s.Parked), s.Fetched, s.RobotsWire, nullString(s.RobotsIP), nullString(s.RobotsURL),
			formatHops(s.RobotsRedirects), robotsEnd(s)); err != nil {
			return fmt.Errorf("site %d (%s): %w", s.ID, s.Key, err)
		}
	}
	if err := a.urls(st, b.URLs); err != nil {
		return err
	}
	a.groupLinks(b.Links)
	a.buf.history = a.buf.history[:0]
	if err := a.firstRows(st, b.Pages); err != nil {
		return err
	}
	for i := range b.Pages {
		if err := a.page(st, &b.Pages[i], a.buf.first[i]); err != nil {
			return err
		}
	}
	if err := a.history(&st.recrawl); err != nil {
		return err
	}
	if err := a.recrawl(&st.recrawl, b); err != nil {
		return err
	}
	for _, t := range b.Tallies {
		if _, err := a.exec(st.tally, tallyPrefix+t.Key, t.Add); err != nil {
			return fmt.Errorf("tally %s: %w", t.Key, err)
		}
	}
	for _, sd := range b.SlowDowns {
		if _, err := a.exec(st.slowDown, int64(sd.Tries), int64(sd.URL)); err != nil {
			return fmt.Errorf("slow-down tries of %016x: %w", sd.URL, err)
		}
	}
	if err := a.links(st); err != nil {
		return err
	}
	for _, sk := range b.Skips {
		n, err := a.exec(st.skip, sk.Reason, nullID(sk.Rule), int64(sk.URL))
		if err != nil {
			return fmt.Errorf("skip %016x: %w", sk.URL, err)
		}
		a.count[cQueued] -= n
		a.count[cSkipped] += n
	}
	// URLs skipped under a rule go back to the queue: all a withdrawn
	// rule skipped, then single URLs whose canonical URL does not exist.
	if err := a.unskip(st.unskip, b.UnskipRules, "unskip rule"); err != nil {
		return err
	}
	if err := a.unskip(st.unskipURL, b.Unskips, "unskip"); err != nil {
		return err
	}
	for i := range b.Dups {
		d := &b.Dups[i]
		if _, err := a.exec(st.dup, int64(d.URL), int64(d.Of), d.Kind.String(), d.Test, d.Similarity, millis(d.Time)); err != nil {
			return fmt.Errorf("duplicate %016x: %w", d.URL, err)
		}
	}
	for i := range b.Rules {
		r := &b.Rules[i].Rule
		learned, withdrawn := millis(b.Rules[i].Time), any(nil)
		if r.Withdrawn {
			learned, withdrawn = nil, millis(b.Rules[i].Time)
		}
		if _, err := a.exec(st.rule, r.Key(), r.Kind.String(), r.Origin, nullString(r.Name), nullString(r.Value), r.Index,
			nullString(r.From), nullString(r.To), r.Supports, formatPairs(r.Support), formatPairs(r.Contradictions),
			boolInt(r.Withdrawn), r.Covered, learned, withdrawn, int64(r.ID()), ruleChoice(r), r.Prior); err != nil {
			return fmt.Errorf("rule %s: %w", r, err)
		}
	}
	for i := range b.Soft404s {
		s := &b.Soft404s[i].Sig
		probe, status := any(nil), any(nil)
		if s.Probe != 0 {
			probe, status = int64(s.Probe), s.ProbeStatus
		}
		if _, err := a.exec(st.soft404, s.Origin, int64(s.Title), int64(s.Simhash), int64(s.Of), formatPairs(s.Evidence), millis(b.Soft404s[i].Time),
			probe, status, boolInt(s.Withdrawn)); err != nil {
			return fmt.Errorf("soft 404 of %s: %w", s.Origin, err)
		}
	}
	for i := range b.Holds {
		h := &b.Holds[i]
		if _, err := a.exec(st.hold, int64(h.Probe), int64(h.Page), strings.Join(h.Links, "\n")); err != nil {
			return fmt.Errorf("links held by %016x: %w", h.Page, err)
		}
	}
	for _, id := range b.Releases {
		if _, err := a.exec(st.release, int64(id)); err != nil {
			return fmt.Errorf("links held for probe %016x: %w", id, err)
		}
	}
	for _, p := range b.Priorities {
		if _, err := a.exec(st.priority, p.Priority, int64(p.URL)); err != nil {
			return fmt.Errorf("priority of %016x: %w", p.URL, err)
		}
	}
	if len(b.Ranks) > 0 {
		ranks := b.Ranks
		if _, err := a.multi(&st.ranks, len(ranks), func(args []any, i int) []any {
			return append(args, int64(ranks[i].URL), ranks[i].Rank, millis(ranks[i].Time))
		}); err != nil {
			return fmt.Errorf("pagerank: %w", err)
		}
	}
	for i := range b.RankRuns {
		r := &b.RankRuns[i]
		var oracle any
		if r.Oracle >= 0 {
			oracle = r.Oracle
		}
		if _, err := a.exec(st.rankRun, millis(r.Time), r.Pages, int64(r.Nodes), int64(r.Edges), int64(r.Iterations),
			r.Coverage, oracle, boolInt(r.Ranks)); err != nil {
			return fmt.Errorf("pagerank run: %w", err)
		}
	}
	for i := range b.Events {
		e := &b.Events[i]
		if _, err := a.exec(st.event, millis(e.Time), e.Kind, nullString(e.Site), e.Text); err != nil {
			return fmt.Errorf("event: %w", err)
		}
		a.count[cEvents]++
	}
	return nil
}

// counters adds what the transaction's batches moved to the counters in
// meta, once for all of them.
func (a *applier) counters(st *statements) error {
	for k, v := range a.count {
		if v == 0 {
			continue
		}
		if _, err := a.exec(st.counter, v, counterKeys[k]); err != nil {
			return fmt.Errorf("counters: %w", err)
		}
	}
	return nil
}

// groupLinks sorts a batch's links by page (as signed integers, SQL's
// order), each once, into buf.links and buf.groups.
func (a *applier) groupLinks(links []record.Link) {
	sorted := append(a.buf.links[:0], links...)
	slices.SortFunc(sorted, func(x, y record.Link) int {
		return cmp.Or(cmp.Compare(int64(x.From), int64(y.From)), cmp.Compare(int64(x.To), int64(y.To)))
	})
	sorted = slices.Compact(sorted)
	a.buf.links = sorted
	groups := a.buf.groups[:0]
	for lo := 0; lo < len(sorted); {
		hi := lo + 1
		for hi < len(sorted) && sorted[hi].From == sorted[lo].From {
			hi++
		}
		groups = append(groups, linkGroup{from: sorted[lo].From, lo: lo, hi: hi})
		lo = hi
	}
	a.buf.groups = groups
}

// linksText returns g's to_ids: the targets' IDs as a JSON array, in
// ascending order (as signed integers, SQL's order), each once.
func (a *applier) linksText(g *linkGroup) string {
	js := append(a.buf.json[:0], '[')
	for i, l := range a.buf.links[g.lo:g.hi] {
		if i > 0 {
			js = append(js, ',')
		}
		js = strconv.AppendInt(js, int64(l.To), 10)
	}
	js = append(js, ']')
	a.buf.json = js
	// Bound as TEXT: a BLOB would be read as JSONB.
	return string(js)
}

// firstRows writes the bodies, then the links, of the batch's pages that
// look like the first fetch of a queued URL (neither a recrawl nor a
// 304), many rows a statement, and notes each page's rows in buf.first
// for firstFetch, which checks.
func (a *applier) firstRows(st *statements, pages []record.PageRecord) error {
	first := slices.Grow(a.buf.first[:0], len(pages))[:len(pages)]
	clear(first)
	a.buf.first = first
	idx := a.buf.rowIdx[:0]
	for i := range pages {
		if p := &pages[i]; st.first(p) && p.Body != nil && !p.Probe { // a probe's fingerprints are its evidence
			idx = append(idx, i)
		}
	}
	ids := slices.Grow(a.buf.rowIDs[:0], len(idx))[:len(idx)]
	if err := a.multiIDs(&st.bodies, len(idx), func(args []any, k int) []any {
		p := &pages[idx[k]]
		return append(args, int64(p.URL), p.Body)
	}, ids); err != nil {
		return fmt.Errorf("bodies: %w", err)
	}
	for k, i := range idx {
		first[i].body = sql.NullInt64{Int64: ids[k], Valid: true}
		a.count[cBodies]++
		a.count[cBodyBytes] += int64(len(pages[i].Body))
	}
	idx, texts := idx[:0], a.buf.texts[:0]
	for i := range pages {
		p := &pages[i]
		g := a.linksOf(p.URL)
		if !st.first(p) || g == nil || g.written {
			continue
		}
		g.written = true
		first[i].g = g
		idx, texts = append(idx, i), append(texts, a.linksText(g))
		a.count[cLinks] += int64(g.hi - g.lo)
	}
	ids = slices.Grow(ids[:0], len(idx))[:len(idx)]
	err := a.multiIDs(&st.links, len(idx), func(args []any, k int) []any {
		return append(args, int64(pages[idx[k]].URL), texts[k])
	}, ids)
	clear(texts)
	a.buf.rowIdx, a.buf.rowIDs, a.buf.texts = idx, ids, texts[:0]
	if err != nil {
		return fmt.Errorf("links: %w", err)
	}
	for k, i := range idx {
		first[i].links = sql.NullInt64{Int64: ids[k], Valid: true}
	}
	return nil
}

// first reports whether p looks like the first fetch of a queued URL,
// which firstRows and firstFetch write: not a recrawl nor a 304, nor,
// in a file whose bodies are unique by URL, a page with a body (its URL
// might have one already: one fetched again, or twice in a batch).
func (s *statements) first(p *record.PageRecord) bool {
	return !notModified(p) && !p.Recrawl && !(s.uniqueBodies && p.Body != nil && !p.Probe)
}

// notModified reports whether p keeps its URL's copy: a 304, or a
// recrawl that got no answer or a 5xx or 429.
func notModified(p *record.PageRecord) bool {
	return p.Verdict == fetch.VerdictNotModified || p.Recrawl && (p.Err != "" || p.Status >= 500 || p.Status == 429)
}

// linksOf returns the group of page's links in the batch, nil when it
// has none.
func (a *applier) linksOf(page uint64) *linkGroup {
	i, ok := slices.BinarySearchFunc(a.buf.groups, int64(page), func(g linkGroup, t int64) int { return cmp.Compare(int64(g.from), t) })
	if !ok {
		return nil
	}
	return &a.buf.groups[i]
}

// links writes the links of pages whose fetch was not in the batch (a
// held page's, released) and names them on their URLs' rows.
func (a *applier) links(st *statements) error {
	for i := range a.buf.groups {
		g := &a.buf.groups[i]
		if g.written {
			continue
		}
		var row, state int64
		var bodyID, linksID sql.NullInt64
		if err := a.queryRow(st.pageRow, []any{int64(g.from)}, &row, &state, &bodyID, &linksID); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("links of %016x: %w", g.from, ErrUnknownURL)
			}
			return fmt.Errorf("links of %016x: %w", g.from, err)
		}
		ref, err := a.pageLinks(st, g, linksID)
		if err != nil {
			return err
		}
		if ref != linksID {
			if _, err := a.exec(st.linksRef, ref, row); err != nil {
				return fmt.Errorf("links of %016x: %w", g.from, err)
			}
		}
	}
	return nil
}

// pageLinks writes a page's links one row a page (pageLinksTable): the
// targets' IDs as a JSON array, in ascending order (as signed integers,
// SQL's order), each once. A page with a row already (old, a refetch)
// keeps the union of its old and new links, as version 8's INSERT OR
// IGNORE did. It returns the row the page's URL names: old, or the one
// inserted.
func (a *applier) pageLinks(st *statements, g *linkGroup, old sql.NullInt64) (sql.NullInt64, error) {
	g.written = true
	text := a.linksText(g)
	if !old.Valid {
		id, err := a.insert(st.links[len(chunkSizes)-1], int64(g.from), text)
		if err != nil {
			return old, fmt.Errorf("links of %016x: %w", g.from, err)
		}
		a.count[cLinks] += int64(g.hi - g.lo)
		return sql.NullInt64{Int64: id, Valid: true}, nil
	}
	var before, after int64
	var same bool
	if err := a.queryRow(st.linksCount, []any{text, old.Int64}, &before, &same); err != nil {
		return old, fmt.Errorf("links of %016x: %w", g.from, err)
	}
	if same {
		return old, nil
	}
	if err := a.queryRow(st.linksMerge, []any{text, old.Int64}, &after); err != nil {
		return old, fmt.Errorf("links of %016x: %w", g.from, err)
	}
	a.count[cLinks] += after - before
	return old, nil
}

// urls inserts new URLs grouped by state, so the rows each statement
// actually inserted (duplicates are ignored) move the right counter.
func (a *applier) urls(st *statements, urls []record.URLRecord) error {
	by := &a.buf.byState
	for s := range by {
		by[s] = by[s][:0]
	}
	for i := range urls {
		s := urls[i].State
		if s < 0 || int(s) >= len(by) {
			return fmt.Errorf("url %s: invalid state %d", urls[i].URL, s)
		}
		by[s] = append(by[s], i)
	}
	for s, idx := range by {
		if len(idx) == 0 {
			continue
		}
		n, err := a.multi(&st.urls, len(idx), func(args []any, i int) []any {
			u := &urls[idx[i]]
			return append(args, int64(u.ID), u.Site, u.URL, int64(u.Depth), u.Priority, u.Seq,
				nullID(u.Parent), millis(u.Discovered), int64(u.State), nullString(string(u.SkipReason)), nullID(u.Rule), millis(u.LastMod))
		})
		if err != nil {
			return fmt.Errorf("urls: %w", err)
		}
		a.count[cURLs] += n
		a.count[cQueued+s] += n
	}
	return nil
}

// page records one fetch in the history and on its URL, with its links
// in the batch. The URL is normally queued; a URL that was skipped, or
// fetched before (the latest fetch wins, its old body goes), is handled
// too, keeping the counters exact. A 304 keeps the copy: the URL only
// records when it was confirmed; so does a recrawl that got no answer or
// a 5xx or 429 (the history has the failure, the copy stays to be
// recrawled). A probe's answer (p.Probe) moves its URL to URLProbed and
// is left out of the history and the counters of pages, bytes and
// errors.
func (a *applier) page(st *statements, p *record.PageRecord, r firstRow) error {
	if st.first(p) {
		ok, err := a.firstFetch(st, p, r)
		if err != nil {
			return err
		}
		if ok {
			a.fetched(p, record.URLQueued)
			return nil
		}
	}
	id := int64(p.URL)
	var row, state int64
	var bodyID, linksID sql.NullInt64
	if err := a.queryRow(st.pageRow, []any{id}, &row, &state, &bodyID, &linksID); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%w: %016x", ErrUnknownURL, p.URL)
		}
		return fmt.Errorf("page %016x: %w", p.URL, err)
	}
	keep := notModified(p)
	if !keep && bodyID.Valid {
		if err := a.dropBody(st, p.URL, bodyID.Int64); err != nil {
			return err
		}
		bodyID = sql.NullInt64{}
	}
	if p.Body != nil && !keep && !p.Probe {
		b, err := a.insert(st.bodies[len(chunkSizes)-1], id, p.Body)
		if err != nil {
			return fmt.Errorf("page %016x body: %w", p.URL, err)
		}
		bodyID = sql.NullInt64{Int64: b, Valid: true}
		a.count[cBodies]++
		a.count[cBodyBytes] += int64(len(p.Body))
	}
	if g := a.linksOf(p.URL); g != nil && !g.written {
		var err error
		if linksID, err = a.pageLinks(st, g, linksID); err != nil {
			return err
		}
	}
	var err error
	if keep {
		_, err = a.exec(st.recrawl.notModified, millis(p.Fetched), float64(p.Duration)/float64(time.Millisecond),
			nullString(p.ETag), nullString(p.LastModified), linksID, row)
	} else {
		_, err = a.exec(st.page, pageArgs(p, bodyID, linksID, row)...)
	}
	if err != nil {
		return fmt.Errorf("page %016x: %w", p.URL, err)
	}
	a.fetched(p, record.URLState(state))
	return nil
}

// firstFetch records p as the first fetch of a queued URL, the usual
// case, without looking the URL's row up first: the row names the body
// and links firstRows wrote (r), if it is queued and names none yet.
// When it is not (a URL skipped, fetched before, unknown), firstFetch
// takes those rows back and reports false.
func (a *applier) firstFetch(st *statements, p *record.PageRecord, r firstRow) (bool, error) {
	n, err := a.exec(st.pageFirst, pageArgs(p, r.body, r.links, int64(p.URL))...)
	if err != nil {
		return false, fmt.Errorf("page %016x: %w", p.URL, err)
	}
	if n > 0 {
		return true, nil
	}
	if r.body.Valid {
		if err := a.dropBody(st, p.URL, r.body.Int64); err != nil {
			return false, err
		}
	}
	if r.links.Valid {
		if _, err := a.exec(st.linksDelete, r.links.Int64); err != nil {
			return false, fmt.Errorf("links of %016x: %w", p.URL, err)
		}
		a.count[cLinks] -= int64(r.g.hi - r.g.lo)
		r.g.written = false
	}
	return false, nil
}

// pageArgs are sqlPageSet's arguments for p, then key's.
func pageArgs(p *record.PageRecord, bodyID, linksID sql.NullInt64, key int64) []any {
	to := int64(record.URLFetched)
	if p.Probe {
		to = int64(record.URLProbed)
	}
	return []any{to, millis(p.Fetched), int64(p.Status), nullString(p.ContentType), p.Length,
		boolInt(p.Truncated), nullID(p.Digest), nullString(p.Err), nullString(p.Redirect),
		boolInt(p.NoIndex), float64(p.Duration) / float64(time.Millisecond), int64(p.Links),
		nullID(p.Simhash), nullString(string(p.TypeCheck)), nullString(p.ETag), nullString(p.LastModified),
		nullID(p.MainSimhash), nullID(p.NoURLSimhash), nullID(p.TitleHash), bodyID, linksID, key}
}

// dropBody deletes the body in row id, of url.
func (a *applier) dropBody(st *statements, url uint64, id int64) error {
	var n int64
	if err := a.queryRow(st.bodyDelete, []any{id}, &n); err != nil {
		return fmt.Errorf("page %016x: %w", url, err)
	}
	a.count[cBodies]--
	a.count[cBodyBytes] -= n
	return nil
}

// fetched queues p for the fetch history (see history) and moves the
// counters, its URL having been in state from.
func (a *applier) fetched(p *record.PageRecord, from record.URLState) {
	if !p.Probe {
		a.buf.history = append(a.buf.history, p)
	}
	fetched := int64(1)
	if p.Probe {
		fetched = 0
	}
	switch {
	case from == record.URLQueued:
		a.count[cQueued]--
		a.count[cFetched] += fetched
	case from == record.URLSkipped:
		a.count[cSkipped]--
		a.count[cFetched] += fetched
	}
	if p.Probe {
		return
	}
	a.count[cPages]++
	if p.Recrawl {
		a.count[cRecrawls]++
	}
	a.count[cBytes] += p.Length
	if p.Err != "" || p.Status >= 400 {
		a.count[cErrors]++
	}
}

// SetMeta records a value in the meta table (for example a digest of the
// crawl's configuration or the time it started). The store's own keys
// ("created", "schema" and those starting with "count.") are refused with
// ErrReservedKey. It commits what Write left open first.
func (db *DB) SetMeta(ctx context.Context, key, value string) error {
	if strings.HasPrefix(key, reservedPrefix) || strings.HasPrefix(key, tallyPrefix) || key == keyCreated || key == keySchema {
		return fmt.Errorf("%w: %q", ErrReservedKey, key)
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed.Load() {
		return ErrClosed
	}
	if err := db.commit(); err != nil { // what Write left open holds the connection
		return err
	}
	if err := ctx.Err(); err != nil { // checked once, and the statement run under bg: see Head
		return err
	}
	if _, err := db.st.setMeta.ExecContext(bg, key, value); err != nil {
		return fmt.Errorf("storage: set meta %q: %w", key, err)
	}
	return nil
}

// formatHops writes a redirect chain one hop a line, "status URL"; nil
// for none.
func formatHops(hs []fetch.Hop) any {
	if len(hs) == 0 {
		return nil
	}
	var b strings.Builder
	for i, h := range hs {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%d %s", h.Status, h.URL)
	}
	return b.String()
}

// parseHops reads what formatHops wrote.
func parseHops(s string) ([]fetch.Hop, error) {
	var out []fetch.Hop
	for line := range strings.Lines(s) {
		st, u, ok := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		n, err := strconv.Atoi(st)
		if !ok || err != nil || u == "" {
			return nil, fmt.Errorf("bad redirect %q", line)
		}
		out = append(out, fetch.Hop{URL: u, Status: n})
	}
	return out, nil
}

// robotsEnd is sites.robots_end for s: NULL when no chain was followed.
func robotsEnd(s *record.SiteRecord) any {
	if s.RobotsURL == "" {
		return nil
	}
	return s.RobotsEnd.String()
}

// parseChainEnd reads a fetch.ChainEnd's name.
func parseChainEnd(s string) (fetch.ChainEnd, error) {
	for e := fetch.ChainAnswered; e <= fetch.ChainFailed; e++ {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, fmt.Errorf("unknown redirect chain end %q", s)
}

// formatPairs writes URL id pairs as "copy:original" in hexadecimal,
// separated by spaces; nil for none.
func formatPairs(ps []dedup.Pair) any {
	if len(ps) == 0 {
		return nil
	}
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%016x:%016x", p.Copy, p.Original)
	}
	return b.String()
}

// parsePairs reads what formatPairs wrote.
func parsePairs(s string) ([]dedup.Pair, error) {
	var out []dedup.Pair
	for _, f := range strings.Fields(s) {
		a, b, ok := strings.Cut(f, ":")
		x, err1 := strconv.ParseUint(a, 16, 64)
		y, err2 := strconv.ParseUint(b, 16, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad URL id pair %q", f)
		}
		out = append(out, dedup.Pair{Copy: x, Original: y})
	}
	return out, nil
}

// ruleChoice is rules.choice for r: NULL for a kind with no sides to
// choose between.
func ruleChoice(r *dedup.Rule) any {
	if r.Kind != dedup.SwapHost && r.Kind != dedup.SwapPrefix {
		return nil
	}
	return r.Choice.String()
}
