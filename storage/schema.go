package storage

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/dustin/go-humanize"

	"lidi/engine/record"
)

// SchemaVersion is the schema version this package writes and reads, kept in
// PRAGMA user_version. A file with a higher version was written by a newer
// lidi and is refused.
const SchemaVersion = 12

// ApplicationID marks a lidi crawl file in the SQLite header (PRAGMA
// application_id); it is "lidi" in ASCII.
const ApplicationID = 0x6c696469

// schema creates the current version. docs/schema.md describes it for
// researchers; keep the two in step. Tables added by a later version are
// also in upgrades, which brings an older file up to date.
//
// Times are unix milliseconds (INTEGER, NULL for never), IDs are the engine's
// uint64 fingerprints stored as their two's-complement int64.
var schema = []string{
	`CREATE TABLE sites (
		id             INTEGER PRIMARY KEY,
		key            TEXT NOT NULL UNIQUE,
		host           TEXT NOT NULL,
		addr           TEXT,
		robots_status  INTEGER NOT NULL DEFAULT 0,
		robots_body    BLOB,
		robots_fetched INTEGER,
		next_visit     INTEGER,
		failures       INTEGER NOT NULL DEFAULT 0,
		parked         INTEGER NOT NULL DEFAULT 0,
		fetched        INTEGER NOT NULL DEFAULT 0
	)`,
	urlsTable,
	// The frontier: Head reads a site's queue in (priority, seq) order and
	// Sites counts it. Only queued URLs are indexed, so the index shrinks as
	// the crawl proceeds. Queries must say "state = 0" to use it.
	urlsQueue,
	pageLinksTable,
	linksView,
	// Bodies are appended in fetch order (id), not keyed by the random
	// url_id: inserting a body of several KiB at a random place in a
	// B-tree splits and rebalances pages full of other bodies, which
	// wrote five times as many pages as appending does. urls.body_id
	// finds a URL's body (version 11).
	`CREATE TABLE pages (
		id     INTEGER PRIMARY KEY,
		url_id INTEGER NOT NULL,
		body   BLOB NOT NULL
	)`,
	refColumns[0], refColumns[1],
	// Duplicate detection's decisions, kept so a researcher can audit them.
	`CREATE TABLE duplicates (
		url_id     INTEGER PRIMARY KEY,
		of_id      INTEGER NOT NULL,
		kind       TEXT NOT NULL,
		test       TEXT NOT NULL,
		similarity REAL,
		time       INTEGER
	)`,
	rulesTable,
	soft404sTable,
	soft404sProbe[0], soft404sProbe[1], soft404sProbe[2],
	rulesHash,
	rulesChoice[0], rulesChoice[1],
	urlsRuleSkips,
	heldLinksTable,
	rankRunsTable,
	pagerankTable,
	fetchesTable,
	fetchesIndex,
	wireColumns[0], wireColumns[1], wireColumns[2], wireColumns[3],
	channelsTable,
	channelGroupsTable,
	reassignmentsTable,
	v8Columns[0], v8Columns[1], v8Columns[2],
	`CREATE TABLE events (
		id   INTEGER PRIMARY KEY,
		time INTEGER,
		kind TEXT NOT NULL,
		site TEXT,
		text TEXT
	)`,
	`CREATE TABLE meta (
		key   TEXT PRIMARY KEY,
		value
	) WITHOUT ROWID`,
}

const urlsQueue = `CREATE INDEX urls_queue ON urls (site, priority, seq) WHERE state = 0`

// Version 2: PageRank during the crawl. One row per recomputation, keyed
// by its time, and each URL's rank at the latest recomputation that wrote
// ranks (computed_at says which).
const rankRunsTable = `CREATE TABLE rank_runs (
		computed_at INTEGER PRIMARY KEY,
		pages       INTEGER NOT NULL,
		nodes       INTEGER NOT NULL,
		edges       INTEGER NOT NULL,
		iterations  INTEGER NOT NULL,
		coverage    REAL NOT NULL,
		oracle      REAL,
		ranks       INTEGER NOT NULL
	)`

