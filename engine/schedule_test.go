package engine_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/record"
	"lidi/engine/urlnorm"
	"lidi/engine/visit"
)

// tablePage is a page of tableWeb: its status and the links on it.
type tablePage struct {
	status int
	links  []string
}

// tableSite is a site of tableWeb.
type tableSite struct {
	addr   netip.Addr
	robots visit.RobotsFile // Status 0: robots.txt answers 404
	pages  map[string]tablePage
}

// tableWeb is a web held in a table, answered without a network: the
// resolver of the engine under test and its dispatcher, which runs leases
// as a Robot would (robots.txt first when the lease lacks it, the lease's
// rules honoured, links kept to the crawl's scope) and records what the
// loop asked of it, to check the loop's scheduling.
type tableWeb struct {
	t     *testing.T
	sites map[string]*tableSite // by host
	scope func(url string, depth int) (visit.FoundLink, bool)
	ua    string // the crawl's user agent, which robots.txt rules match
	now   func() time.Time

	mu       sync.Mutex
	fetched  map[string]int    // pages fetched, by URL
	robots   map[string]int    // robots.txt fetched, by site key
	busy     map[string]uint64 // sites with a lease running: the lease
	busyAddr map[netip.Addr]uint64
	next     map[string]time.Time // by site key: the End.Next of its last lease
	last     map[string]time.Time // by site key: when its last request was made
	leases   int
	carried  int // leases that carried the site's robots.txt
}

func (w *tableWeb) Lookup(ctx context.Context, host string) (netip.Addr, error) {
	if s := w.sites[host]; s != nil {
		return s.addr, nil
	}
	return netip.Addr{}, fmt.Errorf("tableweb: no such host %q", host)
}

func (w *tableWeb) Stats() dns.Stats { return dns.Stats{} }

// Dispatch runs l in a goroutine of its own, as the Dispatcher contract
// asks.
func (w *tableWeb) Dispatch(ctx context.Context, l *visit.Lease, report func(visit.Result)) {
	w.mu.Lock()
	w.leases++
	if other, ok := w.busy[l.Key]; ok {
		w.t.Errorf("lease %d of %s handed out while lease %d of the site runs", l.ID, l.Key, other)
	}
	if other, ok := w.busyAddr[l.Addr]; ok {
		w.t.Errorf("lease %d of %s handed out while lease %d of its address %s runs", l.ID, l.Key, other, l.Addr)
	}
	if next, ok := w.next[l.Key]; ok && l.NotBefore.Before(next) {
		w.t.Errorf("lease %d of %s may start at %s, before its last lease's end allowed (%s)", l.ID, l.Key,
			l.NotBefore.Format(time.StampMicro), next.Format(time.StampMicro))
	}
	if l.Robots != nil {
		w.carried++
	}
	w.busy[l.Key], w.busyAddr[l.Addr] = l.ID, l.ID
	w.mu.Unlock()
	go w.run(l, report)
}

func (w *tableWeb) run(l *visit.Lease, report func(visit.Result)) {
	seq := 0
	send := func(r visit.Result) {
		seq++
		r.Lease, r.Seq = l.ID, seq
		report(r)
	}
	site := w.sites[l.Host]
	end := &visit.LeaseEnd{Delay: l.Delay}
	rules := l.Rules
	if l.Robots != nil && rules == nil {
		rules = l.Robots.Rules()
	}
	if l.Robots == nil {
		rf := site.robots
		if rf.Status == 0 {
			rf.Status = 404
		}
		rf.Fetched = w.now()
		end.Robots, rules = &rf, rf.Rules()
		w.mu.Lock()
		w.robots[l.Key]++
		w.mu.Unlock()
	}
	// As a Robot does: no request before NotBefore, then Delay between
	// two (the test runs in a synctest bubble, so these waits take no
	// time).
	at := l.NotBefore
	request := func() {
		time.Sleep(time.Until(at))
		now := w.now()
		w.mu.Lock()
		if last, ok := w.last[l.Key]; ok && now.Sub(last) < l.Delay {
			w.t.Errorf("%s: a request %s after the last, less than the delay %s", l.Key, now.Sub(last), l.Delay)
		}
		w.last[l.Key] = now
		w.mu.Unlock()
		at = now.Add(end.Delay)
	}
	if l.Robots == nil {
		request()
	}
	for _, q := range l.URLs {
		if !rules.Allowed(w.ua, urlnorm.PathQuery(q.URL)) {
			end.Skips = append(end.Skips, record.Skip{URL: q.ID, Reason: record.SkipRobots})
			continue
		}
		request()
		p, ok := site.pages[urlnorm.PathQuery(q.URL)]
		if !ok {
			p.status = 404
		}
		pr := &visit.PageResult{URL: q.URL, Depth: q.Depth, Record: record.PageRecord{
			URL: q.ID, Site: l.Site, Fetched: w.now(), Status: p.status, Links: len(p.links),
			Digest: record.NewestDigest.Sum([]byte(q.URL))}}
		for _, u := range p.links {
			if f, ok := w.scope(u, q.Depth+1); ok {
				pr.Links = append(pr.Links, f)
			} else {
				pr.Skipped.Scope++
			}
		}
		w.mu.Lock()
		w.fetched[q.URL]++
		w.mu.Unlock()
		end.Fetched++
		send(visit.Result{Page: pr})
	}
	end.Next = at
	// The site is free before the loop hears of the end, as a Robot
	// closes its connection first.
	w.mu.Lock()
	delete(w.busy, l.Key)
	delete(w.busyAddr, l.Addr)
	w.next[l.Key] = end.Next
	w.mu.Unlock()
	send(visit.Result{End: end})
}

