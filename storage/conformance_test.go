package storage

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/record"
)

// conformStore is what the conformance test reads of a store: Store and
// the optional interfaces record.MemStore implements.
type conformStore interface {
	record.Store
	record.LinkLoader
	record.CoverageLoader
	record.RecrawlStore
	record.DupCounter
}

// headRead is one Head answer, with the copy as a value so that two
// answers compare.
type headRead struct {
	Site     int64
	N        int
	URLs     []record.QueuedURL // Copy moved to Copies
	Copies   []fetch.Copy       // per URL; the zero Copy for none
	HasCopy  []bool
	Next     float64
	More     bool
	NoneNil  bool // no URLs, and the slice is nil
	Returned int
}

type fetchedLinks struct {
	Page  uint64
	URL   string
	Links []uint64
}

// storeRead is every answer of every read method, in an order the
// contract fixes (sorted where it leaves the order open).
type storeRead struct {
	Sites       []record.SiteRecord
	URLs        []uint64
	Counters    record.Counters
	Fingerprint []record.FetchedPage
	Rules       []record.RuleRecord
	Soft404s    []record.Soft404Record
	RuleSkipped []record.RuleSkippedURL
	Held        []record.HeldLinks
	Heads       []headRead
	Links       []fetchedLinks
	Coverage    []record.CoveragePoint
	Recrawl     []record.RecrawlURL
	Channels    []record.ChannelRecord
	DupCounts   record.DupCounts
}

func readAll(t *testing.T, s conformStore, sites []int64) storeRead {
	t.Helper()
	ctx := context.Background()
	var r storeRead
	var err error
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%T.%s: %v", s, what, err)
		}
	}
	r.Sites, err = s.Sites(ctx)
	must("Sites", err)
	for i := range r.Sites { // an empty body reads back as nil from the file
		if len(r.Sites[i].RobotsBody) == 0 {
			r.Sites[i].RobotsBody = nil
		}
	}
	must("URLFingerprints", s.URLFingerprints(ctx, func(id uint64) { r.URLs = append(r.URLs, id) }))
	slices.Sort(r.URLs)
	r.Counters, err = s.Counters(ctx)
	must("Counters", err)
	must("Fingerprints", s.Fingerprints(ctx, func(p record.FetchedPage) { r.Fingerprint = append(r.Fingerprint, p) }))
	r.Rules, err = s.Rules(ctx)
	must("Rules", err)
	r.Soft404s, err = s.Soft404s(ctx)
	must("Soft404s", err)
	must("RuleSkipped", s.RuleSkipped(ctx, func(u record.RuleSkippedURL) { r.RuleSkipped = append(r.RuleSkipped, u) }))
	slices.SortFunc(r.RuleSkipped, func(a, b record.RuleSkippedURL) int { return compareU64(a.ID, b.ID) })
	r.Held, err = s.Held(ctx)
	must("Held", err)
	for _, site := range sites {
		for _, n := range []int{-1, 0, 1, 2, 100} {
			urls, next, more, err := s.Head(ctx, site, n)
			must("Head", err)
			h := headRead{Site: site, N: n, Next: next, More: more, NoneNil: urls == nil, Returned: len(urls)}
			for _, q := range urls {
				c, has := fetch.Copy{}, q.Copy != nil
				if has {
					c = *q.Copy
				}
				q.Copy = nil
				h.URLs, h.Copies, h.HasCopy = append(h.URLs, q), append(h.Copies, c), append(h.HasCopy, has)
			}
			r.Heads = append(r.Heads, h)
		}
	}
	must("FetchedLinks", s.FetchedLinks(ctx, func(page uint64, url string, links []uint64) {
		var l []uint64 // nil for none, whichever page comes first
		if len(links) > 0 {
			l = slices.Clone(links)
			slices.Sort(l)
		}
		r.Links = append(r.Links, fetchedLinks{page, url, l})
	}))
	slices.SortFunc(r.Links, func(a, b fetchedLinks) int { return compareU64(a.Page, b.Page) }) // no promised order
	r.Coverage, err = s.CoverageHistory(ctx)
	must("CoverageHistory", err)
	r.DupCounts, err = s.DupCounts(ctx)
	must("DupCounts", err)
	must("RecrawlURLs", s.RecrawlURLs(ctx, func(u record.RecrawlURL) { r.Recrawl = append(r.Recrawl, u) }))
	slices.SortFunc(r.Recrawl, func(a, b record.RecrawlURL) int { return compareU64(a.ID, b.ID) })
	r.Channels, err = s.Channels(ctx)
	must("Channels", err)
	return r
}

