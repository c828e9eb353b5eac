// Package dns is lidi's in-process DNS cache.
//
// A crawler meets the same host again and again; the kc2008 lidi paper
// measured 1.6 s for a remote look-up against 1.6 ms from a local table.
// lidi therefore resolves every host itself, once per TTL, through a [Cache]
// placed in front of the configured DNS servers, instead of leaving it to the
// operating system on every connection.
//
// Resolution rules, in brief:
//
//   - An A query is sent first. Only when the name exists but has no A record
//     is an AAAA query sent (unless [Config.IPv4Only]), so IPv4 addresses are
//     always preferred and a name with A records costs exactly one query.
//   - CNAME chains are followed within the answer (up to 8 links); a chain
//     the server did not complete counts as "no address".
//   - The answer's TTL (the smallest on the chain) is clamped to
//     [Config.MinTTL, Config.MaxTTL]. Failures (NXDOMAIN, no address,
//     SERVFAIL, timeouts) are cached for [Config.NegativeTTL].
//   - Expired entries are not served stale: the next look-up re-queries and
//     waits for the answer. [Cache.Prefetch] refreshes a host in the
//     background when the caller knows it will need it soon.
//   - Concurrent look-ups of one name share one resolution.
//   - IP literals (v4, v6, bracketed v6) answer at once without a query,
//     and so do the names of [Config.HostsFile] (/etc/hosts, say).
//
// Names are case-insensitive; a trailing dot is ignored. Names must already
// be ASCII (IDNs in punycode), as lidi's URL normaliser produces them.
package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	mdns "github.com/miekg/dns"
)

// Defaults used for zero [Config] fields.
const (
	DefaultMinTTL      = 60 * time.Second
	DefaultMaxTTL      = 24 * time.Hour
	DefaultNegativeTTL = 30 * time.Second
	DefaultTimeout     = 2 * time.Second
	DefaultMaxEntries  = 100_000
	DefaultMaxPrefetch = 32
)

// resolvConfPath is where the system's servers are read from when
// Config.Servers is empty; a variable so tests can point it elsewhere.
var resolvConfPath = "/etc/resolv.conf"

var (
	// ErrNotFound reports that the name does not exist (NXDOMAIN) or has
	// no address record.
	ErrNotFound = errors.New("dns: no such host")
	// ErrServerFailure reports that every server answered with an error
	// code other than NXDOMAIN (SERVFAIL, REFUSED, ...).
	ErrServerFailure = errors.New("dns: server failure")
	// ErrInvalidHost reports a host that is neither an IP literal nor a
	// syntactically valid ASCII domain name. No query is sent for it.
	ErrInvalidHost = errors.New("dns: invalid host name")
	// ErrClosed reports a look-up that needed a query after Close.
	ErrClosed = errors.New("dns: cache closed")

	errCNAMEChain = errors.New("dns: CNAME chain too long or looping")
)

// LookupError is the error returned by [Cache.Lookup] and
// [Cache.LookupAll]. Err is one of the sentinel errors of this package, a
// network error from the last server tried, or the caller's context error.
type LookupError struct {
	Host string // canonical name (lower case, no trailing dot), or the input if invalid
	Err  error
}

// Error returns "dns: lookup HOST: REASON".
func (e *LookupError) Error() string {
	return "dns: lookup " + e.Host + ": " + strings.TrimPrefix(e.Err.Error(), "dns: ")
}

// Unwrap returns Err, so errors.Is sees the sentinel errors through it.
func (e *LookupError) Unwrap() error { return e.Err }

// Timeout reports whether the look-up failed because no server answered
// in time (or the caller's context expired).
func (e *LookupError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout() || errors.Is(e.Err, context.DeadlineExceeded)
}

