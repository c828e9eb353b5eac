package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"lidi/engine/fetch"
	"lidi/engine/record"
)

// Version 3: recrawling. Every fetch of a URL is a row of fetches (the
// urls row and pages keep the latest), with the verdict on change: changed
// is 1 or 0, NULL when nothing was compared (a first fetch, an error);
// verdict says how ("not-modified" for a 304, "same-digest", "same-text"
// for a body whose text fingerprint moved by no more than the threshold,
// "changed", "none"). urls gains the validators of the latest fetch.
// channels, channel_groups and reassignments are the recrawl manager's
// state; per-group lists are space-separated numbers.
const fetchesTable = `CREATE TABLE fetches (
		id            INTEGER PRIMARY KEY,
		url_id        INTEGER NOT NULL,
		time          INTEGER,
		status        INTEGER NOT NULL,
		recrawl       INTEGER NOT NULL,
		changed       INTEGER,
		verdict       TEXT NOT NULL,
		digest        INTEGER,
		simhash       INTEGER,
		length        INTEGER NOT NULL,
		etag          TEXT,
		last_modified TEXT,
		duration_ms   REAL,
		error         TEXT
	)`

const fetchesIndex = `CREATE INDEX fetches_url ON fetches (url_id, time)`

// The fetch history's index is kept only while no crawl writes: a crawl
// appends a fetch a page, and the index, keyed by the URLs' random IDs,
// took a leaf of 4 KiB dirtied per page or so (0.57 WAL frames a page of
// 6.3, BenchmarkWALFrames), written to the WAL and again by the
// checkpoint, for lookups nothing makes during a crawl. The first write
// transaction of a DB drops it; Close builds it again in one sorted pass,
// and so does a snapshot in its copy, so a file at rest has it. A file
// read while a crawl writes it (lidi export --warc of a live crawl, or of
// one killed) lacks it: queries by url_id scan the history and give the
// same rows.
const sqlDropFetchesIndex = `DROP INDEX IF EXISTS fetches_url`

var sqlBuildFetchesIndex = strings.Replace(fetchesIndex, "CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1)

const channelsTable = `CREATE TABLE channels (
		id          TEXT PRIMARY KEY,
		grp         INTEGER NOT NULL,
		interval_ms INTEGER NOT NULL,
		rate        REAL NOT NULL,
		submitted   INTEGER NOT NULL,
		updates     INTEGER NOT NULL,
		last_update INTEGER,
		updated     INTEGER
	) WITHOUT ROWID`

const channelGroupsTable = `CREATE TABLE channel_groups (
		grp         INTEGER PRIMARY KEY,
		channels    INTEGER NOT NULL,
		initial_ms  INTEGER NOT NULL,
		interval_ms INTEGER NOT NULL,
		updated     INTEGER
	)`

const reassignmentsTable = `CREATE TABLE reassignments (
		id            INTEGER PRIMARY KEY,
		time          INTEGER NOT NULL,
		policy        TEXT NOT NULL,
		before_ms     TEXT NOT NULL,
		after_ms      TEXT NOT NULL,
		success_rates TEXT,
		theta         REAL,
		budget        REAL
	)`

// sqlFetchInsert appends a batch's fetches to the history, fetchCols
// values a row, many rows a statement (multiStmt): a statement costs
// more than the row it inserts.
const sqlFetchInsert = `INSERT INTO fetches (url_id, time, status, recrawl, changed, verdict, digest, simhash, length,
	etag, last_modified, duration_ms, error, wire, ip) VALUES `

const fetchCols = 15

// sqlNotModified records a 304 on its URL's row (found by sqlPageRow):
// the copy (body, digest, fingerprints) stays, the validators are those
// the 304 sent, if any.
const sqlNotModified = `UPDATE urls SET state = 1, fetched = ?, duration_ms = ?,
	etag = coalesce(?, etag), last_modified = coalesce(?, last_modified), links_id = ?
WHERE rowid = ?`

const sqlRequeue = `UPDATE urls SET state = 0, priority = ?, seq = ?, slow_downs = 0 WHERE id = ? AND state = 1`

const sqlChannelUpsert = `INSERT OR REPLACE INTO channels (id, grp, interval_ms, rate, submitted, updates, last_update, updated)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)`

const sqlGroupUpsert = `INSERT OR REPLACE INTO channel_groups (grp, channels, initial_ms, interval_ms, updated) VALUES (?, ?, ?, ?, ?)`

const sqlReassignment = `INSERT INTO reassignments (time, policy, before_ms, after_ms, success_rates, theta, budget)
VALUES (?, ?, ?, ?, ?, ?, ?)`

// recrawlStatements are the prepared statements of version 3's tables.
type recrawlStatements struct {
	fetches                                            multiStmt
	notModified, requeue, channel, group, reassignment *sql.Stmt
}

func (s *recrawlStatements) queries() []struct {
	dst **sql.Stmt
	q   string
} {
	return []struct {
		dst **sql.Stmt
		q   string
	}{
		{&s.notModified, sqlNotModified},
		{&s.requeue, sqlRequeue},
		{&s.channel, sqlChannelUpsert},
		{&s.group, sqlGroupUpsert},
		{&s.reassignment, sqlReassignment},
	}
}

// history appends the batch's fetches (buf.history) to the fetch
// history, in their order.
func (a *applier) history(st *recrawlStatements) error {
	h := a.buf.history
	defer func() { clear(h); a.buf.history = h[:0] }()
	if _, err := a.multi(&st.fetches, len(h), func(args []any, i int) []any {
		p := h[i]
		var changed any
		if p.Verdict.Known() {
			changed = boolInt(p.Verdict.Changed())
		}
		return append(args, int64(p.URL), millis(p.Fetched), int64(p.Status), boolInt(p.Recrawl), changed,
			p.Verdict.String(), nullID(p.Digest), nullID(p.Simhash), p.Length, nullString(p.ETag), nullString(p.LastModified),
			float64(p.Duration)/float64(time.Millisecond), nullString(p.Err), p.Wire, nullString(p.IP))
	}); err != nil {
		return fmt.Errorf("fetch history: %w", err)
	}
	return nil
}

// recrawl applies a batch's requeues and the recrawl manager's records.
func (a *applier) recrawl(st *recrawlStatements, b *record.Batch) error {
	for _, r := range b.Requeues {
		n, err := a.exec(st.requeue, r.Priority, r.Seq, int64(r.URL))
		if err != nil {
			return fmt.Errorf("requeue %016x: %w", r.URL, err)
		}
		a.count[cFetched] -= n
		a.count[cQueued] += n
	}
	for i := range b.Channels {
		c := &b.Channels[i]
		if _, err := a.exec(st.channel, c.ID, int64(c.Group), c.Interval.Milliseconds(), c.Rate, int64(c.Submitted),
			int64(c.Updates), millis(c.LastUpdate), millis(c.Updated)); err != nil {
			return fmt.Errorf("channel %s: %w", c.ID, err)
		}
	}
	for i := range b.Groups {
		g := &b.Groups[i]
		if _, err := a.exec(st.group, int64(g.Index), int64(g.Channels), g.Initial.Milliseconds(), g.Interval.Milliseconds(), millis(g.Updated)); err != nil {
			return fmt.Errorf("group %d: %w", g.Index, err)
		}
	}
	for i := range b.Reassignments {
		r := &b.Reassignments[i]
		var theta, budget any
		if r.Theta != 0 {
			theta = r.Theta
		}
		if r.Budget != 0 {
			budget = r.Budget
		}
		if _, err := a.exec(st.reassignment, millis(r.Time), r.Policy, joinMillis(r.Before), joinMillis(r.After),
			joinFloats(r.SuccessRates), theta, budget); err != nil {
			return fmt.Errorf("reassignment: %w", err)
		}
	}
	return nil
}

func joinMillis(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = strconv.FormatInt(d.Milliseconds(), 10)
	}
	return strings.Join(parts, " ")
}

