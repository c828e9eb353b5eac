package storage

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/record"
)

// Duplicate detection's decisions are kept for audit and come back after a
// restart: duplicates, rules with their evidence (learned, then withdrawn),
// soft 404s, the pages' fingerprints.
func TestDedupDecisions(t *testing.T) {
	db := openTest(t)
	rule := dedup.Rule{Kind: dedup.SwapPrefix, Origin: "http://s1.test", From: "/copy/", To: "/docs/", Supports: 3,
		Support: []dedup.Pair{{Copy: 4, Original: 1}, {Copy: 5, Original: 1 << 63}, {Copy: 6, Original: 3}}, Prior: 3}
	rule.Choice.ByEvidence, rule.Choice.For[dedup.SignalCanonical], rule.Choice.Against[dedup.SignalNesting] = true, 4, 1
	urls := []record.URLRecord{}
	for i := uint64(1); i <= 6; i++ {
		u := queued(i, 1, 0, int64(i))
		u.URL = fmt.Sprintf("http://s1.test/%s/p%d.html", map[bool]string{true: "copy", false: "docs"}[i > 3], i)
		urls = append(urls, u)
	}
	apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: urls})
	apply(t, db, record.Batch{
		Pages: []record.PageRecord{
			{URL: 1, Site: 1, Fetched: t0, Status: 200, Digest: 11, Simhash: 0xabc, TypeCheck: "html"},
			{URL: 4, Site: 1, Fetched: t0.Add(1), Status: 200, Digest: 11, Simhash: 0xabc, MainSimhash: 0xab, NoURLSimhash: 0xcd, TitleHash: 1 << 63, TypeCheck: "html"},
		},
		Dups:  []record.DupRecord{{URL: 4, Of: 1, Kind: dedup.Exact, Test: "digest", Similarity: 1, Time: t0}},
		Rules: []record.RuleRecord{{Rule: rule, Time: t0}},
		Soft404s: []record.Soft404Record{{Sig: dedup.Soft404Sig{Origin: "http://s1.test", Title: 1 << 63, Simhash: 0xdef, Of: 2,
			Evidence: []dedup.Pair{{Copy: 3, Original: 2}}}, Time: t0}},
	})
	withdrawn := rule
	withdrawn.Withdrawn, withdrawn.Contradictions, withdrawn.Covered = true, []dedup.Pair{{Copy: 6, Original: 3}}, 9
	apply(t, db, record.Batch{Rules: []record.RuleRecord{{Rule: withdrawn, Time: t0.Add(time.Second)}}})

	var fps []record.FetchedPage
	if err := db.Fingerprints(context.Background(), func(p record.FetchedPage) { fps = append(fps, p) }); err != nil {
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
		!slices.Equal(rs[0].Rule.Contradictions, withdrawn.Contradictions) || rs[0].Rule.Covered != 9 || !rs[0].Time.Equal(t0.Add(time.Second)) ||
		rs[0].Rule.Choice != rule.Choice || rs[0].Rule.Prior != 3 {
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
	apply(t, db, record.Batch{Soft404s: []record.Soft404Record{{Sig: refuted, Time: t0.Add(time.Second)}}})
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
	// 5 skipped under the rule and 6 for robots.txt, 7 found under the
	// rule and 8 under another; the rule withdrawn, only what it skipped
	// (5 and 7) is queued again, in the same batch as 9, skipped under
	// it just before.
	other := dedup.Rule{Kind: dedup.DropParam, Origin: "http://s1.test", Name: "sid"}
	found := func(id uint64, by *dedup.Rule) record.URLRecord {
		u := queued(id, 1, 0, int64(id))
		u.State, u.SkipReason, u.Rule = record.URLSkipped, record.SkipRule, by.ID()
		return u
	}
	apply(t, db, record.Batch{URLs: []record.URLRecord{found(7, &rule), found(8, &other), queued(9, 1, 0, 9)},
		Skips: []record.Skip{{URL: 5, Reason: record.SkipRule, Rule: rule.ID()}, {URL: 6, Reason: "robots"}}})
	skipped := func() []record.RuleSkippedURL {
		t.Helper()
		var out []record.RuleSkippedURL
		if err := db.RuleSkipped(context.Background(), func(u record.RuleSkippedURL) { out = append(out, u) }); err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(out, func(a, b record.RuleSkippedURL) int { return int(a.ID) - int(b.ID) })
		return out
	}
	got := skipped()
	want := []record.RuleSkippedURL{{ID: 5, URL: "http://s1.test/copy/p5.html", Site: 1, Rule: rule.ID()},
		{ID: 7, URL: queued(7, 1, 0, 7).URL, Site: 1, Rule: rule.ID()}, {ID: 8, URL: queued(8, 1, 0, 8).URL, Site: 1, Rule: other.ID()}}
	if !slices.Equal(got, want) {
		t.Errorf("rule skips = %+v; want %+v", got, want)
	}
	// A researcher joins a skip with its rule on rules.hash.
	if n := queryInt(t, r, "SELECT count(*) FROM urls u JOIN rules r ON r.hash = u.skip_rule WHERE r.key = ?", rule.Key()); n != 2 {
		t.Errorf("%d URLs joined with the rule that skipped them, want 2", n)
	}
	apply(t, db, record.Batch{Skips: []record.Skip{{URL: 9, Reason: record.SkipRule, Rule: rule.ID()}}, UnskipRules: []uint64{rule.ID()}})
	states("after unskip", map[int64]string{2: "0/", 5: "0/", 6: "2/robots", 4: "1/", 7: "0/", 8: "2/rule", 9: "0/"})
	if sites, err := db.Sites(context.Background()); err != nil || sites[0].Pending != 5 {
		t.Errorf("pending after unskip = %d (%v), want 5", sites[0].Pending, err)
	}
	if got := skipped(); len(got) != 1 || got[0].Rule != other.ID() {
		t.Errorf("rule skips after unskip = %+v; want only the other rule's", got)
	}
	// One URL queued again by itself (its canonical URL answered 404):
	// only a URL skipped under a rule moves, not one robots.txt forbids.
	apply(t, db, record.Batch{Unskips: []uint64{8, 6}})
	states("after the URL's unskip", map[int64]string{6: "2/robots", 8: "0/"})
	if sites, err := db.Sites(context.Background()); err != nil || sites[0].Pending != 6 {
		t.Errorf("pending after the URL's unskip = %d (%v), want 6", sites[0].Pending, err)
	}
	checkConsistent(t, r)
}

// The links of pages held for a probe's answer are kept until a batch
// releases them, across a restart, with what the pages' records say.
func TestHeldLinks(t *testing.T) {
	db := openTest(t)
	page := queued(1, 1, 2, 1)
	page.Depth = 2
	apply(t, db, record.Batch{Sites: []record.SiteRecord{site(1)}, URLs: []record.URLRecord{page, queued(2, 1, -2, 2), queued(3, 1, -2, 3), queued(4, 1, 1, 4)}})
	apply(t, db, record.Batch{
		Pages: []record.PageRecord{{URL: 1, Site: 1, Fetched: t0, Status: 200, Digest: 5, Simhash: 6, NoURLSimhash: 7, TitleHash: 1 << 63, Redirect: "http://s1.test/r"},
			{URL: 4, Site: 1, Fetched: t0, Status: 200, Digest: 8}},
		Holds: []record.HeldLinks{{Probe: 2, Page: 1, Links: []string{"http://s1.test/a", "http://s1.test/b?x=1"}}, {Probe: 3, Page: 1}, {Probe: 2, Page: 4}},
	})
	path := db.Path()
	db.Close()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	held, err := db.Held(context.Background())
	want := []record.HeldLinks{
		{Probe: 2, Page: 1, Links: []string{"http://s1.test/a", "http://s1.test/b?x=1"}, URL: page.URL, Depth: 2, Redirect: "http://s1.test/r", Simhash: 6, NoURL: 7, Title: 1 << 63},
		{Probe: 2, Page: 4, URL: queued(4, 1, 1, 4).URL, Depth: 1},
		{Probe: 3, Page: 1, URL: page.URL, Depth: 2, Redirect: "http://s1.test/r", Simhash: 6, NoURL: 7, Title: 1 << 63},
	}
	if err != nil || !reflect.DeepEqual(held, want) {
		t.Errorf("held = %+v, %v; want %+v", held, err, want)
	}
	// The page joins the link graph when its links are decided.
	graphed := func() int {
		n := 0
		if err := db.FetchedLinks(context.Background(), func(uint64, string, []uint64) { n++ }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := graphed(); n != 0 {
		t.Errorf("%d pages in the link graph while the page's links are held", n)
	}
	apply(t, db, record.Batch{Releases: []uint64{2, 3}})
	if held, err := db.Held(context.Background()); err != nil || len(held) != 0 {
		t.Errorf("held after release = %+v, %v", held, err)
	}
	if n := graphed(); n != 2 {
		t.Errorf("%d pages in the link graph once the links are decided, want 2", n)
	}
}

// A file of version 6 gets the rules' choices and priors; a rule
// written before has none.
func TestUpgradeFromVersion6Rules(t *testing.T) {
	db, path := olderFile(t, append(slices.Clone(dropVersion7), "PRAGMA user_version = 6")...)
	rule := dedup.Rule{Kind: dedup.SwapHost, Origin: "http://s1.test", To: "http://s2.test", Supports: 3, Prior: 3}
	rule.Choice.ByEvidence, rule.Choice.For[dedup.SignalMirrorNote] = true, 2
	apply(t, db, record.Batch{Rules: []record.RuleRecord{{Rule: rule, Time: t0}}})
	r := rawOpen(t, path)
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Errorf("user_version %d after upgrade", v)
	}
	rs, err := db.Rules(context.Background())
	if err != nil || len(rs) != 1 || rs[0].Rule.Choice != rule.Choice || rs[0].Rule.Prior != 3 {
		t.Errorf("rules = %+v, %v", rs, err)
	}
}

// A file of version 4 gets the rule of each skip and the held links.
func TestUpgradeFromVersion4(t *testing.T) {
	db, path := olderFile(t, append(dropVersion5, "PRAGMA user_version = 4")...)
	rule := dedup.Rule{Kind: dedup.SortParams, Origin: "http://s1.test"}
	apply(t, db, record.Batch{Skips: []record.Skip{{URL: 1, Reason: record.SkipRule, Rule: rule.ID()}},
		Holds: []record.HeldLinks{{Probe: 1, Page: 1, Links: []string{"http://s1.test/a"}}}})
	r := rawOpen(t, path)
	if v := queryInt(t, r, "PRAGMA user_version"); v != SchemaVersion {
		t.Errorf("user_version %d after upgrade", v)
	}
	var skips []record.RuleSkippedURL
	if err := db.RuleSkipped(context.Background(), func(u record.RuleSkippedURL) { skips = append(skips, u) }); err != nil || len(skips) != 1 || skips[0].Rule != rule.ID() {
		t.Errorf("rule skips after upgrade = %+v, %v", skips, err)
	}
	if held, err := db.Held(context.Background()); err != nil || len(held) != 1 {
		t.Errorf("held links after upgrade = %+v, %v", held, err)
	}
	checkConsistent(t, r)
}
