package storage

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zlib"

	"lidi/engine/record"
)

var t0 = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(filepath.Join(t.TempDir(), "crawl.db"), Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rawOpen opens a database file read-only with the plain driver, the way a
// researcher's tool would.
func rawOpen(t testing.TB, path string) *sql.DB {
	t.Helper()
	r, err := sql.Open("sqlite", dsn(path, "ro"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func rawOpenRW(t testing.TB, path string) *sql.DB {
	t.Helper()
	r, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// queryInt returns the integer the query answers (0 for NULL).
func queryInt(t testing.TB, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	return queryOne[sql.NullInt64](t, db, q, args...).Int64
}

// queryOne returns the one value the query answers.
func queryOne[T any](t testing.TB, db *sql.DB, q string, args ...any) T {
	t.Helper()
	var v T
	if err := db.QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// checkConsistent verifies a database file: SQLite's integrity check, and
// every counter in meta against the rows it counts. A torn batch would show
// as a counter that disagrees with its table.
func checkConsistent(t testing.TB, r *sql.DB) {
	t.Helper()
	var ok string
	if err := r.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check = %q, %v", ok, err)
	}
	meta := func(k string) int64 { return queryInt(t, r, "SELECT value FROM meta WHERE key = ?", k) }
	for _, c := range []struct {
		key, q string
	}{
		{keyURLs, "SELECT count(*) FROM urls"},
		{keyQueued, "SELECT count(*) FROM urls WHERE state = 0"},
		{keyFetched, "SELECT count(*) FROM urls WHERE state = 1"},
		{keySkipped, "SELECT count(*) FROM urls WHERE state = 2"},
		{keyLinks, "SELECT count(*) FROM links"},
		{keyBodies, "SELECT count(*) FROM pages"},
		{keyBodyBytes, "SELECT coalesce(sum(length(body)), 0) FROM pages"},
		{keyEvents, "SELECT count(*) FROM events"},
		{keyRecrawls, "SELECT count(*) FROM fetches WHERE recrawl = 1"},
	} {
		if got, want := meta(c.key), queryInt(t, r, c.q); got != want {
			t.Errorf("meta %s = %d, table says %d", c.key, got, want)
		}
	}
	if n := queryInt(t, r, "SELECT count(*) FROM pages p LEFT JOIN urls u ON u.id = p.url_id WHERE u.state IS NOT 1"); n != 0 {
		t.Errorf("%d bodies of URLs not fetched", n)
	}
	// Each body and each page's links are named by their URL's row,
	// and by no other (version 11's references).
	for _, c := range []struct{ table, ref, key string }{{"pages", "body_id", "url_id"}, {"page_links", "links_id", "from_id"}} {
		rows := queryInt(t, r, "SELECT count(*) FROM "+c.table)
		named := queryInt(t, r, "SELECT count(*) FROM urls u JOIN "+c.table+" x ON x.id = u."+c.ref+" WHERE x."+c.key+" = u.id")
		refs := queryInt(t, r, "SELECT count(*) FROM urls WHERE "+c.ref+" IS NOT NULL")
		distinct := queryInt(t, r, "SELECT count(DISTINCT "+c.key+") FROM "+c.table)
		if named != rows || refs != rows || distinct != rows {
			t.Errorf("%s: %d rows, %d named by their URLs' %s, %d URLs naming one, %d distinct %s", c.table, rows, named, c.ref, refs, distinct, c.key)
		}
	}
}

func compress(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func site(id int64) record.SiteRecord {
	return record.SiteRecord{ID: id, Key: fmt.Sprintf("http://s%d.test", id), Host: fmt.Sprintf("s%d.test", id)}
}

func queued(id uint64, site int64, prio float64, seq int64) record.URLRecord {
	return record.URLRecord{ID: id, Site: site, URL: fmt.Sprintf("http://s%d.test/%x", site, id),
		Priority: prio, Seq: seq, Depth: int(prio), Discovered: t0, State: record.URLQueued}
}

func apply(t testing.TB, db *DB, b record.Batch) {
	t.Helper()
	if err := db.Apply(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
}

func TestOpenCreatesSchema(t *testing.T) {
	db := openTest(t)
	r := rawOpen(t, db.Path())
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Errorf("user_version = %d", v)
	}
	if v := queryInt(t, r, "PRAGMA application_id"); v != ApplicationID {
		t.Errorf("application_id = %#x", v)
	}
	var mode string
	r.QueryRow("PRAGMA journal_mode").Scan(&mode)
	if mode != "wal" {
		t.Errorf("journal_mode = %q", mode)
	}
	if n := queryInt(t, r, "SELECT count(*) FROM sqlite_schema WHERE type = 'view' AND name = 'links'"); n != 1 {
		t.Error("view links missing")
	}
	for _, table := range []string{"sites", "urls", "page_links", "pages", "events", "meta"} {
		if n := queryInt(t, r, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", table); n != 1 {
			t.Errorf("table %s missing", table)
		}
	}
	var plan string
	rows, err := r.Query("EXPLAIN QUERY PLAN "+sqlHead, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, parent, unused int
		var detail string
		rows.Scan(&id, &parent, &unused, &detail)
		plan += detail + "\n"
	}
	rows.Close()
	if !strings.Contains(plan, "urls_queue") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("Head does not read the queue index:\n%s", plan)
	}
	created, ok, err := db.Meta(context.Background(), "created")
	if err != nil || !ok || created != fmt.Sprint(t0.UnixMilli()) {
		t.Errorf("created = %q, %v, %v", created, ok, err)
	}
	c, err := db.Counters(context.Background())
	if err != nil || !reflect.DeepEqual(c, record.Counters{}) {
		t.Errorf("Counters = %+v, %v", c, err)
	}
	checkConsistent(t, r)
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(7, 1, 0, 1)}})
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := db.Apply(context.Background(), &record.Batch{Skips: []record.Skip{{URL: 7, Reason: "robots"}}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Apply after Close: %v", err)
	}
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	urls, _, more, err := db.Head(context.Background(), 1, 10)
	if err != nil || len(urls) != 1 || urls[0].ID != 7 || more {
		t.Errorf("Head after reopen = %+v, %v, %v", urls, more, err)
	}
}

// A new file has pages of pageSize; a file an older lidi made with pages
// of 4 KiB keeps them, and what Open counts in pages (the size cap,
// SQLite's max_page_count, and the checkpointer's thresholds) it counts
// in the file's own, so the cap is the same number of bytes either way.
func TestPageSizeOfTheFile(t *testing.T) {
	const maxSize = 64 << 20
	for _, tc := range []struct {
		name    string
		created int // page size the file is created with; 0: lidi's
		want    int
	}{
		{"new", 0, pageSize},
		{"older", olderPageSize, olderPageSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crawl.db")
			db, err := Open(path, Options{pageSize: tc.created})
			if err != nil {
				t.Fatal(err)
			}
			apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(7, 1, 0, 1)}})
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			db, err = Open(path, Options{MaxSize: maxSize})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			size := queryInt(t, db.w, "PRAGMA page_size")
			capPages := queryInt(t, db.w, "PRAGMA max_page_count")
			if size != int64(tc.want) || capPages*size != maxSize {
				t.Errorf("pages of %d bytes, at most %d of them (%d bytes); want pages of %d, %d bytes", size, capPages, capPages*size, tc.want, maxSize)
			}
			if db.ckpt.restart*size != restartBytes || db.ckpt.tail*size != tailBytes {
				t.Errorf("the checkpointer restarts the WAL at %d frames and leaves %d, want %d and %d bytes of them",
					db.ckpt.restart, db.ckpt.tail, restartBytes, tailBytes)
			}
			urls, _, _, err := db.Head(context.Background(), 1, 10)
			if err != nil || len(urls) != 1 || urls[0].ID != 7 {
				t.Errorf("Head after reopen = %+v, %v", urls, err)
			}
		})
	}
}

