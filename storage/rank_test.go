package storage

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/frontier"
	"lidi/engine/record"
)

func TestPrioritiesReorderTheQueue(t *testing.T) {
	db := openTest(t)
	b := record.Batch{Sites: []record.SiteRecord{site(1)}}
	for i := uint64(1); i <= 4; i++ {
		b.URLs = append(b.URLs, queued(i, 1, frontier.Held, int64(i)))
	}
	apply(t, db, b)
	// 3 and 1 leave Held, 2 is fetched first: its new priority is ignored.
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 2, Site: 1, Fetched: t0, Status: 200}}})
	apply(t, db, record.Batch{Priorities: []record.PriorityUpdate{{URL: 3, Priority: -0.5}, {URL: 1, Priority: -0.25}, {URL: 2, Priority: -1}}})
	urls, next, more, err := db.Head(context.Background(), 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for _, q := range urls {
		got = append(got, q.ID)
	}
	if len(got) != 3 || got[0] != 3 || got[1] != 1 || got[2] != 4 || urls[2].Priority != frontier.Held {
		t.Errorf("head %v (priorities %v), want 3 1 4 with 4 Held", got, urls)
	}
	if more || next != 0 {
		t.Errorf("next %v more %v after the whole queue", next, more)
	}
	r := rawOpen(t, db.path)
	if p := queryOne[float64](t, r, "SELECT priority FROM urls WHERE id = 2"); p != frontier.Held {
		t.Errorf("fetched URL's priority changed to %v", p)
	}
	if !math.IsInf(queryOne[float64](t, r, "SELECT priority FROM urls WHERE id = 4"), 1) {
		t.Error("Held is not stored as +Inf")
	}
}

func TestRanksKeepTheLatest(t *testing.T) {
	db := openTest(t)
	t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
	apply(t, db, record.Batch{
		Ranks:    []record.RankRecord{{URL: 7, Rank: 0.6, Time: t1}, {URL: 8, Rank: 0.4, Time: t1}},
		RankRuns: []record.RankRun{{Time: t1, Pages: 1, Nodes: 2, Edges: 1, Iterations: 9, Coverage: 0.6, Oracle: -1, Ranks: true}},
	})
	// A later run without ranks, then one whose ranks come in two batches.
	apply(t, db, record.Batch{RankRuns: []record.RankRun{{Time: t2, Pages: 2, Nodes: 3, Coverage: 0.7, Oracle: 0.5}}})
	apply(t, db, record.Batch{Ranks: []record.RankRecord{{URL: 7, Rank: 0.5, Time: t2}}})
	apply(t, db, record.Batch{Ranks: []record.RankRecord{{URL: 9, Rank: 0.2, Time: t2}},
		RankRuns: []record.RankRun{{Time: t2, Pages: 2, Nodes: 3, Coverage: 0.7, Oracle: 0.5, Ranks: true}}})
	r := rawOpen(t, db.path)
	if n := queryInt(t, r, "SELECT count(*) FROM pagerank"); n != 3 {
		t.Errorf("%d ranks, want 3 (one per URL)", n)
	}
	if v := queryOne[float64](t, r, "SELECT rank FROM pagerank WHERE url_id = 7"); v != 0.5 {
		t.Errorf("URL 7 rank %v, want the latest 0.5", v)
	}
	if v := queryInt(t, r, "SELECT computed_at FROM pagerank WHERE url_id = 8"); v != t1.UnixMilli() {
		t.Errorf("URL 8 computed_at %d, want the first run's", v)
	}
	if n := queryInt(t, r, "SELECT count(*) FROM rank_runs"); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
	if v := queryInt(t, r, "SELECT ranks FROM rank_runs WHERE computed_at = ?", t2.UnixMilli()); v != 1 {
		t.Error("second run's record not replaced by the complete one")
	}
	if v := queryInt(t, r, "SELECT count(*) FROM rank_runs WHERE oracle IS NULL"); v != 1 {
		t.Errorf("%d runs without oracle, want 1 (Oracle -1 is NULL)", v)
	}
	// The coverage curve a resumed crawl starts from.
	cov, err := db.CoverageHistory(context.Background())
	want := []record.CoveragePoint{{Pages: 1, Coverage: 0.6, Oracle: -1}, {Pages: 2, Coverage: 0.7, Oracle: 0.5}}
	if err != nil || !slices.Equal(cov, want) {
		t.Errorf("CoverageHistory = %v, %v; want %v", cov, err, want)
	}
}

