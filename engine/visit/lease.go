package visit

import (
	"context"
	"net/netip"
	"strconv"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/robots"
	"lidi/engine/sitemap"
	"lidi/engine/urlnorm"
)

// DefaultLeaseGrace is how long past a lease's Deadline its End may come
// before the lease is given up and its site leased again
// (cluster.lease_grace): the time one last request may still take.
const DefaultLeaseGrace = 30 * time.Second

// Lease is one visit to one site handed to a robot: up to len(URLs) pages
// over one keep-alive connection, Delay apart, no request before NotBefore
// or after Deadline. The zero Lease is not valid; the loop makes leases.
type Lease struct {
	ID     uint64 // unique in a crawl, across its runs
	Site   int64
	Key    string // "scheme://host[:port]"
	Host   string
	Addr   netip.Addr // the host's address, resolved by the loop
	Port   int
	Robots *RobotsFile // the site's robots.txt; nil: fetch it first
	// RobotsAddrs are the addresses of the other hosts the site's
	// robots.txt redirects to, by lower-case host name, as the loop
	// resolved them after a robot met them (RobotsFile.Unresolved).
	RobotsAddrs map[string]netip.Addr `json:",omitempty"`
	// Tries counts, by URL ID, the earlier answers 429 or 503 to the
	// lease's URLs in this run (LeaseEnd.Retried); a URL without one is
	// absent.
	Tries     map[uint64]int     `json:",omitempty"`
	Delay     time.Duration      // between two requests (w, or robots.txt Crawl-delay)
	NotBefore time.Time          // the first request may not start earlier
	Deadline  time.Time          // no request may start later
	URLs      []record.QueuedURL // to fetch, in this order

	// Rules is Robots parsed, filled by the loop for robots in this
	// process (it is not serialised: a remote robot parses Robots).
	Rules *robots.Rules `json:"-"`
	// Feed is the loop's side of the lease for a robot of this process
	// (see Feed); it is not serialised: a remote robot runs its lease to
	// the end as it was handed out.
	Feed *Feed `json:"-"`
}

// Feed is what the loop tells a robot of this process while its
// lease runs, so that duplicate detection's decisions on the lease's first
// pages spare the rest: without it a site's first lease, handed out before
// any rule existed, fetches up to c copies that a rule learned from its
// first few would have covered.
//
// Applied carries the Seq of each page result the loop has applied; a
// robot starts no page while more than AheadMax of the pages it reported
// wait to be applied, so that what the loop learns from them reaches the
// rest of the lease in time whatever the delay (with w of a second or
// more it never waits). Revoked carries the IDs of URLs of the lease the
// loop no longer wants fetched (a rule learned since covers them, or they
// are copies beyond what a candidate rule still needs); the robot returns
// them unfetched (LeaseEnd.Returned) and the loop decides again when it
// next reads them from the site's queue. The loop sends each page's Seq
// and each URL at most once and both channels hold len(URLs), so a send
// never blocks.
type Feed struct {
	Applied chan int
	Revoked chan uint64
}

// NewFeed returns a Feed for a lease of n URLs.
func NewFeed(n int) *Feed {
	return &Feed{Applied: make(chan int, n), Revoked: make(chan uint64, n)}
}

// AheadMax is how many pages a robot of this process may have reported
// that the loop has not applied yet when it starts another. None: the
// next page of a lease is often another spelling of the last (another
// order of a listing's parameters, its sort or view), and one pair is
// all a rule needs once other hosts showed its shape, so a page started
// before the last was decided is often the copy that decision spares.
// With a delay between pages (w of a second or more) the loop has
// decided long before the next page is due; without one, the robots of
// other sites keep the connections busy meanwhile.
const AheadMax = 0