// Config configures a [Cache]. The zero value is usable: it resolves
// through the servers listed in /etc/resolv.conf with the Default* values.
type Config struct {
	// Servers are the DNS servers as "ip:port" (a bare IP means port 53).
	// They are tried in order; the next one is tried when one times out,
	// cannot be reached or answers with an error other than NXDOMAIN.
	// Empty means the nameservers of /etc/resolv.conf.
	Servers []string `yaml:"servers"`
	// MinTTL and MaxTTL bound how long an answer is kept, whatever its
	// TTL. Zero means DefaultMinTTL and DefaultMaxTTL.
	MinTTL time.Duration `yaml:"min_ttl" check:">=0"`
	MaxTTL time.Duration `yaml:"max_ttl" check:">=0"`
	// NegativeTTL is how long a failure is kept. Zero means
	// DefaultNegativeTTL.
	NegativeTTL time.Duration `yaml:"negative_ttl" check:">=0"`
	// Timeout bounds one query to one server (dial, write and read). A
	// look-up tries each server once, a lone server twice, so it gives up
	// after about Timeout × max(2, len(Servers)). Zero means
	// DefaultTimeout.
	Timeout time.Duration `yaml:"timeout" check:">=0"`
	// MaxEntries caps the number of cached names (answers and failures).
	// When full, a second-chance (CLOCK) sweep evicts an expired entry or
	// one not looked up since the sweep last passed it. It also caps the
	// prefetch queue. Zero means DefaultMaxEntries; an entry costs about
	// 200 bytes (so the default about 20 MB).
	MaxEntries int
	// MaxPrefetch caps the resolutions started by Prefetch that run at
	// once; further prefetches wait in a queue. Zero means
	// DefaultMaxPrefetch.
	MaxPrefetch int
	// HostsFile names a file in /etc/hosts format whose names are answered
	// from it, before any server is asked (and never expire). Empty means
	// none; a file that does not exist has no names.
	HostsFile string `yaml:"hosts_file"`
	// IPv4Only disables the AAAA query for names without an A record.
	// The zero value (false) asks AAAA in that case.
	IPv4Only bool
	// Now is the clock used for TTL expiry (not for network timeouts,
	// which are real time). Nil means time.Now.
	Now func() time.Time
}

// Stats is a snapshot of a Cache's counters, returned by [Cache.Stats].
type Stats struct {
	Lookups   uint64 // calls to Lookup and LookupAll
	Hits      uint64 // look-ups answered from the cache (answers and cached failures)
	Misses    uint64 // look-ups that waited for a resolution (started or joined)
	Collapsed uint64 // look-ups and prefetches that joined a resolution already in flight
	Literals  uint64 // look-ups of IP literals, answered without the cache
	HostsFile uint64 // look-ups answered from the hosts file, without a query
	Invalid   uint64 // look-ups rejected as ErrInvalidHost

	Queries   uint64 // DNS messages sent to servers (retries and AAAA included)
	Failures  uint64 // resolutions that ended in an error (each cached for NegativeTTL)
	Evictions uint64 // entries evicted to respect MaxEntries

	Prefetches      uint64 // prefetches queued
	PrefetchDropped uint64 // prefetches dropped because the queue was full

	Entries  int // names cached now (expired ones included until replaced or evicted)
	InFlight int // resolutions running now
	Queued   int // prefetches waiting for a worker
}

// Cache resolves host names to addresses and remembers the answers.
// Create it with [NewCache]; the zero Cache is not usable. A Cache is safe
// for concurrent use by multiple goroutines.
type Cache struct {
	servers     []string
	minTTL      time.Duration
	maxTTL      time.Duration
	negTTL      time.Duration
	timeout     time.Duration
	maxEntries  int
	maxPrefetch int
	ipv4Only    bool
	now         func() time.Time
	udp, tcp    *mdns.Client
	hosts       map[string][]netip.Addr // the hosts file's names

	// ctx is cancelled by Close; resolutions run under it rather than
	// under a caller's context, since other callers may be waiting.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // resolutions and prefetch workers

	mu      sync.RWMutex
	entries map[string]*entry
	ring    []*entry // CLOCK order for eviction
	hand    int
	flights map[string]*flight
	queue   []string // prefetch FIFO, queue[qhead:] pending
	qhead   int
	queued  map[string]struct{}
	workers int
	closed  bool

	lookups, hits, misses, collapsed, literals, invalid atomic.Uint64
	hostsHits                                           atomic.Uint64
	queries, failures, evictions                        atomic.Uint64
	prefetches, prefetchDropped                         atomic.Uint64
}

