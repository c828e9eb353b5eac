package engine_test

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/simweb"
)

// changingWeb serves a tiny web whose pages change every few virtual
// minutes, its clock 240 times as fast as real time.
func changingWeb(t *testing.T) *simweb.Server {
	t.Helper()
	return changingWebClock(t, 240, nil)
}

// changingWebClock is changingWeb with its virtual clock scale times as
// fast as real time, run from now (nil: time.Now).
func changingWebClock(t *testing.T, scale float64, now func() time.Time) *simweb.Server {
	t.Helper()
	web, err := simweb.Generate(simweb.Options{Seed: 9, Sites: 4, Pages: 40, Change: simweb.ChangeOptions{Enabled: true,
		Intervals: [simweb.MaxChangeGroups]time.Duration{3 * time.Minute, 6 * time.Minute, 12 * time.Minute}, Stamped: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := simweb.Start(context.Background(), web, simweb.ServerConfig{TimeScale: scale, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// recrawlConfig recrawls srv on its virtual clock: a probe every virtual
// minute for five, then the policy.
func recrawlConfig(srv *simweb.Server, maxPages int64) engine.Config {
	cfg := crawlConfig(srv.SeedURLs(2))
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.MaxPages = maxPages
	cfg.Recrawl.Enabled = true
	cfg.Recrawl.Clock = srv.VirtualTime()
	cfg.Recrawl.Freshness = srv
	cfg.Recrawl.InitialInterval = time.Minute
	cfg.Recrawl.Warmup = 5 * time.Minute
	cfg.Recrawl.Options.MinInterval = 30 * time.Second
	return cfg
}

// historyRow is one row of the fetch history.
type historyRow struct {
	url              string
	fetched          time.Time
	duration         time.Duration
	status, changed  int // changed: -1 for NULL
	recrawl          bool
	verdict, etag    string
	digest           uint64
	lastModifiedSent string
}

func history(t *testing.T, path string) []historyRow {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT u.url, f.time, f.duration_ms, f.status, coalesce(f.changed, -1), f.recrawl, f.verdict,
		coalesce(f.etag, ''), coalesce(f.digest, 0), coalesce(f.last_modified, '')
		FROM fetches f JOIN urls u ON u.id = f.url_id ORDER BY f.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []historyRow
	for rows.Next() {
		var r historyRow
		var ms int64
		var dur float64
		var digest int64
		if err := rows.Scan(&r.url, &ms, &dur, &r.status, &r.changed, &r.recrawl, &r.verdict, &r.etag, &digest, &r.lastModifiedSent); err != nil {
			t.Fatal(err)
		}
		r.fetched = time.UnixMilli(ms)
		r.duration = time.Duration(dur * float64(time.Millisecond))
		r.digest = uint64(digest)
		out = append(out, r)
	}
	return out
}

// versionsAt returns the versions page p may have been served at during a
// fetch: from its start (a millisecond early, the history's resolution) to
// its end.
func versionsAt(srv *simweb.Server, p int, r historyRow) map[int]bool {
	clk := srv.Clock()
	from := clk.OffsetAt(r.fetched.Add(-time.Millisecond))
	to := clk.OffsetAt(r.fetched.Add(r.duration + 2*time.Millisecond))
	out := map[int]bool{}
	ch := srv.Web().Changes()
	for v := ch.Version(p, from); v <= ch.Version(p, to); v++ {
		out[v] = true
	}
	return out
}

// checkHistory checks every fetch of the history against the web's ground
// truth: the version served (by its ETag, or its bytes) and each recrawl's
// verdict.
func checkHistory(t *testing.T, srv *simweb.Server, rows []historyRow) (recrawls, changed int) {
	t.Helper()
	web := srv.Web()
	ch := web.Changes()
	last := map[string]map[int]bool{} // the versions the previous fetch may have seen
	for i, r := range rows {
		if r.status != 200 && r.status != 304 {
			continue
		}
		u, err := url.Parse(r.url)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := web.Lookup(u.Hostname(), u.EscapedPath())
		if !ok {
			continue
		}
		site := web.Page(p).Site
		vs := versionsAt(srv, p, r)
		if r.status == 200 {
			matched := false
			for v := range vs {
				if ch.Validators(site).ETag() && r.etag == ch.ETag(p, v) {
					matched = true
				}
			}
			if !ch.Stamped(site) {
				// The bytes are those of a version served then: the
				// one at the fetch's start or one a change during it
				// brought (a slow fetch may span several).
				clk := srv.Clock()
				from, to := clk.OffsetAt(r.fetched.Add(-time.Millisecond)), clk.OffsetAt(r.fetched.Add(r.duration+2*time.Millisecond))
				for d, more := from, true; more && d <= to && !matched; d, more = ch.NextChange(p, d) {
					matched = record.NewestDigest.Sum(srv.RenderAt(p, d)) == r.digest // a new file's digests
				}
			} else if !ch.Validators(site).ETag() {
				matched = true // stamped bytes change on every fetch; judged below
			}
			if !matched {
				t.Errorf("fetch %d of %s: ETag %q, digest %016x match no version served then (%v)", i, r.url, r.etag, r.digest, vs)
			}
		}
		if r.recrawl {
			recrawls++
			prev := last[r.url]
			truth := true // changed since the previous fetch, for every pair of versions possible
			same := true
			for a := range prev {
				for b := range vs {
					if a == b {
						truth = false
					} else {
						same = false
					}
				}
			}
			switch {
			case prev == nil:
				t.Errorf("fetch %d of %s is a recrawl without an earlier fetch", i, r.url)
			case r.changed == 1 && same, r.changed == 0 && truth:
				t.Errorf("fetch %d of %s: changed=%d (%s), but the versions were %v then %v", i, r.url, r.changed, r.verdict, prev, vs)
			}
			if r.changed == 1 {
				changed++
			}
		}
		last[r.url] = vs
	}
	return recrawls, changed
}

// A tiny changing web recrawled on its virtual clock: every fetch in the
// history got a version the ground truth says was current, and every
// recrawl's verdict (304, same bytes, same text, changed) agrees with it.
func TestRecrawlMatchesGroundTruth(t *testing.T) {
	t.Parallel()
	srv := changingWeb(t)
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := recrawlConfig(srv, 300)
	st := runCrawl(t, cfg, srv.DNSAddr(), path)
	rows := history(t, path)
	if int64(len(rows)) != st.Fetches {
		t.Fatalf("%d fetches in the history, %d counted", len(rows), st.Fetches)
	}
	recrawls, changed := checkHistory(t, srv, rows)
	// Pages are the URLs fetched, those queued again for a recrawl included.
	stored := queryCount(t, path, "SELECT count(*) FROM urls WHERE fetched IS NOT NULL AND state IN (0, 1)")
	if st.Recrawls != int64(recrawls) || st.Pages != st.Fetches-st.Recrawls || st.Pages != int64(stored) {
		t.Errorf("stats: %d pages, %d fetches, %d recrawls; the history has %d recrawls, the store %d URLs fetched",
			st.Pages, st.Fetches, st.Recrawls, recrawls, stored)
	}
	if recrawls < 100 || changed == 0 || changed == recrawls {
		t.Errorf("%d recrawls, %d of them changed: want many, some changed and some not", recrawls, changed)
	}
	verdicts := map[string]int{}
	for _, r := range rows {
		verdicts[r.verdict]++
	}
	for _, v := range []string{"not-modified", "same-digest", "changed"} {
		if verdicts[v] == 0 {
			t.Errorf("no fetch judged %s: %v", v, verdicts)
		}
	}
	if st.Recrawl == nil || st.Recrawl.Freshness < 0 || !st.Recrawl.FreshnessExact || st.Recrawl.Channels != 4 {
		t.Errorf("recrawl stats %+v", st.Recrawl)
	}
	// The default policy plans pages: the console's groups aggregate their
	// estimates.
	if r := st.Recrawl; r == nil || !r.PerPage || r.Budget <= 0 || r.Done == 0 || len(st.Intervals) == 0 {
		t.Errorf("recrawl stats %+v, groups %+v: want the page-level plan's", st.Recrawl, st.Intervals)
	}
	for _, g := range st.Intervals {
		if g.Change <= 0 || g.Interval <= 0 || g.Freshness <= 0 || g.Freshness > 1 || g.Channels == 0 {
			t.Errorf("group %+v: want its change interval, its pages' visit interval and the freshness they expect", g)
		}
	}
	t.Logf("%d fetches, %d recrawls, %d changed; verdicts %v; freshness %.2f; groups %+v", len(rows), recrawls, changed, verdicts, st.Recrawl.Freshness, st.Intervals)
}

// Recrawls, queued ahead of new URLs, leave discovery its share even when
// pages fall due faster than the crawl finds the web (a clock 2,400 times
// as fast, a politeness delay of 0, so the site's gap is the robot time
// its fetches take): the crawl finds every page its seeds reach before
// its limit. With recrawls budgeted by the fetches' durations alone it
// found 13 of 35; with the share kept only in the plan's timing, 13 of 35
// again when the whole suite loaded the machine (a site's copies are now
// queued a visit's share at most, recrawl.SchedulerOptions.Ahead).
func TestRecrawlLeavesDiscoveryItsShare(t *testing.T) {
	t.Parallel()
	srv := changingWebClock(t, 2400, nil)
	path := filepath.Join(t.TempDir(), "crawl.db")
	runCrawl(t, recrawlConfig(srv, 300), srv.DNSAddr(), path)
	recrawls, firstAfter := 0, 0
	rows := history(t, path)
	for _, r := range rows {
		if r.recrawl {
			recrawls++
		} else if recrawls > 0 {
			firstAfter++
		}
	}
	web := srv.Web()
	reach := web.ReachableUnique(web.Seeds(2))
	if found := len(rows) - recrawls; found < reach.Unique {
		t.Errorf("%d pages found of the %d the seeds reach, beside %d recrawls", found, reach.Unique, recrawls)
	}
	t.Logf("%d fetches, %d recrawls, %d pages found after the first recrawl", len(rows), recrawls, firstAfter)
}

// A crawl stopped in the middle of recrawling and resumed loses no
// history: every fetch of both runs is in the history, the counters agree,
// and the URLs queued again for a recrawl when it stopped are recrawled
// (conditionally, with their copies) after it resumed.
func TestRecrawlResumeKeepsHistory(t *testing.T) {
	t.Parallel()
	srv := changingWeb(t)
	path := filepath.Join(t.TempDir(), "crawl.db")
	// The web's 40 pages and some of their recrawls, then as many
	// recrawls again after the restart.
	const stop, end = 150, 280
	cfg := recrawlConfig(srv, stop)
	runCrawl(t, cfg, srv.DNSAddr(), path)
	first := history(t, path)
	if len(first) != stop {
		t.Fatalf("%d fetches in the history after the first run, want %d", len(first), stop)
	}
	cfg.MaxPages = end
	st := runCrawl(t, cfg, srv.DNSAddr(), path)
	rows := history(t, path)
	if len(rows) != end || st.Fetches != end {
		t.Fatalf("%d fetches in the history, %d counted, after the second run; want %d", len(rows), st.Fetches, end)
	}
	for i, r := range first {
		if rows[i] != r {
			t.Fatalf("fetch %d changed across the restart: %+v, then %+v", i, r, rows[i])
		}
	}
	// Every site recrawled before the stop is recrawled after it, those
	// with nothing queued when it stopped included.
	hosts := func(rows []historyRow) map[string]bool {
		out := map[string]bool{}
		for _, r := range rows {
			if u, err := url.Parse(r.url); err == nil && r.recrawl {
				out[u.Host] = true
			}
		}
		return out
	}
	before, after := hosts(rows[:stop]), hosts(rows[stop:])
	for h := range before {
		if !after[h] {
			t.Errorf("%s recrawled before the resume, not after (%d sites after)", h, len(after))
		}
	}
	checkHistory(t, srv, rows)
}

// A crawl that resumes on the changing web's clock dates the copies it
// loads by that clock (engine.RecrawlClockAt): their freshness against the
// ground truth is the truth's, not "fetched just now".
func TestRecrawlResumeDatesCopies(t *testing.T) {
	t.Parallel()
	// The web and the engine share a clock that the test moves on, rather
	// than wait for the web's half hour (7.5 s).
	clock := &offsetClock{}
	srv := changingWebClock(t, 240, clock.Now)
	path := filepath.Join(t.TempDir(), "crawl.db")
	cfg := recrawlConfig(srv, 150)
	runCrawlClock(t, cfg, srv.DNSAddr(), path, clock)
	// Half an hour of the web's time later, most pages have changed.
	end := srv.Clock().Offset()
	clock.offset.Add(int64(time.Duration(float64(30*time.Minute) / srv.Clock().Scale)))
	if now := srv.Clock().Offset(); now <= end+30*time.Minute {
		t.Fatalf("the web's clock moved from %s to %s, want half an hour", end, now)
	}
	st := runCrawlClock(t, cfg, srv.DNSAddr(), path, clock) // at the limit: loads, measures and ends
	if st.Recrawl == nil || st.Recrawl.Copies == 0 || !st.Recrawl.FreshnessExact {
		t.Fatalf("recrawl stats after the resume: %+v", st.Recrawl)
	}
	if f := st.Recrawl.Freshness; f < 0 || f > 0.5 {
		t.Errorf("freshness %.2f of %d copies loaded half an hour of virtual time after their fetch; want under 0.5", f, st.Recrawl.Copies)
	}
}
