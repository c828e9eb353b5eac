package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/frontier"
	"lidi/engine/keys"
	"lidi/engine/record"
	"lidi/engine/scope"
	"lidi/engine/urlnorm"
	"lidi/engine/visit"
)

// Config is everything a crawl is told. A field that is a config.yaml key
// names it in its yaml tag, and bounds its simple values in a check tag
// (package keys reads both); config.yaml documents every key with the
// default Defaults gives it; Validate checks the rest. A crawl's config file
// (package config) adds the keys only the program reads.
type Config struct {
	Seeds []string `yaml:"seeds"` // where the crawl starts: absolute http or https URLs
	// UserAgent is sent as User-Agent; its product token is the agent
	// robots.txt groups are matched against.
	UserAgent string `yaml:"user_agent"`

	Strategy      string        `yaml:"strategy"`                                    // a name of frontier's registry (frontier.Strategies); "optimal" needs Oracle
	Robots        int           `yaml:"robots" check:">=1"`                          // r: sites visited at once
	Delay         time.Duration `yaml:"politeness.delay" check:">=0"`                // w: between two requests to one site
	MaxDelay      time.Duration `yaml:"politeness.max_delay"`                        // cap on robots.txt Crawl-delay; at least Delay
	PagesPerVisit int           `yaml:"politeness.pages_per_connection" check:">=1"` // c: pages per visit, over one connection
	PerAddress    bool          `yaml:"politeness.one_per_address"`                  // one visit per IP address at a time

	MaxPages int64 `yaml:"limits.max_pages" check:">=0"` // fetches, recrawls included (Stats.Fetches); 0 = no limit

	Scope      scope.Config       `yaml:"scope"` // Scope.Seeds is set from Seeds
	Normalizer urlnorm.Normalizer `yaml:"urls"`
	Fetch      fetch.Config       `yaml:"fetch"` // Fetch.UserAgent empty: UserAgent

	RobotsTTL        time.Duration `yaml:"robots_txt.ttl" check:">0,<=24h"` // how long robots.txt is trusted (RFC 9309: at most 24 h)
	RobotsRetry      time.Duration `yaml:"robots_txt.retry"`                // after a 5xx or unreachable robots.txt
	RobotsTries      int           `yaml:"robots_txt.tries" check:">=1"`    // unreachable robots.txt fetches in a row before the site is given up for the run
	HonourNofollow   bool          `yaml:"robots_txt.nofollow"`             // rel="nofollow" links are not followed
	HonourMetaRobots bool          `yaml:"robots_txt.meta"`                 // <meta name=robots> and X-Robots-Tag

	Sitemaps visit.SitemapScope `yaml:"sitemaps.read"` // whose sitemaps are read: seeds (the default), all or off (docs/politeness.md)

	ParkAfter     int           `yaml:"errors.park_after" check:">=1"`      // consecutive failed visits (or look-ups) before a site is parked
	ParkFor       time.Duration `yaml:"errors.park_for" check:">0"`         // how long a parked site waits before it is tried again
	ParkRounds    int           `yaml:"errors.park_rounds" check:">=1"`     // times a site is parked before it is given up for good
	BackoffBase   time.Duration `yaml:"errors.backoff"`                     // first back-off after 429/503 or a failure
	BackoffMax    time.Duration `yaml:"errors.backoff_max"`                 // the longest back-off
	SlowDownTries int           `yaml:"errors.slow_down_tries" check:">=1"` // tries of a page answered 429 or 503 before it is recorded so
	MaxRedirects  int           `yaml:"fetch.max_redirects" check:">=0"`    // longest redirect chain followed

	// Detect turns on duplicate, near-duplicate and soft-404 detection,
	// URL rewrite rules learned from duplicates, and the file-type check of
	// bodies as they arrive.
	Detect         bool `yaml:"dedup.enabled"`
	MaxHamming     int  `yaml:"dedup.max_hamming" check:"0..32"`   // simhash bits two near-duplicates may differ by (3 of 64: over 95% similar)
	MirrorEvidence int  `yaml:"dedup.mirror_evidence" check:">=1"` // duplicate pairs that make a URL rewrite rule
	// WordHash is the word hash a new crawl file's fingerprints are made
	// with; a file keeps the one it was begun with (crawlWordHash), and a
	// cluster's master gives its slaves the file's.
	WordHash dedup.WordHash `yaml:"dedup.word_hash"`

	KeepBodies bool `yaml:"storage.keep_bodies"` // store page bodies (zlib)
	// Digest is the function a new crawl file's content digests are made
	// with; a file keeps the one it was begun with (crawlDigest), and a
	// cluster's master gives its slaves the file's.
	Digest        record.DigestKind `yaml:"storage.digest"`
	KeepHeaders   bool              `yaml:"storage.keep_headers"`                // store each fetch's request and response heads (PageRecord.Wire)
	CompressLevel int               `yaml:"storage.compress_level" check:"1..9"` // zlib level

	// PageRank of the discovered graph during the crawl.
	Rank           bool          `yaml:"pagerank.enabled"`
	RankEveryPages int           `yaml:"pagerank.every_pages" check:">=1"` // recompute after this many pages fetched since the last run
	RankEvery      time.Duration `yaml:"pagerank.every" check:">=0"`       // or after this long since the last run (0: by pages only)
	RankStoreEvery time.Duration `yaml:"pagerank.store_every" check:">=0"` // every page's rank written at most this often (0: at every run); always at the end
	RankBatch      int           `yaml:"pagerank.batch_pages" check:">=1"` // K of the "batch" and "partial" strategies

	// Oracle knows the true PageRank of the web (not a config.yaml key:
	// the program sets it; lidi demo gives simweb's). Nil means none: no
	// oracle coverage, and the "optimal" strategy cannot run.
	Oracle Oracle

	FlushEvery   time.Duration `yaml:"storage.flush_interval" check:">0"` // longest time a result waits to be written
	FlushRecords int           `yaml:"storage.flush_records" check:">=1"` // records that trigger a write
	// MaxPendingMB bounds the MiB the results waiting to be written hold
	// (bodies, heads, URLs): past it the loop waits for the store, and
	// the robots for the loop.
	MaxPendingMB  int           `yaml:"storage.max_pending_mb" check:">=1"`
	ResolveAhead  int           `yaml:"dns.parallel" check:">=1"` // look-ups in flight at once
	ResolveFailed time.Duration `yaml:"dns.retry" check:">0"`     // when a failed host is tried again

	// A lease's deadline leaves its slowest page LeaseSlack (at least the
	// fetch's connect and body timeouts); a lease whose end has not come
	// LeaseGrace past its deadline is given up and its site leased again.
	LeaseSlack time.Duration `yaml:"cluster.lease_slack" check:">0"`
	LeaseGrace time.Duration `yaml:"cluster.lease_grace" check:">0"`

	Recrawl RecrawlConfig `yaml:"recrawl"`
}

