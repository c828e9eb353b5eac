package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Captures reads what a crawl file holds for a web archive (lidi export
// --warc): every fetch with its heads as sent and received, bodies, links
// and the reasons URLs were not fetched. It reads a crawl file, even one a
// crawl is writing (it takes no lock), or a snapshot, in one read
// transaction, so everything it returns is one consistent state of the
// crawl. A Captures is not safe for concurrent use; Close it.
type Captures struct {
	db      *sql.DB
	tx      *sql.Tx
	path    string
	hasWire bool // schema version 6 or later
	perPage bool // links in page_links: schema version 9 or later
	refs    bool // urls.body_id and urls.links_id: schema version 11 or later
	held    *heldFile
}

// Capture is one fetch of the fetch history.
type Capture struct {
	Time    time.Time
	Status  int    // 0 when no response came
	Recrawl bool   // the URL had been fetched before
	Verdict string // fetch.Verdict's name ("not-modified", "same-digest", ...)
	Digest  uint64 // the body's content digest, under the file's record.DigestKind; 0 for none
	Length  int64  // body bytes received
	Err     string // fetch error, "" on success
	Wire    []byte // engine.PageRecord.Wire (zlib); nil when not kept
	IP      string
}

// CapturedURL is a fetched URL with every fetch of it.
type CapturedURL struct {
	ID      uint64
	URL     string
	Fetches []Capture // oldest first
	// Body is the body of the URL's latest fetch that kept one (zlib), nil
	// when none was kept; Truncated says it was cut at the size limit.
	Body      []byte
	Truncated bool
	Links     []string // the URLs it links to, as the crawl recorded them
	Dup       *DupDecision
}

// DupDecision is duplicate detection's verdict on a fetched page.
type DupDecision struct {
	Of         string // the URL it duplicates
	Kind, Test string
	Similarity float64
	Time       time.Time
}

// SkippedURL is a URL the crawl found and decided not to fetch.
type SkippedURL struct {
	URL        string
	Reason     string // "robots", "rule", ...
	Discovered time.Time
	// Rule is the URL rewrite rule that skipped it (rules.key), with the
	// pairs of URLs (copy, original) that taught it; "" for none.
	Rule     string
	Evidence [][2]string
}

// RobotsCapture is the latest robots.txt fetch of a site.
type RobotsCapture struct {
	Site    string // the site's key, http://host:port
	Status  int    // -1 unreachable
	Body    []byte // as fetched (capped), not compressed
	Fetched time.Time
	Wire    []byte // as CapturedURL's (zlib); nil when not kept
	IP      string
}

// OpenCaptures opens the crawl file at path for reading captures.
func OpenCaptures(ctx context.Context, path string) (*Captures, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	h, err := holdFile(abs)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", dsn(abs, "ro", "_pragma=busy_timeout(5000)"))
	if err != nil {
		h.release()
		return nil, fmt.Errorf("storage: %w", err)
	}
	db.SetMaxOpenConns(1)
	c := &Captures{db: db, path: abs, held: h}
	var appID, version int
	if err := db.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		c.close()
		return nil, fmt.Errorf("storage: open %s: %w", abs, err)
	}
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		c.close()
		return nil, fmt.Errorf("storage: open %s: %w", abs, err)
	}
	switch {
	case appID != ApplicationID:
		c.close()
		return nil, fmt.Errorf("%w: %s", ErrNotCrawl, abs)
	case version > SchemaVersion:
		c.close()
		return nil, &VersionError{Path: abs, Version: version, Supported: SchemaVersion}
	case version < 3:
		c.close()
		return nil, fmt.Errorf("storage: %s has schema version %d, before the fetch history: open it with lidi once to upgrade it", abs, version)
	}
	c.hasWire = version >= 6
	c.perPage = version >= 9
	c.refs = version >= 11
	if c.tx, err = db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true}); err != nil {
		c.close()
		return nil, fmt.Errorf("storage: open %s: %w", abs, err)
	}
	return c, nil
}

// Close ends the read transaction.
func (c *Captures) Close() error {
	c.tx.Rollback()
	return c.close()
}

// close closes the connection, then its handle on the file.
func (c *Captures) close() error {
	return errors.Join(c.db.Close(), c.held.release())
}

// Size reports the fetches recorded and the pages' compressed body bytes,
// for an estimate of the work.
func (c *Captures) Size(ctx context.Context) (fetches, bodyBytes int64, err error) {
	if err := c.tx.QueryRowContext(ctx, "SELECT count(*) FROM fetches").Scan(&fetches); err != nil {
		return 0, 0, fmt.Errorf("storage: captures: %w", err)
	}
	if err := c.tx.QueryRowContext(ctx, "SELECT coalesce((SELECT value FROM meta WHERE key = ?), 0)", keyBodyBytes).Scan(&bodyBytes); err != nil {
		return 0, 0, fmt.Errorf("storage: captures: %w", err)
	}
	return fetches, bodyBytes, nil
}