func compareU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// diffReads reports each read whose answers differ.
func diffReads(t *testing.T, when string, db, mem storeRead) {
	t.Helper()
	a, b := reflect.ValueOf(db), reflect.ValueOf(mem)
	for i := range a.NumField() {
		if !reflect.DeepEqual(a.Field(i).Interface(), b.Field(i).Interface()) {
			t.Errorf("%s: %s differ:\nstorage.DB:       %+v\nrecord.MemStore:  %+v",
				when, a.Type().Field(i).Name, a.Field(i).Interface(), b.Field(i).Interface())
		}
	}
}

// Conformance IDs: some above math.MaxInt64, which the file keeps as
// negative numbers, so that orders by ID are tested as the file sorts.
const (
	cA uint64 = 0x1000 + iota
	cB
	cC
	cD
	cE
	cF
	cG
	cH
	cI
	cJ
	cK
	cHigh  uint64 = 0x8000_0000_0000_0001
	cHigh2 uint64 = 0xffff_ffff_ffff_fff0
	cProbe uint64 = 0x2000
	cNone  uint64 = 0x9999 // never recorded
)

// conformRule builds a rule of origin o on parameter name.
func conformRule(o, name string, withdrawn bool) dedup.Rule {
	r := dedup.Rule{Kind: dedup.DropParam, Origin: o, Name: name, Supports: 2,
		Support: []dedup.Pair{{Copy: cA, Original: cB}, {Copy: cHigh, Original: cC}}, Withdrawn: withdrawn}
	if withdrawn {
		r.Contradictions = []dedup.Pair{{Copy: cD, Original: cE}}
		r.Covered = 3
	}
	return r
}

