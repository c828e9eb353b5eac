package engine

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"lidi/engine/frontier"
	"lidi/engine/record"
	"lidi/engine/robots"
	"lidi/engine/visit"
)

// site is what the loop knows of a site beyond what the scheduler needs.
type site struct {
	frontier.Site
	port    int
	robots  *visit.RobotsFile // nil: unknown, or to be fetched again
	rules   *robots.Rules     // robots parsed
	delay   time.Duration     // w, raised by Crawl-delay
	fetched int64
	parked  bool
	// lookingUp is set while the host's DNS look-up is queued or under
	// way, so that each look-up is started once and none is forgotten.
	lookingUp bool

	// leasing is the head read on its way to the loop for the site's
	// next lease (nil when none is).
	leasing *leasing

	// robotsAddrs are the addresses of the hosts the site's robots.txt
	// redirects to (visit.Lease.RobotsAddrs), resolved by
	// lookupRobotsHost.
	robotsAddrs map[string]netip.Addr
	// robotsTries counts the site's robots.txt fetches in a row that
	// found it unreachable (5xx, 429, network), robotsWhy the last
	// outcome; givenUp, when set, says why the site is left alone for the
	// rest of the run (see giveUp); failWhy why it was last parked or its
	// look-up failed.
	robotsTries int
	robotsWhy   string
	givenUp     string
	failWhy     string
}

// leasing is a site taken from the frontier whose queue head the loop has
// asked the committer for. The head holds what was queued when it was
// asked for; what the site's queue gained or had re-ordered since is
// gathered here, so that the frontier's count and head priority come out
// right when the head arrives (onHead).
type leasing struct {
	budget     int64   // pages the lease may take (c, or less near a page limit)
	since      int64   // URLs queued since
	sincePrio  float64 // the best of them
	reprio     bool    // a Reprioritizer changed the queue since
	reprioHead float64
}

// leaseRun is a lease handed to the dispatcher, as the loop follows it.
type leaseRun struct {
	lease   *visit.Lease
	site    *site
	planned int64 // pages it may still fetch (counted in leaseBook.planned)
	seq     int   // the last result applied
	early   map[int]visit.Result
	upTo    int // lease.URLs[upTo:] are not reported fetched
	tracker *visitTracker
	revoked []bool // lease.URLs[i] revoked (see visit.Feed); nil for none
	// want, for a lease of an earlier run (adopt.go), are its URLs the
	// store still holds queued: only their results are applied.
	want map[uint64]bool
}

// crawl is the loop's state. Only the loop goroutine touches it. Each
// feature keeps its state in a value of its own (tally, seedWatch,
// lookups, leaseBook, detection, webGraph, ranker, reprioritizer,
// recrawler); the loop alone discovers URLs and writes the batch.
type crawl struct {
	e      *Engine
	f      *frontier.Frontier
	sites  map[int64]*site
	batch  *pending
	closed chan struct{} // closed when the loop has returned: late reports are dropped
	// pendingMost is the most the loop's batch, the results queued and
	// the committer's held at the end of a wake-up (Stats.StorePendingMax).
	pendingMost int64

	visitCtx   context.Context
	leases     leaseBook
	dns        lookups
	seeds      seedWatch
	tally      tally
	nextSiteID int64
	nextSeq    int64
	hops       map[uint64]int // redirect chain length of queued redirect targets

	// Parked sites with rounds left, tried again after errors.park_for.
	parkedSites []*site

	retries   retries   // 429/503 tries, sites given up, sitemaps read; see retries.go
	steps     stepClock // where the loop's wake-ups spend their time
	web       webGraph  // the URLs seen and the links of the pages fetched
	rank      ranker
	reprio    reprioritizer                                     // a strategy that re-orders queued pages; see reprioritize.go
	detect    detection                                         // duplicate detection; see detect.go
	verdict   verdict                                           // what detection last asked of the loop (see apply)
	inScope   func(u string, depth int) (visit.FoundLink, bool) // the robots' scope
	rc        *recrawler                                        // nil when recrawling is off
	followBuf []followed

	savedPause bool
	adopted    string // the start event's note on leases of an earlier run taken over (adopt.go)
}

// tally is the crawl's figures, which publish copies into Stats.
type tally struct {
	// fetches counts the pages' fetches, recrawls included (lidi's
	// probes are none), recrawls those of URLs fetched before: their
	// difference is the pages stored, the distinct URLs fetched.
	fetches, recrawls, bytes, errors, discovered int64
	errKinds                                     map[visit.FailureKind]int64
	skipped                                      map[record.SkipReason]int64
	// kept are the figures of errKinds, skipped and the sitemaps' as the
	// store holds them (record.Counters.Tallies), by key.
	kept      map[tallyKey]int64
	keptSum   int64     // the sum of those figures when takeTallies last looked
	published time.Time // when publish last copied them
	// The longest the loop waited for the store (Stats.StoreWait).
	storeWait time.Duration
}

// pagesFetches says how many pages the crawl stored and, when it fetched
// some again, in how many fetches: "40 pages" or "40 pages, 55 fetches
// (15 recrawls)".
func (t *tally) pagesFetches() string {
	if t.recrawls == 0 {
		return fmt.Sprintf("%d pages", t.fetches)
	}
	return fmt.Sprintf("%d pages, %d fetches (%d recrawls)", t.fetches-t.recrawls, t.fetches, t.recrawls)
}

// leaseBook follows the leases: busy counts the sites taken from the
// frontier, whose head is being read (heading) or whose lease runs (runs).
type leaseBook struct {
	results chan visit.Result // robots' reports
	heads   chan headReply    // queue heads read for leases
	runs    map[uint64]*leaseRun
	next    uint64
	heading int
	busy    int
	planned int64 // pages planned by visits in flight
}

// lookups are the sites' DNS look-ups: at most dns.parallel running, the
// rest queued, and those that failed tried again after dns.retry.
type lookups struct {
	out     chan dnsResult
	running int
	queue   []*site
	retry   []dnsRetry
}

// seedWatch follows the seeds' sites while the crawl has had no answer
// yet: when all of them fail, it ends at once (SeedsFailedError).
type seedWatch struct {
	answered bool
	sites    map[int64]bool
	failed   map[int64]string
	bad      []string // seeds that are no URL in scope
}

type dnsRetry struct {
	site *site
	at   time.Time
}

type dnsResult struct {
	site *site
	addr netip.Addr
	err  error
	// robotsHost, when set, was looked up for the site's robots.txt
	// redirects (lookupRobotsHost), not for the site itself.
	robotsHost string
}
