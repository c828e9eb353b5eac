package storage

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"lidi/engine/dedup"
	"lidi/engine/record"
)

// orderBatches are two batches whose URL IDs (the engine's random
// fingerprints) come in no order, signed and unsigned, with a fetched
// page and its links, a URL skipped under a rule, and one queued.
func orderBatches() []record.Batch {
	ids := []uint64{0x9000000000000001, 7, 0xffff_0000_0000_0003, 3, 1 << 40, 5}
	rule := dedup.Rule{Kind: dedup.DropParam, Origin: "http://s1.test", Name: "sid"}
	var b1, b2 record.Batch
	b1.Sites = []record.SiteRecord{site(1)}
	for i, id := range ids {
		u := queued(id, 1, float64(i%2), int64(i+1))
		u.Parent = ids[0]
		if i == 5 {
			u.State, u.SkipReason, u.Rule = record.URLSkipped, record.SkipRule, rule.ID()
		}
		if i < 3 {
			b1.URLs = append(b1.URLs, u)
		} else {
			b2.URLs = append(b2.URLs, u)
		}
	}
	// Each batch fetches one of its URLs, whose links come in no order.
	b1.Pages = []record.PageRecord{{URL: ids[0], Site: 1, Fetched: t0, Status: 200, Digest: 11, Simhash: 12, ETag: `"e"`, Links: 2,
		Body: crashCompress([]byte("zero"))}}
	b1.Links = []record.Link{{From: ids[0], To: ids[2]}, {From: ids[0], To: ids[1]}}
	b2.Pages = []record.PageRecord{{URL: ids[3], Site: 1, Fetched: t0, Status: 404, Err: "", Body: crashCompress([]byte("three"))},
		{URL: ids[2], Site: 1, Fetched: t0, Status: 200, Links: 1, Body: crashCompress([]byte("two"))}}
	b2.Links = []record.Link{{From: ids[3], To: ids[0]}, {From: ids[2], To: ids[5]}}
	return []record.Batch{b1, b2}
}

// Rows of urls, page_links and pages are stored in the order they come
// (rowid), not by their random IDs: a crawl appends them (version 10).
// A URL is looked up by its ID through the ID's index; a page's body
// and links through the references on its URL's row, with no index of
// their own to keep (version 11).
func TestRowsAppendedInArrivalOrder(t *testing.T) {
	db := openTest(t)
	// Apply writes a page's links with its fetch, in the order of the
	// batch's pages; links without their page's fetch come after, in the
	// order of their pages' IDs (as signed integers).
	var arrived struct{ urls, links, bodies []int64 }
	for _, b := range orderBatches() {
		apply(t, db, b)
		for _, u := range b.URLs {
			arrived.urls = append(arrived.urls, int64(u.ID))
		}
		var rest []int64
		for _, l := range b.Links {
			if !slices.ContainsFunc(b.Pages, func(p record.PageRecord) bool { return p.URL == l.From }) {
				rest = append(rest, int64(l.From))
			}
		}
		for _, p := range b.Pages {
			if slices.ContainsFunc(b.Links, func(l record.Link) bool { return l.From == p.URL }) {
				arrived.links = append(arrived.links, int64(p.URL))
			}
			if p.Body != nil {
				arrived.bodies = append(arrived.bodies, int64(p.URL))
			}
		}
		slices.Sort(rest)
		arrived.links = append(arrived.links, slices.Compact(rest)...)
	}
	r := rawOpen(t, db.Path())
	for _, tc := range []struct {
		table, key, ref string
		want            []int64
	}{
		{"urls", "id", "", arrived.urls},
		{"page_links", "from_id", "links_id", arrived.links},
		{"pages", "url_id", "body_id", arrived.bodies},
	} {
		t.Run(tc.table, func(t *testing.T) {
			if got := int64Column(t, r, fmt.Sprintf("SELECT %s FROM %s ORDER BY rowid", tc.key, tc.table)); !slices.Equal(got, tc.want) {
				t.Errorf("%s in rowid order %x, want arrival order %x", tc.key, got, tc.want)
			}
			if pk := queryInt(t, r, "SELECT pk FROM pragma_table_info(?) WHERE name = ?", tc.table, tc.key); pk != 0 {
				t.Errorf("%s.%s is the primary key", tc.table, tc.key)
			}
			q := fmt.Sprintf("SELECT * FROM %s WHERE %s = 5", tc.table, tc.key)
			if tc.ref != "" {
				q = fmt.Sprintf("SELECT x.* FROM urls AS u JOIN %s AS x ON x.id = u.%s WHERE u.id = 5", tc.table, tc.ref)
				if n := queryInt(t, r, "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?", tc.table); n != 0 {
					t.Errorf("%s has %d indexes, want none", tc.table, n)
				}
			}
			plan := fmt.Sprint(dumpRows(t, r, "EXPLAIN QUERY PLAN "+q))
			if !strings.Contains(plan, "USING INDEX sqlite_autoindex_urls_1") || strings.Contains(plan, "SCAN") {
				t.Errorf("lookup by %s: plan %q", tc.key, plan)
			}
		})
	}
}