// Meta returns the meta table's keys that are not counters.
func (c *Captures) Meta(ctx context.Context) (map[string]string, error) {
	rows, err := c.tx.QueryContext(ctx, "SELECT key, CAST(value AS TEXT) FROM meta WHERE key NOT LIKE 'count.%'")
	if err != nil {
		return nil, fmt.Errorf("storage: captures: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k string
		var v sql.NullString
		if err := rows.Scan(&k, &v); err != nil {
			return nil, fmt.Errorf("storage: captures: %w", err)
		}
		out[k] = v.String
	}
	return out, rows.Err()
}

// URLs calls fn for every fetched URL, in the order of their IDs (as
// stored). It merges four ordered scans (fetches, bodies, links and
// duplicate decisions) rather than looking each URL up.
func (c *Captures) URLs(ctx context.Context, fn func(*CapturedURL) error) error {
	wire := "NULL, NULL"
	if c.hasWire {
		wire = "f.wire, f.ip"
	}
	fetches, err := c.tx.QueryContext(ctx, `SELECT f.url_id, u.url, u.truncated, f.time, f.status, f.recrawl, f.verdict,
		f.digest, f.length, f.error, `+wire+`
	FROM fetches AS f JOIN urls AS u ON u.id = f.url_id ORDER BY f.url_id, f.time, f.id`)
	if err != nil {
		return fmt.Errorf("storage: captures: %w", err)
	}
	defer fetches.Close()
	// Bodies and links in the order of their URLs' IDs: through the
	// references of the URLs' rows, read in the order of their index,
	// or (before version 11) the unique indexes of pages.url_id and
	// page_links.from_id.
	bodiesQuery := `SELECT u.id, p.body FROM urls AS u JOIN pages AS p ON p.id = u.body_id ORDER BY u.id`
	// A page's links come in their array's order, ascending IDs: ordering
	// by j.key too would sort every link of the crawl again.
	linksQuery := `SELECT u.id, t.url FROM urls AS u JOIN page_links AS p ON p.id = u.links_id, json_each(p.to_ids) AS j
	JOIN urls AS t ON t.id = j.value ORDER BY u.id`
	if !c.refs {
		bodiesQuery = `SELECT url_id, body FROM pages ORDER BY url_id`
		linksQuery = `SELECT p.from_id, u.url FROM page_links AS p, json_each(p.to_ids) AS j
	JOIN urls AS u ON u.id = j.value ORDER BY p.from_id`
	}
	if !c.perPage {
		linksQuery = `SELECT l.from_id, u.url FROM links AS l JOIN urls AS u ON u.id = l.to_id ORDER BY l.from_id, l.to_id`
	}
	bodies, err := newCursor(ctx, c.tx, bodiesQuery)
	if err != nil {
		return err
	}
	defer bodies.close()
	links, err := newCursor(ctx, c.tx, linksQuery)
	if err != nil {
		return err
	}
	defer links.close()
	dups, err := newCursor(ctx, c.tx, `SELECT d.url_id, o.url, d.kind, d.test, d.similarity, d.time
	FROM duplicates AS d JOIN urls AS o ON o.id = d.of_id ORDER BY d.url_id`)
	if err != nil {
		return err
	}
	defer dups.close()

	var cur *CapturedURL
	flush := func() error {
		if cur == nil {
			return nil
		}
		id := int64(cur.ID)
		if err := bodies.seek(id, func(r *sql.Rows) error { return r.Scan(new(int64), &cur.Body) }); err != nil {
			return err
		}
		if err := links.seek(id, func(r *sql.Rows) error {
			var u string
			if err := r.Scan(new(int64), &u); err != nil {
				return err
			}
			cur.Links = append(cur.Links, u)
			return nil
		}); err != nil {
			return err
		}
		if err := dups.seek(id, func(r *sql.Rows) error {
			d := &DupDecision{}
			var sim sql.NullFloat64
			var at sql.NullInt64
			if err := r.Scan(new(int64), &d.Of, &d.Kind, &d.Test, &sim, &at); err != nil {
				return err
			}
			d.Similarity, d.Time, cur.Dup = sim.Float64, fromMillis(at), d
			return nil
		}); err != nil {
			return err
		}
		return fn(cur)
	}
	for fetches.Next() {
		var (
			id                 int64
			u                  string
			trunc, at, dig     sql.NullInt64
			status, recrawl, n int64
			verdict            string
			errText, ip        sql.NullString
			wire               []byte
		)
		if err := fetches.Scan(&id, &u, &trunc, &at, &status, &recrawl, &verdict, &dig, &n, &errText, &wire, &ip); err != nil {
			return fmt.Errorf("storage: captures: %w", err)
		}
		if cur == nil || int64(cur.ID) != id {
			if err := flush(); err != nil {
				return err
			}
			cur = &CapturedURL{ID: uint64(id), URL: u, Truncated: trunc.Int64 != 0}
		}
		cur.Fetches = append(cur.Fetches, Capture{Time: fromMillis(at), Status: int(status), Recrawl: recrawl != 0, Verdict: verdict,
			Digest: uint64(dig.Int64), Length: n, Err: errText.String, Wire: wire, IP: ip.String})
	}
	if err := fetches.Err(); err != nil {
		return fmt.Errorf("storage: captures: %w", err)
	}
	return flush()
}

// cursor walks a query whose first column is a URL id, in order, along
// with another scan in the same order.
type cursor struct {
	rows *sql.Rows
	dst  []any // scans the id, and nothing of the other columns
	id   int64
	ok   bool
}

func newCursor(ctx context.Context, tx *sql.Tx, q string) (*cursor, error) {
	rows, err := tx.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("storage: captures: %s: %w", firstLine(q), err)
	}
	c := &cursor{rows: rows}
	cols, err := rows.Columns()
	if err != nil {
		rows.Close()
		return nil, fmt.Errorf("storage: captures: %w", err)
	}
	c.dst = make([]any, len(cols))
	c.dst[0] = &c.id
	for i := 1; i < len(cols); i++ {
		c.dst[i] = new(any)
	}
	return c, c.next()
}

