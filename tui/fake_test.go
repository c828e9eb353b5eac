package tui

import (
	"context"
	"fmt"
	"sync"
	"time"

	"lidi/engine"
	"lidi/engine/dedup"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// t0 is when the crawls of the tests started. It is in the local zone so
// the event times the console shows (in the local zone) do not depend on
// the machine's.
var t0 = time.Date(2026, 3, 14, 9, 30, 0, 0, time.Local)

// fakeCrawler plays back a series of snapshots, one per Stats call, then
// keeps returning the last, and records what the console asked of it. It
// reflects Pause, Resume and SetRobots in the snapshots it returns, as the
// engine does.
type fakeCrawler struct {
	mu     sync.Mutex
	series []engine.Stats
	next   int // index of the next snapshot to return
	calls  int // Stats calls

	paused         bool
	pauses         int
	resumes        int
	robots         int   // robots set by SetRobots; 0 until then
	robotCalls     []int // every SetRobots argument, in order
	snapshots      int
	snapshotPath   string
	snapshotErr    error
	snapshotCalled chan struct{} // closed at the first Snapshot call, when not nil
}

// fakeRules are the rules the fake crawl learned last: a mirror's
// directory kept at its source by the mirroring tool's notes, an index
// name learned from one pair with other hosts' rules as a prior, a
// tracking parameter put in force with no pair from other hosts' rules,
// and a parameter rule withdrawn.
var fakeRules = []dedup.Rule{
	{Kind: dedup.SwapHost, Origin: "http://milosophical.me", From: "/jargon/html/", To: "http://www.catb.org/jargon/html/", Supports: 4,
		Choice: dedup.Choice{For: [dedup.NumSignals]int32{dedup.SignalMirrorNote: 3}, ByEvidence: true}},
	{Kind: dedup.DropIndex, Origin: "http://intranet.example", Name: "welcome.jsp", Supports: 1, Prior: 3},
	{Kind: dedup.DropParam, Origin: "http://shop.example", Name: "utm_campaign", Prior: 3},
	{Kind: dedup.DropParam, Origin: "https://forum.example.org", Name: "p", Supports: 3, Withdrawn: true},
	{Kind: dedup.SwapHost, Origin: "http://example.org", To: "http://www.example.org", Supports: 3},
}

func newFake(series []engine.Stats) *fakeCrawler {
	return &fakeCrawler{series: series, snapshotPath: "/var/lib/lidi/snapshots/lidi-20260314-093100.sqlite"}
}

func (f *fakeCrawler) Stats() engine.Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	s := f.series[min(f.next, len(f.series)-1)]
	if f.next < len(f.series) {
		f.next++
	}
	if f.paused && s.State == engine.StateRunning {
		s.State = engine.StatePaused
		s.FetchesPerSec, s.BytesPerSec = 0, 0
		s.RobotsBusy, s.Visits = 0, nil
	}
	if f.robots > 0 {
		s.Robots = f.robots
	}
	return s
}

func (f *fakeCrawler) Pause() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = true
	f.pauses++
}

func (f *fakeCrawler) Resume() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = false
	f.resumes++
}

func (f *fakeCrawler) SetRobots(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.robots = n
	f.robotCalls = append(f.robotCalls, n)
}

func (f *fakeCrawler) Snapshot(ctx context.Context) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.snapshots++
	if f.snapshotCalled != nil {
		close(f.snapshotCalled)
		f.snapshotCalled = nil
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return f.snapshotPath, f.snapshotErr
}

// served reports how many Stats calls were made and whether the whole
// series has been handed out.
func (f *fakeCrawler) served() (calls int, all bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls, f.next >= len(f.series)
}

// sites are the hosts of the test crawls.
var sites = []string{
	"www.example.org", "blog.example.com", "docs.example.net", "news.example.org",
	"wiki.example.com", "shop.example.net", "forum.example.org", "static.example.com",
	"archive.example.net", "mail.example.org", "lists.example.com", "cdn.example.net",
	"research.example.edu", "library.example.edu", "data.example.gov", "www.example.test",
}

// paths are URL paths of the test crawls.
var paths = []string{
	"/", "/about", "/2024/05/17/notes-on-crawling-politely.html", "/wiki/Category:Web_crawlers",
	"/docs/v2/reference/configuration#frontier", "/search?q=pagerank&page=3", "/products/1234-blue-widget",
	"/threads/9876?sort=newest", "/feeds/all.atom.xml", "/archive/1999/12/index.html",
}