// olderFile writes a file with one site and one URL, turns it into an
// older version with stmts, and opens it again (which upgrades it).
func olderFile(t *testing.T, stmts ...string) (*DB, string) {
	t.Helper()
	db := openTest(t)
	apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(1, 1, 0, 1)}})
	db.Close()
	path := db.Path()
	execRaw(t, path, stmts...)
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// execRaw runs stmts on the file at path, closed by lidi, outside it.
func execRaw(t *testing.T, path string, stmts ...string) {
	t.Helper()
	raw := rawOpenRW(t, path)
	defer raw.Close()
	for _, q := range stmts {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
}

// openUpgraded opens the file at path, which upgrades it, and checks
// that it is now of SchemaVersion.
func openUpgraded(t *testing.T, path string) (*DB, *sql.DB) {
	t.Helper()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := rawOpen(t, path)
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Fatalf("user_version %d after upgrade, want %d", v, SchemaVersion)
	}
	return db, r
}

func TestUpgradeFromVersion1(t *testing.T) {
	// A version 1 file: no PageRank tables, nor version 3's.
	db, path := olderFile(t, append(dropVersion3, "DROP TABLE pagerank", "DROP TABLE rank_runs", "PRAGMA user_version = 1")...)
	apply(t, db, record.Batch{Ranks: []record.RankRecord{{URL: 1, Rank: 1, Time: t0}}})
	r := rawOpen(t, path)
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Errorf("user_version %d after upgrade", v)
	}
	if n := queryInt(t, r, "SELECT count(*) FROM pagerank"); n != 1 {
		t.Errorf("%d ranks after upgrade", n)
	}
	if n := queryInt(t, r, "SELECT count(*) FROM urls"); n != 1 {
		t.Errorf("%d URLs kept", n)
	}
}

// A file of version 2 keeps its mirror labels when upgraded, and gets the
// rules and fingerprints of version 3.
func TestUpgradeKeepsMirrors(t *testing.T) {
	db, path := olderFile(t, append(dropVersion3, "PRAGMA user_version = 2",
		`INSERT INTO mirrors (prefix, of_prefix, kind) VALUES ('http://a.test/b/', 'http://a.test/', 'loop')`)...)
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200, Digest: 5, Simhash: 6, MainSimhash: 7, NoURLSimhash: 9, TitleHash: 8}},
		Rules: []record.RuleRecord{{Rule: dedup.Rule{Kind: dedup.SortParams, Origin: "http://a.test", Supports: 3}, Time: t0}}})
	r := rawOpen(t, path)
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Errorf("user_version %d after upgrade", v)
	}
	if v := queryInt(t, r, "SELECT main_simhash + nourl_simhash + title_hash FROM urls WHERE id = 1"); v != 24 {
		t.Errorf("fingerprints after upgrade: %d", v)
	}
	if n := queryInt(t, r, "SELECT count(*) FROM rules"); n != 1 {
		t.Errorf("%d rules after upgrade", n)
	}
	if n := queryInt(t, r, "SELECT count(*) FROM mirrors"); n != 1 {
		t.Errorf("the version 2 labels were not kept: %d", n)
	}
}

func TestFetchedLinks(t *testing.T) {
	db := openTest(t)
	b := record.Batch{Sites: []record.SiteRecord{site(1)}}
	for i := uint64(1); i <= 4; i++ {
		b.URLs = append(b.URLs, queued(i, 1, 0, int64(i)))
	}
	b.Pages = []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200}, {URL: 3, Site: 1, Fetched: t0, Status: 404}}
	b.Links = []record.Link{{From: 1, To: 2}, {From: 1, To: 3}, {From: 1, To: 2}}
	apply(t, db, b)
	got := map[uint64][]uint64{}
	urls := map[uint64]string{}
	err := db.FetchedLinks(context.Background(), func(page uint64, url string, links []uint64) {
		got[page] = append([]uint64(nil), links...)
		urls[page] = url
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[1]) != 2 || got[1][0] != 2 || got[1][1] != 3 || len(got[3]) != 0 {
		t.Errorf("fetched links %v, want 1 -> 2 3 and 3 -> nothing", got)
	}
	if urls[1] != queued(1, 1, 0, 1).URL {
		t.Errorf("page 1's URL %q", urls[1])
	}
}

