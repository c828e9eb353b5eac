package storage

import (
	"context"
	"reflect"
	"testing"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/record"
)

// A probe's answer moves its URL to state 3 and counts nowhere: not in
// pages, bytes, errors or URLs fetched, not in the fetch history; its
// fingerprints stay for detection.
func TestProbeKeptApart(t *testing.T) {
	db := openTest(t)
	probeURL := dedup.ProbeURL("http://s1.test/a.html")
	probe := record.URLRecord{ID: 2, Site: 1, URL: probeURL, Priority: -2, Seq: 2, Discovered: t0}
	apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{queued(1, 1, 0, 1), probe}})
	apply(t, db, record.Batch{Pages: []record.PageRecord{
		{URL: 1, Site: 1, Fetched: t0, Status: 200, Length: 100, Body: compress(t, []byte("page")), Simhash: 5},
		{URL: 2, Site: 1, Fetched: t0.Add(time.Second), Status: 404, Length: 40, Body: compress(t, []byte("probe")), Simhash: 7, Probe: true},
	}})
	c, err := db.Counters(context.Background())
	if err != nil || !reflect.DeepEqual(c, record.Counters{Pages: 1, Bytes: 100}) {
		t.Errorf("counters = %+v, %v; want the page's only", c, err)
	}
	r := rawOpen(t, db.Path())
	if n := queryInt(t, r, "SELECT count(*) FROM fetches WHERE url_id = 2"); n != 0 {
		t.Errorf("%d fetch history rows for the probe", n)
	}
	if st := queryInt(t, r, "SELECT state FROM urls WHERE id = 2"); st != int64(record.URLProbed) {
		t.Errorf("probe in state %d", st)
	}
	checkConsistent(t, r)
	var fp []record.FetchedPage
	if err := db.Fingerprints(context.Background(), func(p record.FetchedPage) { fp = append(fp, p) }); err != nil {
		t.Fatal(err)
	}
	if len(fp) != 2 || fp[1].URL != 2 || fp[1].Status != 404 || fp[1].Simhash != 7 {
		t.Errorf("fingerprints %+v; want the page's, then the probe's", fp)
	}
}

// A version 7 file recorded probes as pages: the upgrade moves them to
// state 3 and takes them out of the counters and the fetch history.
func TestUpgradeFromVersion7MovesProbes(t *testing.T) {
	db := openTest(t)
	byName := dedup.ProbeURL("http://s1.test/a.html")
	bySig := "http://s2.test/lidi-no-such-page-bad" // no probe's name, but a signature's probe
	apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1), site(2)}, URLs: []record.URLRecord{
		queued(1, 1, 0, 1), {ID: 2, Site: 1, URL: byName, Seq: 2, Discovered: t0}, {ID: 3, Site: 2, URL: bySig, Seq: 3, Discovered: t0},
		{ID: 4, Site: 1, URL: "http://s1.test/lidi-no-such-page-note.html", Seq: 4, Discovered: t0}}})
	pages := []record.PageRecord{
		{URL: 1, Site: 1, Fetched: t0, Status: 200, Length: 100},
		{URL: 2, Site: 1, Fetched: t0, Status: 404, Length: 40},
		{URL: 3, Site: 2, Fetched: t0, Status: 200, Length: 50},
		{URL: 4, Site: 1, Fetched: t0, Status: 500, Length: 10}, // a page of the site that looks like one: kept
	}
	apply(t, db, record.Batch{Pages: pages, Soft404s: []record.Soft404Record{{Sig: dedup.Soft404Sig{Origin: "http://s2.test", Of: 1, Probe: 3, ProbeStatus: 200}}}})
	apply(t, db, record.Batch{Pages: []record.PageRecord{{URL: 3, Site: 2, Fetched: t0.Add(time.Hour), Status: 200, Length: 50, Recrawl: true, Verdict: fetch.VerdictSameDigest},
		{URL: 1, Site: 1, Fetched: t0.Add(time.Hour), Status: 200, Length: 100, Recrawl: true, Verdict: fetch.VerdictSameDigest}}})
	db.Close()
	raw := rawOpenRW(t, db.Path())
	for _, q := range append(dropVersion8, "PRAGMA user_version = 7") {
		if _, err := raw.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	raw.Close()
	db, err := Open(db.Path(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Counters(context.Background())
	if want := (record.Counters{Pages: 3, Bytes: 210, Errors: 1, Recrawls: 1}); err != nil || !reflect.DeepEqual(c, want) {
		t.Errorf("counters after upgrade = %+v, %v; want %+v", c, err, want)
	}
	r := rawOpen(t, db.Path())
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Errorf("user_version %d", v)
	}
	if n := queryInt(t, r, "SELECT count(*) FROM urls WHERE state = 3 AND id IN (2, 3)"); n != 2 {
		t.Errorf("%d probes in state 3, want 2", n)
	}
	if n := queryInt(t, r, "SELECT count(*) FROM fetches WHERE url_id IN (2, 3)"); n != 0 {
		t.Errorf("%d fetch rows of probes left", n)
	}
	checkConsistent(t, r)
}
