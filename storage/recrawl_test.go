package storage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"lidi/engine/fetch"
	"lidi/engine/record"
)

// dropVersion6 turns a version 6 file back into a version 5 one.
var dropVersion6 = []string{"ALTER TABLE fetches DROP COLUMN wire", "ALTER TABLE fetches DROP COLUMN ip",
	"ALTER TABLE sites DROP COLUMN robots_wire", "ALTER TABLE sites DROP COLUMN robots_ip"}

// dropVersion11 turns a current file back into a version 10 one: no
// references in urls, pages.url_id and page_links.from_id unique.
var dropVersion11 = []string{
	"ALTER TABLE urls DROP COLUMN body_id", "ALTER TABLE urls DROP COLUMN links_id",
	"CREATE TABLE pages_v10 (id INTEGER PRIMARY KEY, url_id INTEGER NOT NULL UNIQUE, body BLOB NOT NULL)",
	"INSERT INTO pages_v10 SELECT id, url_id, body FROM pages", "DROP TABLE pages", "ALTER TABLE pages_v10 RENAME TO pages",
	"DROP VIEW links",
	strings.Replace(pageLinksTable10, "CREATE TABLE page_links (", "CREATE TABLE page_links_v10 (", 1),
	"INSERT INTO page_links_v10 SELECT from_id, to_ids FROM page_links ORDER BY id", "DROP TABLE page_links",
	"ALTER TABLE page_links_v10 RENAME TO page_links", linksView,
}

// dropVersion10 turns a current file back into a version 9 one: urls and
// page_links keyed by their IDs.
var dropVersion10 = append(slices.Clip(dropVersion11),
	strings.Replace(strings.Replace(urlsTable, "CREATE TABLE urls (", "CREATE TABLE urls_v9 (", 1),
		"id            INTEGER NOT NULL UNIQUE,", "id            INTEGER PRIMARY KEY,", 1),
	"INSERT INTO urls_v9 SELECT "+urlsColumns+" FROM urls", "DROP TABLE urls", "ALTER TABLE urls_v9 RENAME TO urls",
	urlsQueue, urlsRuleSkips, "DROP VIEW links",
	strings.Replace(pageLinksTable9, "CREATE TABLE page_links (", "CREATE TABLE page_links_v9 (", 1),
	"INSERT INTO page_links_v9 SELECT from_id, to_ids FROM page_links", "DROP TABLE page_links",
	"ALTER TABLE page_links_v9 RENAME TO page_links", linksView,
)

// dropVersion9 turns a current file back into a version 8 one: its links
// one row a link, in a table.
var dropVersion9 = append(slices.Clip(dropVersion10),
	"CREATE TABLE links_v8 (from_id INTEGER NOT NULL, to_id INTEGER NOT NULL, PRIMARY KEY (from_id, to_id)) WITHOUT ROWID",
	"INSERT INTO links_v8 SELECT from_id, to_id FROM links", "DROP VIEW links", "DROP TABLE page_links",
	"ALTER TABLE links_v8 RENAME TO links")

// dropVersion8 turns a current file back into a version 7 one.
var dropVersion8 = append(slices.Clip(dropVersion9), "ALTER TABLE sites DROP COLUMN robots_url", "ALTER TABLE sites DROP COLUMN robots_redirects",
	"ALTER TABLE sites DROP COLUMN robots_end", "ALTER TABLE urls DROP COLUMN lastmod", "ALTER TABLE urls DROP COLUMN slow_downs",
	"DELETE FROM meta WHERE key = 'count.recrawls'")

// dropVersion7 turns a current file back into a version 6 one.
var dropVersion7 = append(slices.Clip(dropVersion8), "ALTER TABLE rules DROP COLUMN choice", "ALTER TABLE rules DROP COLUMN prior")

// dropVersion5 turns a current file back into a version 4 one.
var dropVersion5 = slices.Concat(dropVersion7, dropVersion6, []string{"DROP INDEX urls_rule_skips", "ALTER TABLE urls DROP COLUMN skip_rule",
	"ALTER TABLE rules DROP COLUMN hash", "DROP TABLE held_links"})

// dropVersion3 turns a current file back into a version 2 one.
var dropVersion3 = append(slices.Clip(dropVersion5), "DROP TABLE fetches", "DROP TABLE channels", "DROP TABLE channel_groups",
	"DROP TABLE reassignments", "ALTER TABLE urls DROP COLUMN etag", "ALTER TABLE urls DROP COLUMN last_modified",
	// Duplicate detection's rules replaced version 2's mirror labels.
	"DROP TABLE rules", "DROP TABLE soft404s",
	"ALTER TABLE urls DROP COLUMN main_simhash", "ALTER TABLE urls DROP COLUMN nourl_simhash", "ALTER TABLE urls DROP COLUMN title_hash",
	`CREATE TABLE mirrors (id INTEGER PRIMARY KEY, prefix TEXT NOT NULL UNIQUE, of_prefix TEXT NOT NULL, kind TEXT NOT NULL,
		rule TEXT, evidence TEXT, time INTEGER)`)

