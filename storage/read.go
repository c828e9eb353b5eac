package storage

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/klauspost/compress/zlib"

	"lidi/engine/dedup"
	"lidi/engine/record"
)

// Head returns up to n URLs of site in state URLQueued, ordered by
// (Priority, Seq) ascending; next is the Priority of the first queued URL
// after those returned and more reports whether there is one. It reads
// through the writer connection, so it sees every batch Apply or Write has
// returned from, in the transaction Write left open if there is one. n <= 0
// returns no URLs but still reports next and more.
func (db *DB) Head(ctx context.Context, site int64, n int) (urls []record.QueuedURL, next float64, more bool, err error) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed.Load() {
		return nil, 0, false, ErrClosed
	}
	n = min(max(n, 0), math.MaxInt32)
	head := db.st.head
	if db.pend != nil {
		head = db.pend.stmt(head)
	}
	// ctx is only checked here, and the read runs under bg, as Write's
	// statements do: a context cancelled mid-statement leaves SQLite's
	// interrupt on the writer's connection, which database/sql then
	// replaces, and the driver statements prepared on it (rawStmts) kept
	// the old one open. A read of a queue's head is short.
	if err := ctx.Err(); err != nil {
		return nil, 0, false, err
	}
	rows, err := head.QueryContext(bg, site, n+1)
	if err != nil {
		return nil, 0, false, db.headError(site, err)
	}
	defer rows.Close()
	if n > 0 {
		urls = make([]record.QueuedURL, 0, min(n, 256))
	}
	for rows.Next() {
		var q record.QueuedURL
		var id int64
		var c copyColumns
		if err := rows.Scan(&id, &q.URL, &q.Depth, &q.Priority, &q.Seq, &c.fetched, &c.digest, &c.simhash, &c.etag, &c.lastModified, &q.SlowDowns); err != nil {
			return nil, 0, false, db.headError(site, err)
		}
		q.ID = uint64(id)
		q.Copy = c.copy()
		if len(urls) == n {
			next, more = q.Priority, true
			break
		}
		urls = append(urls, q)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, false, db.headError(site, err)
	}
	return urls, next, more, nil
}

// headError is Head's error. A read in the transaction Write left open
// may have to spill the transaction's pages to the log to make room in
// the cache, and when that write fails (a full disk) SQLite rolls the
// whole transaction back by itself: the batches written since the last
// Commit are gone, and the statements of the next Write would run
// outside any transaction, each durable on its own. So the transaction
// is ended here too, and the loss kept for the next Write, Commit or
// Close to report. (The read runs under bg, so no error of its own is a
// cancellation.) The caller holds db.mu.
func (db *DB) headError(site int64, err error) error {
	err = db.fault(fmt.Errorf("storage: head of site %d: %w", site, err))
	if db.pend != nil {
		db.rollback()
		db.lost = fmt.Errorf("storage: the batches written since the last commit were lost: %w", err)
	}
	return err
}