func (c *cursor) next() error {
	c.ok = c.rows.Next()
	if !c.ok {
		return c.rows.Err()
	}
	// Only the id is read here; seek scans the row again for the rest.
	return c.rows.Scan(c.dst...)
}

// seek calls scan for each row of id, skipping the rows before it.
func (c *cursor) seek(id int64, scan func(*sql.Rows) error) error {
	for c.ok && c.id < id {
		if err := c.next(); err != nil {
			return fmt.Errorf("storage: captures: %w", err)
		}
	}
	for c.ok && c.id == id {
		if err := scan(c.rows); err != nil {
			return fmt.Errorf("storage: captures: %w", err)
		}
		if err := c.next(); err != nil {
			return fmt.Errorf("storage: captures: %w", err)
		}
	}
	return nil
}

func (c *cursor) close() { c.rows.Close() }

// Skipped calls fn for every URL found and not fetched, with the reason.
func (c *Captures) Skipped(ctx context.Context, fn func(SkippedURL) error) error {
	rows, err := c.tx.QueryContext(ctx, `SELECT u.url, coalesce(u.skip_reason, ''), u.discovered, r.key, r.support
	FROM urls AS u LEFT JOIN rules AS r ON u.skip_rule IS NOT NULL AND r.hash = u.skip_rule WHERE u.state = 2`)
	if err != nil {
		return fmt.Errorf("storage: captures: %w", err)
	}
	var out []SkippedURL
	var pairs []string
	for rows.Next() {
		var s SkippedURL
		var at sql.NullInt64
		var key, support sql.NullString
		if err := rows.Scan(&s.URL, &s.Reason, &at, &key, &support); err != nil {
			rows.Close()
			return fmt.Errorf("storage: captures: %w", err)
		}
		s.Discovered, s.Rule = fromMillis(at), key.String
		out = append(out, s)
		pairs = append(pairs, support.String)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("storage: captures: %w", err)
	}
	urlOf, err := c.tx.PrepareContext(ctx, "SELECT url FROM urls WHERE id = ?")
	if err != nil {
		return fmt.Errorf("storage: captures: %w", err)
	}
	defer urlOf.Close()
	evidence := map[string][][2]string{} // by support list: a rule skips many URLs
	for i := range out {
		s := &out[i]
		if s.Rule != "" {
			ev, ok := evidence[pairs[i]]
			if !ok {
				ps, err := parsePairs(pairs[i])
				if err != nil {
					return fmt.Errorf("storage: captures: rule %s: %w", s.Rule, err)
				}
				for _, p := range ps {
					var a, b string
					if urlOf.QueryRowContext(ctx, int64(p.Copy)).Scan(&a) == nil && urlOf.QueryRowContext(ctx, int64(p.Original)).Scan(&b) == nil {
						ev = append(ev, [2]string{a, b})
					}
				}
				evidence[pairs[i]] = ev
			}
			s.Evidence = ev
		}
		if err := fn(*s); err != nil {
			return err
		}
	}
	return nil
}

// Robots calls fn for every site whose robots.txt was fetched.
func (c *Captures) Robots(ctx context.Context, fn func(RobotsCapture) error) error {
	wire := "NULL, NULL"
	if c.hasWire {
		wire = "robots_wire, robots_ip"
	}
	rows, err := c.tx.QueryContext(ctx, `SELECT key, robots_status, robots_body, robots_fetched, `+wire+`
	FROM sites WHERE robots_status != 0 ORDER BY id`)
	if err != nil {
		return fmt.Errorf("storage: captures: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r RobotsCapture
		var at sql.NullInt64
		var ip sql.NullString
		if err := rows.Scan(&r.Site, &r.Status, &r.Body, &at, &r.Wire, &ip); err != nil {
			return fmt.Errorf("storage: captures: %w", err)
		}
		r.Fetched, r.IP = fromMillis(at), ip.String
		r.Site = strings.TrimSuffix(r.Site, "/")
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}
