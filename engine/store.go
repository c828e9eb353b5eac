package engine

import (
	"context"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
)

// Store is what the engine needs from durable storage. The engine owns the
// crawl's logic; a Store only keeps what the engine tells it and gives it back
// after a restart. lidi's implementation is storage.DB (SQLite); main.go wires
// it in, so the engine never imports storage.
//
// The engine calls Apply and Head from a single goroutine (its committer), so
// an implementation need not serialise them itself; Sites, URLFingerprints and
// Counters are called once at start, before any Apply.
type Store interface {
	// Sites returns every site ever recorded, with Pending set to the number
	// of its URLs still in state URLQueued.
	Sites(ctx context.Context) ([]SiteRecord, error)
	// URLFingerprints calls fn with the ID of every URL ever recorded, in
	// any order, so the engine can rebuild its seen-set after a restart.
	URLFingerprints(ctx context.Context, fn func(id uint64)) error
	// Counters returns totals recorded so far (pages fetched, bytes, ...),
	// so a resumed crawl's statistics continue where they stopped.
	Counters(ctx context.Context) (Counters, error)
	// Apply writes a batch atomically: all of it or none of it.
	Apply(ctx context.Context, b *Batch) error
	// Fingerprints calls fn for every fetched page with its content
	// fingerprints, so duplicate detection can be rebuilt after a restart.
	Fingerprints(ctx context.Context, fn func(FetchedPage)) error
	// Rules returns every URL rewrite rule recorded (withdrawn ones
	// included), oldest first, and Soft404s every soft-404 signature.
	Rules(ctx context.Context) ([]RuleRecord, error)
	Soft404s(ctx context.Context) ([]Soft404Record, error)
	// RuleSkipped calls fn for every URL skipped under a rule
	// (URLRecord.Rule, Skip.Rule) and not queued again since; Held
	// returns the pages whose links wait for a probe's answer.
	RuleSkipped(ctx context.Context, fn func(RuleSkippedURL)) error
	Held(ctx context.Context) ([]HeldLinks, error)
	// Head returns up to n URLs of site in state URLQueued, ordered by
	// (Priority, Seq) ascending. next is the Priority of the first queued URL
	// after those returned, and more reports whether there is one.
	Head(ctx context.Context, site int64, n int) (urls []QueuedURL, next float64, more bool, err error)
}

// URLState is the life cycle of a URL in the store.
type URLState int

const (
	URLQueued  URLState = 0 // discovered, waiting in its site's queue
	URLFetched URLState = 1 // fetched (whatever the status), never fetched again by this crawl
	URLSkipped URLState = 2 // dropped without fetching (robots.txt, scope, parked site)
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
	State      URLState // URLQueued or URLSkipped
	SkipReason string   // why it was skipped, when State is URLSkipped
	Rule       uint64   // the rule that covers it when SkipReason is SkipRule (dedup.Rule.ID); 0 for none
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
	Digest       uint64 // content digest of the body (engine.Digest, CRC-64 ECMA); 0 for no body
	Body         []byte // body compressed with zlib; nil when not kept
	Err          string // fetch error, "" on success
	Redirect     string // Location of a 3xx, normalised
	NoIndex      bool   // robots meta or X-Robots-Tag said noindex
	Links        int    // links extracted
	Simhash      uint64 // near-duplicate fingerprint of the text (dedup.Fingerprints.Text); 0 for none
	MainSimhash  uint64 // the same of the main text (dedup.Fingerprints.Main); 0 for none
	NoURLSimhash uint64 // the same of the text without its URL's words (dedup.Fingerprints.NoURL); 0 for none
	TitleHash    uint64 // hash of the title's words (dedup.Fingerprints.Title); 0 for none
	TypeCheck    string // content-type decision: "html", "html-undeclared", "binary-as-html" (download stopped), "other"

	// Recrawl: the URL had been fetched before (QueuedURL.Copy was set).
	// Verdict says whether the page changed since; for a 304 the fields
	// above describe the answer, and the copy kept is still the old one.
	Recrawl      bool
	Verdict      fetch.Verdict
	ETag         string // the validators the server sent, for the next recrawl
	LastModified string

	// What a WARC record of the fetch needs (storage.keep_headers): Wire
	// is the request head as sent followed by the response head as
	// received (fetch.Wire.Request, then .Head), zlib-compressed; IP the
	// address connected to. Nil and "" when not kept or not captured.
	Wire []byte
	IP   string
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
	Kind       string // "exact", "near" or "soft-404" (dedup.Kind)
	Test       string // the test that found it: "digest", "same-tail", "path-repeat", "soft-404", ...
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
	// Duplicate detection's decisions (docs/detection.md).
	EventRule          EventKind = "rule"           // a URL rewrite rule learned
	EventRuleWithdrawn EventKind = "rule-withdrawn" // a rule withdrawn: a URL it rewrites holds other content
	EventSoft404       EventKind = "soft-404"       // a host's soft-404 page recognised
)

