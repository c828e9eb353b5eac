package record

import (
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
)

// URLState is the life cycle of a URL in the store.
type URLState int

const (
	URLQueued  URLState = 0 // discovered, waiting in its site's queue
	URLFetched URLState = 1 // fetched (whatever the status), never fetched again by this crawl
	URLSkipped URLState = 2 // dropped without fetching (robots.txt, scope, parked site)
	// URLProbed is lidi's own soft-404 probe, answered (PageRecord.Probe):
	// a URL made up so as not to exist, asked once to learn how its host
	// answers one (docs/detection.md). Its answer is kept on its row as
	// evidence, but it is no page of the crawl: not counted in pages,
	// fetches or errors, not in the fetch history, never recrawled.
	URLProbed URLState = 3
)

// SiteRecord is a site (scheme, host and port) as the store keeps it.
type SiteRecord struct {
	ID   int64
	Key  string // "http://host:port" with default ports dropped, as in normalised URLs
	Host string // host name without port
	Addr string // resolved IP address, "" until resolved

	RobotsStatus  int       // HTTP status of the last robots.txt fetch; 0 never fetched; -1 unreachable
	RobotsBody    []byte    // body of the last robots.txt fetch (capped)
	RobotsFetched time.Time // when robots.txt was fetched
	RobotsWire    []byte    // the robots.txt fetch's request and response head (PageRecord.Wire); nil when not kept
	RobotsIP      string    // the address that robots.txt came from; "" when not kept
	// Where the robots.txt fetch ended (RFC 9309 2.3.1.2: redirects are
	// followed): RobotsURL the last request's URL ("" when not known, for
	// a file of an older lidi), RobotsRedirects the requests before it
	// with the redirect each answered, RobotsEnd why the chain stopped.
	RobotsURL       string
	RobotsRedirects []fetch.Hop
	RobotsEnd       fetch.ChainEnd

	NextVisit time.Time // the earliest time the site may be visited again
	Failures  int       // consecutive failed visits
	Parked    bool      // given up after repeated failures
	Fetched   int64     // pages fetched from the site

	Pending int64 // URLs queued; filled by Sites, ignored by Apply
}

// URLRecord is a newly discovered URL.
type URLRecord struct {
	ID         uint64 // urlnorm.Fingerprint of URL; unique
	Site       int64
	URL        string
	Depth      int
	Priority   float64 // order inside the site's queue (lower first), set by the strategy
	Seq        int64   // discovery order, breaks ties
	Parent     uint64  // ID of the page it was found on; 0 for seeds
	Discovered time.Time
	State      URLState   // URLQueued or URLSkipped
	SkipReason SkipReason // why it was skipped, when State is URLSkipped
	Rule       uint64     // the rule that covers it when SkipReason is SkipRule (dedup.Rule.ID); 0 for none
	// LastMod is the <lastmod> the sitemap that listed the URL gave it
	// (sitemaps.org: when the page last changed), a change hint for
	// recrawl (RecrawlURL.LastMod reads it back); zero for a URL found
	// as a link, or listed without one.
	LastMod time.Time
}

// PageRecord is the outcome of one fetch.
type PageRecord struct {
	URL          uint64 // URL ID
	Site         int64
	Fetched      time.Time
	Status       int    // HTTP status; 0 when no response was received
	ContentType  string // declared Content-Type
	Length       int64  // body bytes received (after content decoding)
	Truncated    bool   // the body passed the size limit and was cut
	Duration     time.Duration
	Digest       uint64          // content digest of the body under the crawl file's DigestKind; 0 for no body
	Body         []byte          // body compressed with zlib; nil when not kept
	Err          string          // fetch error, "" on success
	Redirect     string          // Location of a 3xx, normalised
	NoIndex      bool            // robots meta or X-Robots-Tag said noindex
	Links        int             // links extracted
	Simhash      uint64          // near-duplicate fingerprint of the text (dedup.Fingerprints.Text); 0 for none
	MainSimhash  uint64          // the same of the main text (dedup.Fingerprints.Main); 0 for none
	NoURLSimhash uint64          // the same of the text without its URL's words (dedup.Fingerprints.NoURL); 0 for none
	TitleHash    uint64          // hash of the title's words (dedup.Fingerprints.Title); 0 for none
	TypeCheck    fetch.TypeCheck // content-type decision
	// Probe: the fetch is lidi's own soft-404 probe (dedup.IsProbe), not
	// a page of the crawl: its URL moves to URLProbed, and it is left
	// out of the crawl's counters and fetch history.
	Probe bool

	// Recrawl: the URL had been fetched before (QueuedURL.Copy was set).
	// Verdict says whether the page changed since; for a 304 the fields
	// above describe the answer, and the copy kept is still the old one.
	Recrawl      bool
	Verdict      fetch.Verdict
	ETag         string // the validators the server sent, for the next recrawl
	LastModified string

	// What a WARC record of the fetch needs (storage.keep_headers): Wire
	// is the request head as sent followed by the response head as
	// received (fetch.Wire.Request, then .Head), as a zlib stream (a
	// robot writes stored blocks, not compressed: see visit's Robot.wire);
	// IP the address connected to. Nil and "" when not kept or not captured.
	Wire []byte
	IP   string
}