// entry is one cached name. Its fields other than ref change only under
// the write lock; ref is set by readers holding the read lock.
type entry struct {
	key     string
	addrs   []netip.Addr // nil when err is set
	err     error        // a *LookupError for a cached failure
	expires time.Time
	ref     atomic.Bool // looked up since the CLOCK hand last passed
}

// flight is one resolution in progress; done is closed once addrs or err
// is set and the result is in the cache.
type flight struct {
	done  chan struct{}
	addrs []netip.Addr
	err   error
}

// NewCache returns a Cache configured by cfg. It fails if a server address
// is malformed, a duration is negative, MinTTL exceeds MaxTTL, or
// cfg.Servers is empty and /etc/resolv.conf lists no nameserver.
func NewCache(cfg Config) (*Cache, error) {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"MinTTL", cfg.MinTTL}, {"MaxTTL", cfg.MaxTTL}, {"NegativeTTL", cfg.NegativeTTL}, {"Timeout", cfg.Timeout}} {
		if d.v < 0 {
			return nil, fmt.Errorf("dns: %s is negative (%v)", d.name, d.v)
		}
	}
	if cfg.MaxEntries < 0 {
		return nil, fmt.Errorf("dns: MaxEntries is negative (%d)", cfg.MaxEntries)
	}
	if cfg.MaxPrefetch < 0 {
		return nil, fmt.Errorf("dns: MaxPrefetch is negative (%d)", cfg.MaxPrefetch)
	}
	c := &Cache{
		minTTL:      orDefault(cfg.MinTTL, DefaultMinTTL),
		maxTTL:      orDefault(cfg.MaxTTL, DefaultMaxTTL),
		negTTL:      orDefault(cfg.NegativeTTL, DefaultNegativeTTL),
		timeout:     orDefault(cfg.Timeout, DefaultTimeout),
		maxEntries:  orDefault(cfg.MaxEntries, DefaultMaxEntries),
		maxPrefetch: orDefault(cfg.MaxPrefetch, DefaultMaxPrefetch),
		ipv4Only:    cfg.IPv4Only,
		now:         cfg.Now,
		entries:     make(map[string]*entry),
		flights:     make(map[string]*flight),
		queued:      make(map[string]struct{}),
	}
	if c.minTTL > c.maxTTL {
		return nil, fmt.Errorf("dns: MinTTL (%v) exceeds MaxTTL (%v)", c.minTTL, c.maxTTL)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if cfg.HostsFile != "" {
		var err error
		if c.hosts, err = readHosts(cfg.HostsFile); err != nil {
			return nil, err
		}
	}
	servers := cfg.Servers
	if len(servers) == 0 {
		rc, err := mdns.ClientConfigFromFile(resolvConfPath)
		if err != nil {
			return nil, fmt.Errorf("dns: no servers configured and cannot read system resolver config: %w", err)
		}
		if len(rc.Servers) == 0 {
			return nil, fmt.Errorf("dns: no servers configured and %s lists no nameserver", resolvConfPath)
		}
		for _, s := range rc.Servers {
			servers = append(servers, net.JoinHostPort(s, rc.Port))
		}
	}
	for _, s := range servers {
		addr, err := parseServer(s)
		if err != nil {
			return nil, err
		}
		c.servers = append(c.servers, addr)
	}
	// Advertising EDNS0 keeps answers in UDP; TCP is only a fallback for
	// truncated answers.
	c.udp = &mdns.Client{Net: "udp", Timeout: c.timeout}
	c.tcp = &mdns.Client{Net: "tcp", Timeout: c.timeout}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// parseServer accepts "ip:port", "[ipv6]:port" or a bare IP (port 53).
// Server names are refused: resolving the resolver would need DNS.
func parseServer(s string) (string, error) {
	if ip, err := netip.ParseAddr(s); err == nil {
		return netip.AddrPortFrom(ip, 53).String(), nil
	}
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return "", fmt.Errorf("dns: server %q is not an ip:port address", s)
	}
	if ap.Port() == 0 {
		return "", fmt.Errorf("dns: server %q has port 0", s)
	}
	return ap.String(), nil
}