func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Open(path, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	var le *LockedError
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		t.Errorf("LockedError = %+v", le)
	}
	want := fmt.Sprintf("storage: crawl.db is in use by another lidi (pid %d)", os.Getpid())
	if err.Error() != want {
		t.Errorf("message %q, want %q", err, want)
	}
	// A relative path names the same file and the same lock.
	wd, _ := os.Getwd()
	if rel, err := filepath.Rel(wd, path); err == nil {
		if _, err := Open(rel, Options{}); !errors.Is(err, ErrLocked) {
			t.Errorf("Open(%s): %v, want ErrLocked", rel, err)
		}
	}
	db.Close()
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	db.Close()
}

// A reader that touches a file lidi is about to create (a researcher's
// sqlite3, a script polling for progress) holds a shared lock for a moment;
// Open waits for it instead of failing with SQLITE_BUSY.
func TestOpenWaitsForReaderOfNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := rawOpen(t, path)
	tx, err := r.Begin()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		db, err := Open(path, Options{})
		if err == nil {
			db.Close()
		}
		done <- err
	}()
	// While the reader holds its lock, Open must not give up.
	select {
	case err := <-done:
		t.Fatalf("Open returned while a reader held the new file: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	tx.Rollback()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Open after the reader let go: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Open did not return within a minute of the reader letting go")
	}
}

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	_, err = Open(path, Options{})
	var ve *VersionError
	if !errors.Is(err, ErrNewerSchema) || !errors.As(err, &ve) || ve.Version != SchemaVersion+1 || ve.Supported != SchemaVersion {
		t.Fatalf("Open newer file: %v", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("crawl.db has schema version %d", SchemaVersion+1)) {
		t.Errorf("message %q", err)
	}
	// The refused file is left alone, and its lock released.
	if _, err := Open(path, Options{}); !errors.Is(err, ErrNewerSchema) {
		t.Errorf("second Open: %v", err)
	}
}

