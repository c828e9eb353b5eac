// Package scope decides which discovered URLs a crawl may fetch: by host or
// registrable domain, by regular expressions on the URL (the SARSS crawl
// task's "list of regular expressions"), and by depth from the seeds.
//
// Host rules: a URL is in scope if its host is one of Config.AllowedHosts,
// or belongs to one of Config.AllowedDomains, or (with SeedHosts and
// SeedDomains) to a seed's host or registrable domain. When no host rule is
// given at all, every host is allowed: a whole-web crawl, kept finite by
// MaxDepth, the crawl limits and loop detection.
//
// Domains match by registrable domain (eTLD+1, from the public suffix list
// in golang.org/x/net/publicsuffix): "example.com", and equally
// "www.example.com", allow example.com and every host under it, such as
// "blog.example.com", but not a host whose registrable domain is deeper,
// such as "bucket.s3.amazonaws.com" for "amazonaws.com". A domain that is
// itself a public suffix, such as "cl" or "co.uk", allows every host under
// it: the national-web crawls of Castillo's thesis are "cl" and "gr".
//
// Regular expressions (Go RE2 syntax) match anywhere in the normalised URL
// unless anchored. A URL matching any Exclude pattern is out; if Include
// patterns are given, a URL must also match one of them.
package scope

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"

	"golang.org/x/net/publicsuffix"

	"lidi/engine/urlnorm"
)

// Config describes a crawl's scope. Its zero value allows everything.
type Config struct {
	// Seeds are the crawl's start URLs. They are normalised; one that
	// fails gives an error from New.
	Seeds []string
	// AllowedHosts are host names (or IP addresses) allowed exactly.
	// Case, IDN and a port ("example.com:8080") are normalised away: a host
	// is allowed on every port.
	AllowedHosts []string `yaml:"allowed_hosts"`
	// AllowedDomains are domains allowed with all their hosts, matched by
	// registrable domain (see the package documentation).
	AllowedDomains []string `yaml:"allowed_domains"`
	// SeedHosts adds each seed's host to AllowedHosts.
	SeedHosts bool
	// SeedDomains adds each seed's registrable domain to AllowedDomains.
	SeedDomains bool
	// Include, if not empty, lists regular expressions of which a URL must
	// match at least one.
	Include []string `yaml:"include"`
	// Exclude lists regular expressions; a URL matching any is out.
	Exclude []string `yaml:"exclude"`
	// MaxDepth is the largest depth allowed, seeds being at depth 0;
	// 0 means unlimited.
	MaxDepth int `yaml:"max_depth" check:">=0"`
	// Normalizer normalises seeds; nil means urlnorm.Default. It should be
	// the crawler's, so that seeds are spelled as discovered URLs are.
	Normalizer *urlnorm.Normalizer
}

// Reason says why Allow accepted or rejected a URL.
type Reason uint8

// Reasons.
const (
	Allowed     Reason = iota // in scope
	OutOfHost                 // host not allowed by the host rules
	Excluded                  // matches an Exclude pattern
	NotIncluded               // matches no Include pattern
	TooDeep                   // depth above MaxDepth
	BadURL                    // not a normalised http or https URL
	NumReasons                // the number of reasons, for arrays indexed by Reason
)

var reasonNames = [NumReasons]string{"allowed", "out-of-host", "excluded", "not-included", "too-deep", "bad-url"}

func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return fmt.Sprintf("Reason(%d)", r)
}

// Stats counts Allow's decisions by reason.
type Stats struct {
	Allowed, OutOfHost, Excluded, NotIncluded, TooDeep, BadURL uint64
}

// A Scope answers whether a URL is in a crawl's scope. It is built by New
// and safe for concurrent use.
type Scope struct {
	seeds      []string
	restricted bool                // some host rule is given
	hosts      map[string]struct{} // exact hosts
	domains    map[string]struct{} // registrable domains (eTLD+1)
	suffixes   map[string]struct{} // public suffixes allowed whole
	include    []*regexp.Regexp
	exclude    []*regexp.Regexp
	maxDepth   int
	counts     [NumReasons]atomic.Uint64
}

// New checks cfg and builds its Scope. Errors name the offending entry: a
// seed that does not normalise or lies outside the host rules, a host or
// domain that is not one, a regular expression that does not compile, a
// negative MaxDepth.
func New(cfg Config) (*Scope, error) {
	norm := cfg.Normalizer
	if norm == nil {
		norm = urlnorm.Default
	}
	if cfg.MaxDepth < 0 {
		return nil, fmt.Errorf("scope: max depth %d is negative", cfg.MaxDepth)
	}
	s := &Scope{
		hosts:    map[string]struct{}{},
		domains:  map[string]struct{}{},
		suffixes: map[string]struct{}{},
		maxDepth: cfg.MaxDepth,
		restricted: len(cfg.AllowedHosts) > 0 || len(cfg.AllowedDomains) > 0 ||
			((cfg.SeedHosts || cfg.SeedDomains) && len(cfg.Seeds) > 0),
	}
	for _, h := range cfg.AllowedHosts {
		host, err := hostOf(h)
		if err != nil {
			return nil, fmt.Errorf("scope: allowed host %q: %w", h, err)
		}
		s.hosts[host] = struct{}{}
	}
	for _, d := range cfg.AllowedDomains {
		host, err := hostOf(strings.TrimPrefix(d, "."))
		if err != nil {
			return nil, fmt.Errorf("scope: allowed domain %q: %w", d, err)
		}
		if err := s.addDomain(host); err != nil {
			return nil, fmt.Errorf("scope: allowed domain %q: %w", d, err)
		}
	}
	for _, raw := range cfg.Seeds {
		seed, err := norm.Normalize(raw)
		if err != nil {
			return nil, fmt.Errorf("scope: seed %q: %w", raw, err)
		}
		s.seeds = append(s.seeds, seed)
		host := urlnorm.Host(seed)
		if cfg.SeedHosts {
			s.hosts[host] = struct{}{}
		}
		if cfg.SeedDomains {
			if isIP(host) {
				s.hosts[host] = struct{}{}
			} else if err := s.addDomain(host); err != nil {
				return nil, fmt.Errorf("scope: seed %q: %w", raw, err)
			}
		}
	}
	var err error
	if s.include, err = compileAll("include", cfg.Include); err != nil {
		return nil, err
	}
	if s.exclude, err = compileAll("exclude", cfg.Exclude); err != nil {
		return nil, err
	}
	for _, seed := range s.seeds {
		if !s.hostAllowed(urlnorm.Host(seed)) {
			return nil, fmt.Errorf("scope: seed %q is outside the allowed hosts and domains", seed)
		}
	}
	return s, nil
}