// Servers returns the servers the Cache queries, in order, as ip:port.
func (c *Cache) Servers() []string { return slices.Clone(c.servers) }

// Lookup returns the first address of host: its first A record, or its
// first AAAA record if it has no A record. ctx bounds how long this caller
// waits; a resolution it started goes on in the background and its answer
// is cached, so abandoning a look-up never wastes the query.
//
// Errors are *LookupError; use errors.Is with ErrNotFound,
// ErrServerFailure, ErrInvalidHost or ErrClosed, or its Timeout method.
func (c *Cache) Lookup(ctx context.Context, host string) (netip.Addr, error) {
	first, _, err := c.lookup(ctx, host)
	return first, err
}

// LookupAll is like Lookup but returns every address of host in the
// server's order (A records, or AAAA records if there is no A record).
// The slice is the caller's to keep or modify.
func (c *Cache) LookupAll(ctx context.Context, host string) ([]netip.Addr, error) {
	first, all, err := c.lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if all == nil { // IP literal
		return []netip.Addr{first}, nil
	}
	return slices.Clone(all), nil
}

// lookup returns the first address and the cached slice (nil for an IP
// literal), which the caller must not modify.
func (c *Cache) lookup(ctx context.Context, host string) (netip.Addr, []netip.Addr, error) {
	c.lookups.Add(1)
	key, lit, err := canonicalHost(host)
	if err != nil {
		c.invalid.Add(1)
		return netip.Addr{}, nil, &LookupError{Host: host, Err: err}
	}
	if lit.IsValid() {
		c.literals.Add(1)
		return lit, nil, nil
	}
	if addrs := c.hosts[key]; addrs != nil {
		c.hostsHits.Add(1)
		return addrs[0], addrs, nil
	}
	now := c.now()
	c.mu.RLock()
	if e := c.entries[key]; e != nil && now.Before(e.expires) {
		addrs, err := e.addrs, e.err
		if !e.ref.Load() { // avoid dirtying the cache line on every hit
			e.ref.Store(true)
		}
		c.mu.RUnlock()
		c.hits.Add(1)
		return firstOf(addrs), addrs, err
	}
	c.mu.RUnlock()

	c.mu.Lock()
	e, f, err := c.resolveLocked(key, c.now())
	var addrs []netip.Addr
	if e != nil {
		addrs, err = e.addrs, e.err
	}
	c.mu.Unlock()
	if e != nil { // answered while we waited for the write lock
		c.hits.Add(1)
		return firstOf(addrs), addrs, err
	}
	if err != nil {
		c.misses.Add(1)
		return netip.Addr{}, nil, &LookupError{Host: key, Err: err}
	}
	c.misses.Add(1)
	select {
	case <-f.done:
		return firstOf(f.addrs), f.addrs, f.err
	case <-ctx.Done():
		return netip.Addr{}, nil, &LookupError{Host: key, Err: ctx.Err()}
	}
}

func firstOf(addrs []netip.Addr) netip.Addr {
	if len(addrs) == 0 {
		return netip.Addr{}
	}
	return addrs[0]
}