// Sites returns every site, ordered by ID, with Pending set to the number of
// its URLs still queued. It reads through the read-only pool.
func (db *DB) Sites(ctx context.Context) ([]record.SiteRecord, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT s.id, s.key, s.host, s.addr, s.robots_status, s.robots_body,
		s.robots_fetched, s.next_visit, s.failures, s.parked, s.fetched, coalesce(q.n, 0), s.robots_wire, s.robots_ip,
		coalesce(s.robots_url, ''), coalesce(s.robots_redirects, ''), coalesce(s.robots_end, '')
	FROM sites AS s
	LEFT JOIN (SELECT site, count(*) AS n FROM urls WHERE state = 0 GROUP BY site) AS q ON q.site = s.id
	ORDER BY s.id`)
	if err != nil {
		return nil, fmt.Errorf("storage: sites: %w", err)
	}
	defer rows.Close()
	var out []record.SiteRecord
	for rows.Next() {
		var s record.SiteRecord
		var addr, robotsIP sql.NullString
		var robotsFetched, nextVisit sql.NullInt64
		var parked int64
		var hops, end string
		if err := rows.Scan(&s.ID, &s.Key, &s.Host, &addr, &s.RobotsStatus, &s.RobotsBody,
			&robotsFetched, &nextVisit, &s.Failures, &parked, &s.Fetched, &s.Pending, &s.RobotsWire, &robotsIP,
			&s.RobotsURL, &hops, &end); err != nil {
			return nil, fmt.Errorf("storage: sites: %w", err)
		}
		if s.RobotsRedirects, err = parseHops(hops); err != nil {
			return nil, fmt.Errorf("storage: site %s: robots.txt: %w", s.Key, err)
		}
		if end != "" {
			if s.RobotsEnd, err = parseChainEnd(end); err != nil {
				return nil, fmt.Errorf("storage: site %s: robots.txt: %w", s.Key, err)
			}
		}
		s.Addr, s.RobotsIP = addr.String, robotsIP.String
		s.RobotsFetched = fromMillis(robotsFetched)
		s.NextVisit = fromMillis(nextVisit)
		s.Parked = parked != 0
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: sites: %w", err)
	}
	return out, nil
}

// URLFingerprints calls fn with the ID of every URL recorded, in the order
// of the table (not sorted as unsigned numbers). It streams from the
// read-only pool, so fn may call other methods of db.
func (db *DB) URLFingerprints(ctx context.Context, fn func(id uint64)) error {
	if db.closed.Load() {
		return ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id FROM urls`)
	if err != nil {
		return fmt.Errorf("storage: url fingerprints: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return fmt.Errorf("storage: url fingerprints: %w", err)
		}
		fn(uint64(id))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage: url fingerprints: %w", err)
	}
	return nil
}

// Fingerprints calls fn for every fetched page and answered probe (state
// 1 and 3) with its content digest and simhash, for duplicate detection
// after a restart.
func (db *DB) Fingerprints(ctx context.Context, fn func(record.FetchedPage)) error {
	if db.closed.Load() {
		return ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, url, coalesce(digest, 0), coalesce(simhash, 0), coalesce(main_simhash, 0),
		coalesce(nourl_simhash, 0), coalesce(title_hash, 0), coalesce(status, 0) FROM urls WHERE state IN (1, 3) ORDER BY fetched`)
	if err != nil {
		return fmt.Errorf("storage: fingerprints: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var p record.FetchedPage
		var id, digest, simhash, main, nourl, title int64
		if err := rows.Scan(&id, &p.Addr, &digest, &simhash, &main, &nourl, &title, &p.Status); err != nil {
			return fmt.Errorf("storage: fingerprints: %w", err)
		}
		p.URL, p.Digest, p.Simhash = uint64(id), uint64(digest), uint64(simhash)
		p.Main, p.NoURL, p.Title = uint64(main), uint64(nourl), uint64(title)
		fn(p)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage: fingerprints: %w", err)
	}
	return nil
}

// Rules returns the rules duplicate detection recorded, withdrawn ones
// included, oldest first.
func (db *DB) Rules(ctx context.Context) ([]record.RuleRecord, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT kind, origin, coalesce(name, ''), coalesce(value, ''), coalesce(seg_index, 0),
		coalesce(from_part, ''), coalesce(to_part, ''), supports, coalesce(support, ''), coalesce(contradictions, ''),
		withdrawn, covered, coalesce(withdrawn_at, learned, 0), coalesce(choice, ''), prior FROM rules ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("storage: rules: %w", err)
	}
	defer rows.Close()
	var out []record.RuleRecord
	for rows.Next() {
		var rec record.RuleRecord
		r := &rec.Rule
		var kind, support, contra, choice string
		var ms int64
		if err := rows.Scan(&kind, &r.Origin, &r.Name, &r.Value, &r.Index, &r.From, &r.To, &r.Supports, &support, &contra,
			&r.Withdrawn, &r.Covered, &ms, &choice, &r.Prior); err != nil {
			return nil, fmt.Errorf("storage: rules: %w", err)
		}
		if r.Choice, err = dedup.ParseChoice(choice); err != nil {
			return nil, fmt.Errorf("storage: rules: %w", err)
		}
		if r.Kind, err = dedup.ParseRuleKind(kind); err != nil {
			return nil, fmt.Errorf("storage: rules: %w", err)
		}
		if r.Support, err = parsePairs(support); err != nil {
			return nil, fmt.Errorf("storage: rule %s: %w", r, err)
		}
		if r.Contradictions, err = parsePairs(contra); err != nil {
			return nil, fmt.Errorf("storage: rule %s: %w", r, err)
		}
		rec.Time = time.UnixMilli(ms)
		out = append(out, rec)
	}
	return out, rows.Err()
}

// Soft404s returns the soft-404 pages duplicate detection recognised,
// oldest first.
func (db *DB) Soft404s(ctx context.Context) ([]record.Soft404Record, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT s.origin, s.title_hash, s.simhash, s.of_id, coalesce(u.url, ''), coalesce(s.evidence, ''),
		coalesce(s.time, 0), coalesce(s.probe_id, 0), coalesce(s.probe_status, 0), s.withdrawn
		FROM soft404s s LEFT JOIN urls u ON u.id = s.of_id ORDER BY s.time, s.origin`)
	if err != nil {
		return nil, fmt.Errorf("storage: soft 404s: %w", err)
	}
	defer rows.Close()
	var out []record.Soft404Record
	for rows.Next() {
		var rec record.Soft404Record
		s := &rec.Sig
		var title, sim, of, ms, probe int64
		var ev string
		if err := rows.Scan(&s.Origin, &title, &sim, &of, &s.OfURL, &ev, &ms, &probe, &s.ProbeStatus, &s.Withdrawn); err != nil {
			return nil, fmt.Errorf("storage: soft 404s: %w", err)
		}
		s.Title, s.Simhash, s.Of, s.Probe = uint64(title), uint64(sim), uint64(of), uint64(probe)
		if s.Evidence, err = parsePairs(ev); err != nil {
			return nil, fmt.Errorf("storage: soft 404 of %s: %w", s.Origin, err)
		}
		rec.Time = time.UnixMilli(ms)
		out = append(out, rec)
	}
	return out, rows.Err()
}

