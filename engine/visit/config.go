package visit

import (
	"errors"
	"fmt"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/scope"
	"lidi/engine/urlnorm"
)

// Config is what a Robot knows of the crawl: what is in scope and how to
// ask for pages. Everything else comes with each Lease. The engine builds
// it from the crawl's configuration (engine.Config.Robot); a cluster master
// sends it to its slaves, so a slave needs no config file of its own. It
// round-trips through encoding/json.
type Config struct {
	UserAgent  string             // the product token and contact sent, and matched in robots.txt
	Scope      scope.Config       // Scope.Seeds set; Scope.Normalizer is filled by NewRobot
	Normalizer urlnorm.Normalizer // how found links are spelled
	Fetch      fetch.Config       // Fetch.UserAgent empty: UserAgent

	// CheckType checks a body's first bytes as they arrive (duplicate
	// detection on): see fetch.Config.CheckType.
	CheckType bool
	// Fingerprint computes each HTML page's near-duplicate fingerprints
	// (duplicate detection or recrawl on), their words hashed by
	// WordHash: the crawl file's (0, dedup's newest, for a new one).
	Fingerprint bool
	WordHash    dedup.WordHash
	// Digest makes each body's content digest: the crawl file's (0,
	// record's newest, for a new one).
	Digest record.DigestKind
	// RecrawlThreshold is the number of simhash bits (of 64) a recrawled
	// page may differ by and still count as unchanged (recrawl.threshold).
	RecrawlThreshold int

	HonourNofollow   bool // rel="nofollow" links are not followed
	HonourMetaRobots bool // <meta name=robots>, <meta name=PRODUCT-TOKEN> and X-Robots-Tag are obeyed

	KeepBodies    bool // bodies are returned zlib-compressed
	CompressLevel int  // zlib level 1..9

	MaxDelay    time.Duration // cap on robots.txt Crawl-delay
	RobotsRetry time.Duration // after a 5xx or unreachable robots.txt
	BackoffMax  time.Duration // cap on a Retry-After
	// SlowDownTries is how many times a page answered 429 or 503 is
	// asked for (errors.slow_down_tries) before it is recorded with that
	// status; 0 means DefaultSlowDownTries. Between two tries the site
	// rests for the Retry-After, or an exponential back-off.
	SlowDownTries int
	// Sitemaps says whose sitemaps are read (sitemaps: seeds, all or
	// off); the zero value reads the seeds' hosts'.
	Sitemaps SitemapScope
}

// SitemapScope says which sites' sitemaps a crawl reads. A sitemap named
// by a site's robots.txt is queued like a link of it (and so goes through
// scope and robots.txt), and read when fetched; its URLs are links of it.
// A fetched page that is a sitemap (a seed, say) is read too whatever the
// scope, but for SitemapsOff.
type SitemapScope uint8

const (
	// SitemapsSeeds, the default, reads the sitemaps of the seeds'
	// hosts: the sites a crawl is pointed at, whose owners list there
	// what they want found, including pages no link leads to. On every
	// other site a sitemap would add its whole URL list, far past what
	// the crawl's links lead it to.
	SitemapsSeeds SitemapScope = iota
	// SitemapsAll reads the sitemaps of every site robots.txt names.
	SitemapsAll
	// SitemapsOff reads none.
	SitemapsOff
)

// sitemapScopes are the scopes' names in the configuration, by value.
var sitemapScopes = [...]string{SitemapsSeeds: "seeds", SitemapsAll: "all", SitemapsOff: "off"}

// String returns the name used in the configuration.
func (s SitemapScope) String() string {
	if int(s) < len(sitemapScopes) {
		return sitemapScopes[s]
	}
	return "unknown"
}

// MarshalText writes the scope's name.
func (s SitemapScope) MarshalText() ([]byte, error) {
	if int(s) >= len(sitemapScopes) {
		return nil, fmt.Errorf("visit: no sitemap scope %d", s)
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a scope's name; its error says what to write.
func (s *SitemapScope) UnmarshalText(b []byte) error {
	for i, name := range sitemapScopes {
		if string(b) == name {
			*s = SitemapScope(i)
			return nil
		}
	}
	return errors.New("write seeds, all or off")
}

// DefaultSlowDownTries is Config.SlowDownTries' default: a site that
// refuses a page three times, after growing rests, is not going to serve
// it in this run.
const DefaultSlowDownTries = 3

func (c *Config) slowDownTries() int {
	if c.SlowDownTries <= 0 {
		return DefaultSlowDownTries
	}
	return c.SlowDownTries
}

// ConfigError is a robot configuration that cannot work: Key names the
// setting.
type ConfigError struct {
	Key string
	Err error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("visit: %s: %v", e.Key, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }
