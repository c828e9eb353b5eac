package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"lidi/engine/fetch"
	"lidi/engine/record"
)

// referenceBatches follow orderBatches: the first page fetched again
// with another body and a link more (its links merged), a 304 for the
// second, the URL skipped fetched with a body and links (not the first
// fetch of a queued URL that Apply expects), and links of the third
// that come without its fetch (a held page's, released).
func referenceBatches() []record.Batch {
	ids := []uint64{0x9000000000000001, 7, 0xffff_0000_0000_0003, 3, 1 << 40, 5}
	return append(orderBatches(),
		record.Batch{Pages: []record.PageRecord{
			{URL: ids[0], Site: 1, Fetched: t0.Add(time.Hour), Status: 200, Recrawl: true, Verdict: fetch.VerdictChanged, Links: 3,
				Body: crashCompress([]byte("zero, changed"))},
			{URL: ids[2], Site: 1, Fetched: t0.Add(time.Hour), Status: 304, Recrawl: true, Verdict: fetch.VerdictNotModified},
			{URL: ids[5], Site: 1, Fetched: t0.Add(time.Hour), Status: 200, Links: 1, Body: crashCompress([]byte("five"))}},
			Links: []record.Link{{From: ids[0], To: ids[4]}, {From: ids[0], To: ids[1]}, {From: ids[5], To: ids[3]}}},
		record.Batch{Links: []record.Link{{From: ids[3], To: ids[1]}, {From: ids[3], To: ids[4]}}})
}

// readings are what the readers of a crawl file make of it: the store's
// own (Page, FetchedLinks), the web archive's (Captures) and a
// researcher's SQL of docs/schema.md, the old joins on url_id and
// from_id included.
func readings(t *testing.T, db *DB) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	r := rawOpen(t, db.Path())
	defer r.Close()
	for _, q := range []string{
		"SELECT from_id, to_id FROM links ORDER BY from_id, to_id",
		"SELECT u.url, p.body FROM pages p JOIN urls u ON u.id = p.url_id ORDER BY u.url",
		"SELECT u.url, p.body FROM urls u JOIN pages p ON p.id = u.body_id ORDER BY u.url",
		"SELECT from_id, to_ids FROM page_links ORDER BY from_id",
		"SELECT key, value FROM meta WHERE key LIKE 'count.%' ORDER BY key",
	} {
		out = append(out, q)
		out = append(out, dumpRows(t, r, q)...)
	}
	for _, id := range int64Column(t, r, "SELECT id FROM urls ORDER BY id") {
		body, err := db.Page(ctx, uint64(id))
		out = append(out, fmt.Sprintf("page %x: %q %v", uint64(id), body, err))
	}
	if err := db.FetchedLinks(ctx, func(page uint64, url string, links []uint64) {
		out = append(out, fmt.Sprintf("fetched links of %s: %x", url, links))
	}); err != nil {
		t.Fatal(err)
	}
	c, err := OpenCaptures(ctx, db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.URLs(ctx, func(u *CapturedURL) error {
		out = append(out, fmt.Sprintf("capture %s: %d fetches, body %q, links %q", u.URL, len(u.Fetches), u.Body, u.Links))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// A version 10 file is upgraded to version 11's references: every
// reader reads what it read before, the references name each body and
// each page's links, and a crawl goes on in the upgraded file (a
// refetch replaces the body its row names and merges its links).
func TestUpgradeFromVersion10References(t *testing.T) {
	db := openTest(t)
	for _, b := range referenceBatches() {
		apply(t, db, b)
	}
	path := db.Path()
	before := readings(t, db)
	checkConsistent(t, rawOpen(t, path))
	db.Close()

	execRaw(t, path, append(slices.Clip(dropVersion11), "PRAGMA user_version = 10")...)
	if n := queryInt(t, rawOpen(t, path), "SELECT count(*) FROM pragma_table_info('urls') WHERE name IN ('body_id', 'links_id')"); n != 0 {
		t.Fatal("the version 10 file has references")
	}
	db, r := openUpgraded(t, path)
	if got := readings(t, db); !slices.Equal(got, before) {
		t.Errorf("after the upgrade:\n%q\nwant\n%q", got, before)
	}
	checkConsistent(t, r)

	id := uint64(0xffff_0000_0000_0003)
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: id, Site: 1, Fetched: t0.Add(2 * time.Hour), Status: 200, Recrawl: true,
		Verdict: fetch.VerdictChanged, Links: 1, Body: crashCompress([]byte("two, changed"))}},
		Links: []record.Link{{From: id, To: 3}}})
	if body, err := db.Page(context.Background(), id); err != nil || string(body) != "two, changed" {
		t.Errorf("refetched page's body %q, %v", body, err)
	}
	if got := dumpRows(t, r, fmt.Sprintf("SELECT to_id FROM links WHERE from_id = %d ORDER BY to_id", int64(id))); len(got) != 2 {
		t.Errorf("refetched page's links %q, want its old one and the new", got)
	}
	checkConsistent(t, r)
}

// A page fetched again without being a recrawl, and a URL fetched twice
// in one batch, keep one body, the latest: on a new file, and on one
// upgraded from version 10, whose pages.url_id keeps its unique index.
func TestRefetchKeepsOneBody(t *testing.T) {
	for _, upgraded := range []bool{false, true} {
		t.Run(fmt.Sprintf("upgraded=%v", upgraded), func(t *testing.T) {
			db := openTest(t)
			apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(1, 1, 0, 1), queued(2, 1, 0, 2)},
				Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200, Body: crashCompress([]byte("one"))}}})
			if upgraded {
				path := db.Path()
				db.Close()
				execRaw(t, path, append(slices.Clip(dropVersion11), "PRAGMA user_version = 10")...)
				db, _ = openUpgraded(t, path)
			}
			apply(t, db, record.Batch{Pages: []record.PageRecord{
				{URL: 1, Site: 1, Fetched: t0.Add(time.Hour), Status: 200, Body: crashCompress([]byte("one again"))},
				{URL: 2, Site: 1, Fetched: t0.Add(time.Hour), Status: 200, Body: crashCompress([]byte("two")), Links: 1},
				{URL: 2, Site: 1, Fetched: t0.Add(time.Hour), Status: 200, Body: crashCompress([]byte("two again")), Links: 1}},
				Links: []record.Link{{From: 2, To: 1}}})
			for id, want := range map[uint64]string{1: "one again", 2: "two again"} {
				if body, err := db.Page(context.Background(), id); err != nil || string(body) != want {
					t.Errorf("page %d: %q, %v; want %q", id, body, err, want)
				}
			}
			checkConsistent(t, rawOpen(t, db.Path()))
		})
	}
}
