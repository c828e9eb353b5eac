package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"lidi/engine/fetch"
	"lidi/engine/frontier"
	"lidi/engine/scope"
	"lidi/engine/urlnorm"
	"lidi/engine/visit"
)

// Config is everything a crawl is told. config.yaml documents each field
// under the key named in its comment; Defaults fills what is left zero.
type Config struct {
	Seeds     []string // seeds
	UserAgent string   // user_agent

	Strategy      string        // strategy: a name of frontier's registry (frontier.Strategies); "optimal" needs Oracle
	Robots        int           // robots (r): sites visited at once
	Delay         time.Duration // politeness.delay (w): between two requests to one site
	MaxDelay      time.Duration // politeness.max_delay: cap on robots.txt Crawl-delay
	PagesPerVisit int           // politeness.pages_per_connection (c)
	PerAddress    bool          // politeness.one_per_address: one visit per IP address at a time

	MaxPages int64 // limits.max_pages; 0 = no limit

	Scope      scope.Config       // scope.*
	Normalizer urlnorm.Normalizer // urls.*
	Fetch      fetch.Config       // fetch.*

	RobotsTTL        time.Duration // robots_txt.ttl: how long robots.txt is trusted; at most 24 h
	RobotsRetry      time.Duration // robots_txt.retry: after a 5xx or unreachable robots.txt
	HonourNofollow   bool          // robots_txt.nofollow: rel="nofollow" links are not followed
	HonourMetaRobots bool          // robots_txt.meta: <meta name=robots> and X-Robots-Tag

	ParkAfter    int           // errors.park_after: consecutive failed visits (or look-ups) before a site is parked
	ParkFor      time.Duration // errors.park_for: how long a parked site waits before it is tried again
	ParkRounds   int           // errors.park_rounds: times a site is parked before it is given up for good
	BackoffBase  time.Duration // errors.backoff: first back-off after 429/503 or a failure
	BackoffMax   time.Duration // errors.backoff_max
	MaxRedirects int           // fetch.max_redirects: longest redirect chain followed

	// Detect turns on duplicate, near-duplicate and soft-404 detection,
	// URL rewrite rules learned from duplicates, and the file-type check of
	// bodies as they arrive (dedup.enabled).
	Detect         bool
	MaxHamming     int // dedup.max_hamming: simhash bits two near-duplicates may differ by (3 of 64: over 95% similar)
	MirrorEvidence int // dedup.mirror_evidence: duplicate pairs that make a URL rewrite rule

	KeepBodies    bool // storage.keep_bodies: store page bodies (zlib)
	KeepHeaders   bool // storage.keep_headers: store each fetch's request and response heads (PageRecord.Wire)
	CompressLevel int  // storage.compress_level: zlib level 1..9

	// PageRank of the discovered graph during the crawl (pagerank.*).
	Rank           bool          // pagerank.enabled
	RankEveryPages int           // pagerank.every_pages: recompute after this many pages fetched since the last run
	RankEvery      time.Duration // pagerank.every: or after this long since the last run (0: by pages only)
	RankStoreEvery time.Duration // pagerank.store_every: every page's rank written at most this often (0: at every run); always at the end
	RankBatch      int           // pagerank.batch_pages: K of the "batch" and "partial" strategies

	// Oracle knows the true PageRank of the web (not a config.yaml key:
	// the program sets it; lidi demo gives simweb's). Nil means none: no
	// oracle coverage, and the "optimal" strategy cannot run.
	Oracle Oracle

	FlushEvery    time.Duration // storage.flush_interval: longest time a result waits to be written
	FlushRecords  int           // storage.flush_records: records that trigger a write
	ResolveAhead  int           // dns.parallel: look-ups in flight at once
	ResolveFailed time.Duration // dns.retry: when a failed host is tried again

	// A lease's deadline leaves its slowest page LeaseSlack (at least the
	// fetch's connect and body timeouts); a lease whose end has not come
	// LeaseGrace past its deadline is given up and its site leased again.
	LeaseSlack time.Duration // cluster.lease_slack
	LeaseGrace time.Duration // cluster.lease_grace

	Recrawl RecrawlConfig // recrawl.*
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
	}
}

// Defaults returns the default configuration of a real crawl.
func Defaults() Config {
	return Config{
		UserAgent:        "lidi/0.1 (+https://github.com/lidi-crawler/lidi)",
		Strategy:         "length",
		Robots:           256,
		Delay:            15 * time.Second,
		MaxDelay:         60 * time.Second,
		PagesPerVisit:    100,
		PerAddress:       true,
		RobotsTTL:        24 * time.Hour,
		RobotsRetry:      10 * time.Minute,
		HonourNofollow:   true,
		HonourMetaRobots: true,
		ParkAfter:        5,
		ParkFor:          time.Hour,
		ParkRounds:       3,
		BackoffBase:      30 * time.Second,
		BackoffMax:       time.Hour,
		MaxRedirects:     5,
		KeepBodies:       true,
		KeepHeaders:      true,
		Detect:           true,
		MaxHamming:       3,
		MirrorEvidence:   3,
		CompressLevel:    1,
		Rank:             true,
		RankEveryPages:   10000,
		RankEvery:        30 * time.Second,
		RankStoreEvery:   5 * time.Minute,
		RankBatch:        10000,
		FlushEvery:       200 * time.Millisecond,
		FlushRecords:     20000,
		ResolveAhead:     32,
		ResolveFailed:    10 * time.Minute,
		LeaseSlack:       2 * time.Minute,
		LeaseGrace:       visit.DefaultLeaseGrace,
		Recrawl:          DefaultRecrawl(),
	}
}