// Robot returns what the crawl's robots need of its configuration: the
// Config of a visit.Robot, here and on a cluster's slaves.
func (c Config) Robot() visit.Config {
	sc := c.Scope
	sc.Seeds = c.Seeds
	fc := c.Fetch
	fc.KeepWire = c.KeepHeaders
	return visit.Config{
		UserAgent:        c.UserAgent,
		Scope:            sc,
		Normalizer:       c.Normalizer,
		Fetch:            fc,
		CheckType:        c.Detect,
		Fingerprint:      c.Detect || c.Recrawl.Enabled,
		RecrawlThreshold: c.Recrawl.Threshold,
		HonourNofollow:   c.HonourNofollow,
		HonourMetaRobots: c.HonourMetaRobots,
		KeepBodies:       c.KeepBodies,
		CompressLevel:    c.CompressLevel,
		MaxDelay:         c.MaxDelay,
		RobotsRetry:      c.RobotsRetry,
		BackoffMax:       c.BackoffMax,
		SlowDownTries:    c.SlowDownTries,
		Sitemaps:         c.Sitemaps,
		WordHash:         c.WordHash,
		Digest:           c.Digest,
	}
}

// Defaults returns the default configuration of a real crawl.
func Defaults() Config {
	return Config{
		UserAgent:        fetch.DefaultUserAgent,
		Strategy:         "length",
		Robots:           256,
		Delay:            15 * time.Second,
		MaxDelay:         60 * time.Second,
		PagesPerVisit:    100,
		PerAddress:       true,
		RobotsTTL:        24 * time.Hour,
		RobotsRetry:      10 * time.Minute,
		RobotsTries:      3,
		HonourNofollow:   true,
		HonourMetaRobots: true,
		ParkAfter:        5,
		ParkFor:          time.Hour,
		ParkRounds:       3,
		BackoffBase:      30 * time.Second,
		BackoffMax:       time.Hour,
		SlowDownTries:    visit.DefaultSlowDownTries,
		MaxRedirects:     5,
		Fetch:            fetch.Defaults(),
		KeepBodies:       true,
		KeepHeaders:      true,
		Detect:           true,
		MaxHamming:       3,
		MirrorEvidence:   3,
		WordHash:         dedup.NewestWordHash,
		Digest:           record.NewestDigest,
		CompressLevel:    1,
		Rank:             true,
		RankEveryPages:   10000,
		RankEvery:        30 * time.Second,
		RankStoreEvery:   5 * time.Minute,
		RankBatch:        10000,
		FlushEvery:       200 * time.Millisecond,
		FlushRecords:     20000,
		MaxPendingMB:     32,
		ResolveAhead:     32,
		ResolveFailed:    10 * time.Minute,
		LeaseSlack:       2 * time.Minute,
		LeaseGrace:       visit.DefaultLeaseGrace,
		Recrawl:          DefaultRecrawl(),
	}
}