const pagerankTable = `CREATE TABLE pagerank (
		url_id      INTEGER PRIMARY KEY,
		rank        REAL NOT NULL,
		computed_at INTEGER NOT NULL
	)`

// Version 3: duplicate detection's URL rewrite rules, learned from pairs
// of duplicate pages, replace the mirror labels of version 2 (a file
// upgraded from it keeps its mirrors table, which lidi no longer reads),
// and soft-404 pages are recognised. Evidence is a list of URL id pairs,
// "copy:original" in hexadecimal, separated by spaces.
const rulesTable = `CREATE TABLE rules (
		id             INTEGER PRIMARY KEY,
		key            TEXT NOT NULL UNIQUE,
		kind           TEXT NOT NULL,
		origin         TEXT NOT NULL,
		name           TEXT,
		value          TEXT,
		seg_index      INTEGER,
		from_part      TEXT,
		to_part        TEXT,
		supports       INTEGER NOT NULL,
		support        TEXT,
		contradictions TEXT,
		withdrawn      INTEGER NOT NULL DEFAULT 0,
		covered        INTEGER NOT NULL DEFAULT 0,
		learned        INTEGER,
		withdrawn_at   INTEGER
	)`

const soft404sTable = `CREATE TABLE soft404s (
		origin     TEXT PRIMARY KEY,
		title_hash INTEGER NOT NULL,
		simhash    INTEGER NOT NULL,
		of_id      INTEGER NOT NULL,
		evidence   TEXT,
		time       INTEGER
	)`

// upgrades[v] brings a file of version v+1 to version v+2.
var upgrades = [][]string{
	{rankRunsTable, pagerankTable},
	{`ALTER TABLE urls ADD COLUMN etag TEXT`, `ALTER TABLE urls ADD COLUMN last_modified TEXT`,
		fetchesTable, fetchesIndex, channelsTable, channelGroupsTable, reassignmentsTable,
		rulesTable, soft404sTable, `ALTER TABLE urls ADD COLUMN main_simhash INTEGER`,
		`ALTER TABLE urls ADD COLUMN nourl_simhash INTEGER`, `ALTER TABLE urls ADD COLUMN title_hash INTEGER`},
	soft404sProbe[:],
	{`ALTER TABLE urls ADD COLUMN skip_rule INTEGER`, rulesHash, urlsRuleSkips, heldLinksTable},
	wireColumns[:],
	rulesChoice[:],
	append(v8Columns[:], probesApart[:]...),
	linksPerPage[:],
	rowOrder[:],
	references[:],
	functionNames[:],
}

// Version 12: the file names in its meta table the functions its stored
// fingerprints and content digests were made with (dedup.word_hash,
// record.digest), which the engine records when it first opens a file
// and keeps from then on. A file of before with pages fetched gets the
// names of the functions every lidi used before: FNV-1a and CRC-64 (a
// session-37 file names its word hash already, which stays). The version
// itself is the point: a lidi of before, which would read neither name,
// refuses the file rather than add digests of another function to it.
var functionNames = [...]string{
	nameIfPages("dedup.word_hash", "fnv1a64"), // dedup.MetaWordHash and WordHashFNV's name: storage does not import dedup (TestUpgradeNamesTheFunctions checks both)
	nameIfPages(record.MetaDigest, record.DigestCRC64.String()),
}

// nameIfPages records value under key in a file with pages fetched that
// names none.
func nameIfPages(key, value string) string {
	return fmt.Sprintf(`INSERT OR IGNORE INTO meta (key, value) SELECT '%s', '%s' WHERE (SELECT value FROM meta WHERE key = 'count.pages') > 0`, key, value)
}