// crawlSeries builds n snapshots of a crawl a second apart, ending in state
// last. The figures grow and wobble the way a real crawl's do; they come
// from integer arithmetic only, so every platform renders them the same.
func crawlSeries(n int, last engine.RunState) []engine.Stats {
	out := make([]engine.Stats, n)
	var pages, bytes, errs, found int64 = 120_000, 2_900_000_000, 2_400, 410_000
	for i := range out {
		wob := int64((i*37)%23) - 11 // -11..11, irregular
		pps := 48 + wob + int64(i%7)
		pages += pps
		bytes += pps * (21_000 + wob*800)
		if i%3 == 0 {
			errs += 1 + int64(i%4)
		}
		found += pps * 3
		queue := found - pages - 18_500
		at := t0.Add(time.Hour + 2*time.Minute + time.Duration(i)*time.Second)
		s := engine.Stats{
			Time:          at,
			Started:       t0,
			State:         engine.StateRunning,
			Strategy:      "opic",
			Pages:         pages,
			Fetches:       pages, // no recrawls: see measured
			Bytes:         bytes,
			Errors:        errs,
			FetchesPerSec: float64(pps),
			BytesPerSec:   float64(pps * (21_000 + wob*800)),
			Discovered:    found,
			QueueDepth:    queue,
			Sites:         12_847,
			SitesReady:    214,
			SitesWaiting:  340 + int(wob),
			SitesParked:   37,
			SitesDone:     4_102,
			Robots:        16,
			DNS:           engine.DNSStats{Lookups: 41_200 + int64(i)*40, Hits: 38_950 + int64(i)*38, Queries: 2_250 + int64(i)*2, Failures: 112, Collapsed: 431},
			Dup: engine.DupStats{Exact: 1_204, Near: 310, Soft404: 23, Soft404Hosts: 4, Rules: 41, Withdrawn: 1, Pruned: 8_772,
				Learned: [dedup.NumRuleKinds]int64{dedup.DropParam: 12, dedup.SwapPrefix: 21, dedup.SwapHost: 4, dedup.SortParams: 5},
				Recent:  fakeRules},
			ErrorKind: map[visit.FailureKind]int64{
				"timeout": errs * 45 / 100, "http-5xx": errs * 25 / 100, "http-4xx": errs * 18 / 100,
				"dns": errs * 7 / 100, "refused": errs - errs*45/100 - errs*25/100 - errs*18/100 - errs*7/100,
			},
			Skipped: map[record.SkipReason]int64{"robots": 8_214, "scope": 51_900, "depth": 1_207, "nofollow": 388},
		}
		busy := 12 + int(wob%4)
		for r := range busy {
			site := sites[(r*5+i/9)%len(sites)]
			s.Visits = append(s.Visits, engine.VisitStats{
				Site:    site,
				URL:     "https://" + site + paths[(r*3+i)%len(paths)],
				Pages:   1 + (r+i)%8,
				Planned: 8,
				Bytes:   int64(18_000 * (1 + (r+i)%8)),
				Started: at.Add(-time.Duration(400+r*977) * time.Millisecond),
			})
		}
		s.RobotsBusy = len(s.Visits)
		for k := range 32 {
			s.Waiting = append(s.Waiting, engine.WaitingSite{
				Site:    fmt.Sprintf("site-%03d.example.net", (k*17+i)%300),
				Pending: int64(3 + (k*29)%140),
				Until:   at.Add(time.Duration(150+k*310) * time.Millisecond),
			})
		}
		s.Events = []record.Event{
			{Time: t0.Add(time.Second), Kind: "resume", Text: "resumed a crawl of 118,544 pages"},
			{Time: t0.Add(14 * time.Minute), Kind: "robots-5xx", Site: "shop.example.net", Text: "robots.txt answered 503; retrying in 10m"},
			{Time: t0.Add(31 * time.Minute), Kind: "parked", Site: "old.example.org", Text: "parked after 5 failed visits (timeout)"},
			{Time: t0.Add(47 * time.Minute), Kind: "rule", Text: "rule learned: http://mirror.example.com: host → http://www.example.org (3 duplicate pairs)"},
			{Time: t0.Add(58 * time.Minute), Kind: "parked", Site: "legacy.example.net", Text: "parked after 5 failed visits (refused)"},
		}
		out[i] = s
	}
	if last != engine.StateRunning {
		s := &out[n-1]
		s.State = last
		s.FetchesPerSec, s.BytesPerSec = 0, 0
		s.Visits, s.RobotsBusy, s.Waiting = nil, 0, nil
		s.QueueDepth, s.SitesReady, s.SitesWaiting = 0, 0, 0
		s.SitesDone = s.Sites - s.SitesParked
		s.Events = append(s.Events, record.Event{Time: s.Time, Kind: "done", Text: "the frontier is empty"})
	}
	return out
}

// measured adds a PageRank coverage curve and recrawl intervals to s.
func measured(s engine.Stats) engine.Stats {
	for i := range 40 {
		p := int64(i+1) * 3_100
		// Concave, like coverage curves of good orderings.
		cov := 1 - float64((40-i)*(40-i))/1800
		s.Coverage = append(s.Coverage, record.CoveragePoint{Pages: p, Coverage: cov, Oracle: min(cov+0.031, 1)})
	}
	s.Intervals = []engine.IntervalGroup{
		{Name: "group 0", Index: 0, Rank: 2, Channels: 12, Interval: 45 * time.Minute, Initial: time.Hour, Submitted: 30, Updates: 27, SuccessRate: 0.9,
			Change: 50 * time.Minute, Freshness: 0.71},
		{Name: "group 1", Index: 1, Rank: 1, Channels: 140, Interval: 6 * time.Hour, Initial: 4 * time.Hour, Submitted: 40, Updates: 30, SuccessRate: 0.75,
			Change: 5 * time.Hour, Freshness: 0.55},
		{Name: "group 2", Index: 2, Rank: 0, Channels: 48, Interval: 3 * 24 * time.Hour, Initial: 16 * time.Hour},
	}
	r := &engine.RecrawlStats{Policy: "iir", Now: s.Time, Channels: 200, Copies: 122_000, Tasks: 410, Done: 380, Dropped: 12,
		Reassignments: 3, LastReassign: s.Time.Add(-25 * time.Minute), LastPolicy: "iir", Freshness: 0.823, FreshnessExact: true}
	for i := range 30 {
		r.History = append(r.History, engine.IntervalPoint{Time: s.Time.Add(time.Duration(i-30) * 10 * time.Minute),
			Intervals: []time.Duration{time.Hour - time.Duration(i)*time.Minute/2, 4*time.Hour + time.Duration(i)*4*time.Minute, 16 * time.Hour}, Freshness: 0.8})
	}
	s.Recrawl = r
	// Recrawling: fetches outnumber the pages stored.
	s.Recrawls = 9_271
	s.Fetches = s.Pages + s.Recrawls
	return s
}