func TestNotCrawl(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other.db")
	raw, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	if _, err := Open(other, Options{}); !errors.Is(err, ErrNotCrawl) {
		t.Errorf("Open foreign SQLite file: %v", err)
	}
	garbage := filepath.Join(dir, "garbage.db")
	os.WriteFile(garbage, bytes.Repeat([]byte("not a database "), 512), 0o644)
	if _, err := Open(garbage, Options{}); err == nil {
		t.Error("Open garbage succeeded")
	}
	if _, err := Open(filepath.Join(dir, "missing", "crawl.db"), Options{}); err == nil {
		t.Error("Open in a missing directory succeeded")
	}
}

func TestHeadOrder(t *testing.T) {
	db := openTest(t)
	apply(t, db, record.Batch{
		Sites: []record.SiteRecord{site(1), site(2)},
		URLs: []record.URLRecord{
			queued(10, 1, 2, 5),
			queued(11, 1, 1, 9),
			queued(12, 1, 1, 3),
			queued(13, 1, 0.5, 20),
			queued(14, 1, 2, 1),
			queued(15, 1, 3, 2), // fetched below
			queued(16, 1, 0, 0), // skipped below
			{ID: 17, Site: 1, URL: "http://s1.test/robots", Priority: 0, Seq: 1, State: record.URLSkipped, SkipReason: "robots"},
			queued(1<<63|5, 1, 4, 30), // an ID past MaxInt64
			queued(20, 2, 0, 4),
		},
	})
	apply(t, db, record.Batch{
		Pages: []record.PageRecord{{URL: 15, Site: 1, Fetched: t0, Status: 200}},
		Skips: []record.Skip{{URL: 16, Reason: "robots"}},
	})
	order := []uint64{13, 12, 11, 14, 10, 1<<63 | 5}
	for _, tc := range []struct {
		n        int
		wantNext float64
		wantMore bool
	}{
		{0, 0.5, true},
		{1, 1, true},
		{3, 2, true},
		{5, 4, true},
		{6, 0, false},
		{100, 0, false},
	} {
		urls, next, more, err := db.Head(context.Background(), 1, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		var ids []uint64
		for _, u := range urls {
			ids = append(ids, u.ID)
		}
		want := order[:min(tc.n, len(order))]
		if !slices.Equal(ids, want) || next != tc.wantNext || more != tc.wantMore {
			t.Errorf("Head(1, %d) = %x, next %v, more %v; want %x, %v, %v", tc.n, ids, next, more, want, tc.wantNext, tc.wantMore)
		}
	}
	urls, _, _, _ := db.Head(context.Background(), 1, 1)
	if got := urls[0]; got != (record.QueuedURL{ID: 13, URL: "http://s1.test/d", Depth: 0, Priority: 0.5, Seq: 20}) {
		t.Errorf("Head record = %+v", got)
	}
	if urls, _, more, _ := db.Head(context.Background(), 3, 10); len(urls) != 0 || more {
		t.Errorf("Head of unknown site = %v, %v", urls, more)
	}
}

func TestInsertOrIgnore(t *testing.T) {
	db := openTest(t)
	first := queued(1, 1, 1, 1)
	dup := first
	dup.URL, dup.Priority, dup.Seq = "http://changed.test/", 9, 99
	apply(t, db, record.Batch{
		Sites: []record.SiteRecord{site(1)},
		URLs:  []record.URLRecord{first, dup, queued(2, 1, 1, 2)},
		Links: []record.Link{{From: 1, To: 2}, {From: 1, To: 2}, {From: 2, To: 1}},
	})
	// Again in a later batch, a skipped duplicate must not move a counter.
	skippedDup := dup
	skippedDup.State, skippedDup.SkipReason = record.URLSkipped, "scope"
	apply(t, db, record.Batch{
		URLs:  []record.URLRecord{dup, skippedDup, queued(3, 1, 1, 3)},
		Links: []record.Link{{From: 2, To: 1}, {From: 1, To: 3}},
	})
	urls, _, _, _ := db.Head(context.Background(), 1, 10)
	if len(urls) != 3 || urls[0] != (record.QueuedURL{ID: 1, URL: first.URL, Depth: 1, Priority: 1, Seq: 1}) {
		t.Errorf("Head = %+v", urls)
	}
	st, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.URLs != 3 || st.Queued != 3 || st.Skipped != 0 || st.Links != 3 {
		t.Errorf("Stats = %+v", st)
	}
	checkConsistent(t, rawOpen(t, db.Path()))
}

func TestSitesRoundTripAndPending(t *testing.T) {
	db := openTest(t)
	s1 := record.SiteRecord{ID: 1, Key: "http://a.test", Host: "a.test"}
	s2 := record.SiteRecord{ID: 2, Key: "https://b.test:8443", Host: "b.test", Addr: "127.0.0.2",
		RobotsStatus: 200, RobotsBody: []byte("User-agent: *\nDisallow: /x\n"),
		RobotsFetched: t0.Add(1500 * time.Millisecond), NextVisit: t0.Add(15 * time.Second),
		Failures: 2, Parked: true, Fetched: 40}
	apply(t, db, record.Batch{
		Sites: []record.SiteRecord{s1, {ID: 2, Key: s2.Key, Host: s2.Host}},
		URLs:  []record.URLRecord{queued(1, 1, 0, 1), queued(2, 1, 0, 2), queued(3, 1, 0, 3), queued(4, 2, 0, 4)},
	})
	apply(t, db, record.Batch{
		Sites: []record.SiteRecord{s2}, // an update
		Pages: []record.PageRecord{{URL: 1, Site: 1, Status: 200}},
	})
	sites, err := db.Sites(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 2 {
		t.Fatalf("%d sites", len(sites))
	}
	s1.Pending, s2.Pending = 2, 1
	for i, want := range []record.SiteRecord{s1, s2} {
		got := sites[i]
		if got.ID != want.ID || got.Key != want.Key || got.Host != want.Host || got.Addr != want.Addr ||
			got.RobotsStatus != want.RobotsStatus || !bytes.Equal(got.RobotsBody, want.RobotsBody) ||
			!got.RobotsFetched.Equal(want.RobotsFetched) || !got.NextVisit.Equal(want.NextVisit) ||
			got.Failures != want.Failures || got.Parked != want.Parked || got.Fetched != want.Fetched ||
			got.Pending != want.Pending {
			t.Errorf("site %d:\n got %+v\nwant %+v", want.ID, got, want)
		}
	}
	// Another site with the key of site 1 is the engine's bug: refused,
	// and the batch with it.
	err = db.Apply(context.Background(), &record.Batch{
		Sites: []record.SiteRecord{{ID: 3, Key: "http://a.test", Host: "a.test"}},
		URLs:  []record.URLRecord{queued(5, 1, 0, 5)},
	})
	if err == nil {
		t.Error("duplicate site key accepted")
	}
	if st, _ := db.Stats(context.Background()); st.URLs != 4 || st.Sites != 2 {
		t.Errorf("failed batch left traces: %+v", st)
	}
}

func TestPagesAndBodies(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	html := []byte(strings.Repeat("<p>lidi stores bodies compressed</p>\n", 100))
	apply(t, db, record.Batch{
		Sites: []record.SiteRecord{site(1)},
		URLs:  []record.URLRecord{queued(1, 1, 0, 1), queued(2, 1, 0, 2), queued(3, 1, 0, 3)},
	})
	apply(t, db, record.Batch{
		Pages: []record.PageRecord{
			{URL: 1, Site: 1, Fetched: t0, Status: 200, ContentType: "text/html", Length: int64(len(html)),
				Duration: 2500 * time.Microsecond, Digest: 1<<63 | 42, Body: compress(t, html), Links: 7, NoIndex: true},
			{URL: 2, Site: 1, Fetched: t0, Status: 404, Length: 10},
			{URL: 3, Site: 1, Fetched: t0, Err: "timeout", Truncated: true},
		},
	})
	got, err := db.Page(ctx, 1)
	if err != nil || !bytes.Equal(got, html) {
		t.Fatalf("Page(1) = %d bytes, %v", len(got), err)
	}
	if _, err := db.Page(ctx, 2); !errors.Is(err, ErrNoPage) {
		t.Errorf("Page(2): %v, want ErrNoPage", err)
	}
	r := rawOpen(t, db.Path())
	var (
		state, status, length, truncated, noindex, outlinks, digest, fetched int64
		ctype                                                                string
		dur                                                                  float64
	)
	err = r.QueryRow(`SELECT state, status, content_type, length, truncated, noindex, duration_ms, outlinks, digest, fetched
		FROM urls WHERE id = 1`).Scan(&state, &status, &ctype, &length, &truncated, &noindex, &dur, &outlinks, &digest, &fetched)
	if err != nil {
		t.Fatal(err)
	}
	if state != 1 || status != 200 || ctype != "text/html" || length != int64(len(html)) || truncated != 0 ||
		noindex != 1 || dur != 2.5 || outlinks != 7 || uint64(digest) != 1<<63|42 || fetched != t0.UnixMilli() {
		t.Errorf("url row: %v %v %q %v %v %v %v %v %x %v", state, status, ctype, length, truncated, noindex, dur, outlinks, digest, fetched)
	}
	var errText string
	r.QueryRow("SELECT error FROM urls WHERE id = 3").Scan(&errText)
	if errText != "timeout" {
		t.Errorf("error column = %q", errText)
	}
	c, _ := db.Counters(ctx)
	if !reflect.DeepEqual(c, record.Counters{Pages: 3, Bytes: int64(len(html)) + 10, Errors: 2}) {
		t.Errorf("Counters = %+v", c)
	}

	// A refetch replaces the result and the body; counters stay exact.
	html2 := []byte("<p>changed</p>")
	apply(t, db, record.Batch{Pages: []record.PageRecord{
		{URL: 1, Site: 1, Fetched: t0.Add(time.Hour), Status: 200, Length: int64(len(html2)), Body: compress(t, html2)},
		{URL: 2, Site: 1, Fetched: t0.Add(time.Hour), Status: 200, Length: 3, Body: compress(t, []byte("abc"))},
	}})
	if got, _ := db.Page(ctx, 1); !bytes.Equal(got, html2) {
		t.Errorf("Page(1) after refetch = %q", got)
	}
	st, _ := db.Stats(ctx)
	if st.Pages != 5 || st.Fetched != 3 || st.Queued != 0 || st.Bodies != 2 {
		t.Errorf("Stats after refetch = %+v", st)
	}
	checkConsistent(t, r)

	// A page for a URL never recorded fails the whole batch.
	err = db.Apply(ctx, &record.Batch{
		URLs:  []record.URLRecord{queued(50, 1, 0, 50)},
		Pages: []record.PageRecord{{URL: 99, Site: 1, Status: 200, Body: compress(t, html)}},
	})
	if !errors.Is(err, ErrUnknownURL) {
		t.Errorf("page for unknown URL: %v", err)
	}
	if st2, _ := db.Stats(ctx); st2.URLs != st.URLs || st2.Pages != st.Pages {
		t.Errorf("failed batch left traces: %+v", st2)
	}
	checkConsistent(t, r)
}

func TestSkips(t *testing.T) {
	db := openTest(t)
	parked := site(2)
	parked.Parked = true
	apply(t, db, record.Batch{
		Sites: []record.SiteRecord{site(1), parked},
		URLs:  []record.URLRecord{queued(1, 1, 0, 1), queued(2, 1, 0, 2), queued(3, 2, 0, 3), queued(4, 2, 0, 4)},
	})
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 2, Site: 1, Status: 200}}})
	// 2 is fetched (a skip must not undo that), 4 appears twice, 5 does
	// not exist.
	apply(t, db, record.Batch{Skips: []record.Skip{{URL: 1, Reason: "robots"}, {URL: 2, Reason: "robots"}, {URL: 3, Reason: "parked"}, {URL: 4, Reason: "parked"}, {URL: 4, Reason: "mirror"}, {URL: 5, Reason: "robots"}}})
	r := rawOpen(t, db.Path())
	for _, c := range []struct {
		id     int64
		state  int64
		reason string
	}{{1, 2, "robots"}, {2, 1, ""}, {3, 2, "parked"}, {4, 2, "parked"}} {
		var state int64
		var reason sql.NullString
		if err := r.QueryRow("SELECT state, skip_reason FROM urls WHERE id = ?", c.id).Scan(&state, &reason); err != nil {
			t.Fatal(err)
		}
		if state != c.state || reason.String != c.reason {
			t.Errorf("url %d: state %d reason %q, want %d %q", c.id, state, reason.String, c.state, c.reason)
		}
	}
	sites, _ := db.Sites(context.Background())
	if sites[0].Pending != 0 || sites[1].Pending != 0 {
		t.Errorf("pending after skips: %d, %d", sites[0].Pending, sites[1].Pending)
	}
	if urls, _, more, _ := db.Head(context.Background(), 2, 5); len(urls) != 0 || more {
		t.Errorf("Head of a skipped queue = %v", urls)
	}
	st, _ := db.Stats(context.Background())
	if st.Skipped != 3 || st.Queued != 0 || st.Fetched != 1 {
		t.Errorf("Stats = %+v", st)
	}
	checkConsistent(t, r)
}