// Version 11: a URL's row names its body and its links by their rows'
// IDs (urls.body_id, urls.links_id), and pages.url_id and
// page_links.from_id lose their unique indexes. Keyed by the URLs'
// random IDs, those two indexes took a leaf of 4 KiB each for about
// every second page fetched (0.47 WAL frames a page each, of 6.3,
// BenchmarkWALFrames), written to the WAL and again by the checkpoint;
// the URL's row, which a fetch rewrites anyway, carries the references
// at no cost. page_links gains an id of its own, which VACUUM INTO keeps
// (rowids it may renumber). An upgraded file keeps the unique index of
// pages.url_id: dropping it would copy every body.
var refColumns = [...]string{`ALTER TABLE urls ADD COLUMN body_id INTEGER`, `ALTER TABLE urls ADD COLUMN links_id INTEGER`}

const pageLinksTable = `CREATE TABLE page_links (
		id      INTEGER PRIMARY KEY,
		from_id INTEGER NOT NULL,
		to_ids  TEXT NOT NULL
	)`

// references brings version 10's tables to version 11: the columns, the
// references filled in, and page_links copied with ids (its rowids, so
// in the order it has) and without the unique index.
var references = [...]string{
	refColumns[0], refColumns[1],
	`UPDATE urls SET body_id = p.id FROM pages AS p WHERE p.url_id = urls.id`,
	strings.Replace(pageLinksTable, "CREATE TABLE page_links (", "CREATE TABLE page_links_v11 (", 1),
	`INSERT INTO page_links_v11 (id, from_id, to_ids) SELECT rowid, from_id, to_ids FROM page_links ORDER BY rowid`,
	`UPDATE urls SET links_id = p.id FROM page_links_v11 AS p WHERE p.from_id = urls.id`,
	`DROP VIEW links`,
	`DROP TABLE page_links`,
	`ALTER TABLE page_links_v11 RENAME TO page_links`,
	linksView,
}

// Version 10: urls and page_links are stored in the order their rows
// come (SQLite's rowid), and their IDs, the engine's random fingerprints,
// are UNIQUE columns with an index of their own. Keyed by the IDs, every
// new URL and every page's links went to a random place of a large
// B-tree, and each such leaf of 4 KiB was written whole to the WAL, then
// again by the checkpoint; appended, a batch's rows share a few leaves,
// and only the narrow ID indexes take random inserts. Columns and
// queries are as before; nothing refers to the rowids, which VACUUM INTO
// (a snapshot) may renumber.
const urlsTable = `CREATE TABLE urls (
		id            INTEGER NOT NULL UNIQUE,
		site          INTEGER NOT NULL,
		url           TEXT NOT NULL,
		depth         INTEGER NOT NULL,
		priority      REAL NOT NULL,
		seq           INTEGER NOT NULL,
		parent        INTEGER,
		discovered    INTEGER,
		state         INTEGER NOT NULL,
		skip_reason   TEXT,
		fetched       INTEGER,
		status        INTEGER,
		content_type  TEXT,
		length        INTEGER,
		truncated     INTEGER,
		digest        INTEGER,
		error         TEXT,
		redirect      TEXT,
		noindex       INTEGER,
		duration_ms   REAL,
		outlinks      INTEGER,
		simhash       INTEGER,
		type_check    TEXT,
		etag          TEXT,
		last_modified TEXT,
		main_simhash  INTEGER,
		nourl_simhash INTEGER,
		title_hash    INTEGER,
		skip_rule     INTEGER,
		lastmod       INTEGER,
		slow_downs    INTEGER NOT NULL DEFAULT 0
	)`

// urlsColumns are urlsTable's columns, which rowOrder copies.
const urlsColumns = `id, site, url, depth, priority, seq, parent, discovered, state, skip_reason, fetched, status,
	content_type, length, truncated, digest, error, redirect, noindex, duration_ms, outlinks, simhash, type_check,
	etag, last_modified, main_simhash, nourl_simhash, title_hash, skip_rule, lastmod, slow_downs`

const pageLinksTable10 = `CREATE TABLE page_links (
		from_id INTEGER NOT NULL UNIQUE,
		to_ids  TEXT NOT NULL
	)`