// newTableWeb builds a web of four sites, one address each: a chain of
// pages per site, links across sites and out of scope, robots.txt files
// that disallow some pages, and pages that answer 404.
func newTableWeb(t *testing.T) (w *tableWeb, allowed, disallowed []string) {
	w = &tableWeb{t: t, sites: map[string]*tableSite{}, now: time.Now,
		fetched: map[string]int{}, robots: map[string]int{}, busy: map[string]uint64{},
		busyAddr: map[netip.Addr]uint64{}, next: map[string]time.Time{}, last: map[string]time.Time{}}
	const perSite = 12
	for i, host := range []string{"a.test", "b.test", "c.test", "d.test"} {
		s := &tableSite{addr: netip.AddrFrom4([4]byte{127, 0, 0, byte(10 + i)}), pages: map[string]tablePage{}}
		switch host {
		case "a.test":
			s.robots = visit.RobotsFile{Status: 200, Body: []byte("User-agent: *\nDisallow: /private\n")}
		case "c.test":
			s.robots = visit.RobotsFile{Status: 200, Body: []byte("User-agent: lidi\nDisallow: /p3\nDisallow: /p7\n\nUser-agent: *\nDisallow: /\n")}
		}
		base := "http://" + host
		for j := range perSite {
			path := fmt.Sprintf("/p%d", j)
			if j == 0 {
				path = "/"
			}
			p := tablePage{status: 200, links: []string{"http://elsewhere.test/out"}}
			if j+1 < perSite {
				p.links = append(p.links, fmt.Sprintf("%s/p%d", base, j+1))
			}
			if j+2 < perSite { // past p5, which links nowhere
				p.links = append(p.links, fmt.Sprintf("http://%s/p%d", []string{"b.test", "c.test", "d.test", "a.test"}[i], j+2))
			}
			if j == 5 {
				p.status = 404
				p.links = nil
			}
			if host == "a.test" && j == 2 {
				p.links = append(p.links, base+"/private/x", base+"/private/y")
			}
			s.pages[path] = p
		}
		s.pages["/private/x"] = tablePage{status: 200}
		s.pages["/private/y"] = tablePage{status: 200}
		w.sites[host] = s
	}
	// What a crawl from every site's root must reach: every page (p5
	// answers 404 and has no links, but p6 is linked from another site's
	// p4), less what robots.txt disallows.
	for host := range w.sites {
		for j := range perSite {
			path := fmt.Sprintf("/p%d", j)
			if j == 0 {
				path = "/"
			}
			u := "http://" + host + path
			if host == "c.test" && (j == 3 || j == 7) {
				disallowed = append(disallowed, u)
				continue
			}
			allowed = append(allowed, u)
		}
	}
	disallowed = append(disallowed, "http://a.test/private/x", "http://a.test/private/y")
	sort.Strings(allowed)
	sort.Strings(disallowed)
	return w, allowed, disallowed
}