// DupCounts counts pages found to duplicate another, by kind
// (DupRecord.Kind). It is a plain value.
type DupCounts struct {
	Exact, Near, Soft404 int64
}

// Add counts one page of kind k; other kinds are not counted.
func (c *DupCounts) Add(k dedup.Kind, n int64) {
	switch k {
	case dedup.Exact:
		c.Exact += n
	case dedup.Near:
		c.Near += n
	case dedup.Soft404:
		c.Soft404 += n
	}
}

// FetchedPage is what duplicate detection keeps of a fetched page.
type FetchedPage struct {
	URL     uint64
	Addr    string // the URL itself
	Digest  uint64
	Simhash uint64
	Main    uint64 // PageRecord.MainSimhash
	NoURL   uint64 // PageRecord.NoURLSimhash
	Title   uint64 // PageRecord.TitleHash
	Status  int
}

// DupRecord is a page found to duplicate another, and how.
type DupRecord struct {
	URL, Of    uint64
	Kind       dedup.Kind // Exact, Near or Soft404
	Test       string     // the test that found it: "digest", "same-tail", "path-repeat", "soft-404", ...
	Similarity float64
	Time       time.Time
}

// RuleRecord is a URL rewrite rule duplicate detection learned, with the
// pairs of URLs that supported it and, once withdrawn, contradicted it.
// A rule is recorded when learned and again when withdrawn.
type RuleRecord struct {
	Rule dedup.Rule
	Time time.Time // when learned, or withdrawn
}

// RuleSkippedURL is a URL skipped under a rule.
type RuleSkippedURL struct {
	ID   uint64
	URL  string
	Site int64
	Rule uint64 // dedup.Rule.ID
}

// HeldLinks are the links of a fetched page that wait for the answer to
// a soft-404 probe (see crawl.probe): when it comes they are followed,
// or not if the page is a soft 404. The store keeps them from the batch
// that queues the probe to the one that holds its answer, so that a
// crawl stopped in between (kill -9 included) decides them when it runs
// again.
type HeldLinks struct {
	Probe uint64   // ID of the probe URL
	Page  uint64   // ID of the page
	Links []string // the page's links (PageResult.Links), normalised, in page order

	// Filled by Held from the page's record; ignored by Apply.
	URL                   string
	Depth                 int
	Redirect              string
	Simhash, NoURL, Title uint64
}

// Soft404Record is a host's soft-404 page as duplicate detection
// recognised it, with the pairs of URLs that answered it.
type Soft404Record struct {
	Sig  dedup.Soft404Sig
	Time time.Time
}

// Link is an edge of the discovered web graph.
type Link struct {
	From, To uint64
}

// Event is a notable happening worth keeping in the crawl's log.
type Event struct {
	Time time.Time
	Kind EventKind
	Site string // the site's key, when it concerns one
	Text string
}

// EventKind names a kind of event.
type EventKind string

const (
	EventStart      EventKind = "start"       // a run of the crawl started
	EventPause      EventKind = "pause"       // paused, everything written
	EventResume     EventKind = "resume"      // resumed after a pause
	EventSnapshot   EventKind = "snapshot"    // a snapshot was written
	EventStop       EventKind = "stop"        // stopped before its end (the text says why); run again to continue
	EventDone       EventKind = "done"        // ended (the text says why)
	EventParked     EventKind = "parked"      // a site given up for errors.park_for, or for good
	EventUnparked   EventKind = "unparked"    // a parked site tried again
	EventDNSFailed  EventKind = "dns-failed"  // a host's look-up failed; tried again after dns.retry
	EventRobots5xx  EventKind = "robots-5xx"  // robots.txt answered 5xx or could not be fetched
	EventSeedFailed EventKind = "seed-failed" // a seed could not be fetched
	EventStrategy   EventKind = "strategy"    // the strategy had to be overridden
	EventPageRank   EventKind = "pagerank"    // a PageRank run failed
	EventSitemap    EventKind = "sitemap"     // a sitemap read only in part: a protocol limit broken, or malformed
	// Duplicate detection's decisions (docs/detection.md).
	EventRule          EventKind = "rule"           // a URL rewrite rule learned
	EventRuleWithdrawn EventKind = "rule-withdrawn" // a rule withdrawn: a URL it rewrites holds other content
	EventSoft404       EventKind = "soft-404"       // a host's soft-404 page recognised
	// Recrawling (docs/recrawl.md).
	EventRecrawl  EventKind = "recrawl"  // recrawling started, or a channel or task failed
	EventReassign EventKind = "reassign" // the recrawl policy recalculated the groups' intervals
)