// rowOrder copies version 9's urls and page_links into tables of version
// 10 (in the order of their IDs: the rows already there stay scattered,
// the crawl's new ones are appended) and rebuilds what refers to them.
var rowOrder = [...]string{
	strings.Replace(urlsTable, "CREATE TABLE urls (", "CREATE TABLE urls_v10 (", 1),
	`INSERT INTO urls_v10 (` + urlsColumns + `) SELECT ` + urlsColumns + ` FROM urls`,
	`DROP TABLE urls`,
	`ALTER TABLE urls_v10 RENAME TO urls`,
	urlsQueue,
	urlsRuleSkips,
	`DROP VIEW links`,
	strings.Replace(pageLinksTable10, "CREATE TABLE page_links (", "CREATE TABLE page_links_v10 (", 1),
	`INSERT INTO page_links_v10 (from_id, to_ids) SELECT from_id, to_ids FROM page_links`,
	`DROP TABLE page_links`,
	`ALTER TABLE page_links_v10 RENAME TO page_links`,
	linksView,
}

// Version 9: a page's links are one row, its targets' IDs in a JSON array
// in ascending order, each once. Stored one row a link (version 8's links
// table, keyed by (from_id, to_id)), the links took a fifth of the
// writer's CPU time: 13 B-tree inserts a page, each looking for its place
// twice (INSERT OR IGNORE), into a tree that splits a leaf every few
// pages. The view links keeps version 8's rows for queries.
const pageLinksTable9 = `CREATE TABLE page_links (
		from_id INTEGER PRIMARY KEY,
		to_ids  TEXT NOT NULL
	)`

const linksView = `CREATE VIEW links (from_id, to_id) AS
	SELECT p.from_id, j.value FROM page_links AS p, json_each(p.to_ids) AS j`

// linksPerPage moves version 8's links table into page_links.
var linksPerPage = [...]string{
	pageLinksTable9,
	`INSERT INTO page_links (from_id, to_ids)
	SELECT from_id, json_group_array(to_id) FROM (SELECT from_id, to_id FROM links ORDER BY from_id, to_id) GROUP BY from_id`,
	`DROP TABLE links`,
	linksView,
}

// Version 6: what a WARC record of a fetch needs (storage.keep_headers,
// lidi export --warc). fetches.wire is the request head as sent followed
// by the response head as received, each through its blank line, in one
// zlib stream (engine.PageRecord.Wire); ip the address connected to. The
// sites table keeps the same of the latest robots.txt fetch. NULL when
// not kept, or for fetches recorded by an older lidi.
var wireColumns = [...]string{`ALTER TABLE fetches ADD COLUMN wire BLOB`, `ALTER TABLE fetches ADD COLUMN ip TEXT`,
	`ALTER TABLE sites ADD COLUMN robots_wire BLOB`, `ALTER TABLE sites ADD COLUMN robots_ip TEXT`}

// Version 7: why a rule keeps the side it keeps (dedup.Rule.Choice, as
// its String: "mirror-note 12:0 nesting 1:0", "arrival", "… reversed";
// NULL for a kind with no sides), and how many other origins' rules of
// the same rewrite let it be learned from fewer pairs (dedup.Rule.Prior).
var rulesChoice = [...]string{`ALTER TABLE rules ADD COLUMN choice TEXT`, `ALTER TABLE rules ADD COLUMN prior INTEGER NOT NULL DEFAULT 0`}