// RobotsFile is a site's robots.txt as fetched: its status and body, from
// which robots.Rules are rebuilt wherever they are needed.
type RobotsFile struct {
	Status  int // HTTP status of the last request; -1 unreachable
	Body    []byte
	Fetched time.Time
	Wire    []byte // as PageRecord.Wire
	IP      string // as PageRecord.IP

	// URL is where the last request went: the site's /robots.txt, or
	// where its redirects led ("" for a file from before redirects were
	// followed).
	URL string `json:",omitempty"`
	// Redirects are the requests before the one to URL, in order, each
	// URL with the redirect it answered; End says why the chain stopped
	// at URL (fetch.ChainAnswered: URL answered Status, else Status is
	// the redirect not followed).
	Redirects []fetch.Hop    `json:",omitempty"`
	End       fetch.ChainEnd `json:",omitempty"`
	// Unresolved, with Status -1, is the host a redirect leads to whose
	// address the lease did not carry: the loop resolves it and the next
	// visit follows the chain again.
	Unresolved string `json:",omitempty"`
}

// Rules parses the file (a status that is no HTTP status is an unreachable
// file). A nil *RobotsFile has no rules (nil).
func (f *RobotsFile) Rules() *robots.Rules {
	if f == nil {
		return nil
	}
	return robots.FromResponse(f.Status, f.Body)
}

// Result is one report of a robot on a lease: a page fetched, or the end of
// the lease. Exactly one of Page and End is set.
type Result struct {
	Lease uint64 // Lease.ID
	Seq   int    // 1 for the lease's first result, then 2, 3, …
	Page  *PageResult
	End   *LeaseEnd

	// Committed, when not nil, is told once what the result changed is
	// durable in the store (nil), or never will be (the store failed, or
	// the crawl ended before taking the result: ErrStopped). A result the
	// loop drops (a lease it does not know, a result delivered twice) is
	// committed with everything before it. A remote dispatcher
	// acknowledges its transport's message only then, so a master killed
	// between taking a result and storing it has it delivered again.
	// It is called from the engine's committer and must not block. It
	// is not serialised.
	Committed func(error) `json:"-"`
}

// PageResult is one page fetched and what was found on it.
type PageResult struct {
	Record record.PageRecord // Record.Body is zlib-compressed (nil when bodies are not kept)
	URL    string            // the URL fetched, normalised
	Depth  int
	// Links are the links the crawl's scope allows, in page order: a
	// redirect's target first, then the links of the body.
	Links   []FoundLink
	Skipped LinkSkips
	Detect  time.Duration // CPU time spent fingerprinting the page (duplicate detection's cost), on one page in cputime.SampleEvery and then counted SampleEvery times; 0 on the others
	// Sitemap, when the page is a sitemap, says what was in it; its
	// entries are Links.
	Sitemap *SitemapRead `json:",omitempty"`
	Claims  dedup.Claims `json:",omitzero"` // what the page says of its origin (duplicate detection's evidence)
}

// SitemapRead is what a robot read in a sitemap it fetched.
type SitemapRead struct {
	Kind    sitemap.Kind
	Entries int    // URLs (pages, or the sitemaps of an index) in scope, reported as links
	OffSite int    // refused by the cross-host rule
	Skipped int    // invalid, or out of the crawl's scope
	Err     string // why the file was refused part way (its entries before kept); "" when read whole
}

// FoundLink is a link to a URL in scope, normalised.
type FoundLink struct {
	URL string
	// LastMod is the <lastmod> a sitemap gave the URL, a hint of when it
	// last changed; zero for a link of a page.
	LastMod time.Time `json:",omitzero"`

	// Derived from URL by the robot that found it; not serialised (a
	// receiver derives them again, see Resolve).
	ID   uint64 `json:"-"` // urlnorm.Fingerprint(URL)
	Key  string `json:"-"` // urlnorm.Site's key
	Host string `json:"-"`
}

// Resolve fills a link's derived fields, when it came without them (from
// another process), and reports whether the URL names a site.
func (l *FoundLink) Resolve() bool {
	if l.Key != "" {
		return true
	}
	key, host, ok := urlnorm.Site(l.URL)
	if !ok {
		return false
	}
	l.ID, l.Key, l.Host = urlnorm.Fingerprint(l.URL), key, host
	return true
}

// LinkSkips counts the links of a page not reported, by reason.
type LinkSkips struct {
	Scope, NoFollow, Invalid int
}

// FailureKind names why a fetch, a look-up or a visit failed: a fetch
// error's kind (fetch.ErrorKind: "timeout", "refused", …), an HTTP answer's
// class, or one of the kinds below. The engine counts errors by it
// (Stats.ErrorKind).
type FailureKind string

