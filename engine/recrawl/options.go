package recrawl

import (
	"fmt"
	"time"

	clk "lidi/engine/clock"
)

// Options configure a Manager (config.yaml's recrawl.* keys). Defaults
// returns the documented defaults; a zero field is not replaced by one.
type Options struct {
	Policy PolicyName `yaml:"policy"` // recrawl.policy
	Groups int        `yaml:"groups"` // recrawl.groups: K priority groups

	// RateCap caps each channel's recrawl rate at RateCap times its
	// estimated change rate (recrawl.rate_cap; SARSS suggests 2). 0: no
	// cap.
	RateCap     float64       `yaml:"rate_cap"`
	MinInterval time.Duration `yaml:"min_interval"` // recrawl.min_interval: no channel is recrawled more often
	MaxInterval time.Duration `yaml:"max_interval"` // recrawl.max_interval: nor less often

	// SARSS (iir and icr).
	// Encourage is δ (recrawl.encourage): a group's new interval is
	// multiplied by it when its success rate rose. SARSS gives no value;
	// 0.5 is what lidi bench recrawl measured best (docs/recrawl.md): with
	// 0.9 lost recrawls ratchet the intervals up.
	Encourage        float64 `yaml:"encourage"`
	SmallestMultiple float64 `yaml:"smallest_multiple"` // recrawl.smallest_multiple: σ of checkPriorities
	BiggestMultiple  float64 `yaml:"biggest_multiple"`  // recrawl.biggest_multiple: μ of checkPriorities
	Quorum           float64 `yaml:"quorum"`            // recrawl.quorum: share of the top group's channels ...
	MinUpdates       int     `yaml:"min_updates"`       // recrawl.min_updates: ... with more than this many updates since the last reassignment
	HistoryUpdates   int     `yaml:"history_updates"`   // recrawl.history_updates: L, the updates per channel ICR's capacity history covers

	// Wolf (optimal).
	Horizon time.Duration `yaml:"horizon"` // recrawl.horizon: T, the scheduling interval crawls are counted over
	Period  time.Duration `yaml:"period"`  // recrawl.period: how often the allocation is solved again

	// Nutch (adaptive).
	IncRate float64 `yaml:"inc_rate"` // recrawl.inc_rate: the interval grows by this share when a recrawl found no change
	DecRate float64 `yaml:"dec_rate"` // recrawl.dec_rate: and shrinks by this share when it found one

	// Clock tells the time; nil means the system's clock.
	Clock clk.Clock
}

// Defaults returns the default options.
func Defaults() Options {
	return Options{
		Policy:           Pages,
		Groups:           5,
		RateCap:          2,
		MinInterval:      time.Minute,
		MaxInterval:      30 * 24 * time.Hour,
		Encourage:        0.5,
		SmallestMultiple: 1.2,
		BiggestMultiple:  4,
		Quorum:           0.5,
		MinUpdates:       5,
		HistoryUpdates:   10,
		Horizon:          24 * time.Hour,
		Period:           time.Hour,
		IncRate:          0.4,
		DecRate:          0.2,
	}
}

// KeyError is a bad value of one config key. It unwraps to ErrConfig.
type KeyError struct {
	Key    string // the config key, e.g. "recrawl.groups"
	Reason string // what is wrong with its value
}

func (e *KeyError) Error() string { return ErrConfig.Error() + ": " + e.Key + ": " + e.Reason }
func (e *KeyError) Unwrap() error { return ErrConfig }

// Validate says what is wrong with o, naming the config key: a *KeyError,
// or ParsePolicyName's error for the policy.
func (o Options) Validate() error {
	bad := func(key, format string, a ...any) error {
		return &KeyError{Key: "recrawl." + key, Reason: fmt.Sprintf(format, a...)}
	}
	if _, err := ParsePolicyName(string(o.Policy)); err != nil {
		return err
	}
	switch {
	case o.Groups < 1:
		return bad("groups", "%d groups; need at least 1", o.Groups)
	case o.RateCap < 0:
		return bad("rate_cap", "%g is negative", o.RateCap)
	case o.MinInterval <= 0:
		return bad("min_interval", "%v is not positive", o.MinInterval)
	case o.MaxInterval < o.MinInterval:
		return bad("max_interval", "%v is under min_interval %v", o.MaxInterval, o.MinInterval)
	case o.Encourage <= 0 || o.Encourage > 1:
		return bad("encourage", "δ = %g is not in (0,1]", o.Encourage)
	case o.SmallestMultiple < 1:
		return bad("smallest_multiple", "σ = %g is under 1: a slower group would be recrawled more often", o.SmallestMultiple)
	case o.BiggestMultiple < o.SmallestMultiple:
		return bad("biggest_multiple", "μ = %g is under σ = %g", o.BiggestMultiple, o.SmallestMultiple)
	case o.Quorum <= 0 || o.Quorum > 1:
		return bad("quorum", "%g is not in (0,1]", o.Quorum)
	case o.MinUpdates < 0:
		return bad("min_updates", "%d is negative", o.MinUpdates)
	case o.HistoryUpdates < 1:
		return bad("history_updates", "L = %d; need at least 1", o.HistoryUpdates)
	case o.Horizon <= 0:
		return bad("horizon", "%v is not positive", o.Horizon)
	case o.Period <= 0:
		return bad("period", "%v is not positive", o.Period)
	case o.IncRate < 0:
		return bad("inc_rate", "%g is negative", o.IncRate)
	case o.DecRate < 0 || o.DecRate >= 1:
		return bad("dec_rate", "%g is not in [0,1)", o.DecRate)
	}
	return nil
}