// Version 8: where robots.txt was read after its redirects (RFC 9309
// 2.3.1.2): sites.robots_url, the last request's URL; robots_redirects,
// the requests before it, one a line as "status URL"; robots_end, why the
// chain stopped (fetch.ChainEnd's name: "answered", "too-many-redirects",
// "redirect-loop", ...); NULL for none. urls.lastmod is the <lastmod> a
// sitemap gave the URL (unix ms), a change hint for recrawl. urls.slow_downs
// counts the 429 and 503 answers a queued URL drew, across runs, towards
// errors.slow_down_tries. lidi's own soft-404 probes, answered, are in
// state 3 (record.URLProbed), out of the crawl's pages. The counter
// count.recrawls splits count.pages into pages and recrawls.
var v8Columns = [...]string{`ALTER TABLE sites ADD COLUMN robots_url TEXT`, `ALTER TABLE sites ADD COLUMN robots_redirects TEXT`,
	`ALTER TABLE sites ADD COLUMN robots_end TEXT`, `ALTER TABLE urls ADD COLUMN lastmod INTEGER`,
	`ALTER TABLE urls ADD COLUMN slow_downs INTEGER NOT NULL DEFAULT 0`}

// probesApart moves the probes an older lidi recorded as pages (state 1)
// to state 3, and takes them out of the counters and the fetch history:
// a probe is the URL a soft-404 signature names as its probe, or one whose
// file name is a probe's (dedup.ProbeURL: the prefix and 16 hex digits).
var probesApart = [...]string{
	`UPDATE urls SET state = 3 WHERE state = 1 AND (id IN (SELECT probe_id FROM soft404s WHERE probe_id IS NOT NULL)
		OR url GLOB '*/lidi-no-such-page-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]*')`,
	`UPDATE meta SET value = value - (SELECT count(*) FROM urls WHERE state = 3) WHERE key = '` + keyFetched + `'`,
	`UPDATE meta SET value = value - (SELECT count(*) FROM fetches WHERE url_id IN (SELECT id FROM urls WHERE state = 3)) WHERE key = '` + keyPages + `'`,
	`UPDATE meta SET value = value - (SELECT coalesce(sum(length), 0) FROM fetches WHERE url_id IN (SELECT id FROM urls WHERE state = 3)) WHERE key = '` + keyBytes + `'`,
	`UPDATE meta SET value = value - (SELECT count(*) FROM fetches WHERE url_id IN (SELECT id FROM urls WHERE state = 3)
		AND (error IS NOT NULL OR status >= 400)) WHERE key = '` + keyErrors + `'`,
	`DELETE FROM fetches WHERE url_id IN (SELECT id FROM urls WHERE state = 3)`,
	`INSERT OR IGNORE INTO meta (key, value) VALUES ('` + keyRecrawls + `', (SELECT count(*) FROM fetches WHERE recrawl = 1))`,
}

// soft404sProbe are the columns of soft404s added by version 4: the probe
// that confirmed or refuted the soft 404.
var soft404sProbe = [...]string{`ALTER TABLE soft404s ADD COLUMN probe_id INTEGER`, `ALTER TABLE soft404s ADD COLUMN probe_status INTEGER`,
	`ALTER TABLE soft404s ADD COLUMN withdrawn INTEGER NOT NULL DEFAULT 0`}

// Version 5: what duplicate detection decided survives a restart. A URL
// skipped under a rule (skip_reason 'rule') names it in urls.skip_rule
// (dedup.Rule.ID, a hash of rules.key, kept in rules.hash), so that the
// rule's withdrawal queues it again whenever it comes; the index holds
// the rule-skipped rows only, which that UPDATE and the count read at
// start use. Pages whose links wait for a soft-404 probe's answer keep
// them in held_links until the answer decides them: links are a page's
// links in scope, normalised, one a line, in page order.
const rulesHash = `ALTER TABLE rules ADD COLUMN hash INTEGER`

const urlsRuleSkips = `CREATE INDEX urls_rule_skips ON urls (skip_rule, site) WHERE state = 2 AND skip_rule IS NOT NULL`

const heldLinksTable = `CREATE TABLE held_links (
		probe_id INTEGER NOT NULL,
		url_id   INTEGER NOT NULL,
		links    TEXT NOT NULL,
		PRIMARY KEY (probe_id, url_id)
	) WITHOUT ROWID`

