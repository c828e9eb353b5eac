package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/dedup"
)

// Duplicate detection's decisions are kept for audit and come back after a
// restart: duplicates, rules with their evidence (learned, then withdrawn),
// soft 404s, the pages' fingerprints.
func TestDedupDecisions(t *testing.T) {
	db := openTest(t)
	rule := dedup.Rule{Kind: dedup.SwapPrefix, Origin: "http://s1.test", From: "/copy/", To: "/docs/", Supports: 3,
		Support: []dedup.Pair{{Copy: 4, Original: 1}, {Copy: 5, Original: 1 << 63}, {Copy: 6, Original: 3}}}
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
			{URL: 4, Site: 1, Fetched: t0.Add(1), Status: 200, Digest: 11, Simhash: 0xabc, MainSimhash: 0xab, NoURLSimhash: 0xcd, TitleHash: 1 << 63, TypeCheck: "html"},
		},
		Dups:  []engine.DupRecord{{URL: 4, Of: 1, Kind: "exact", Test: "digest", Similarity: 1, Time: t0}},
		Rules: []engine.RuleRecord{{Rule: rule, Time: t0}},
		Soft404s: []engine.Soft404Record{{Sig: dedup.Soft404Sig{Origin: "http://s1.test", Title: 1 << 63, Simhash: 0xdef, Of: 2,
			Evidence: []dedup.Pair{{Copy: 3, Original: 2}}}, Time: t0}},
	})
	withdrawn := rule
	withdrawn.Withdrawn, withdrawn.Contradictions, withdrawn.Covered = true, []dedup.Pair{{Copy: 6, Original: 3}}, 9
	apply(t, db, engine.Batch{Rules: []engine.RuleRecord{{Rule: withdrawn, Time: t0.Add(time.Second)}}})

	var fps []engine.FetchedPage
	if err := db.Fingerprints(context.Background(), func(p engine.FetchedPage) { fps = append(fps, p) }); err != nil {
		t.Fatal(err)
	}
	if len(fps) != 2 || fps[1].URL != 4 || fps[1].Digest != 11 || fps[1].Simhash != 0xabc || fps[1].Main != 0xab || fps[1].NoURL != 0xcd || fps[1].Title != 1<<63 ||
		fps[1].Addr != urls[3].URL || fps[1].Status != 200 {
		t.Errorf("fingerprints = %+v", fps)
	}
	rs, err := db.Rules(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Rule.Key() != rule.Key() || !slices.Equal(rs[0].Rule.Support, rule.Support) || !rs[0].Rule.Withdrawn ||
		!slices.Equal(rs[0].Rule.Contradictions, withdrawn.Contradictions) || rs[0].Rule.Covered != 9 || !rs[0].Time.Equal(t0.Add(time.Second)) {
		t.Errorf("rules = %+v", rs)
	}
	ss, err := db.Soft404s(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 || ss[0].Sig.Title != 1<<63 || ss[0].Sig.OfURL != urls[1].URL || len(ss[0].Sig.Evidence) != 1 || !ss[0].Time.Equal(t0) ||
		ss[0].Sig.Probe != 0 || ss[0].Sig.Withdrawn {
		t.Errorf("soft 404s = %+v", ss)
	}
	// A probe answered 404: the row says so, withdrawn.
	refuted := ss[0].Sig
	refuted.Probe, refuted.ProbeStatus, refuted.Withdrawn = 5, 404, true
	apply(t, db, engine.Batch{Soft404s: []engine.Soft404Record{{Sig: refuted, Time: t0.Add(time.Second)}}})
	if ss, err = db.Soft404s(context.Background()); err != nil || len(ss) != 1 || ss[0].Sig.Probe != 5 || ss[0].Sig.ProbeStatus != 404 || !ss[0].Sig.Withdrawn {
		t.Errorf("soft 404s after the probe = %+v, %v", ss, err)
	}
	r := rawOpen(t, db.Path())
	var kind, test string
	var of int64
	if err := r.QueryRow("SELECT of_id, kind, test FROM duplicates WHERE url_id = 4").Scan(&of, &kind, &test); err != nil || of != 1 || kind != "exact" || test != "digest" {
		t.Errorf("duplicate row: %d %s %s %v", of, kind, test, err)
	}
	// A rule leaves the queue as it is: 5 and 6, which it covers, are
	// dropped at their turn (and their canonical URLs followed).
	// states checks "state/skip_reason" of URLs by id.
	states := func(when string, want map[int64]string) {
		t.Helper()
		for id, w := range want {
			var state int
			var reason *string
			r.QueryRow("SELECT state, skip_reason FROM urls WHERE id = ?", id).Scan(&state, &reason)
			got := fmt.Sprintf("%d/", state)
			if reason != nil {
				got += *reason
			}
			if got != w {
				t.Errorf("%s, url %d: %s, want %s", when, id, got, w)
			}
		}
	}
	states("after the rule was learned", map[int64]string{2: "0/", 3: "0/", 5: "0/", 6: "0/", 4: "1/"})
	sites, err := db.Sites(context.Background())
	if err != nil || sites[0].Pending != 4 {
		t.Errorf("pending after the rule was learned = %d (%v), want 4", sites[0].Pending, err)
	}
	// 5 skipped under the rule and 6 for robots.txt; the rule withdrawn,
	// both are unskipped, and only 5 is queued again (as are 4, fetched,
	// and 2, queued: left as they are).
	apply(t, db, engine.Batch{Skips: []engine.Skip{{URL: 5, Reason: engine.SkipRule}, {URL: 6, Reason: "robots"}}})
	apply(t, db, engine.Batch{Unskips: []uint64{5, 6, 4, 2}})
	states("after unskip", map[int64]string{2: "0/", 5: "0/", 6: "2/robots", 4: "1/"})
	if sites, err := db.Sites(context.Background()); err != nil || sites[0].Pending != 3 {
		t.Errorf("pending after unskip = %d (%v), want 3", sites[0].Pending, err)
	}
	checkConsistent(t, r)
}
