package engine

import (
	"errors"
	"strings"
	"time"

	clk "lidi/engine/clock"

	"lidi/engine/recrawl"
)

// RecrawlConfig is the recrawl.* part of the configuration: whether lidi
// visits what it has crawled again, and how often (engine/recrawl's
// Manager and policies decide; see docs/recrawl.md).
type RecrawlConfig struct {
	Enabled bool `yaml:"enabled"`
	// Options are the Manager's: recrawl.policy, recrawl.groups (K),
	// recrawl.rate_cap, recrawl.min_interval, recrawl.max_interval and
	// the policies' parameters. Options.Clock is set by the engine.
	Options  recrawl.Options `yaml:",inline"`
	Channels []recrawl.Rule  `yaml:"channels"` // sub-directories that are channels of their own
	// Scope bounds the recrawl of every channel whose rule gives none:
	// recrawl.filters and recrawl.max_depth.
	Scope recrawl.Scope `yaml:",inline"`
	// Threshold is the number of simhash bits (of 64) a refetched page's
	// text may differ by and still count as unchanged (recrawl.threshold):
	// a date or a counter moves a few bits, an edit many. Negative
	// compares digests only.
	Threshold int `yaml:"threshold" check:"<=32"`
	// InitialInterval is how often every channel is recrawled during the
	// warm-up (recrawl.initial_interval), and Warmup how long that lasts
	// (recrawl.warmup) before the channels are grouped by the change rates
	// it estimated and the policy takes over. Both by the recrawl clock.
	InitialInterval time.Duration `yaml:"initial_interval" check:">0"`
	Warmup          time.Duration `yaml:"warmup" check:">=0"`
	// TimeScale runs the recrawl clock this many times as fast as the
	// engine's (recrawl.time_scale): against a simweb serving with
	// --time-scale N, N makes the intervals the web's. Zero means 1.
	TimeScale float64 `yaml:"time_scale" check:">=0"`
	// Clock, if set, is the recrawl clock instead (not a config.yaml key:
	// lidi demo gives simweb's virtual clock).
	Clock clk.Clock
	// Freshness, if set, knows whether a copy is still current (not a
	// config.yaml key: lidi demo gives simweb's ground truth); the console
	// then shows exact freshness, else an estimate.
	Freshness FreshnessOracle
}

// RecrawlClockAt is a recrawl clock that knows what it read at any real
// time (simweb's virtual clock in lidi demo, whose epoch the demo's
// database keeps). A crawl that resumes dates the copies it loads with it,
// the store keeping their fetch times in real time; with another clock
// they count as fetched when the crawl resumed.
type RecrawlClockAt interface {
	clk.Clock
	At(real time.Time) time.Time
}

// FreshnessOracle knows the ground truth of a changing web.
type FreshnessOracle interface {
	// Fresh reports whether the copy of rawURL fetched at fetched (by the
	// recrawl clock) is still the page's current version at time at; ok
	// is false for a URL it does not know.
	Fresh(rawURL string, fetched, at time.Time) (fresh, ok bool)
}

// DefaultRecrawl returns recrawling's defaults: off, engine/recrawl's
// defaults (policy pages, K = 5 groups for the console), a threshold
// of 3 bits, a warm-up of 6 hours recrawling every channel hourly.
func DefaultRecrawl() RecrawlConfig {
	return RecrawlConfig{Options: recrawl.Defaults(), Threshold: 3, InitialInterval: time.Hour, Warmup: 6 * time.Hour, TimeScale: 1}
}

func (r *RecrawlConfig) validate() error {
	if !r.Enabled {
		return nil
	}
	if _, err := recrawl.ParsePolicyName(string(r.Options.Policy)); err != nil {
		return &ConfigError{Key: "recrawl.policy", Err: errors.New(strings.TrimPrefix(err.Error(), recrawl.ErrConfig.Error()+": "))}
	}
	if err := r.Options.Validate(); err != nil {
		if ke, ok := errors.AsType[*recrawl.KeyError](err); ok {
			return &ConfigError{Key: ke.Key, Err: errors.New(ke.Reason)}
		}
		return &ConfigError{Key: "recrawl", Err: err}
	}
	if _, err := recrawl.NewChannels(r.Channels, r.Scope); err != nil {
		return &ConfigError{Key: "recrawl.channels", Err: errors.New(strings.TrimPrefix(err.Error(), recrawl.ErrConfig.Error()+": "))}
	}
	return nil
}

// errRecrawlStore is returned by Run when recrawling is on and the Store
// cannot give back what it needs to continue a crawl.
var errRecrawlStore = errors.New("engine: recrawl.enabled needs a store that implements RecrawlStore")