// Counter keys in meta. They are updated by Apply in the same transaction
// as the rows they count, so they always agree with the tables.
const (
	keyPages     = "count.pages"      // fetches recorded (PageRecords)
	keyBytes     = "count.bytes"      // body bytes received (PageRecord.Length)
	keyErrors    = "count.errors"     // fetches with an error or a status >= 400
	keyURLs      = "count.urls"       // rows in urls
	keyQueued    = "count.queued"     // urls in state 0
	keyFetched   = "count.fetched"    // urls in state 1
	keySkipped   = "count.skipped"    // urls in state 2
	keyLinks     = "count.links"      // rows in links
	keyBodies    = "count.bodies"     // rows in pages
	keyBodyBytes = "count.body_bytes" // compressed bytes in pages.body
	keyEvents    = "count.events"     // rows in events
	keyRecrawls  = "count.recrawls"   // of count.pages, fetches of a URL fetched before (PageRecord.Recrawl)

	keyCreated = "created" // unix ms when the file was created
	keySchema  = "schema"  // SchemaVersion that created the file

	reservedPrefix = "count."

	// tallyPrefix starts the keys of the engine's own figures
	// (record.Batch.Tallies), kept with the counters.
	tallyPrefix = "tally."
)

// counterKeys lists the counters in the order of the counters array.
var counterKeys = [...]string{keyPages, keyBytes, keyErrors, keyURLs, keyQueued, keyFetched, keySkipped, keyLinks, keyBodies, keyBodyBytes, keyEvents, keyRecrawls}

const (
	cPages = iota
	cBytes
	cErrors
	cURLs
	cQueued
	cFetched
	cSkipped
	cLinks
	cBodies
	cBodyBytes
	cEvents
	cRecrawls
	nCounters
)

// initSchema checks the file's identity and version, creating the schema in
// one transaction when the file is new.
func (db *DB) initSchema(ctx context.Context, now time.Time, opt *Options) error {
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	defer conn.Close()

	var version, appID, tables int
	if err := conn.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	if err := conn.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&tables); err != nil {
		return fmt.Errorf("storage: open %s: %w", db.path, err)
	}
	switch {
	case tables == 0 && version == 0:
		return createSchema(ctx, conn, now)
	case appID != ApplicationID:
		return fmt.Errorf("%w: %s", ErrNotCrawl, db.path)
	case version > SchemaVersion:
		return &VersionError{Path: db.path, Version: version, Supported: SchemaVersion}
	case version < 1:
		return fmt.Errorf("%w: %s has schema version %d", ErrNotCrawl, db.path, version)
	case version < SchemaVersion:
		return db.upgrade(ctx, conn, version, opt)
	}
	return nil
}

// copiedTables names, by the version an upgrade step brings a file to, the
// tables that step copies or rewrites whole, with their indexes.
var copiedTables = map[int][]string{9: {"links"}, 10: {"urls", "page_links"}, 11: {"urls", "page_links"}}

// upgradeRoom is how many times the size of the tables it copies an
// upgrade needs free: the copy grows the file by their size (the old
// pages are freed inside it, not given back), and the write-ahead log
// holds each page of the copy again until the checkpoint after the
// commit.
const upgradeRoom = 2

// copyBytes is what a copy of tables (and their indexes) that take n
// bytes writes. Its rows go in key order and fill their pages, where a
// crawl's are partly empty, but a step may add an index: version 10
// indexes the URLs' IDs, which were version 9's rowids, and a packed
// file (vacuumed, as a snapshot is) then grew by 14%. A quarter more
// covers that; a copy that still runs out of room fails as a *RoomError
// and leaves the file as it was.
func copyBytes(n int64) int64 { return n + n/4 }

// upgradeProgressEvery is how often a long upgrade says how far it is.
const upgradeProgressEvery = 10 * time.Second