func TestURLFingerprints(t *testing.T) {
	db := openTest(t)
	w := newWorkload(7, 3, 0)
	var b record.Batch
	w.fill(&b, 20, 10, 4)
	apply(t, db, b)
	want := map[uint64]bool{}
	for _, u := range b.URLs {
		want[u.ID] = true
	}
	got := map[uint64]bool{}
	err := db.URLFingerprints(context.Background(), func(id uint64) {
		if got[id] {
			t.Errorf("id %x twice", id)
		}
		got[id] = true
	})
	if err != nil {
		t.Fatal(err)
	}
	high := 0
	for id := range want {
		if !got[id] {
			t.Errorf("id %x missing", id)
		}
		if id > 1<<63 {
			high++
		}
	}
	if len(got) != len(want) || high == 0 {
		t.Errorf("%d ids, want %d (%d past MaxInt64)", len(got), len(want), high)
	}
}

func TestApplyCancelled(t *testing.T) {
	db := openTest(t)
	w := newWorkload(3, 5, 512)
	var b record.Batch
	w.fill(&b, 50, 20, 5)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := db.Apply(ctx, &b); !errors.Is(err, context.Canceled) {
		t.Errorf("Apply with cancelled context: %v", err)
	}
	st, _ := db.Stats(context.Background())
	if st.URLs != 0 || st.Batches != 0 {
		t.Errorf("cancelled batch left traces: %+v", st)
	}
	if err := db.Apply(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if err := db.Apply(context.Background(), &record.Batch{}); err != nil {
		t.Errorf("empty batch: %v", err)
	}
	checkConsistent(t, rawOpen(t, db.Path()))
}

func TestEventsAndMeta(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	var evs []record.Event
	for i := range 5 {
		evs = append(evs, record.Event{Time: t0.Add(time.Duration(i) * time.Second), Kind: "parked", Site: "http://s.test", Text: fmt.Sprint(i)})
	}
	apply(t, db, record.Batch{Events: evs[:3]})
	apply(t, db, record.Batch{Events: evs[3:]})
	got, err := db.Events(ctx, 2)
	if err != nil || len(got) != 2 || got[0].Text != "3" || got[1].Text != "4" || !got[1].Time.Equal(evs[4].Time) || got[1].Site != "http://s.test" {
		t.Errorf("Events(2) = %+v, %v", got, err)
	}
	if err := db.SetMeta(ctx, "config_digest", "abc"); err != nil {
		t.Fatal(err)
	}
	if err := db.SetMeta(ctx, "config_digest", "def"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := db.Meta(ctx, "config_digest"); v != "def" || !ok || err != nil {
		t.Errorf("Meta = %q, %v, %v", v, ok, err)
	}
	if _, ok, _ := db.Meta(ctx, "absent"); ok {
		t.Error("absent key found")
	}
	for _, k := range []string{"count.pages", "created", "schema", "tally.error.timeout"} {
		if err := db.SetMeta(ctx, k, "1"); !errors.Is(err, ErrReservedKey) {
			t.Errorf("SetMeta(%q): %v", k, err)
		}
	}
}

func TestStatsWriter(t *testing.T) {
	db := openTest(t)
	w := newWorkload(5, 10, 1024)
	var b record.Batch
	for range 3 {
		b.Reset()
		w.fill(&b, 20, 10, 3)
		apply(t, db, b)
	}
	st, err := db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Batches != 3 || st.ApplyTime <= 0 || st.LastApply <= 0 || st.FileBytes == 0 ||
		st.Pages != 60 || st.Bodies != 60 || st.BodyBytes != 60*1024 || st.Links < 500 || st.Links > 600 {
		t.Errorf("Stats = %+v", st)
	}
}

// IntegrityCheck answers "ok" for a sound file and names the damage in a
// file whose last page was overwritten.
func TestIntegrityCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := record.Batch{Sites: []record.SiteRecord{site(1)}}
	for i := range 2000 {
		b.URLs = append(b.URLs, queued(uint64(i+1), 1, float64(i%7), int64(i)))
	}
	apply(t, db, b)
	if got, err := db.IntegrityCheck(context.Background()); got != "ok" || err != nil {
		t.Fatalf("sound file: integrity check %q, %v", got, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.IntegrityCheck(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("closed DB: %v, want ErrClosed", err)
	}

	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() < 4*pageSize {
		t.Fatalf("file of %v bytes, %v", fi.Size(), err)
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xa5}, pageSize), fi.Size()-pageSize); err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if got, err := db.IntegrityCheck(context.Background()); got == "ok" && err == nil {
		t.Error("damaged file: integrity check ok")
	} else {
		t.Logf("damaged file: %q, %v", got, err)
	}
}
