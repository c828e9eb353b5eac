package visit

import (
	"fmt"
	"time"

	"lidi/engine/fetch"
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
	// (duplicate detection or recrawl on).
	Fingerprint bool
	// RecrawlThreshold is the number of simhash bits (of 64) a recrawled
	// page may differ by and still count as unchanged (recrawl.threshold).
	RecrawlThreshold int

	HonourNofollow   bool // rel="nofollow" links are not followed
	HonourMetaRobots bool // <meta name=robots> and X-Robots-Tag are obeyed

	KeepBodies    bool // bodies are returned zlib-compressed
	CompressLevel int  // zlib level 1..9

	MaxDelay    time.Duration // cap on robots.txt Crawl-delay
	RobotsRetry time.Duration // after a 5xx or unreachable robots.txt
	BackoffMax  time.Duration // cap on a Retry-After
}

// ConfigError is a robot configuration that cannot work: Key names the
// setting.
type ConfigError struct {
	Key string
	Err error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("visit: %s: %v", e.Key, e.Err) }
func (e *ConfigError) Unwrap() error { return e.Err }