// ConfigError is a configuration value that cannot be used: its message
// names the key (and the file and line, when read from one) and says what
// to write instead.
type ConfigError = keys.Error

// Validate reports the first value that cannot be used, naming its key.
func (c *Config) Validate() error {
	bad := func(key, format string, a ...any) error {
		return &ConfigError{Key: key, Err: fmt.Errorf(format, a...)}
	}
	if len(c.Seeds) == 0 {
		return &ConfigError{Key: "seeds", Err: errors.New("no seed URL: write the URLs the crawl starts from, such as seeds: [https://www.example.org/], " +
			"and the scope it keeps to, such as scope: {allowed_domains: [example.org]}")}
	}
	if err := keys.Check(c); err != nil {
		return err
	}
	// The functions of a new file's values, which the file will name:
	// one without a name (set from Go, out of range) would be recorded as
	// a name no lidi reads, and the file refused at its next run.
	if _, err := dedup.ParseWordHash(c.WordHash.String()); err != nil {
		return &ConfigError{Key: "dedup.word_hash", Err: err}
	}
	if _, err := record.ParseDigestKind(c.Digest.String()); err != nil {
		return &ConfigError{Key: "storage.digest", Err: err}
	}
	if c.MaxDelay < c.Delay {
		return bad("politeness.max_delay", "must be at least politeness.delay (%s), got %s", c.Delay, c.MaxDelay)
	}
	switch s, ok := frontier.LookupStrategy(c.Strategy); {
	case !ok:
		return bad("strategy", "unknown strategy %q: write one of %s", c.Strategy, strings.Join(frontier.StrategyNames(), ", "))
	case s.NeedsOracle && c.Oracle == nil:
		return &ConfigError{Key: "strategy", Err: errNoOracle}
	}
	if err := c.validateScope(); err != nil {
		return err
	}
	return c.Recrawl.validate()
}

// validateScope checks the seeds and the scope as the robot reads them.
func (c *Config) validateScope() error {
	for i, s := range c.Seeds {
		if _, err := c.Normalizer.Normalize(s); err != nil {
			return &ConfigError{Key: fmt.Sprintf("seeds[%d]", i), Err: fmt.Errorf("%q: %s: write an absolute http or https URL such as https://www.example.org/",
				s, strings.TrimPrefix(err.Error(), "urlnorm: "))}
		}
	}
	sc := c.Scope
	sc.Seeds, sc.Normalizer = c.Seeds, &c.Normalizer
	if _, err := scope.New(sc); err != nil {
		return &ConfigError{Key: "scope", Err: errors.New(strings.TrimPrefix(err.Error(), "scope: "))}
	}
	return nil
}

// errNoOracle is the optimal strategy without an oracle.
var errNoOracle = errors.New(`"optimal" orders pages by their true PageRank and needs an oracle that knows it (lidi demo gives simweb's); none was given`)

// newStrategy makes the strategy cfg names; the PageRank-based ones take
// their K or their oracle from cfg.
func newStrategy(cfg Config) (frontier.Strategy, error) {
	opt := frontier.StrategyOptions{K: cfg.RankBatch}
	if o := cfg.Oracle; o != nil {
		opt.Oracle = func(p frontier.PageInfo) float64 {
			pr, _ := o.PageRank(p.URL)
			return pr
		}
	}
	return frontier.NewStrategy(cfg.Strategy, opt)
}