const (
	FailureNone      FailureKind = ""
	FailureExpired   FailureKind = "lease-expired"                 // no End came before the deadline and its grace
	FailureDNS       FailureKind = "dns"                           // the host's look-up failed
	FailureStore     FailureKind = "store"                         // the store could not read the site's queue
	FailureTruncated FailureKind = FailureKind(fetch.KindTooLarge) // a body cut at fetch.max_body_size
	// FailureRobotsHost: robots.txt redirects to a host whose address
	// the loop has not resolved yet (RobotsFile.Unresolved).
	FailureRobotsHost FailureKind = "robots-redirect-host"
)

// FetchFailure is the FailureKind of a fetch error's kind.
func FetchFailure(k fetch.ErrorKind) FailureKind { return FailureKind(k) }

// HTTPFailure is the FailureKind of an HTTP status: "http-4xx" or
// "http-5xx" by its class; SlowDown gives the status itself for the
// answers that ask a crawler to slow down.
func HTTPFailure(status int) FailureKind {
	return FailureKind("http-" + strconv.Itoa(status/100) + "xx")
}

// SlowDown is the FailureKind of a 429 or 503 answer: "http-429", "http-503".
func SlowDown(status int) FailureKind { return FailureKind("http-" + strconv.Itoa(status)) }

// LeaseEnd is the last result of a lease.
type LeaseEnd struct {
	// Next is the earliest the site may be visited again by the robot's
	// account: Delay after its last request, a Retry-After, or a
	// robots.txt retry. The loop may put it later (back-off).
	Next  time.Time
	Delay time.Duration // the delay in force (w raised by Crawl-delay)
	// Robots is robots.txt as fetched during the lease; nil when the
	// lease carried it.
	Robots   *RobotsFile
	Skips    []record.Skip // URLs not fetched: robots.txt disallows them
	Returned []uint64      // URLs neither fetched nor skipped: they stay queued
	// Retried are the URLs of Returned the site answered 429 or 503 (not
	// reported as pages): the loop counts their tries (Lease.Tries).
	Retried []uint64 `json:",omitempty"`
	// Found are the sitemaps the robots.txt fetched during the lease
	// names, in scope, when the crawl reads the site's sitemaps
	// (Config.Sitemaps): links of robots.txt.
	Found   []FoundLink `json:",omitempty"`
	Fetched int         // pages fetched (PageResults sent)

	Failure    FailureKind // why the lease ended early; FailureNone when it did not
	Failed     bool        // ended on a failed fetch
	BackedOff  bool        // 429 or 503, or robots.txt 5xx/unreachable
	RetryAfter bool        // Next comes from a Retry-After header

	// Rules is Robots parsed, by a robot of this process (not
	// serialised).
	Rules *robots.Rules `json:"-"`
}

// Dispatcher runs leases. The engine's loop calls Dispatch from its own
// goroutine; an implementation must return at once and run the lease
// elsewhere, passing its results to report (from any goroutine, never from
// inside Dispatch: report blocks until the loop takes the result). ctx ends
// when the crawl stops for good: a lease still running then ends at once,
// its page in flight returned.
type Dispatcher interface {
	Dispatch(ctx context.Context, l *Lease, report func(Result))
}

// A Resumer is a Dispatcher whose leases outlive the process that handed
// them out (a cluster master's, run by slaves). Run, once it has loaded the
// store, asks it for the leases an earlier run left out (Outstanding) and
// hands back, in one call to Resume, those it follows as leases of its own:
// their sites stay busy, and their results are applied (the pages the store
// does not hold yet) until their End or their deadline and grace. The
// others are done with: their results, should any come, are dropped.
type Resumer interface {
	Dispatcher
	Outstanding() []*Lease
	Resume(leases []*Lease, report func(Result))
}

// A Recaller is a Dispatcher whose leases run where Robot.Halt does not
// reach (on slaves). The engine calls Recall(true) when the crawl pauses or
// stops, and Recall(false) when it resumes: the leases in flight then end
// after their current page, returning their other URLs, as local ones do.
type Recaller interface {
	Recall(halt bool)
}