// TestUpgradeFromVersion2 opens a file written by lidi at schema version 2
// (testdata/v2.db: two sites, three URLs, a 200 and a 404 fetched) and
// recrawls in it.
func TestUpgradeFromVersion2(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("testdata", "v2.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v2.db")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	db, r := openUpgraded(t, path)
	if n := queryInt(t, r, "SELECT count(*) FROM urls"); n != 3 {
		t.Errorf("%d URLs kept, want 3", n)
	}
	ct, err := db.Counters(context.Background())
	if err != nil || ct.Pages != 2 {
		t.Errorf("counters after upgrade: %+v, %v", ct, err)
	}
	// The upgraded file recrawls: the fetched 200 is a recrawl candidate,
	// the 404 is not.
	var cands []record.RecrawlURL
	if err := db.RecrawlURLs(context.Background(), func(u record.RecrawlURL) { cands = append(cands, u) }); err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || cands[0].ID != 11 || cands[0].Site != 1 {
		t.Fatalf("recrawl candidates %+v, want URL 11 of site 1", cands)
	}
	apply(t, db, record.Batch{Requeues: []record.Requeue{{URL: 11, Priority: -1, Seq: 9}}})
	head, _, _, err := db.Head(context.Background(), 1, 10)
	if err != nil || len(head) != 1 || head[0].Copy == nil || head[0].Copy.Digest != 0xabc || head[0].Copy.ETag != "" {
		t.Fatalf("head after requeue: %+v, %v; want URL 11 with its v2 copy", head, err)
	}
}

func TestRecrawlHistory(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(1, 1, 0, 1), queued(2, 1, 1, 2)}})
	first := record.PageRecord{URL: 1, Site: 1, Fetched: t0, Status: 200, Length: 5, Digest: 10, Simhash: 0xff,
		Body: compress(t, []byte("first")), ETag: `"v1"`, LastModified: "Mon, 02 Mar 2026 10:00:00 GMT"}
	apply(t, db, record.Batch{Pages: []record.PageRecord{first, {URL: 2, Site: 1, Fetched: t0, Status: 200, Length: 3, Digest: 20}}})
	if _, _, more, _ := db.Head(ctx, 1, 0); more {
		t.Fatal("a URL still queued after both were fetched")
	}

	// Recrawl 1: 304, the copy stays.
	apply(t, db, record.Batch{Requeues: []record.Requeue{{URL: 1, Priority: -5, Seq: 3}, {URL: 99, Priority: 0, Seq: 4}}})
	head, _, _, err := db.Head(ctx, 1, 10)
	if err != nil || len(head) != 1 {
		t.Fatalf("head %+v, %v; want URL 1 alone", head, err)
	}
	want := fetch.Copy{Validators: fetch.Validators{ETag: `"v1"`, LastModified: first.LastModified}, Digest: 10, Simhash: 0xff}
	if head[0].Copy == nil || *head[0].Copy != want || head[0].Priority != -5 {
		t.Fatalf("requeued URL %+v, copy %+v; want priority -5 and copy %+v", head[0], head[0].Copy, want)
	}
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0.Add(time.Hour), Status: 304,
		Recrawl: true, Verdict: fetch.VerdictNotModified}}})
	// Recrawl 2: changed, new body and validators.
	apply(t, db, record.Batch{Requeues: []record.Requeue{{URL: 1, Priority: -5, Seq: 5}}})
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0.Add(2 * time.Hour), Status: 200, Length: 6,
		Digest: 11, Simhash: 0xf0, Body: compress(t, []byte("second")), Recrawl: true, Verdict: fetch.VerdictChanged, ETag: `"v2"`}}})
	// Recrawl 3: the server failed; the copy stays.
	apply(t, db, record.Batch{Requeues: []record.Requeue{{URL: 1, Priority: -5, Seq: 6}}})
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0.Add(3 * time.Hour), Status: 503, Recrawl: true}}})

	r := rawOpen(t, db.Path())
	rows, err := r.Query("SELECT status, recrawl, coalesce(changed, -1), verdict FROM fetches WHERE url_id = 1 ORDER BY time")
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		status, recrawl, changed int
		verdict                  string
	}
	var got []row
	for rows.Next() {
		var x row
		if err := rows.Scan(&x.status, &x.recrawl, &x.changed, &x.verdict); err != nil {
			t.Fatal(err)
		}
		got = append(got, x)
	}
	rows.Close()
	wantRows := []row{{200, 0, -1, "none"}, {304, 1, 0, "not-modified"}, {200, 1, 1, "changed"}, {503, 1, -1, "none"}}
	if len(got) != len(wantRows) {
		t.Fatalf("history %+v, want %+v", got, wantRows)
	}
	for i := range got {
		if got[i] != wantRows[i] {
			t.Errorf("fetch %d: %+v, want %+v", i, got[i], wantRows[i])
		}
	}
	if v := queryInt(t, r, "SELECT status FROM urls WHERE id = 1"); v != 200 {
		t.Errorf("URL 1 status %d after a failed recrawl, want the copy's 200", v)
	}
	if v := queryOne[string](t, r, "SELECT etag FROM urls WHERE id = 1"); v != `"v2"` {
		t.Errorf("URL 1 etag %q, want the changed version's", v)
	}
	if b, err := db.Page(ctx, 1); err != nil || string(b) != "second" {
		t.Errorf("URL 1 body %q, %v; want the changed version", b, err)
	}
	ct, _ := db.Counters(ctx)
	if ct.Pages != 5 {
		t.Errorf("%d fetches counted, want 5", ct.Pages)
	}
	if q, f := queryInt(t, r, "SELECT value FROM meta WHERE key = 'count.queued'"), queryInt(t, r, "SELECT value FROM meta WHERE key = 'count.fetched'"); q != 0 || f != 2 {
		t.Errorf("counters queued %d fetched %d, want 0 and 2", q, f)
	}
	if n := queryInt(t, r, "SELECT value FROM meta WHERE key = 'count.bodies'"); n != 1 {
		t.Errorf("%d bodies counted, want 1 (the second replaced the first)", n)
	}
}