func joinFloats(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = strconv.FormatFloat(f, 'g', 6, 64)
	}
	return strings.Join(parts, " ")
}

// copyColumns are a urls row's columns that make the copy a recrawl
// compares with.
type copyColumns struct {
	fetched, digest, simhash sql.NullInt64
	etag, lastModified       sql.NullString
}

// copy returns the copy, nil for a URL never fetched.
func (c *copyColumns) copy() *fetch.Copy {
	if !c.fetched.Valid {
		return nil
	}
	return &fetch.Copy{
		Validators: fetch.Validators{ETag: c.etag.String, LastModified: c.lastModified.String},
		Digest:     uint64(c.digest.Int64), Simhash: uint64(c.simhash.Int64),
	}
}

// RecrawlURLs calls fn for every fetched URL a recrawl may queue again:
// its last answer was 2xx or 3xx (a 304 keeps the status of the copy). It
// streams from the read-only pool.
func (db *DB) RecrawlURLs(ctx context.Context, fn func(record.RecrawlURL)) error {
	if db.closed.Load() {
		return ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, site, url, fetched, lastmod, discovered FROM urls
		WHERE state = 1 AND status BETWEEN 200 AND 399`)
	if err != nil {
		return fmt.Errorf("storage: recrawl urls: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r record.RecrawlURL
		var id int64
		var fetched, lastMod, discovered sql.NullInt64
		if err := rows.Scan(&id, &r.Site, &r.URL, &fetched, &lastMod, &discovered); err != nil {
			return fmt.Errorf("storage: recrawl urls: %w", err)
		}
		r.ID, r.Fetched, r.LastMod, r.Discovered = uint64(id), fromMillis(fetched), fromMillis(lastMod), fromMillis(discovered)
		fn(r)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage: recrawl urls: %w", err)
	}
	return nil
}

// Channels returns every channel recorded, by ID.
func (db *DB) Channels(ctx context.Context) ([]record.ChannelRecord, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, grp, interval_ms, rate, submitted, updates, last_update, updated
		FROM channels ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("storage: channels: %w", err)
	}
	defer rows.Close()
	var out []record.ChannelRecord
	for rows.Next() {
		var c record.ChannelRecord
		var interval int64
		var last, updated sql.NullInt64
		if err := rows.Scan(&c.ID, &c.Group, &interval, &c.Rate, &c.Submitted, &c.Updates, &last, &updated); err != nil {
			return nil, fmt.Errorf("storage: channels: %w", err)
		}
		c.Interval = time.Duration(interval) * time.Millisecond
		c.LastUpdate, c.Updated = fromMillis(last), fromMillis(updated)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: channels: %w", err)
	}
	return out, nil
}
