package config

import (
	"time"

	"lidi/engine"
	"lidi/engine/recrawl"
)

// Recrawl is config.yaml's recrawl section; config.yaml documents each key.
type Recrawl struct {
	Enabled          bool          `yaml:"enabled"`
	Policy           string        `yaml:"policy"`
	Groups           int           `yaml:"groups"`
	Channels         []ChannelRule `yaml:"channels"`
	Filters          []string      `yaml:"filters"`
	MaxDepth         int           `yaml:"max_depth"`
	Threshold        int           `yaml:"threshold"`
	InitialInterval  time.Duration `yaml:"initial_interval"`
	Warmup           time.Duration `yaml:"warmup"`
	TimeScale        float64       `yaml:"time_scale"`
	RateCap          float64       `yaml:"rate_cap"`
	MinInterval      time.Duration `yaml:"min_interval"`
	MaxInterval      time.Duration `yaml:"max_interval"`
	Encourage        float64       `yaml:"encourage"`
	SmallestMultiple float64       `yaml:"smallest_multiple"`
	BiggestMultiple  float64       `yaml:"biggest_multiple"`
	Quorum           float64       `yaml:"quorum"`
	MinUpdates       int           `yaml:"min_updates"`
	HistoryUpdates   int           `yaml:"history_updates"`
	Horizon          time.Duration `yaml:"horizon"`
	Period           time.Duration `yaml:"period"`
	IncRate          float64       `yaml:"inc_rate"`
	DecRate          float64       `yaml:"dec_rate"`
}

// ChannelRule is one of recrawl.channels: sub-directories of a host that
// form a channel of their own.
type ChannelRule struct {
	Name     string   `yaml:"name"`
	Host     string   `yaml:"host"`
	Prefixes []string `yaml:"prefixes"`
	Filters  []string `yaml:"filters"`
	MaxDepth int      `yaml:"max_depth"`
}

// recrawlFile is the recrawl section that gives r.
func recrawlFile(r engine.RecrawlConfig) Recrawl {
	o := r.Options
	f := Recrawl{Enabled: r.Enabled, Policy: string(o.Policy), Groups: o.Groups, Threshold: r.Threshold,
		InitialInterval: r.InitialInterval, Warmup: r.Warmup, TimeScale: r.TimeScale,
		RateCap: o.RateCap, MinInterval: o.MinInterval, MaxInterval: o.MaxInterval,
		Encourage: o.Encourage, SmallestMultiple: o.SmallestMultiple, BiggestMultiple: o.BiggestMultiple,
		Quorum: o.Quorum, MinUpdates: o.MinUpdates, HistoryUpdates: o.HistoryUpdates,
		Horizon: o.Horizon, Period: o.Period, IncRate: o.IncRate, DecRate: o.DecRate,
		Filters: r.Scope.Filters, MaxDepth: r.Scope.MaxDepth,
	}
	for _, c := range r.Channels {
		f.Channels = append(f.Channels, ChannelRule{Name: c.Name, Host: c.Host, Prefixes: c.Prefixes, Filters: c.Scope.Filters, MaxDepth: c.Scope.MaxDepth})
	}
	if f.TimeScale == 0 {
		f.TimeScale = 1
	}
	return f
}

// engine returns the engine's recrawl configuration.
func (f Recrawl) engine() engine.RecrawlConfig {
	r := engine.DefaultRecrawl()
	r.Enabled, r.Threshold = f.Enabled, f.Threshold
	r.InitialInterval, r.Warmup, r.TimeScale = f.InitialInterval, f.Warmup, f.TimeScale
	o := &r.Options
	o.Policy, o.Groups = recrawl.PolicyName(f.Policy), f.Groups
	o.RateCap, o.MinInterval, o.MaxInterval = f.RateCap, f.MinInterval, f.MaxInterval
	o.Encourage, o.SmallestMultiple, o.BiggestMultiple = f.Encourage, f.SmallestMultiple, f.BiggestMultiple
	o.Quorum, o.MinUpdates, o.HistoryUpdates = f.Quorum, f.MinUpdates, f.HistoryUpdates
	o.Horizon, o.Period, o.IncRate, o.DecRate = f.Horizon, f.Period, f.IncRate, f.DecRate
	r.Scope = recrawl.Scope{Filters: f.Filters, MaxDepth: f.MaxDepth}
	for _, c := range f.Channels {
		r.Channels = append(r.Channels, recrawl.Rule{Name: c.Name, Host: c.Host, Prefixes: c.Prefixes,
			Scope: recrawl.Scope{Filters: c.Filters, MaxDepth: c.MaxDepth}})
	}
	return r
}