// ConfigError is a configuration value that cannot be used. Its message
// names where the value is ("config: site.yaml:12: politeness.delay: ...")
// and says what to write instead.
type ConfigError struct {
	File string // the config file read, if any
	Line int    // the line of the file the key is on; 0: not known (the key was not written)
	Key  string // the config.yaml key: "politeness.delay", "cluster.pins[0].tag"; "" for a file that is not YAML
	Err  error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d: ", e.File, e.Line)
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d: ", e.Line)
	}
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ConfigError) Unwrap() error { return e.Err }

// Validate reports the first value that cannot be used, naming its key.
func (c *Config) Validate() error {
	bad := func(key, format string, a ...any) error {
		return &ConfigError{Key: key, Err: fmt.Errorf(format, a...)}
	}
	switch {
	case len(c.Seeds) == 0:
		return &ConfigError{Key: "seeds", Err: errors.New("no seed URL: write the URLs the crawl starts from, such as seeds: [https://www.example.org/], " +
			"and the scope it keeps to, such as scope: {allowed_domains: [example.org]}")}
	case c.Robots < 1:
		return bad("robots", "must be at least 1, got %d", c.Robots)
	case c.Delay < 0:
		return bad("politeness.delay", "must not be negative, got %s", c.Delay)
	case c.MaxDelay < c.Delay:
		return bad("politeness.max_delay", "must be at least politeness.delay (%s), got %s", c.Delay, c.MaxDelay)
	case c.PagesPerVisit < 1:
		return bad("politeness.pages_per_connection", "must be at least 1, got %d", c.PagesPerVisit)
	case c.MaxPages < 0:
		return bad("limits.max_pages", "must not be negative, got %d", c.MaxPages)
	case c.RobotsTTL <= 0 || c.RobotsTTL > 24*time.Hour:
		return bad("robots_txt.ttl", "must be between 0 and 24h (RFC 9309), got %s", c.RobotsTTL)
	case c.ParkAfter < 1:
		return bad("errors.park_after", "must be at least 1, got %d", c.ParkAfter)
	case c.ParkFor <= 0:
		return bad("errors.park_for", "must be positive, got %s", c.ParkFor)
	case c.ParkRounds < 1:
		return bad("errors.park_rounds", "must be at least 1, got %d", c.ParkRounds)
	case c.ResolveFailed <= 0:
		return bad("dns.retry", "must be positive, got %s", c.ResolveFailed)
	case c.CompressLevel < 1 || c.CompressLevel > 9:
		return bad("storage.compress_level", "must be 1..9, got %d", c.CompressLevel)
	case c.FlushEvery <= 0:
		return bad("storage.flush_interval", "must be positive, got %s", c.FlushEvery)
	case c.FlushRecords < 1:
		return bad("storage.flush_records", "must be at least 1, got %d", c.FlushRecords)
	case c.ResolveAhead < 1:
		return bad("dns.parallel", "must be at least 1, got %d", c.ResolveAhead)
	case c.LeaseSlack <= 0:
		return bad("cluster.lease_slack", "must be positive, got %s", c.LeaseSlack)
	case c.LeaseGrace <= 0:
		return bad("cluster.lease_grace", "must be positive, got %s", c.LeaseGrace)
	case c.MaxHamming < 0 || c.MaxHamming > 32:
		return bad("dedup.max_hamming", "must be 0..32, got %d", c.MaxHamming)
	case c.MirrorEvidence < 1:
		return bad("dedup.mirror_evidence", "must be at least 1, got %d", c.MirrorEvidence)
	case c.RankEveryPages < 1:
		return bad("pagerank.every_pages", "must be at least 1, got %d", c.RankEveryPages)
	case c.RankEvery < 0:
		return bad("pagerank.every", "must not be negative, got %s", c.RankEvery)
	case c.RankStoreEvery < 0:
		return bad("pagerank.store_every", "must not be negative, got %s", c.RankStoreEvery)
	case c.RankBatch < 1:
		return bad("pagerank.batch_pages", "must be at least 1, got %d", c.RankBatch)
	case c.MaxRedirects < 0:
		return bad("fetch.max_redirects", "must not be negative, got %d", c.MaxRedirects)
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
