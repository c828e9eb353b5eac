package recrawl

import (
	"fmt"
	"net/url"
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
	Name string
	// Host is the host, with its port if not the scheme's default, as in
	// URLs (case-insensitive).
	Host string
	// Prefixes are the path prefixes the channel covers, each starting
	// with "/" ("/w/", "/sports/"). A URL belongs to the rule whose prefix
	// is its longest match.
	Prefixes []string
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
}

type prefixRule struct {
	prefix string
	id     ChannelID
}

// NewChannels checks rules and builds the mapping. Two rules may not claim
// the same prefix of a host, nor two channels share an ID.
func NewChannels(rules []Rule) (*Channels, error) {
	c := &Channels{byHost: map[string][]prefixRule{}}
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