// A version 8 file (links one row a link) is upgraded to one row a page:
// every link is kept, each page's targets in ascending order (as signed
// integers, SQL's order), the view links reads as the table did, and the
// counter still counts them; links added later merge with the moved ones.
func TestUpgradeFromVersion8Links(t *testing.T) {
	db := openTest(t)
	big := uint64(1<<63 | 5) // negative as SQL's integer
	b := record.Batch{Sites: []record.SiteRecord{site(1)}}
	for _, id := range []uint64{1, 2, 3, big} {
		b.URLs = append(b.URLs, queued(id, 1, 0, int64(id%100)))
	}
	b.Pages = []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200}, {URL: big, Site: 1, Fetched: t0, Status: 200}}
	b.Links = []record.Link{{From: 1, To: 3}, {From: 1, To: big}, {From: 1, To: 2}, {From: big, To: 1}, {From: 1, To: 3}}
	apply(t, db, b)
	db.Close()
	path := db.Path()
	execRaw(t, path, append(slices.Clip(dropVersion9), "PRAGMA user_version = 8")...)
	if n := queryInt(t, rawOpen(t, path), "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'links'"); n != 1 {
		t.Fatal("the version 8 file has no links table")
	}
	db, r := openUpgraded(t, path)
	var ids string
	if err := r.QueryRow("SELECT to_ids FROM page_links WHERE from_id = 1").Scan(&ids); err != nil || ids != fmt.Sprintf("[%d,2,3]", int64(big)) {
		t.Errorf("page 1's to_ids %q, %v", ids, err)
	}
	links := func() []record.Link {
		rows, err := r.Query("SELECT from_id, to_id FROM links ORDER BY from_id, to_id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []record.Link
		for rows.Next() {
			var f, to int64
			if err := rows.Scan(&f, &to); err != nil {
				t.Fatal(err)
			}
			out = append(out, record.Link{From: uint64(f), To: uint64(to)})
		}
		return out
	}
	want := []record.Link{{From: big, To: 1}, {From: 1, To: big}, {From: 1, To: 2}, {From: 1, To: 3}}
	if got := links(); !slices.Equal(got, want) {
		t.Errorf("links after upgrade %v, want %v", got, want)
	}
	got := map[uint64][]uint64{}
	if err := db.FetchedLinks(context.Background(), func(page uint64, _ string, l []uint64) { got[page] = slices.Clone(l) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got[1], []uint64{big, 2, 3}) || !slices.Equal(got[big], []uint64{1}) {
		t.Errorf("fetched links after upgrade %v", got)
	}
	// A refetch of page 1 finds a new link and one it had.
	apply(t, db, record.Batch{Links: []record.Link{{From: 1, To: 2}, {From: 1, To: 4}}})
	want = append(want, record.Link{From: 1, To: 4})
	if got := links(); !slices.Equal(got, want) {
		t.Errorf("links after a refetch %v, want %v", got, want)
	}
	st, err := db.Stats(context.Background())
	if err != nil || st.Links != 5 {
		t.Errorf("links counted %d, %v; want 5", st.Links, err)
	}
	checkConsistent(t, r)
}

// FetchedLinks reads urls in the order its rows are stored: in ID order it
// would look up every row through the ID index, at random places of the
// table (five to ten times slower at a resume, found in review).
func TestFetchedLinksReadsInTableOrder(t *testing.T) {
	db := openTest(t)
	r := rawOpen(t, db.Path())
	plan := strings.Join(dumpRows(t, r, "EXPLAIN QUERY PLAN "+sqlFetchedLinks), "\n")
	if strings.Contains(plan, "USING INDEX sqlite_autoindex_urls") || strings.Contains(plan, "USE TEMP B-TREE FOR ORDER BY") {
		t.Errorf("FetchedLinks' plan reads urls through its ID index or sorts:\n%s", plan)
	}
}