// resolveLocked returns the fresh entry for key if there is one, or else
// the flight resolving key, starting one if none is running. c.mu must be
// held for writing. The entry's fields must be read before unlocking.
func (c *Cache) resolveLocked(key string, now time.Time) (*entry, *flight, error) {
	if e := c.entries[key]; e != nil && now.Before(e.expires) {
		e.ref.Store(true)
		return e, nil, nil
	}
	if f := c.flights[key]; f != nil {
		c.collapsed.Add(1)
		return nil, f, nil
	}
	if c.closed {
		return nil, nil, ErrClosed
	}
	f := &flight{done: make(chan struct{})}
	c.flights[key] = f
	c.wg.Add(1)
	go c.resolve(key, f)
	return nil, f, nil
}

// resolve runs one resolution, stores its result and releases the waiters.
func (c *Cache) resolve(key string, f *flight) {
	defer c.wg.Done()
	addrs, ttl, err := c.query(c.ctx, key)
	now := c.now()
	closed := errors.Is(err, ErrClosed)
	if err != nil {
		err = &LookupError{Host: key, Err: err}
		ttl = c.negTTL
		if !closed {
			c.failures.Add(1)
		}
	}
	c.mu.Lock()
	f.addrs, f.err = addrs, err
	// A resolution cut short by Close says nothing about the name.
	if !closed {
		c.storeLocked(key, addrs, err, now.Add(ttl), now)
	}
	// Storing and forgetting the flight under one lock leaves no moment
	// where a look-up finds neither and queries again.
	delete(c.flights, key)
	c.mu.Unlock()
	close(f.done)
}

// storeLocked caches a result, replacing key's entry in place or taking a
// slot from the CLOCK sweep when full. c.mu must be held for writing.
func (c *Cache) storeLocked(key string, addrs []netip.Addr, err error, expires, now time.Time) {
	if e := c.entries[key]; e != nil {
		e.addrs, e.err, e.expires = addrs, err, expires
		e.ref.Store(true) // asked for again, so in use
		return
	}
	e := &entry{key: key, addrs: addrs, err: err, expires: expires}
	if len(c.ring) < c.maxEntries {
		c.ring = append(c.ring, e)
	} else {
		i := c.victimLocked(now)
		delete(c.entries, c.ring[i].key)
		c.ring[i] = e
		c.evictions.Add(1)
	}
	c.entries[key] = e
}

// victimLocked advances the CLOCK hand to the first entry that is expired
// or has not been looked up since the hand last passed, clearing the
// reference mark of the others; it stops within one turn and a step.
func (c *Cache) victimLocked(now time.Time) int {
	for {
		i := c.hand
		c.hand = (c.hand + 1) % len(c.ring)
		e := c.ring[i]
		if !now.Before(e.expires) || !e.ref.Load() {
			return i
		}
		e.ref.Store(false)
	}
}

// Close stops prefetching, drops the prefetch queue, and waits for running
// resolutions to end (at most about one Timeout). Cached answers are still
// served afterwards; look-ups that would need a query fail with ErrClosed.
// Close is idempotent and always returns nil.
func (c *Cache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.queue, c.qhead, c.queued = nil, 0, nil
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	return nil
}

// Stats returns a snapshot of the Cache's counters.
func (c *Cache) Stats() Stats {
	c.mu.RLock()
	entries, inFlight, queued := len(c.entries), len(c.flights), len(c.queue)-c.qhead
	c.mu.RUnlock()
	return Stats{
		Lookups:         c.lookups.Load(),
		Hits:            c.hits.Load(),
		Misses:          c.misses.Load(),
		Collapsed:       c.collapsed.Load(),
		Literals:        c.literals.Load(),
		HostsFile:       c.hostsHits.Load(),
		Invalid:         c.invalid.Load(),
		Queries:         c.queries.Load(),
		Failures:        c.failures.Load(),
		Evictions:       c.evictions.Load(),
		Prefetches:      c.prefetches.Load(),
		PrefetchDropped: c.prefetchDropped.Load(),
		Entries:         entries,
		InFlight:        inFlight,
		Queued:          queued,
	}
}