// Counters are crawl totals kept across restarts.
type Counters struct {
	Pages  int64
	Bytes  int64
	Errors int64
}

// Batch is a set of changes applied atomically by Store.Apply. Its zero value
// is an empty batch. A Batch is not safe for concurrent use.
type Batch struct {
	Sites  []SiteRecord // inserted or updated (matched by ID); Pending is ignored
	URLs   []URLRecord  // inserted; a URL already present is left unchanged
	Pages  []PageRecord // recorded, and their URLs moved to URLFetched
	Links  []Link       // inserted; duplicates ignored
	Skips  []Skip       // queued URLs moved to URLSkipped
	Events []Event

	Dups     []DupRecord
	Rules    []RuleRecord
	Soft404s []Soft404Record
	// UnskipRules are the IDs (dedup.Rule.ID) of rules withdrawn: the
	// URLs skipped under them (Skip.Rule, URLRecord.Rule) move back to
	// URLQueued, after the batch's Skips.
	UnskipRules []uint64
	// Unskips are URLs skipped under a rule that move back to URLQueued
	// one by one, after UnskipRules: their canonical URL answered that it
	// does not exist (see dedup.Detector.NotFound).
	Unskips []uint64
	// Holds are inserted (matched by Probe), then Releases, probe IDs
	// whose answer decided the links they held, deleted.
	Holds    []HeldLinks
	Releases []uint64

	Priorities []PriorityUpdate // queued URLs re-ordered; URLs no longer queued are left as they are
	RankRuns   []RankRun        // inserted or replaced (matched by Time)
	Ranks      []RankRecord     // each URL's latest rank replaces its earlier one

	// Recrawl (see recrawl_loop.go).
	Requeues      []Requeue            // fetched URLs queued again; URLs not in URLFetched are left as they are
	Channels      []ChannelRecord      // inserted or replaced (matched by ID)
	Groups        []GroupRecord        // inserted or replaced (matched by Index)
	Reassignments []ReassignmentRecord // appended

	// committed are the Result.Committed of the results the batch holds
	// (and of those dropped since the last batch): told once it is
	// written, or fails to be.
	committed []func(error)
}

// Len reports how many records the batch holds.
func (b *Batch) Len() int {
	return len(b.Sites) + len(b.URLs) + len(b.Pages) + len(b.Links) + len(b.Skips) + len(b.UnskipRules) + len(b.Unskips) + len(b.Events) +
		len(b.Dups) + len(b.Rules) + len(b.Soft404s) + len(b.Holds) + len(b.Releases) + len(b.Priorities) + len(b.RankRuns) + len(b.Ranks) +
		len(b.Requeues) + len(b.Channels) + len(b.Groups) + len(b.Reassignments)
}

// Reset empties the batch, keeping its storage.
func (b *Batch) Reset() {
	clear(b.Sites)
	clear(b.Pages)
	clear(b.Rules)
	clear(b.Soft404s)
	clear(b.Holds)
	b.Sites, b.URLs, b.Pages, b.Links, b.Skips, b.Events = b.Sites[:0], b.URLs[:0], b.Pages[:0], b.Links[:0], b.Skips[:0], b.Events[:0]
	b.Dups, b.Rules, b.Soft404s, b.UnskipRules, b.Unskips = b.Dups[:0], b.Rules[:0], b.Soft404s[:0], b.UnskipRules[:0], b.Unskips[:0]
	b.Holds, b.Releases = b.Holds[:0], b.Releases[:0]
	b.Priorities, b.RankRuns, b.Ranks = b.Priorities[:0], b.RankRuns[:0], b.Ranks[:0]
	clear(b.Reassignments)
	b.Requeues, b.Channels, b.Groups, b.Reassignments = b.Requeues[:0], b.Channels[:0], b.Groups[:0], b.Reassignments[:0]
	clear(b.committed)
	b.committed = b.committed[:0]
}

// SkipRule is the skip reason of a URL that a rule of duplicate detection
// covers: its canonical URL is fetched instead, if any.
const SkipRule = "rule"

// Skip drops a queued URL without fetching it.
type Skip struct {
	URL    uint64
	Reason string // "robots", "rule" (a rewrite rule covers it), ...
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
}