// RoomError reports that upgrading a crawl file written by an older lidi
// needs more free space than its file system has, or more than its size
// cap (Options.MaxSize) leaves. The file is left as it was. It unwraps to
// ErrDiskFull.
type RoomError struct {
	Path    string
	Version int   // the schema version the upgrade brings the file to
	Copied  int64 // bytes of the tables the upgrade copies
	Need    int64 // bytes it needs free
	Free    int64 // bytes free
	// MaxSize is the file's size cap when it is what lacks room: Need
	// and Free are then the bytes the copy adds to the file and those
	// the cap leaves. Zero when the disk lacks room.
	MaxSize int64
	// Err is SQLite's error when the copy ran out of room although the
	// check before it found enough; nil when the check refused.
	Err error
}

func (e *RoomError) Error() string {
	if e.MaxSize > 0 {
		return fmt.Sprintf("storage: upgrading %s to schema version %d copies %s of its tables into the file, whose size storage.max_size caps at %s; %s is left under the cap: raise storage.max_size (or set it to 0) and run lidi again; the file is unchanged",
			e.Path, e.Version, humanize.IBytes(uint64(e.Copied)), humanize.IBytes(uint64(e.MaxSize)), humanize.IBytes(uint64(max(e.Free, 0))))
	}
	return fmt.Sprintf("storage: upgrading %s to schema version %d copies %s of its tables and needs about %s free on its disk; %s is free: free some space (or move the file to a larger disk) and run lidi again; the file is unchanged",
		e.Path, e.Version, humanize.IBytes(uint64(e.Copied)), humanize.IBytes(uint64(e.Need)), humanize.IBytes(uint64(max(e.Free, 0))))
}

func (e *RoomError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrDiskFull}
	}
	return []error{ErrDiskFull, e.Err}
}

// tablesBytes returns the bytes that the tables an upgrade from version
// from copies, and their indexes, take in the file (read from dbstat,
// which walks their pages: seconds for millions of URLs, against minutes
// for the copy).
func tablesBytes(ctx context.Context, conn *sql.Conn, from int) (int64, error) {
	var total int64
	seen := map[string]bool{} // a table two steps copy is copied in one transaction: its pages once in the log
	for v := from + 1; v <= SchemaVersion; v++ {
		for _, table := range copiedTables[v] {
			if seen[table] {
				continue
			}
			seen[table] = true
			rows, err := conn.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE tbl_name = ? AND type IN ('table', 'index')", table)
			if err != nil {
				return 0, err
			}
			var names []string
			for rows.Next() {
				var name string
				if err := rows.Scan(&name); err != nil {
					rows.Close()
					return 0, err
				}
				names = append(names, name)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return 0, err
			}
			for _, name := range names {
				var n sql.NullInt64
				if err := conn.QueryRowContext(ctx, "SELECT sum(pgsize) FROM dbstat WHERE name = ? AND aggregate = TRUE", name).Scan(&n); err != nil {
					return 0, err
				}
				total += n.Int64
			}
		}
	}
	return total, nil
}

