package storage

import (
	"context"
	"fmt"
	"testing"

	"lidi/engine"
)

// Duplicate detection's decisions are kept for audit and come back after a
// restart: duplicates, mirror labels with their evidence, the pages'
// fingerprints; a mirror's queued URLs are dropped with their reason.
func TestDedupDecisions(t *testing.T) {
	db := openTest(t)
	urls := []engine.URLRecord{}
	for i := uint64(1); i <= 6; i++ {
		u := queued(i, 1, 0, int64(i))
		u.URL = fmt.Sprintf("http://s1.test/%s/p%d.html", map[bool]string{true: "copy", false: "docs"}[i > 3], i)
		urls = append(urls, u)
	}
	apply(t, db, engine.Batch{Sites: []engine.SiteRecord{site(1)}, URLs: urls})
	apply(t, db, engine.Batch{
		Pages: []engine.PageRecord{
			{URL: 1, Site: 1, Fetched: t0, Status: 200, Digest: 11, Simhash: 0xabc, TypeCheck: "html"},
			{URL: 4, Site: 1, Fetched: t0.Add(1), Status: 200, Digest: 11, Simhash: 0xabc, TypeCheck: "html"},
		},
		Dups: []engine.DupRecord{{URL: 4, Of: 1, Kind: "exact", Test: "digest", Similarity: 1, Time: t0}},
		Mirrors: []engine.MirrorRecord{{Prefix: "http://s1.test/copy/", Of: "http://s1.test/docs/", Kind: "mirror",
			Rule: "3 duplicates", Evidence: []uint64{4, 1 << 63}, Time: t0}},
	})

	var fps []engine.FetchedPage
	if err := db.Fingerprints(context.Background(), func(p engine.FetchedPage) { fps = append(fps, p) }); err != nil {
		t.Fatal(err)
	}
	if len(fps) != 2 || fps[1].URL != 4 || fps[1].Digest != 11 || fps[1].Simhash != 0xabc || fps[1].Addr != urls[3].URL || fps[1].Status != 200 {
		t.Errorf("fingerprints = %+v", fps)
	}
	ms, err := db.Mirrors(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Prefix != "http://s1.test/copy/" || len(ms[0].Evidence) != 2 || ms[0].Evidence[1] != 1<<63 || !ms[0].Time.Equal(t0) {
		t.Errorf("mirrors = %+v", ms)
	}
	r := rawOpen(t, db.Path())
	var kind, test string
	var of int64
	if err := r.QueryRow("SELECT of_id, kind, test FROM duplicates WHERE url_id = 4").Scan(&of, &kind, &test); err != nil || of != 1 || kind != "exact" || test != "digest" {
		t.Errorf("duplicate row: %d %s %s %v", of, kind, test, err)
	}
	// A label leaves the queue as it is: 5 and 6, under the mirror, are
	// dropped by the robots at their turn (and their originals followed).
	for id, want := range map[int64]string{2: "0/", 3: "0/", 5: "0/", 6: "0/", 4: "1/"} {
		var state int
		var reason *string
		r.QueryRow("SELECT state, skip_reason FROM urls WHERE id = ?", id).Scan(&state, &reason)
		got := fmt.Sprintf("%d/", state)
		if reason != nil {
			got += *reason
		}
		if got != want {
			t.Errorf("url %d: %s, want %s", id, got, want)
		}
	}
	sites, err := db.Sites(context.Background())
	if err != nil || sites[0].Pending != 4 {
		t.Errorf("pending after the mirror was labelled = %d (%v), want 4", sites[0].Pending, err)
	}
}