// TestMemStoreConforms applies the same batches to storage.DB and
// record.MemStore and compares every read method's answers after each, and
// after the file is closed and opened again.
func TestMemStoreConforms(t *testing.T) {
	t.Parallel()
	// Sub-millisecond times: both keep milliseconds.
	at := func(s int) time.Time { return t0.Add(time.Duration(s)*time.Second + 123456*time.Nanosecond) }
	rule1 := conformRule("http://s1.test", "sid", false)
	rule2 := conformRule("http://s1.test", "ref", false)
	rule1w := conformRule("http://s1.test", "sid", true)
	ruleLate := conformRule("http://s2.test", "x", true) // first recorded withdrawn
	u := func(id uint64, site int64, prio float64, seq int64) record.URLRecord {
		r := queued(id, site, prio, seq)
		r.Discovered = at(0)
		return r
	}
	skipped := func(r record.URLRecord, reason record.SkipReason, rule uint64) record.URLRecord {
		r.State, r.SkipReason, r.Rule = record.URLSkipped, reason, rule
		return r
	}
	page := func(id uint64, site int64, s, status int) record.PageRecord {
		return record.PageRecord{URL: id, Site: site, Fetched: at(s), Status: status, ContentType: "text/html",
			Length: int64(100 * status), Digest: id * 3, Simhash: id * 5, MainSimhash: id * 7, NoURLSimhash: id * 11,
			TitleHash: id * 13, ETag: fmt.Sprintf(`"e%x"`, id), LastModified: "Mon, 02 Jan 2026 15:04:05 GMT",
			Body: compress(t, []byte("body")), Links: 2}
	}
	site1 := site(1)
	site1.RobotsStatus, site1.RobotsBody, site1.RobotsFetched = 200, []byte("User-agent: *\nDisallow: /x\n"), at(1)
	site1.NextVisit, site1.Addr, site1.Fetched = at(2), "127.0.0.1", 3
	site1.RobotsURL, site1.RobotsEnd = "https://www.s1.test/robots.txt", fetch.ChainAnswered
	site1.RobotsRedirects = []fetch.Hop{{URL: "http://s1.test/robots.txt", Status: 301}, {URL: "https://s1.test/robots.txt", Status: 308}}
	site2 := site(2)
	site2.RobotsBody = []byte{}                                                     // an empty robots.txt
	site2.RobotsURL, site2.RobotsEnd = "http://s2.test/robots.txt", fetch.ChainLoop // a loop ends on a redirect
	site2moved := site2
	site2moved.Key, site2moved.Failures, site2moved.Parked = "http://s2b.test", 4, true

	refetch304 := page(cA, 1, 40, 304)
	refetch304.Recrawl, refetch304.Verdict, refetch304.ETag, refetch304.LastModified = true, fetch.VerdictNotModified, "", ""
	refetchErr := page(cC, 1, 41, 0)
	refetchErr.Recrawl, refetchErr.Err = true, "dns"
	refetchChanged := page(cHigh, 2, 42, 200)
	refetchChanged.Recrawl, refetchChanged.Verdict, refetchChanged.Digest, refetchChanged.ETag = true, fetch.VerdictChanged, 77, ""
	listed := u(cI, 1, 4, 11)
	listed.LastMod = at(-3600) // a sitemap's <lastmod>
	probe := page(cProbe, 1, 8, 404)
	probe.Probe = true
	soft := record.Soft404Record{Sig: dedup.Soft404Sig{Origin: "http://s1.test", Title: 9, Simhash: 10, Of: cA, OfURL: "ignored",
		Evidence: []dedup.Pair{{Copy: cB, Original: cC}}, ProbeStatus: 200}, Time: at(12)}
	soft2 := soft
	soft2.Sig.Origin, soft2.Sig.Of, soft2.Sig.Probe, soft2.Sig.ProbeStatus, soft2.Sig.Evidence = "http://s2.test", cNone, cProbe, 404, nil
	soft2.Time = time.Time{}
	softWithdrawn := soft
	softWithdrawn.Sig.Probe, softWithdrawn.Sig.ProbeStatus, softWithdrawn.Sig.Withdrawn, softWithdrawn.Time = cProbe, 404, true, at(30)

	steps := []struct {
		name    string
		batch   record.Batch
		cancel  bool // apply with a cancelled context
		wantErr bool
	}{
		{name: "empty batch"},
		{name: "discover", batch: record.Batch{
			Sites: []record.SiteRecord{site1, site2},
			URLs: []record.URLRecord{
				u(cA, 1, 0, 1), u(cB, 1, 1, 2), u(cC, 1, 1, 3), u(cD, 1, 0.5, 4), u(cE, 1, 2, 5),
				u(cHigh, 2, 0, 6), u(cHigh2, 2, 0, 7), u(cF, 2, -1, 8), u(cProbe, 1, -2, 13),
				skipped(u(cG, 1, 0, 9), record.SkipRobots, 0),
				u(cA, 2, 9, 99), // already in this batch: ignored
			},
			Events: []record.Event{{Time: at(0), Kind: record.EventStart, Text: "start"}},
		}},
		{name: "insert once", batch: record.Batch{URLs: []record.URLRecord{u(cB, 2, 7, 70), u(cH, 1, 3, 10)}}},
		{name: "fetch", batch: record.Batch{
			Pages: []record.PageRecord{page(cA, 1, 3, 200), page(cHigh, 2, 4, 301), page(cF, 2, 5, 404),
				page(cG, 1, 6, 200) /* a skipped URL fetched */, page(cI, 1, 7, 200) /* discovered in this batch */, probe},
			URLs:  []record.URLRecord{listed},
			Links: []record.Link{{From: cA, To: cB}, {From: cA, To: cHigh}, {From: cA, To: cB}, {From: cHigh, To: cA}, {From: cD, To: cA}},
		}},
		{name: "rules skip", batch: record.Batch{
			Rules: []record.RuleRecord{{Rule: rule1, Time: at(10)}, {Rule: rule2, Time: at(11)}},
			Skips: []record.Skip{{URL: cB, Reason: record.SkipRule, Rule: rule1.ID()}, {URL: cC, Reason: record.SkipRule, Rule: rule1.ID()},
				{URL: cD, Reason: record.SkipRule, Rule: rule2.ID()}, {URL: cHigh2, Reason: record.SkipDuplicate},
				{URL: cA, Reason: record.SkipRule, Rule: rule1.ID()} /* fetched: stays */},
			URLs:     []record.URLRecord{skipped(u(cJ, 1, 5, 12), record.SkipRule, rule2.ID())},
			Soft404s: []record.Soft404Record{soft, soft2},
			Dups: []record.DupRecord{{URL: cF, Of: cA, Kind: dedup.Exact, Test: "digest", Time: at(12)},
				{URL: cG, Of: cA, Kind: dedup.Near, Test: "simhash", Time: at(12)}, {URL: cI, Of: cA, Kind: dedup.Near, Time: at(12)},
				{URL: cI, Of: cA, Kind: dedup.Soft404, Time: at(13)} /* decided again: the latest counts */},
			Holds: []record.HeldLinks{{Probe: cProbe, Page: cI, Links: []string{"http://s1.test/a", "http://s1.test/b"}},
				{Probe: cProbe, Page: cG}, {Probe: cProbe + 1, Page: cNone, Links: []string{"http://s1.test/c"}}},
		}},
		{name: "tallies", batch: record.Batch{Tallies: []record.Tally{{Key: "error.timeout", Add: 3}, {Key: "skipped.robots", Add: 2},
			{Key: "error.timeout", Add: -1}, {Key: "sitemaps.read", Add: 0}}}},
		{name: "slow downs", batch: record.Batch{SlowDowns: []record.SlowDown{{URL: cB, Tries: 2} /* skipped: ignored */, {URL: cE, Tries: 1}, {URL: cE, Tries: 2},
			{URL: cA, Tries: 1} /* fetched: ignored */, {URL: cNone, Tries: 1}}}},
		{name: "rule again, learned time stays", batch: record.Batch{Rules: []record.RuleRecord{{Rule: rule2, Time: at(20)}}}},
		{name: "withdraw rule1, unskip one URL", batch: record.Batch{
			Rules:       []record.RuleRecord{{Rule: rule1w, Time: at(21)}, {Rule: ruleLate, Time: at(22)}},
			Skips:       []record.Skip{{URL: cE, Reason: record.SkipRule, Rule: rule1.ID()}}, // before the withdrawal: queued again
			UnskipRules: []uint64{rule1.ID(), 0},
			Unskips:     []uint64{cD, cHigh2 /* not a rule skip: stays */, cNone},
		}},
		{name: "release, priorities, ranks", batch: record.Batch{
			Releases:   []uint64{cProbe},
			Priorities: []record.PriorityUpdate{{URL: cB, Priority: -5}, {URL: cA, Priority: -9} /* fetched: ignored */},
			RankRuns: []record.RankRun{{Time: at(25), Pages: 5, Nodes: 9, Coverage: 0.5, Oracle: -1},
				{Time: at(24), Pages: 4, Coverage: 0.4, Oracle: 0.25}, {Time: at(25), Pages: 6, Coverage: 0.6, Oracle: -0.5},
				{Pages: 7, Coverage: 0.7, Oracle: math.NaN()}},
			Ranks:    []record.RankRecord{{URL: cA, Rank: 0.5, Time: at(25)}},
			Soft404s: []record.Soft404Record{softWithdrawn},
		}},
		{name: "requeue", batch: record.Batch{
			Requeues: []record.Requeue{{URL: cA, Priority: -2, Seq: 100}, {URL: cC, Priority: -1, Seq: 101}, {URL: cHigh, Priority: 0, Seq: 102},
				{URL: cB, Priority: 0, Seq: 103} /* queued: ignored */, {URL: cNone}},
			Channels: []record.ChannelRecord{{ID: "s1.test", Group: 1, Interval: 90*time.Minute + 1500*time.Microsecond, Rate: 0.25,
				Submitted: 3, Updates: 2, LastUpdate: at(26), Updated: at(27)}, {ID: "a.test", Interval: time.Hour}},
			Groups:        []record.GroupRecord{{Index: 0, Channels: 2, Initial: time.Hour, Interval: time.Hour, Updated: at(27)}},
			Reassignments: []record.ReassignmentRecord{{Time: at(27), Policy: "iir", Before: []time.Duration{time.Hour}, After: []time.Duration{time.Minute}}},
		}},
		{name: "channel replaced", batch: record.Batch{Channels: []record.ChannelRecord{{ID: "s1.test", Group: 2, Interval: time.Minute}}}},
		{name: "refetch", batch: record.Batch{Pages: []record.PageRecord{refetch304, refetchErr, refetchChanged}}},
		{name: "requeue after a 304 keeps its validators", batch: record.Batch{Requeues: []record.Requeue{{URL: cA, Priority: -3, Seq: 104}}}},
		{name: "page of an unknown URL fails whole", wantErr: true, batch: record.Batch{
			Sites: []record.SiteRecord{site(3)}, URLs: []record.URLRecord{u(cK, 3, 0, 200)},
			Pages: []record.PageRecord{page(cNone, 1, 50, 200)}}},
		{name: "site key taken fails whole", wantErr: true, batch: record.Batch{
			Sites: []record.SiteRecord{site(4), {ID: 5, Key: site1.Key, Host: "s1.test"}}}},
		{name: "invalid state fails whole", wantErr: true, batch: record.Batch{
			URLs: []record.URLRecord{u(cK, 1, 0, 201), {ID: cK + 1, Site: 1, URL: "http://s1.test/bad", State: 7}}}},
		{name: "cancelled", cancel: true, wantErr: true, batch: record.Batch{URLs: []record.URLRecord{u(cK, 1, 0, 202)}}},
		{name: "site moves key", batch: record.Batch{Sites: []record.SiteRecord{site2moved, {ID: 6, Key: site2.Key, Host: "s2.test"}}}},
	}

	path := filepath.Join(t.TempDir(), "crawl.db")
	open := func() *DB {
		db, err := Open(path, Options{Now: func() time.Time { return t0 }})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	defer func() { db.Close() }()
	mem := &record.MemStore{}
	sites := []int64{1, 2, 3, 4, 5, 6}
	for _, st := range steps {
		ctx, cancel := context.WithCancel(context.Background())
		if st.cancel {
			cancel()
		}
		b1, b2 := st.batch, st.batch // Apply does not keep the batch, but each gets its own header
		errDB, errMem := db.Apply(ctx, &b1), mem.Apply(ctx, &b2)
		cancel()
		if (errDB != nil) != st.wantErr || (errMem != nil) != st.wantErr {
			t.Fatalf("%s: Apply: storage.DB %v, record.MemStore %v; want error %v", st.name, errDB, errMem, st.wantErr)
		}
		diffReads(t, st.name, readAll(t, db, sites), readAll(t, mem, sites))
	}
	// A restart: the file opened again reads as the MemStore does.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	final := readAll(t, mem, sites)
	diffReads(t, "after reopening", readAll(t, db, sites), final)

	// The sequence did what it says, so that agreeing is not agreeing on
	// nothing.
	if len(final.Rules) != 3 || !final.Rules[0].Rule.Withdrawn || !final.Rules[0].Time.Equal(ms(at(21))) ||
		!final.Rules[1].Time.Equal(ms(at(11))) {
		t.Errorf("rules = %+v", final.Rules)
	}
	queuedNow := map[uint64]bool{}
	for _, h := range final.Heads {
		if h.N == 100 {
			for _, q := range h.URLs {
				queuedNow[q.ID] = true
			}
		}
	}
	if want := map[uint64]bool{cA: true, cB: true, cD: true, cE: true, cH: true}; !reflect.DeepEqual(queuedNow, want) {
		t.Errorf("queued at the end: %v, want %v", queuedNow, want)
	}
	for _, h := range final.Heads {
		if h.Site == 1 && h.N == 2 && (h.URLs[1].ID != cA || !h.HasCopy[1] || h.Copies[1].ETag != `"e1000"` || h.Copies[1].Digest != cA*3) {
			t.Errorf("head of site 1 = %+v, want %x second with the copy its 304 confirmed", h, cA)
		}
	}
	if len(final.RuleSkipped) != 1 || final.RuleSkipped[0].ID != cJ {
		t.Errorf("rule skipped = %+v, want only %x (skipped under a rule never withdrawn)", final.RuleSkipped, cJ)
	}
	if len(final.Held) != 0 || len(final.Coverage) != 3 || len(final.Channels) != 2 || final.Counters.Pages != 8 {
		t.Errorf("held %d, coverage %+v, channels %d, counters %+v", len(final.Held), final.Coverage, len(final.Channels), final.Counters)
	}
	if want := map[string]int64{"error.timeout": 2, "skipped.robots": 2, "sitemaps.read": 0}; !reflect.DeepEqual(final.Counters.Tallies, want) {
		t.Errorf("tallies %v, want %v", final.Counters.Tallies, want)
	}
	if want := (record.DupCounts{Exact: 1, Near: 1, Soft404: 1}); final.DupCounts != want {
		t.Errorf("duplicate counts %+v, want %+v", final.DupCounts, want)
	}
	// The probe's answer is kept (detection restores from it) but is no
	// page: Counters.Pages above leaves it out.
	probed := false
	for _, p := range final.Fingerprint {
		probed = probed || p.URL == cProbe && p.Status == 404
	}
	if !probed {
		t.Errorf("fingerprints %+v lack the probe's answer", final.Fingerprint)
	}
	if s := final.Sites[0]; s.RobotsURL != site1.RobotsURL || len(s.RobotsRedirects) != 2 || s.RobotsRedirects[1] != site1.RobotsRedirects[1] {
		t.Errorf("site 1's robots.txt chain = %q %+v", s.RobotsURL, s.RobotsRedirects)
	}
	if s := final.Sites[1]; s.RobotsEnd != fetch.ChainLoop {
		t.Errorf("site 2's robots.txt chain ended %v, want %v", s.RobotsEnd, fetch.ChainLoop)
	}
	listedSeen := false
	for _, r := range final.Recrawl {
		listedSeen = listedSeen || r.ID == cI
		if (r.ID == cI) != !r.LastMod.IsZero() || r.ID == cI && !r.LastMod.Equal(ms(listed.LastMod)) {
			t.Errorf("recrawl URL %x has lastmod %v; want %v on %x only", r.ID, r.LastMod, ms(listed.LastMod), cI)
		}
		if !r.Discovered.Equal(ms(at(0))) {
			t.Errorf("recrawl URL %x was discovered at %v; want %v", r.ID, r.Discovered, ms(at(0)))
		}
	}
	if !listedSeen {
		t.Errorf("the recrawl URLs lack %x, the URL a sitemap listed", cI)
	}
	slow := map[uint64]int{}
	for _, h := range final.Heads {
		for _, q := range h.URLs {
			if q.SlowDowns > 0 {
				slow[q.ID] = q.SlowDowns
			}
		}
	}
	if want := map[uint64]int{cE: 2}; !reflect.DeepEqual(slow, want) {
		t.Errorf("slow-down tries in the heads: %v, want %v", slow, want)
	}
}

func ms(t time.Time) time.Time { return time.UnixMilli(t.UnixMilli()) }
