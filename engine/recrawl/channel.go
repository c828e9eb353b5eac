package recrawl

import (
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// ChannelID names a channel: its host ("news.example.org") when the channel
// is a whole host, else its rule's name.
type ChannelID string

// Rule makes a channel of a host's sub-directory or set of sub-directories
// (config.yaml's recrawl.channels).
type Rule struct {
	// Name is the channel's ID; empty means the host followed by the
	// first prefix ("news.example.org/w/").
	Name string `yaml:"name"`
	// Host is the host, with its port if not the scheme's default, as in
	// URLs (case-insensitive).
	Host string `yaml:"host"`
	// Prefixes are the path prefixes the channel covers, each starting
	// with "/" ("/w/", "/sports/"). A URL belongs to the rule whose prefix
	// is its longest match.
	Prefixes []string `yaml:"prefixes"`
	// Scope bounds the channel's recrawls; a zero Scope means the default
	// given to NewChannels.
	Scope Scope `yaml:",inline"`
}

// Scope is what a recrawl of a channel may fetch (SARSS 2.1): the URLs
// its regular expressions match, up to a depth from the task's seeds.
type Scope struct {
	// Filters are regular expressions (RE2 syntax); a recrawl fetches only
	// the URLs one of them matches. None: every URL of the channel.
	Filters []string `yaml:"filters,omitempty"`
	// MaxDepth is how many links from a seed a recrawl follows; 0 means
	// no limit.
	MaxDepth int `yaml:"max_depth"`
}

// compiled is a Scope ready for use.
type compiled struct {
	filters  []*regexp.Regexp
	maxDepth int
}

func (s Scope) compile() (compiled, error) {
	if s.MaxDepth < 0 {
		return compiled{}, fmt.Errorf("%w: max depth %d is negative", ErrConfig, s.MaxDepth)
	}
	c := compiled{maxDepth: s.MaxDepth}
	for _, f := range s.Filters {
		re, err := regexp.Compile(f)
		if err != nil {
			return compiled{}, fmt.Errorf("%w: filter %q: %v", ErrConfig, f, err)
		}
		c.filters = append(c.filters, re)
	}
	return c, nil
}

// ID is the channel the rule makes.
func (r Rule) ID() ChannelID {
	if r.Name != "" {
		return ChannelID(r.Name)
	}
	if len(r.Prefixes) == 0 {
		return ChannelID(strings.ToLower(r.Host))
	}
	return ChannelID(strings.ToLower(r.Host) + r.Prefixes[0])
}

// Channels maps URLs to channels: the rule with the longest matching
// prefix on the URL's host, else the whole host. Every URL thus belongs to
// exactly one channel. The zero value maps every URL to its host. It is
// safe for concurrent use once built.
type Channels struct {
	byHost map[string][]prefixRule // longest prefix first
	scopes map[ChannelID]compiled  // the rules' own scopes
	def    compiled
}

type prefixRule struct {
	prefix string
	id     ChannelID
}

// NewChannels checks rules and builds the mapping; def is the scope of
// every channel whose rule gives none (whole hosts included). Two rules may
// not claim the same prefix of a host, nor two channels share an ID; a
// filter must be a valid regular expression.
func NewChannels(rules []Rule, def Scope) (*Channels, error) {
	c := &Channels{byHost: map[string][]prefixRule{}, scopes: map[ChannelID]compiled{}}
	var err error
	if c.def, err = def.compile(); err != nil {
		return nil, fmt.Errorf("%w (default scope)", err)
	}
	ids := map[ChannelID]string{}
	for i, r := range rules {
		host := strings.ToLower(strings.TrimSpace(r.Host))
		if host == "" || strings.ContainsAny(host, "/?# ") {
			return nil, fmt.Errorf("%w: channel rule %d: bad host %q", ErrConfig, i, r.Host)
		}
		if len(r.Prefixes) == 0 {
			return nil, fmt.Errorf("%w: channel rule %d (%s): no prefixes (a whole host is a channel already)", ErrConfig, i, host)
		}
		id := r.ID()
		if ChannelID(host) == id {
			return nil, fmt.Errorf("%w: channel rule %d: name %q is the host's own channel", ErrConfig, i, id)
		}
		if prev, ok := ids[id]; ok {
			return nil, fmt.Errorf("%w: channel %q named by two rules (%s and %s)", ErrConfig, id, prev, host)
		}
		ids[id] = host
		if len(r.Scope.Filters) > 0 || r.Scope.MaxDepth != 0 {
			sc, err := r.Scope.compile()
			if err != nil {
				return nil, fmt.Errorf("channel %q: %w", id, err)
			}
			c.scopes[id] = sc
		}
		for _, p := range r.Prefixes {
			if !strings.HasPrefix(p, "/") {
				return nil, fmt.Errorf("%w: channel %q: prefix %q does not start with /", ErrConfig, id, p)
			}
			for _, q := range c.byHost[host] {
				if q.prefix == p {
					return nil, fmt.Errorf("%w: prefix %s%s claimed by channels %q and %q", ErrConfig, host, p, q.id, id)
				}
			}
			c.byHost[host] = append(c.byHost[host], prefixRule{p, id})
		}
	}
	for _, rs := range c.byHost {
		sort.Slice(rs, func(i, j int) bool { return len(rs[i].prefix) > len(rs[j].prefix) })
	}
	return c, nil
}

// Of returns the channel of u.
func (c *Channels) Of(u *url.URL) ChannelID {
	host := strings.ToLower(u.Host)
	if c != nil {
		path := u.EscapedPath()
		if path == "" {
			path = "/"
		}
		for _, r := range c.byHost[host] {
			if strings.HasPrefix(path, r.prefix) {
				return r.id
			}
		}
	}
	return ChannelID(host)
}

// Scope returns the filters and maximum depth of channel id's recrawls.
// The regular expressions are shared: they are safe for concurrent use.
func (c *Channels) Scope(id ChannelID) (filters []*regexp.Regexp, maxDepth int) {
	if c == nil {
		return nil, 0
	}
	sc, ok := c.scopes[id]
	if !ok {
		sc = c.def
	}
	return sc.filters, sc.maxDepth
}

// Split reports whether some rule makes channels of parts of host (with
// its port if not the scheme's default): if not, a URL's channel is its
// host.
func (c *Channels) Split(host string) bool {
	return c != nil && len(c.byHost[strings.ToLower(host)]) > 0
}

// OfString parses raw and returns its channel.
func (c *Channels) OfString(raw string) (ChannelID, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("recrawl: %w", err)
	}
	if u.Host == "" {
		return "", fmt.Errorf("recrawl: %q has no host", raw)
	}
	return c.Of(u), nil
}