// The loop's scheduling, against an in-memory store and a dispatcher that
// answers from a table (no HTTP, no DNS, no SQLite): every page is fetched
// once, robots.txt is fetched once per site and carried by the site's
// later leases, what it disallows is never fetched and ends skipped, one
// lease per site and per address runs at a time, each no earlier than the
// last allowed, and no two requests to a site come closer than the delay
// (15 s: the test runs in a testing/synctest bubble, whose clock moves
// when every goroutine waits); a second run on the same store fetches
// nothing.
func TestLoopSchedulesFromATable(t *testing.T) {
	t.Parallel()
	synctest.Test(t, loopSchedulesFromATable)
}

func loopSchedulesFromATable(t *testing.T) {
	web, allowed, disallowed := newTableWeb(t)
	var seeds []string
	for host := range web.sites {
		seeds = append(seeds, "http://"+host+"/")
	}
	slices.Sort(seeds)
	cfg := engine.Defaults()
	cfg.Seeds = seeds
	cfg.Scope.SeedHosts = true
	cfg.Robots = 3
	cfg.PagesPerVisit = 3                                 // several leases per site
	cfg.Delay, cfg.MaxDelay = 15*time.Second, time.Minute // the default delay: time is the bubble's
	cfg.Detect = false                                    // no probes: the table answers what the loop asks
	cfg.UserAgent = "lidi/0.1"
	store := &record.MemStore{}

	run := func() {
		t.Helper()
		eng, err := engine.New(cfg, store, web, nil)
		if err != nil {
			t.Fatal(err)
		}
		web.scope, web.ua = eng.Robot().InScope, cfg.UserAgent
		eng.SetDispatcher(web)
		ctx, cancel := context.WithTimeout(context.Background(), 24*time.Hour) // the bubble's time
		defer cancel()
		if err := eng.Run(ctx); err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
	run()

	web.mu.Lock()
	var got []string
	for u, n := range web.fetched {
		got = append(got, u)
		if n != 1 {
			t.Errorf("%s fetched %d times", u, n)
		}
	}
	sort.Strings(got)
	if !slices.Equal(got, allowed) {
		t.Errorf("fetched %d pages:\n%v\nwant %d:\n%v", len(got), got, len(allowed), allowed)
	}
	for key, n := range web.robots {
		if n != 1 {
			t.Errorf("robots.txt of %s fetched %d times", key, n)
		}
	}
	if len(web.robots) != len(web.sites) {
		t.Errorf("robots.txt fetched for %d sites, want %d", len(web.robots), len(web.sites))
	}
	if web.carried != web.leases-len(web.sites) {
		t.Errorf("%d of %d leases carried robots.txt, want all but each site's first (%d)", web.carried, web.leases, web.leases-len(web.sites))
	}
	leases := web.leases
	t.Logf("%d leases, %d pages fetched, %d carried robots.txt", leases, len(got), web.carried)
	web.mu.Unlock()

	// The store agrees: the pages fetched, the rest skipped, nothing queued.
	ctx := context.Background()
	var stored []string
	if err := store.Fingerprints(ctx, func(p record.FetchedPage) { stored = append(stored, p.Addr) }); err != nil {
		t.Fatal(err)
	}
	sort.Strings(stored)
	if !slices.Equal(stored, allowed) {
		t.Errorf("store holds %d fetched pages, want %d", len(stored), len(allowed))
	}
	all := map[uint64]bool{}
	if err := store.URLFingerprints(ctx, func(id uint64) { all[id] = true }); err != nil {
		t.Fatal(err)
	}
	for _, u := range disallowed {
		if !all[urlnorm.Fingerprint(u)] {
			t.Errorf("%s (disallowed) not recorded", u)
		}
	}
	if len(all) != len(allowed)+len(disallowed) {
		t.Errorf("store holds %d URLs, want %d fetched and %d disallowed", len(all), len(allowed), len(disallowed))
	}
	sites, err := store.Sites(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		if s.Pending != 0 || s.RobotsFetched.IsZero() {
			t.Errorf("site %s: %d URLs queued, robots.txt fetched %v", s.Key, s.Pending, s.RobotsFetched)
		}
	}
	counters, err := store.Counters(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(len(allowed)); counters.Pages != want || counters.Errors != int64(len(web.sites)) {
		t.Errorf("counters %+v, want %d pages and %d errors (one 404 a site)", counters, want, len(web.sites))
	}

	// A second run on the same store has nothing left to do.
	run()
	web.mu.Lock()
	defer web.mu.Unlock()
	for u, n := range web.fetched {
		if n != 1 {
			t.Errorf("after a second run, %s fetched %d times", u, n)
		}
	}
	if web.leases != leases {
		t.Errorf("a second run handed out %d leases", web.leases-leases)
	}
}