func TestRecrawlManagerRecords(t *testing.T) {
	db := openTest(t)
	ch := []record.ChannelRecord{
		{ID: "a.test", Group: 1, Interval: 2 * time.Hour, Rate: 1.0 / 7200, Submitted: 3, Updates: 2, LastUpdate: t0, Updated: t0},
		{ID: "b.test/news/", Group: 0, Interval: time.Hour, Rate: 0, Updated: t0},
	}
	apply(t, db, record.Batch{Channels: ch,
		Groups: []record.GroupRecord{{Index: 0, Channels: 1, Initial: time.Hour, Interval: 50 * time.Minute, Updated: t0}},
		Reassignments: []record.ReassignmentRecord{{Time: t0, Policy: "iir", Before: []time.Duration{time.Hour, 2 * time.Hour},
			After: []time.Duration{54 * time.Minute, 2 * time.Hour}, SuccessRates: []float64{1, 0.5}}}})
	ch[1].Updates = 1
	apply(t, db, record.Batch{Channels: ch[1:]})
	got, err := db.Channels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b record.ChannelRecord) bool {
		ok := a.LastUpdate.Equal(b.LastUpdate) && a.Updated.Equal(b.Updated)
		a.LastUpdate, a.Updated, b.LastUpdate, b.Updated = time.Time{}, time.Time{}, time.Time{}, time.Time{}
		return ok && a == b
	}
	if len(got) != 2 || !same(got[0], ch[0]) || !same(got[1], ch[1]) {
		t.Errorf("channels %+v, want %+v", got, ch)
	}
	r := rawOpen(t, db.Path())
	if v := queryOne[string](t, r, "SELECT after_ms FROM reassignments"); v != "3240000 7200000" {
		t.Errorf("reassignment after_ms %q", v)
	}
	if v := queryInt(t, r, "SELECT interval_ms FROM channel_groups WHERE grp = 0"); v != 3000000 {
		t.Errorf("group interval %d ms", v)
	}
}

// A version 5 file gains the columns of what a WARC record needs; each
// fetch keeps its own heads and address, and a site those of its
// robots.txt.
func TestUpgradeFromVersion5KeepsWire(t *testing.T) {
	db, path := olderFile(t, append(slices.Concat(dropVersion7, dropVersion6), "PRAGMA user_version = 5")...)
	wire1, wire2 := compress(t, []byte("GET /1 HTTP/1.1\r\n\r\nHTTP/1.1 200 OK\r\n\r\n")), compress(t, []byte("GET /1 HTTP/1.1\r\n\r\nHTTP/1.1 304 Not Modified\r\n\r\n"))
	s := site(1)
	s.RobotsStatus, s.RobotsFetched, s.RobotsWire, s.RobotsIP = 200, t0, wire1, "127.0.0.2"
	apply(t, db, record.Batch{Sites: []record.SiteRecord{s}, Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200, Wire: wire1, IP: "127.0.0.2"}}})
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0.Add(time.Hour), Status: 304, Recrawl: true,
		Verdict: fetch.VerdictNotModified, Wire: wire2, IP: "127.0.0.3"}}})
	r := rawOpen(t, path)
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Fatalf("user_version %d after upgrade", v)
	}
	rows, err := r.Query("SELECT wire, ip FROM fetches WHERE url_id = 1 ORDER BY time")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got [][]byte
	var ips []string
	for rows.Next() {
		var w []byte
		var ip string
		if err := rows.Scan(&w, &ip); err != nil {
			t.Fatal(err)
		}
		got, ips = append(got, w), append(ips, ip)
	}
	if len(got) != 2 || string(got[0]) != string(wire1) || string(got[1]) != string(wire2) || ips[0] != "127.0.0.2" || ips[1] != "127.0.0.3" {
		t.Errorf("fetches kept %d wires, ips %v", len(got), ips)
	}
	sites, err := db.Sites(context.Background())
	if err != nil || len(sites) != 1 || string(sites[0].RobotsWire) != string(wire1) || sites[0].RobotsIP != "127.0.0.2" {
		t.Errorf("sites after upgrade: %+v, %v", sites, err)
	}
}