// hostOf normalises a host name given alone ("Example.COM", "bücher.de",
// "example.com:8080") or as a URL.
func hostOf(h string) (string, error) {
	h = strings.TrimSpace(h)
	raw := h
	if !strings.Contains(h, "://") {
		if strings.ContainsAny(h, "/?#@") {
			return "", errors.New("not a host name")
		}
		raw = "http://" + h + "/"
	}
	u, err := urlnorm.Default.Normalize(raw)
	if err != nil {
		return "", err
	}
	return urlnorm.Host(u), nil
}

// isIP reports whether a normalised host is an IP address: normalisation
// writes IPv4 addresses in dotted decimal and turns any other all-numeric
// name into one (or rejects it), and only IPv6 addresses contain ':'.
func isIP(host string) bool {
	if strings.IndexByte(host, ':') >= 0 {
		return true
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return host != ""
}

// addDomain records a normalised domain: an IP address is refused, a public
// suffix is allowed whole, anything else by its registrable domain.
func (s *Scope) addDomain(d string) error {
	if isIP(d) {
		return errors.New("an IP address is not a domain; use allowed hosts")
	}
	if ps, _ := publicsuffix.PublicSuffix(d); ps == d {
		s.suffixes[d] = struct{}{}
		return nil
	}
	reg, err := publicsuffix.EffectiveTLDPlusOne(d)
	if err != nil {
		return err
	}
	s.domains[reg] = struct{}{}
	return nil
}

func compileAll(what string, patterns []string) ([]*regexp.Regexp, error) {
	var res []*regexp.Regexp
	for _, p := range patterns {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("scope: bad %s pattern %q: %w", what, p, err)
		}
		res = append(res, re)
	}
	return res, nil
}

// Allow reports whether the normalised URL u, found at the given depth
// (seeds are at depth 0), is in scope, and why not when it is not. Checks
// run cheapest first: depth, host, Exclude, Include.
func (s *Scope) Allow(u string, depth int) (bool, Reason) {
	r := s.decide(u, depth)
	s.counts[r].Add(1)
	return r == Allowed, r
}

func (s *Scope) decide(u string, depth int) Reason {
	if s.maxDepth > 0 && depth > s.maxDepth {
		return TooDeep
	}
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return BadURL
	}
	host := urlnorm.Host(u)
	if host == "" {
		return BadURL
	}
	if !s.hostAllowed(host) {
		return OutOfHost
	}
	for _, re := range s.exclude {
		if re.MatchString(u) {
			return Excluded
		}
	}
	if len(s.include) > 0 {
		in := false
		for _, re := range s.include {
			if re.MatchString(u) {
				in = true
				break
			}
		}
		if !in {
			return NotIncluded
		}
	}
	return Allowed
}

// hostAllowed applies the host rules to a normalised host.
func (s *Scope) hostAllowed(host string) bool {
	if !s.restricted {
		return true
	}
	if _, ok := s.hosts[host]; ok {
		return true
	}
	if len(s.domains) == 0 && len(s.suffixes) == 0 || isIP(host) {
		return false // an address has no domain: only exact hosts match it
	}
	// Walk the host's parent domains, cheapest test first: map lookups of
	// substrings, no allocation. A registrable-domain hit is confirmed
	// with the public suffix list, which is the costly part.
	for d := host; d != ""; {
		if _, ok := s.suffixes[d]; ok {
			return true
		}
		if _, ok := s.domains[d]; ok {
			reg, err := publicsuffix.EffectiveTLDPlusOne(host)
			return err == nil && reg == d
		}
		i := strings.IndexByte(d, '.')
		if i < 0 {
			break
		}
		d = d[i+1:]
	}
	return false
}

// Seeds returns the normalised seeds.
func (s *Scope) Seeds() []string {
	return append([]string(nil), s.seeds...)
}

// Stats returns a snapshot of Allow's decisions so far.
func (s *Scope) Stats() Stats {
	return Stats{
		Allowed:     s.counts[Allowed].Load(),
		OutOfHost:   s.counts[OutOfHost].Load(),
		Excluded:    s.counts[Excluded].Load(),
		NotIncluded: s.counts[NotIncluded].Load(),
		TooDeep:     s.counts[TooDeep].Load(),
		BadURL:      s.counts[BadURL].Load(),
	}
}