func int64Column(t *testing.T, r *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	rows, err := r.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// dumpRows reads every row of q as text, one string a row.
func dumpRows(t *testing.T, r *sql.DB, q string) []string {
	t.Helper()
	rows, err := r.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A version 9 file (urls and page_links keyed by their IDs) is upgraded to
// rows in arrival order: every row and column is kept, the file has the
// tables, indexes and views of a new one, the queue, rule skips, links
// and counters read as before, and new rows are appended after the old.
func TestUpgradeFromVersion9RowOrder(t *testing.T) {
	db := openTest(t)
	for _, b := range orderBatches() {
		apply(t, db, b)
	}
	path := db.Path()
	ctx := context.Background()
	queue, _, _, err := db.Head(ctx, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	dumps := []string{"SELECT " + urlsColumns + " FROM urls ORDER BY id", "SELECT from_id, to_ids FROM page_links ORDER BY from_id",
		"SELECT * FROM links ORDER BY from_id, to_id",
		// less the functions' names, which version 12 adds to a file of before with pages (TestUpgradeNamesTheFunctions)
		"SELECT * FROM meta WHERE key NOT IN ('dedup.word_hash', 'record.digest') ORDER BY key"}
	dump := func() [][]string {
		r := rawOpen(t, path)
		defer r.Close()
		var out [][]string
		for _, q := range dumps {
			out = append(out, dumpRows(t, r, q))
		}
		return out
	}
	before := dump()
	schemaOf := func(path string) []string {
		r := rawOpen(t, path)
		defer r.Close()
		return dumpRows(t, r, "SELECT type, name, tbl_name FROM sqlite_schema ORDER BY name")
	}
	fresh := schemaOf(openTest(t).Path())

	execRaw(t, path, append(slices.Clip(dropVersion10), "PRAGMA user_version = 9")...)
	if pk := queryInt(t, rawOpen(t, path), "SELECT pk FROM pragma_table_info('urls') WHERE name = 'id'"); pk != 1 {
		t.Fatal("the version 9 file's urls are not keyed by id")
	}
	db, r := openUpgraded(t, path)
	for i, d := range dump() {
		if !slices.Equal(d, before[i]) {
			t.Errorf("%s after the upgrade:\n%v\nwant\n%v", dumps[i], d, before[i])
		}
	}
	// An upgraded file keeps the unique index of pages.url_id, which a
	// new one has not (version 11).
	got := schemaOf(path)
	if i := slices.Index(got, "[{index true} {sqlite_autoindex_pages_1 true} {pages true}]"); i < 0 {
		t.Errorf("upgraded file without pages.url_id's unique index: %v", got)
	} else {
		got = slices.Delete(got, i, i+1)
	}
	if !slices.Equal(got, fresh) {
		t.Errorf("upgraded schema\n%v\nnew file's\n%v", got, fresh)
	}
	for _, tc := range []struct{ table, key string }{{"urls", "id"}, {"page_links", "from_id"}} {
		if pk := queryInt(t, r, "SELECT pk FROM pragma_table_info(?) WHERE name = ?", tc.table, tc.key); pk != 0 {
			t.Errorf("%s.%s is still the primary key", tc.table, tc.key)
		}
	}
	if got, _, _, err := db.Head(ctx, 1, 10); err != nil || !slices.EqualFunc(got, queue, func(a, b record.QueuedURL) bool { return a.ID == b.ID }) {
		t.Errorf("queue after the upgrade %+v, %v; want %+v", got, err, queue)
	}
	var skips []uint64
	if err := db.RuleSkipped(ctx, func(u record.RuleSkippedURL) { skips = append(skips, u.ID) }); err != nil || !slices.Equal(skips, []uint64{5}) {
		t.Errorf("rule skips after the upgrade %x, %v", skips, err)
	}
	// A new URL and a new page's links come after every old row.
	apply(t, db, record.Batch{URLs: []record.URLRecord{queued(2, 1, 0, 9)},
		Pages: []record.PageRecord{{URL: 1 << 40, Site: 1, Fetched: t0, Status: 200}}, Links: []record.Link{{From: 1 << 40, To: 2}}})
	for _, tc := range []struct {
		q    string
		want int64
	}{{"SELECT id FROM urls ORDER BY rowid DESC LIMIT 1", 2}, {"SELECT from_id FROM page_links ORDER BY rowid DESC LIMIT 1", 1 << 40}} {
		if got := int64Column(t, r, tc.q); !slices.Equal(got, []int64{tc.want}) {
			t.Errorf("%s = %v, want %d", tc.q, got, tc.want)
		}
	}
	checkConsistent(t, r)
}