// Counters are crawl totals kept across restarts. Pages counts every
// fetch recorded (lidi's probes aside), Recrawls those of them that
// fetched a URL again (PageRecord.Recrawl): Pages-Recrawls is the number
// of distinct URLs fetched.
type Counters struct {
	Pages    int64
	Bytes    int64
	Errors   int64
	Recrawls int64
	// Tallies are the engine's own figures, by name (Batch.Tallies); nil
	// for none.
	Tallies map[string]int64
}

// Tally adds Add to the engine's figure Key (errors by kind, URLs not
// fetched by reason, ...), kept with the batch that holds what it counts
// and given back by Counters, so that a continued crawl's figures go on
// from where they stopped.
type Tally struct {
	Key string
	Add int64
}

// SkipReason says why a URL or a link was not fetched.
type SkipReason string

// Why URLs are skipped (URLRecord.SkipReason, Skip.Reason) and links not
// followed (the engine's Stats.Skipped).
const (
	SkipRobots        SkipReason = "robots"         // robots.txt disallows it
	SkipRule          SkipReason = "rule"           // a rewrite rule of duplicate detection covers it: its canonical URL is fetched instead
	SkipScope         SkipReason = "scope"          // a link out of the crawl's scope
	SkipNoFollow      SkipReason = "nofollow"       // a rel="nofollow" link, or a page that says nofollow
	SkipInvalid       SkipReason = "invalid"        // a link that is no URL lidi can fetch
	SkipDuplicate     SkipReason = "duplicate"      // the links of a page found to duplicate another
	SkipRedirectChain SkipReason = "redirect-chain" // a redirect past fetch.max_redirects
	SkipBinary        SkipReason = "binary-as-html" // a body declared HTML that was binary: download stopped
)

// Skip drops a queued URL without fetching it.
type Skip struct {
	URL    uint64
	Reason SkipReason
	Rule   uint64 // the rule when Reason is SkipRule (dedup.Rule.ID); 0 for none
}

// QueuedURL is a URL waiting in a site's queue, as Head returns it.
type QueuedURL struct {
	ID       uint64
	URL      string
	Depth    int
	Priority float64
	Seq      int64
	// Copy is what was kept of the URL's last fetch when it is queued
	// again for a recrawl; nil for a URL never fetched.
	Copy *fetch.Copy `json:",omitempty"`
	// SlowDowns counts the 429 and 503 answers the URL drew since it was
	// queued, in earlier runs too (Batch.SlowDowns): they count towards
	// errors.slow_down_tries.
	SlowDowns int `json:",omitempty"`
}

// SlowDown records that a queued URL drew a 429 or 503 answer and went
// back to its queue: Tries is the number of such answers since it was
// queued, kept across runs (QueuedURL.SlowDowns).
type SlowDown struct {
	URL   uint64
	Tries int
}

// RankRun is one PageRank recomputation of the crawl's link graph.
type RankRun struct {
	Time       time.Time // when it was computed: the key of its ranks
	Pages      int64     // pages fetched by then (the whole crawl's)
	Nodes      int       // URLs in the graph (fetched or not)
	Edges      int       // links of fetched pages
	Iterations int
	Coverage   float64 // share of PageRank held by fetched pages
	Oracle     float64 // the same against the oracle's true PageRank; -1 without oracle
	Ranks      bool    // every node's rank of this run was written (RankRecords with this Time)
}

// RankRecord is a page's PageRank at one recomputation.
type RankRecord struct {
	URL  uint64
	Rank float64
	Time time.Time // RankRun.Time
}

// PriorityUpdate is a new priority for a queued URL, from a strategy that
// re-orders its queue (frontier.Reprioritizer).
type PriorityUpdate struct {
	URL      uint64
	Priority float64
}

// CoveragePoint is one point of a PageRank coverage curve.
type CoveragePoint struct {
	Pages    int64   // pages fetched
	Coverage float64 // share of PageRank held by fetched pages (estimated)
	Oracle   float64 // the same against the true PageRank, when known; -1 if not
}