// upgrade brings a file written by an older lidi to SchemaVersion, in one
// transaction. A step that copies large tables first checks that the
// file system has room for it (a *RoomError if not), and says through
// opt.Log what it does and, every upgradeProgressEvery, how much it has
// written.
func (db *DB) upgrade(ctx context.Context, conn *sql.Conn, from int, opt *Options) (err error) {
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			opt.Log(fmt.Sprintf(format, args...))
		}
	}
	copied, err := tablesBytes(ctx, conn, from)
	if err != nil {
		return fmt.Errorf("storage: upgrade schema: measuring the tables to copy: %w", err)
	}
	if copied > 0 {
		measure := diskFree
		if opt.diskFree != nil {
			measure = opt.diskFree
		}
		// The file's own file system: a symlinked file's target's, where
		// SQLite writes, not the link's directory's.
		copyBytes := copyBytes
		if opt.copyBytes != nil {
			copyBytes = opt.copyBytes
		}
		free, ok := measure(db.path)
		need := upgradeRoom * copyBytes(copied)
		if ok && free < need {
			return &RoomError{Path: db.path, Version: SchemaVersion, Copied: copied, Need: need, Free: free}
		}
		var capLeft int64
		if opt.MaxSize > 0 {
			// The copy's pages go into the file before the old ones are
			// freed, and the cap (max_page_count) counts the free pages
			// inside it as room.
			var capPages, pages, freePages, size int64
			if err := conn.QueryRowContext(ctx, "SELECT max_page_count, page_count, freelist_count, page_size FROM pragma_max_page_count, pragma_page_count, pragma_freelist_count, pragma_page_size").Scan(&capPages, &pages, &freePages, &size); err != nil {
				return fmt.Errorf("storage: upgrade schema: measuring the file: %w", err)
			}
			capLeft = (capPages - pages + freePages) * size
			if capLeft < copyBytes(copied) {
				return &RoomError{Path: db.path, Version: SchemaVersion, Copied: copied, Need: copyBytes(copied), Free: capLeft, MaxSize: opt.MaxSize}
			}
		}
		// Should the estimate fall short, the copy's "database or disk
		// is full" says which room ran out: the cap's when the disk had
		// enough.
		defer func() {
			if err == nil || !errors.Is(db.fault(err), ErrDiskFull) {
				return
			}
			re := &RoomError{Path: db.path, Version: SchemaVersion, Copied: copied, Need: need, Free: free, Err: err}
			if opt.MaxSize > 0 && (!ok || free >= need) {
				re.Need, re.Free, re.MaxSize = copyBytes(copied), capLeft, opt.MaxSize
			}
			err = re
		}()
		logf("storage: upgrading %s from schema version %d to %d: copying %s of its tables, which takes a while (about %s of disk needed)",
			db.path, from, SchemaVersion, humanize.IBytes(uint64(copied)), humanize.IBytes(uint64(need)))
		start := time.Now()
		stop := db.upgradeProgress(copied, start, logf)
		defer func() {
			stop()
			if err == nil {
				logf("storage: upgraded %s to schema version %d in %s", db.path, SchemaVersion, time.Since(start).Round(time.Second))
			}
		}()
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: upgrade schema: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	for v := from; v < SchemaVersion; v++ {
		for _, s := range upgrades[v-1] {
			if _, err = tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("storage: upgrade schema to version %d: %s: %w", v+1, firstLine(s), err)
			}
		}
	}
	if _, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return fmt.Errorf("storage: upgrade schema: %w", err)
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("storage: upgrade schema: %w", err)
	}
	return nil
}

// upgradeProgress says every upgradeProgressEvery how much of the copy
// of copied bytes is written, as the write-ahead log has grown, until
// the returned stop is called.
func (db *DB) upgradeProgress(copied int64, start time.Time, logf func(string, ...any)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(upgradeProgressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				var wal int64
				if fi, err := os.Stat(db.path + "-wal"); err == nil {
					wal = fi.Size()
				}
				logf("storage: upgrading %s: %s written of about %s (%s)", db.path, humanize.IBytes(uint64(wal)),
					humanize.IBytes(uint64(copied)), time.Since(start).Round(time.Second))
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

func createSchema(ctx context.Context, conn *sql.Conn, now time.Time) (err error) {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: create schema: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	stmts := append([]string(nil), schema...)
	// Both pragmas write the file header inside the transaction, so a
	// crash leaves either an empty file or a complete schema.
	stmts = append(stmts,
		fmt.Sprintf("PRAGMA application_id = %d", ApplicationID),
		fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion))
	for _, s := range stmts {
		if _, err = tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("storage: create schema: %s: %w", firstLine(s), err)
		}
	}
	for _, k := range counterKeys {
		if _, err = tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES (?, 0)", k); err != nil {
			return fmt.Errorf("storage: create schema: %w", err)
		}
	}
	if _, err = tx.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES (?, ?), (?, ?)",
		keyCreated, now.UnixMilli(), keySchema, SchemaVersion); err != nil {
		return fmt.Errorf("storage: create schema: %w", err)
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("storage: create schema: %w", err)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