// RuleSkipped calls fn for every URL skipped under a rule, through the
// partial index of those rows.
func (db *DB) RuleSkipped(ctx context.Context, fn func(record.RuleSkippedURL)) error {
	if db.closed.Load() {
		return ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, url, site, skip_rule FROM urls
		WHERE state = 2 AND skip_rule IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("storage: rule skips: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var u record.RuleSkippedURL
		var id, rule int64
		if err := rows.Scan(&id, &u.URL, &u.Site, &rule); err != nil {
			return fmt.Errorf("storage: rule skips: %w", err)
		}
		u.ID, u.Rule = uint64(id), uint64(rule)
		fn(u)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage: rule skips: %w", err)
	}
	return nil
}

// Held returns the pages whose links wait for a probe's answer, with
// what their records say of them.
func (db *DB) Held(ctx context.Context) ([]record.HeldLinks, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT h.probe_id, h.url_id, h.links, u.url, u.depth, coalesce(u.redirect, ''),
		coalesce(u.simhash, 0), coalesce(u.nourl_simhash, 0), coalesce(u.title_hash, 0)
		FROM held_links h JOIN urls u ON u.id = h.url_id ORDER BY h.probe_id, h.url_id`)
	if err != nil {
		return nil, fmt.Errorf("storage: held links: %w", err)
	}
	defer rows.Close()
	var out []record.HeldLinks
	for rows.Next() {
		var h record.HeldLinks
		var probe, page, sim, nourl, title int64
		var links string
		if err := rows.Scan(&probe, &page, &links, &h.URL, &h.Depth, &h.Redirect, &sim, &nourl, &title); err != nil {
			return nil, fmt.Errorf("storage: held links: %w", err)
		}
		h.Probe, h.Page, h.Simhash, h.NoURL, h.Title = uint64(probe), uint64(page), uint64(sim), uint64(nourl), uint64(title)
		if links != "" {
			h.Links = strings.Split(links, "\n")
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: held links: %w", err)
	}
	return out, nil
}

// DupCounts counts the duplicate decisions kept (the latest of each URL),
// by kind.
func (db *DB) DupCounts(ctx context.Context) (record.DupCounts, error) {
	var c record.DupCounts
	if db.closed.Load() {
		return c, ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT kind, count(*) FROM duplicates GROUP BY kind`)
	if err != nil {
		return c, fmt.Errorf("storage: duplicate counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var n int64
		if err := rows.Scan(&kind, &n); err != nil {
			return c, fmt.Errorf("storage: duplicate counts: %w", err)
		}
		for _, k := range [...]dedup.Kind{dedup.Exact, dedup.Near, dedup.Soft404} {
			if k.String() == kind {
				c.Add(k, n)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("storage: duplicate counts: %w", err)
	}
	return c, nil
}

// Counters returns the crawl's totals: fetches recorded, body bytes
// received, fetches that failed or answered with a status of 400 or
// more, and fetches that were recrawls.
func (db *DB) Counters(ctx context.Context) (record.Counters, error) {
	c, err := db.counters(ctx)
	if err != nil {
		return record.Counters{}, err
	}
	out := record.Counters{Pages: c[cPages], Bytes: c[cBytes], Errors: c[cErrors], Recrawls: c[cRecrawls]}
	rows, err := db.r.QueryContext(ctx, `SELECT key, value FROM meta WHERE key >= ? AND key < ?`, tallyPrefix, "tally/")
	if err != nil {
		return record.Counters{}, fmt.Errorf("storage: counters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			return record.Counters{}, fmt.Errorf("storage: counters: %w", err)
		}
		if out.Tallies == nil {
			out.Tallies = map[string]int64{}
		}
		out.Tallies[strings.TrimPrefix(k, tallyPrefix)] = v
	}
	if err := rows.Err(); err != nil {
		return record.Counters{}, fmt.Errorf("storage: counters: %w", err)
	}
	return out, nil
}

func (db *DB) counters(ctx context.Context) (c [nCounters]int64, err error) {
	if db.closed.Load() {
		return c, ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT key, value FROM meta WHERE key >= 'count.' AND key < 'count/'`)
	if err != nil {
		return c, fmt.Errorf("storage: counters: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			return c, fmt.Errorf("storage: counters: %w", err)
		}
		for i, key := range counterKeys {
			if key == k {
				c[i] = v
			}
		}
	}
	if err := rows.Err(); err != nil {
		return c, fmt.Errorf("storage: counters: %w", err)
	}
	return c, nil
}

// Stats is a snapshot of what the database holds and of its writer's work.
// It is a value; the DB never changes one after returning it.
type Stats struct {
	URLs    int64 // URLs known
	Queued  int64 // URLs in state URLQueued
	Fetched int64 // URLs in state URLFetched
	Skipped int64 // URLs in state URLSkipped
	Sites   int64 // sites known
	Links   int64 // distinct links
	Events  int64 // events logged

	Pages     int64 // fetches recorded (a refetch counts again)
	Bytes     int64 // body bytes received, before compression
	Errors    int64 // fetches with an error or a status >= 400
	Bodies    int64 // page bodies stored
	BodyBytes int64 // compressed size of the stored bodies

	FileBytes int64 // size of the database file plus its WAL

	// The writer, since Open.
	Batches   int64         // transactions committed: an Apply each, or the Writes one Commit ends
	ApplyTime time.Duration // total time spent in Apply, Write and Commit
	LastApply time.Duration // duration of the latest transaction's writes and commit

	// The background checkpointer, since Open.
	Checkpoints    int64         // checkpoints run
	CheckpointTime time.Duration // total time spent checkpointing
	WALFrames      int64         // frames in the WAL at the latest checkpoint
	CheckpointErr  error         // the latest checkpoint error, nil if none
	// The writer's own checkpoints, each after a commit, of what the
	// checkpointer left, so that the WAL starts again (in ApplyTime).
	WriterCheckpoints    int64
	WriterCheckpointTime time.Duration
}

// Stats returns a snapshot of the database's counts, read through the
// read-only pool (they are kept in meta, so this is cheap).
func (db *DB) Stats(ctx context.Context) (Stats, error) {
	c, err := db.counters(ctx)
	if err != nil {
		return Stats{}, err
	}
	s := Stats{
		URLs: c[cURLs], Queued: c[cQueued], Fetched: c[cFetched], Skipped: c[cSkipped],
		Links: c[cLinks], Events: c[cEvents],
		Pages: c[cPages], Bytes: c[cBytes], Errors: c[cErrors],
		Bodies: c[cBodies], BodyBytes: c[cBodyBytes],
		FileBytes: fileSize(db.path),
		Batches:   db.batches.Load(),
		ApplyTime: time.Duration(db.applyNano.Load()),
		LastApply: time.Duration(db.lastNano.Load()),

		Checkpoints:    db.ckpt.runs.Load(),
		CheckpointTime: time.Duration(db.ckpt.nanos.Load()),
		WALFrames:      db.ckpt.frames.Load(),

		WriterCheckpoints:    db.ckpt.tails.Load(),
		WriterCheckpointTime: time.Duration(db.ckpt.tailNanos.Load()),
	}
	if e := db.ckpt.err.Load(); e != nil {
		s.CheckpointErr = *e
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM sites`).Scan(&s.Sites); err != nil {
		return Stats{}, fmt.Errorf("storage: stats: %w", err)
	}
	return s, nil
}

// Page returns the body stored for the URL with the given ID, decompressed.
// It fails with ErrNoPage when no body is stored.
func (db *DB) Page(ctx context.Context, urlID uint64) ([]byte, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	var z []byte
	err := db.r.QueryRowContext(ctx, `SELECT p.body FROM urls AS u JOIN pages AS p ON p.id = u.body_id WHERE u.id = ?`, int64(urlID)).Scan(&z)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%w for %016x", ErrNoPage, urlID)
	}
	if err != nil {
		return nil, fmt.Errorf("storage: page %016x: %w", urlID, err)
	}
	body, err := Inflate(z)
	if err != nil {
		return nil, fmt.Errorf("storage: page %016x: %w", urlID, err)
	}
	return body, nil
}

// Inflate decompresses a body as stored in pages.body (zlib, RFC 1950).
func Inflate(z []byte) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

// Events returns the n most recent events, oldest first.
func (db *DB) Events(ctx context.Context, n int) ([]record.Event, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	if n <= 0 {
		return nil, nil
	}
	rows, err := db.r.QueryContext(ctx, `SELECT time, kind, site, text FROM
		(SELECT id, time, kind, site, text FROM events ORDER BY id DESC LIMIT ?) ORDER BY id`, n)
	if err != nil {
		return nil, fmt.Errorf("storage: events: %w", err)
	}
	defer rows.Close()
	var out []record.Event
	for rows.Next() {
		var e record.Event
		var t sql.NullInt64
		var site, text sql.NullString
		if err := rows.Scan(&t, &e.Kind, &site, &text); err != nil {
			return nil, fmt.Errorf("storage: events: %w", err)
		}
		e.Time, e.Site, e.Text = fromMillis(t), site.String, text.String
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: events: %w", err)
	}
	return out, nil
}

// Meta returns the value of a meta key set with SetMeta (or one of the
// store's own, such as "created"); ok is false when the key is absent.
func (db *DB) Meta(ctx context.Context, key string) (value string, ok bool, err error) {
	if db.closed.Load() {
		return "", false, ErrClosed
	}
	var v sql.NullString
	err = db.r.QueryRowContext(ctx, `SELECT CAST(value AS TEXT) FROM meta WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("storage: meta %q: %w", key, err)
	}
	return v.String, true, nil
}

// IntegrityCheck runs SQLite's PRAGMA integrity_check over the whole file
// and returns its answer: "ok", or the problems it found, one a line. It
// reads through the read-only pool.
func (db *DB) IntegrityCheck(ctx context.Context) (string, error) {
	if db.closed.Load() {
		return "", ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return "", fmt.Errorf("storage: integrity check: %w", err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", fmt.Errorf("storage: integrity check: %w", err)
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("storage: integrity check: %w", err)
	}
	return strings.Join(lines, "\n"), nil
}

// CoverageHistory returns the PageRank coverage curve of the crawl's runs
// so far, oldest first, from rank_runs (Oracle -1 where none was known).
func (db *DB) CoverageHistory(ctx context.Context) ([]record.CoveragePoint, error) {
	if db.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := db.r.QueryContext(ctx, `SELECT pages, coverage, coalesce(oracle, -1) FROM rank_runs ORDER BY computed_at`)
	if err != nil {
		return nil, fmt.Errorf("storage: rank runs: %w", err)
	}
	defer rows.Close()
	var out []record.CoveragePoint
	for rows.Next() {
		var p record.CoveragePoint
		if err := rows.Scan(&p.Pages, &p.Coverage, &p.Oracle); err != nil {
			return nil, fmt.Errorf("storage: rank runs: %w", err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: rank runs: %w", err)
	}
	return out, nil
}
