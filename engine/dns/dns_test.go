package dns

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"lidi/engine/clock"
	"lidi/internal/testkit"

	mdns "github.com/miekg/dns"
)

// newTestCache returns a Cache on a fake clock querying servers.
func newTestCache(t testing.TB, cfg Config, servers ...string) (*Cache, *clock.Fake) {
	t.Helper()
	clk := newFakeClock()
	cfg.Servers = servers
	if cfg.Now == nil {
		cfg.Now = clk.Now
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 2 * time.Second
	}
	c, err := NewCache(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, clk
}

func mustLookup(t testing.TB, c *Cache, host string) netip.Addr {
	t.Helper()
	a, err := c.Lookup(context.Background(), host)
	if err != nil {
		t.Fatalf("Lookup(%q): %v", host, err)
	}
	return a
}

func TestLookupCachesAnswer(t *testing.T) {
	z := newZone()
	z.set(t, "a.test.", mdns.TypeA, "a.test. 300 IN A 127.0.0.10", "a.test. 300 IN A 127.0.0.11")
	c, _ := newTestCache(t, Config{}, startServer(t, z, false))

	for i := range 3 {
		if got, want := mustLookup(t, c, "a.test"), netip.MustParseAddr("127.0.0.10"); got != want {
			t.Fatalf("lookup %d = %v, want %v", i, got, want)
		}
	}
	all, err := c.LookupAll(context.Background(), "a.test")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{netip.MustParseAddr("127.0.0.10"), netip.MustParseAddr("127.0.0.11")}
	if !slices.Equal(all, want) {
		t.Fatalf("LookupAll = %v, want %v", all, want)
	}
	all[0] = netip.Addr{} // the caller owns the slice
	if got := mustLookup(t, c, "a.test"); got != want[0] {
		t.Fatalf("after modifying LookupAll's slice, Lookup = %v", got)
	}

	if n := z.count("a.test.", mdns.TypeA); n != 1 {
		t.Errorf("server saw %d A queries, want 1", n)
	}
	if n := z.totalQueries(); n != 1 {
		t.Errorf("server saw %d queries in all, want 1", n)
	}
	s := c.Stats()
	wantStats := Stats{Lookups: 5, Hits: 4, Misses: 1, Queries: 1, Entries: 1}
	if s != wantStats {
		t.Errorf("Stats = %+v, want %+v", s, wantStats)
	}
}

func TestLookupCanonicalName(t *testing.T) {
	z := newZone()
	z.set(t, "www.example.test.", mdns.TypeA, "www.example.test. 300 IN A 127.0.0.12")
	c, _ := newTestCache(t, Config{}, startServer(t, z, false))
	for _, h := range []string{"www.example.test", "WWW.Example.TEST", "www.example.test.", "Www.Example.Test."} {
		if got := mustLookup(t, c, h); got != netip.MustParseAddr("127.0.0.12") {
			t.Errorf("Lookup(%q) = %v", h, got)
		}
	}
	if n := z.totalQueries(); n != 1 {
		t.Errorf("server saw %d queries, want 1 for one name spelled four ways", n)
	}
}

func TestTTLBounds(t *testing.T) {
	tests := []struct {
		name           string
		ttl            uint32
		minTTL, maxTTL time.Duration
		keep           time.Duration
	}{
		{"within bounds", 300, 0, 0, 300 * time.Second},
		{"raised to MinTTL", 5, 0, 0, DefaultMinTTL},
		{"zero TTL raised to MinTTL", 0, 10 * time.Second, 0, 10 * time.Second},
		{"lowered to MaxTTL", 100000, time.Second, time.Hour, time.Hour},
		{"default MaxTTL", 604800, 0, 0, DefaultMaxTTL},
		{"MinTTL equals MaxTTL", 300, 90 * time.Second, 90 * time.Second, 90 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := newZone()
			z.set(t, "t.test.", mdns.TypeA, fmt.Sprintf("t.test. %d IN A 127.0.0.13", tt.ttl))
			c, clk := newTestCache(t, Config{MinTTL: tt.minTTL, MaxTTL: tt.maxTTL}, startServer(t, z, false))

			mustLookup(t, c, "t.test")
			clk.Advance(tt.keep - time.Second)
			mustLookup(t, c, "t.test")
			if n := z.totalQueries(); n != 1 {
				t.Fatalf("1 s before expiry: %d queries, want 1", n)
			}
			clk.Advance(time.Second)
			mustLookup(t, c, "t.test")
			if n := z.totalQueries(); n != 2 {
				t.Fatalf("at expiry: %d queries, want 2", n)
			}
			mustLookup(t, c, "t.test")
			if n := z.totalQueries(); n != 2 {
				t.Fatalf("after re-query: %d queries, want 2 (refreshed entry is cached)", n)
			}
			if s := c.Stats(); s.Entries != 1 {
				t.Fatalf("Entries = %d after refresh, want 1", s.Entries)
			}
		})
	}
}

func TestFailuresCachedForNegativeTTL(t *testing.T) {
	tests := []struct {
		name     string
		setup    func(t *testing.T, z *zone)
		ipv4Only bool
		wantErr  error
		queries  int // per resolution
	}{
		{"NXDOMAIN", func(t *testing.T, z *zone) {}, false, ErrNotFound, 1},
		{"no A record, IPv4 only", func(t *testing.T, z *zone) {
			z.set(t, "x.test.", mdns.TypeTXT, `x.test. 300 IN TXT "hello"`)
		}, true, ErrNotFound, 1},
		{"no A nor AAAA record", func(t *testing.T, z *zone) {
			z.set(t, "x.test.", mdns.TypeTXT, `x.test. 300 IN TXT "hello"`)
		}, false, ErrNotFound, 2},
		{"SERVFAIL", func(t *testing.T, z *zone) {
			z.setRcode("x.test.", mdns.RcodeServerFailure)
		}, false, ErrServerFailure, 2}, // a lone server is asked twice
		{"REFUSED", func(t *testing.T, z *zone) {
			z.setRcode("x.test.", mdns.RcodeRefused)
		}, false, ErrServerFailure, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := newZone()
			tt.setup(t, z)
			c, clk := newTestCache(t, Config{NegativeTTL: 20 * time.Second, IPv4Only: tt.ipv4Only}, startServer(t, z, false))

			check := func(wantQueries int) {
				t.Helper()
				a, err := c.Lookup(context.Background(), "x.test")
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				var le *LookupError
				if !errors.As(err, &le) || le.Host != "x.test" {
					t.Fatalf("err = %#v, want *LookupError for x.test", err)
				}
				if a.IsValid() {
					t.Fatalf("address %v returned with error", a)
				}
				if n := z.totalQueries(); n != wantQueries {
					t.Fatalf("server saw %d queries, want %d", n, wantQueries)
				}
			}
			check(tt.queries)
			clk.Advance(20*time.Second - time.Nanosecond)
			check(tt.queries) // cached failure
			clk.Advance(time.Nanosecond)
			check(2 * tt.queries) // expired: asked again

			s := c.Stats()
			if s.Failures != 2 || s.Hits != 1 || s.Misses != 2 {
				t.Errorf("Stats = %+v, want 2 failures, 1 hit, 2 misses", s)
			}
		})
	}
}

func TestConcurrentLookupsCollapse(t *testing.T) {
	z := newZone()
	z.set(t, "busy.test.", mdns.TypeA, "busy.test. 300 IN A 127.0.0.14")
	addr := startServer(t, z, false)
	release := z.hold(t)
	c, _ := newTestCache(t, Config{}, addr)

	const n = 100
	var wg sync.WaitGroup
	results := make([]netip.Addr, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = c.Lookup(context.Background(), "busy.test") })
	}
	// Hold the answer until every caller is waiting, so all 100 overlap.
	testkit.WaitFor(t, 10*time.Second, "100 waiting look-ups", func() bool { return c.Stats().Misses == n })
	release()
	wg.Wait()

	for i := range n {
		if errs[i] != nil || results[i] != netip.MustParseAddr("127.0.0.14") {
			t.Fatalf("caller %d: %v, %v", i, results[i], errs[i])
		}
	}
	if q := z.totalQueries(); q != 1 {
		t.Errorf("server saw %d queries for %d concurrent look-ups, want 1", q, n)
	}
	if s := c.Stats(); s.Collapsed != n-1 || s.Queries != 1 {
		t.Errorf("Stats = %+v, want Collapsed %d and Queries 1", s, n-1)
	}
}

func TestTimeoutTriesNextServer(t *testing.T) {
	z := newZone()
	z.set(t, "a.test.", mdns.TypeA, "a.test. 300 IN A 127.0.0.15")
	good := startServer(t, z, false)
	dead := startBlackhole(t)
	timeout := 200 * time.Millisecond
	c, _ := newTestCache(t, Config{Timeout: timeout}, dead.addr, good)

	start := time.Now()
	if got := mustLookup(t, c, "a.test"); got != netip.MustParseAddr("127.0.0.15") {
		t.Fatalf("Lookup = %v", got)
	}
	if elapsed := time.Since(start); elapsed < timeout {
		t.Errorf("answered after %v, before the first server's timeout %v", elapsed, timeout)
	}
	if got := dead.received.Load(); got != 1 {
		t.Errorf("dead server received %d queries, want 1", got)
	}
	if got := z.totalQueries(); got != 1 {
		t.Errorf("good server received %d queries, want 1", got)
	}
	if s := c.Stats(); s.Queries != 2 || s.Failures != 0 {
		t.Errorf("Stats = %+v, want 2 queries and no failure", s)
	}
}

func TestTimeoutAllServers(t *testing.T) {
	tests := []struct {
		name      string
		servers   int
		perServer int64
	}{
		{"lone server asked twice", 1, 2},
		{"each of three asked once", 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dead []*blackhole
			var addrs []string
			for range tt.servers {
				b := startBlackhole(t)
				dead = append(dead, b)
				addrs = append(addrs, b.addr)
			}
			timeout := 150 * time.Millisecond
			c, clk := newTestCache(t, Config{Timeout: timeout}, addrs...)
			attempts := max(2, tt.servers)

			start := time.Now()
			_, err := c.Lookup(context.Background(), "slow.test")
			elapsed := time.Since(start)
			var le *LookupError
			if !errors.As(err, &le) || !le.Timeout() {
				t.Fatalf("err = %v, want a *LookupError that is a timeout", err)
			}
			if errors.Is(err, ErrNotFound) {
				t.Fatalf("timeout reported as not found: %v", err)
			}
			// Timeout is a deadline per attempt, so the look-up lasts at
			// least attempts × Timeout; the upper bound is loose because
			// this machine is shared.
			if lo, hi := time.Duration(attempts)*timeout, time.Duration(attempts)*timeout+5*time.Second; elapsed < lo || elapsed > hi {
				t.Errorf("gave up after %v, want between %v and %v", elapsed, lo, hi)
			}
			for i, b := range dead {
				if got := b.received.Load(); got != tt.perServer {
					t.Errorf("server %d received %d queries, want %d", i, got, tt.perServer)
				}
			}

			// The failure is cached: no packet, no wait.
			if _, err2 := c.Lookup(context.Background(), "slow.test"); err2 != err {
				t.Errorf("second look-up: %v, want the cached error", err2)
			}
			clk.Advance(DefaultNegativeTTL)
			c.Lookup(context.Background(), "slow.test")
			if got := dead[0].received.Load(); got != 2*tt.perServer {
				t.Errorf("after NegativeTTL, server 0 received %d queries in all, want %d", got, 2*tt.perServer)
			}
		})
	}
}

func TestServerFailureTriesNextServer(t *testing.T) {
	bad := newZone()
	bad.setRcode("a.test.", mdns.RcodeServerFailure)
	good := newZone()
	good.set(t, "a.test.", mdns.TypeA, "a.test. 300 IN A 127.0.0.16")
	c, _ := newTestCache(t, Config{}, startServer(t, bad, false), startServer(t, good, false))
	if got := mustLookup(t, c, "a.test"); got != netip.MustParseAddr("127.0.0.16") {
		t.Fatalf("Lookup = %v", got)
	}
	if bad.totalQueries() != 1 || good.totalQueries() != 1 {
		t.Errorf("queries: failing server %d, good server %d; want 1 and 1", bad.totalQueries(), good.totalQueries())
	}
}

func TestNXDOMAINIsFinal(t *testing.T) {
	first, second := newZone(), newZone()
	second.set(t, "a.test.", mdns.TypeA, "a.test. 300 IN A 127.0.0.17")
	c, _ := newTestCache(t, Config{}, startServer(t, first, false), startServer(t, second, false))
	if _, err := c.Lookup(context.Background(), "a.test"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound from the first server", err)
	}
	if second.totalQueries() != 0 {
		t.Errorf("second server asked after NXDOMAIN")
	}
}

func TestCNAMEChain(t *testing.T) {
	tests := []struct {
		name    string
		answer  []string
		want    string
		wantErr error
		keep    time.Duration
	}{
		{
			name: "two links, smallest TTL kept",
			answer: []string{
				"www.c.test. 3600 IN CNAME edge.c.test.",
				"edge.c.test. 120 IN CNAME node.cdn.test.",
				"NODE.cdn.test. 600 IN A 127.0.0.18", // case differs from the CNAME target
			},
			want: "127.0.0.18",
			keep: 120 * time.Second,
		},
		{
			name: "records out of order, foreign A ignored",
			answer: []string{
				"other.test. 300 IN A 127.0.0.99",
				"edge.c.test. 400 IN A 127.0.0.19",
				"www.c.test. 500 IN CNAME edge.c.test.",
			},
			want: "127.0.0.19",
			keep: 400 * time.Second,
		},
		{
			name: "loop",
			answer: []string{
				"www.c.test. 300 IN CNAME edge.c.test.",
				"edge.c.test. 300 IN CNAME www.c.test.",
			},
			wantErr: errCNAMEChain,
		},
		{
			name:    "chain not completed by the server",
			answer:  []string{"www.c.test. 300 IN CNAME elsewhere.test."},
			wantErr: ErrNotFound,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := newZone()
			z.set(t, "www.c.test.", mdns.TypeA, tt.answer...)
			c, clk := newTestCache(t, Config{MinTTL: time.Second, IPv4Only: true}, startServer(t, z, false))
			a, err := c.Lookup(context.Background(), "www.c.test")
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || a != netip.MustParseAddr(tt.want) {
				t.Fatalf("Lookup = %v, %v; want %s", a, err, tt.want)
			}
			clk.Advance(tt.keep - time.Second)
			mustLookup(t, c, "www.c.test")
			clk.Advance(time.Second)
			mustLookup(t, c, "www.c.test")
			if n := z.totalQueries(); n != 2 {
				t.Errorf("%d queries, want 2 (kept for %v exactly)", n, tt.keep)
			}
		})
	}
}

func TestAAAAOnlyWhenNoA(t *testing.T) {
	z := newZone()
	z.set(t, "v6.test.", mdns.TypeAAAA, "v6.test. 300 IN AAAA ::1")
	z.set(t, "both.test.", mdns.TypeA, "both.test. 300 IN A 127.0.0.20")
	z.set(t, "both.test.", mdns.TypeAAAA, "both.test. 300 IN AAAA ::1")
	addr := startServer(t, z, false)

	c, _ := newTestCache(t, Config{}, addr)
	if got := mustLookup(t, c, "v6.test"); got != netip.MustParseAddr("::1") {
		t.Errorf("v6.test = %v, want ::1", got)
	}
	if got := mustLookup(t, c, "both.test"); got != netip.MustParseAddr("127.0.0.20") {
		t.Errorf("both.test = %v, want the IPv4 address", got)
	}
	if z.count("both.test.", mdns.TypeAAAA) != 0 {
		t.Errorf("AAAA asked for a name with an A record")
	}
	if z.count("v6.test.", mdns.TypeA) != 1 || z.count("v6.test.", mdns.TypeAAAA) != 1 {
		t.Errorf("v6.test: want one A and one AAAA query")
	}

	c4, _ := newTestCache(t, Config{IPv4Only: true}, addr)
	if _, err := c4.Lookup(context.Background(), "v6.test"); !errors.Is(err, ErrNotFound) {
		t.Errorf("IPv4Only: err = %v, want ErrNotFound", err)
	}
	if z.count("v6.test.", mdns.TypeAAAA) != 1 {
		t.Errorf("IPv4Only cache asked AAAA")
	}
}

func TestIPLiteralsNeedNoQuery(t *testing.T) {
	tests := []struct{ host, want string }{
		{"127.0.0.1", "127.0.0.1"},
		{"10.1.2.3", "10.1.2.3"},
		{"::1", "::1"},
		{"[::1]", "::1"},
		{"[2001:db8::7]", "2001:db8::7"},
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1"},
	}
	z := newZone()
	c, _ := newTestCache(t, Config{}, startServer(t, z, false))
	for _, tt := range tests {
		got, err := c.Lookup(context.Background(), tt.host)
		if err != nil || got != netip.MustParseAddr(tt.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %s", tt.host, got, err, tt.want)
		}
		all, err := c.LookupAll(context.Background(), tt.host)
		if err != nil || len(all) != 1 || all[0] != netip.MustParseAddr(tt.want) {
			t.Errorf("LookupAll(%q) = %v, %v", tt.host, all, err)
		}
	}
	if n := z.totalQueries(); n != 0 {
		t.Errorf("%d queries for IP literals, want 0", n)
	}
	if s := c.Stats(); s.Literals != uint64(2*len(tests)) || s.Entries != 0 {
		t.Errorf("Stats = %+v", s)
	}
}

func TestInvalidHostNeedsNoQuery(t *testing.T) {
	hosts := []string{
		"",
		".",
		"a..test",
		".a.test",
		"host.test:80",
		"exa mple.test",
		"bücher.test",
		"a/b.test",
		"[not-an-ip]",
		strings.Repeat("a", 64) + ".test",
		strings.Repeat("abcdefghi.", 26), // 260 bytes
	}
	z := newZone()
	c, _ := newTestCache(t, Config{}, startServer(t, z, false))
	for _, h := range hosts {
		_, err := c.Lookup(context.Background(), h)
		var le *LookupError
		if !errors.Is(err, ErrInvalidHost) || !errors.As(err, &le) || le.Host != h {
			t.Errorf("Lookup(%q) err = %v, want *LookupError with ErrInvalidHost", h, err)
		}
		c.Prefetch(h) // ignored
	}
	if n := z.totalQueries(); n != 0 {
		t.Errorf("%d queries for invalid names, want 0", n)
	}
	if s := c.Stats(); s.Invalid != uint64(len(hosts)) || s.Entries != 0 || s.Prefetches != 0 {
		t.Errorf("Stats = %+v", s)
	}
}

func TestCanonicalHostAccepts(t *testing.T) {
	tests := []struct{ in, want string }{
		{"example.test", "example.test"},
		{"Example.TEST.", "example.test"},
		{"_dmarc.x-y.test", "_dmarc.x-y.test"},
		{"localhost", "localhost"},
		{strings.Repeat("a", 63) + ".test", strings.Repeat("a", 63) + ".test"},
		{"1.2.3", "1.2.3"}, // not an IP literal to netip, so a name
	}
	for _, tt := range tests {
		got, lit, err := canonicalHost(tt.in)
		if err != nil || lit.IsValid() || got != tt.want {
			t.Errorf("canonicalHost(%q) = %q, %v, %v; want %q", tt.in, got, lit, err, tt.want)
		}
	}
}

func TestMaxEntriesEviction(t *testing.T) {
	z := newZone()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		z.set(t, name+".test.", mdns.TypeA, name+".test. 3600 IN A 127.0.0.21")
	}
	z.set(t, "short.test.", mdns.TypeA, "short.test. 60 IN A 127.0.0.22")
	c, _ := newTestCache(t, Config{MaxEntries: 3}, startServer(t, z, false))
	queries := func(name string) int { return z.count(name+".test.", mdns.TypeA) }

	// a, b, c fill the cache; a is looked up again, so it has a second chance.
	for _, n := range []string{"a", "b", "c", "a"} {
		mustLookup(t, c, n+".test")
	}
	mustLookup(t, c, "d.test") // evicts b: the oldest not looked up since
	if s := c.Stats(); s.Entries != 3 || s.Evictions != 1 {
		t.Fatalf("Stats = %+v, want 3 entries and 1 eviction", s)
	}
	mustLookup(t, c, "a.test")
	mustLookup(t, c, "c.test")
	if queries("a") != 1 || queries("c") != 1 {
		t.Fatalf("a or c was evicted instead of b")
	}
	mustLookup(t, c, "b.test")
	if queries("b") != 2 {
		t.Fatalf("b: %d queries, want 2 (evicted, then asked again)", queries("b"))
	}

	// An expired entry goes first, even if recently used.
	c2, clk2 := newTestCache(t, Config{MaxEntries: 3}, startServer(t, z, false))
	for _, n := range []string{"short", "e", "a", "short"} {
		mustLookup(t, c2, n+".test")
	}
	clk2.Advance(time.Minute) // short expires; e and a stay fresh
	mustLookup(t, c2, "c.test")
	before := z.totalQueries()
	mustLookup(t, c2, "e.test")
	mustLookup(t, c2, "a.test")
	if z.totalQueries() != before {
		t.Errorf("a fresh entry was evicted while an expired one stayed")
	}
	if s := c2.Stats(); s.Entries != 3 {
		t.Errorf("Entries = %d, want 3", s.Entries)
	}
}

func TestContextBoundsTheWaitNotTheQuery(t *testing.T) {
	z := newZone()
	z.set(t, "a.test.", mdns.TypeA, "a.test. 300 IN A 127.0.0.23")
	addr := startServer(t, z, false)
	release := z.hold(t)
	c, _ := newTestCache(t, Config{}, addr)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Lookup(ctx, "a.test")
	var le *LookupError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &le) || !le.Timeout() {
		t.Fatalf("err = %v, want the context's deadline as a *LookupError", err)
	}
	release()
	testkit.WaitFor(t, 10*time.Second, "the abandoned query to be cached", func() bool { return c.Stats().InFlight == 0 })
	if got := mustLookup(t, c, "a.test"); got != netip.MustParseAddr("127.0.0.23") {
		t.Fatalf("Lookup = %v", got)
	}
	if n := z.totalQueries(); n != 1 {
		t.Errorf("%d queries, want 1: the abandoned look-up's answer should be reused", n)
	}
}

func TestPrefetch(t *testing.T) {
	z := newZone()
	const hosts = 40
	for i := range hosts {
		name := fmt.Sprintf("h%d.test.", i)
		z.set(t, name, mdns.TypeA, fmt.Sprintf("%s 300 IN A 127.0.1.%d", name, i))
	}
	addr := startServer(t, z, false)
	release := z.hold(t)
	const limit = 4
	c, _ := newTestCache(t, Config{MaxPrefetch: limit}, addr)

	// Every server handler is held, so a blocking Prefetch would hang here.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range hosts {
			c.Prefetch(fmt.Sprintf("h%d.test", i))
			c.Prefetch(fmt.Sprintf("H%d.test.", i)) // same name: ignored
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Prefetch blocked")
	}
	// Every query the cache has in flight reaches the server, excess
	// workers (if any) included.
	testkit.WaitFor(t, 10*time.Second, "the prefetch workers to reach the server", func() bool {
		inFlight := c.Stats().InFlight
		z.mu.Lock()
		defer z.mu.Unlock()
		return z.inflight >= max(limit, inFlight)
	})
	z.mu.Lock()
	heldInflight := z.inflight
	z.mu.Unlock()
	if heldInflight != limit {
		t.Errorf("%d prefetch queries held at the server, want %d", heldInflight, limit)
	}
	if s := c.Stats(); s.Prefetches != hosts || s.InFlight != limit || s.Queued != hosts-limit {
		t.Errorf("while held: Stats = %+v, want %d prefetches, %d in flight, %d queued", s, hosts, limit, hosts-limit)
	}
	release()
	testkit.WaitFor(t, 10*time.Second, "all prefetches", func() bool { return c.Stats().Entries == hosts })

	z.mu.Lock()
	maxInflight := z.maxInflight
	z.mu.Unlock()
	if maxInflight != limit {
		t.Errorf("at most %d queries were in flight at once, want %d", maxInflight, limit)
	}
	for i := range hosts {
		want := netip.AddrFrom4([4]byte{127, 0, 1, byte(i)})
		if got := mustLookup(t, c, fmt.Sprintf("h%d.test", i)); got != want {
			t.Errorf("h%d = %v, want %v", i, got, want)
		}
		c.Prefetch(fmt.Sprintf("h%d.test", i)) // cached: ignored
	}
	if n := z.totalQueries(); n != hosts {
		t.Errorf("%d queries for %d prefetched hosts, want one each", n, hosts)
	}
	if s := c.Stats(); s.Hits != hosts || s.Misses != 0 || s.Prefetches != hosts {
		t.Errorf("Stats = %+v, want every look-up a hit", s)
	}
}

func TestPrefetchQueueBounded(t *testing.T) {
	z := newZone()
	c, _ := newTestCache(t, Config{MaxPrefetch: 1, MaxEntries: 5}, startServer(t, z, false))
	z.hold(t) // after newTestCache, so cleanup releases the server before Close waits
	for i := range 10 {
		c.Prefetch(fmt.Sprintf("q%d.test", i))
		if i == 0 {
			testkit.WaitFor(t, 10*time.Second, "the worker to take the first name", func() bool { return c.Stats().InFlight == 1 })
		}
	}
	if s := c.Stats(); s.Queued != 5 || s.Prefetches != 6 || s.PrefetchDropped != 4 {
		t.Errorf("Stats = %+v, want 5 queued, 6 accepted, 4 dropped", s)
	}
}

func TestClose(t *testing.T) {
	z := newZone()
	z.set(t, "a.test.", mdns.TypeA, "a.test. 300 IN A 127.0.0.24")
	c, _ := newTestCache(t, Config{}, startServer(t, z, false))
	mustLookup(t, c, "a.test")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if got := mustLookup(t, c, "a.test"); got != netip.MustParseAddr("127.0.0.24") {
		t.Errorf("cached answer after Close = %v", got)
	}
	if _, err := c.Lookup(context.Background(), "b.test"); !errors.Is(err, ErrClosed) {
		t.Errorf("uncached look-up after Close: %v, want ErrClosed", err)
	}
	c.Prefetch("b.test")
	if n, s := z.totalQueries(), c.Stats(); n != 1 || s.Prefetches != 0 || s.Queued != 0 {
		t.Errorf("after Close: %d queries, Stats %+v", n, s)
	}
}

func TestCloseEndsPendingWork(t *testing.T) {
	dead := startBlackhole(t)
	timeout := 100 * time.Millisecond
	c, _ := newTestCache(t, Config{Timeout: timeout, MaxPrefetch: 2}, dead.addr)
	for i := range 20 {
		c.Prefetch(fmt.Sprintf("p%d.test", i))
	}
	errc := make(chan error, 1)
	go func() {
		_, err := c.Lookup(context.Background(), "w.test")
		errc <- err
	}()
	testkit.WaitFor(t, 10*time.Second, "queries to reach the server", func() bool { return dead.received.Load() >= 3 })
	c.Close()
	err := <-errc
	var le *LookupError
	if !errors.As(err, &le) || !errors.Is(err, ErrClosed) && !le.Timeout() {
		t.Errorf("waiting look-up ended with %v, want ErrClosed or a timeout", err)
	}
	s := c.Stats()
	if s.InFlight != 0 || s.Queued != 0 {
		t.Errorf("after Close: Stats %+v, want nothing in flight or queued", s)
	}
	// Close waited for the workers, so nothing more is sent.
	if n := cacheGoroutines(); n != 0 {
		t.Errorf("%d resolutions or prefetch workers still run after Close returned", n)
	}
}

// cacheGoroutines counts the goroutines running a Cache's resolutions and
// prefetch workers (the tests of this package do not run in parallel).
func cacheGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "\nlidi/engine/dns.(*Cache).resolve(") || strings.Contains(g, "\nlidi/engine/dns.(*Cache).prefetchWorker(") {
			count++
		}
	}
	return count
}

func TestTruncatedAnswerRetriedOverTCP(t *testing.T) {
	z := newZone()
	z.truncateUDP = true
	z.set(t, "big.test.", mdns.TypeA, "big.test. 300 IN A 127.0.0.25")
	c, _ := newTestCache(t, Config{}, startServer(t, z, true))
	if got := mustLookup(t, c, "big.test"); got != netip.MustParseAddr("127.0.0.25") {
		t.Fatalf("Lookup = %v", got)
	}
	if n := z.totalQueries(); n != 2 {
		t.Errorf("server saw %d queries, want 2 (UDP then TCP)", n)
	}
	if s := c.Stats(); s.Queries != 2 {
		t.Errorf("Stats.Queries = %d, want 2", s.Queries)
	}
}

func TestNewCacheConfig(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		want    []string // servers
		wantErr string
	}{
		{"ip:port", Config{Servers: []string{"127.0.0.1:5353"}}, []string{"127.0.0.1:5353"}, ""},
		{"bare ip", Config{Servers: []string{"127.0.0.1", "::1"}}, []string{"127.0.0.1:53", "[::1]:53"}, ""},
		{"bracketed v6", Config{Servers: []string{"[::1]:5353"}}, []string{"[::1]:5353"}, ""},
		{"server name", Config{Servers: []string{"dns.example:53"}}, nil, `server "dns.example:53"`},
		{"port 0", Config{Servers: []string{"127.0.0.1:0"}}, nil, "port 0"},
		{"bad port", Config{Servers: []string{"127.0.0.1:x"}}, nil, `server "127.0.0.1:x"`},
		{"negative timeout", Config{Servers: []string{"127.0.0.1"}, Timeout: -1}, nil, "Timeout is negative"},
		{"negative TTL", Config{Servers: []string{"127.0.0.1"}, NegativeTTL: -time.Second}, nil, "NegativeTTL is negative"},
		{"negative entries", Config{Servers: []string{"127.0.0.1"}, MaxEntries: -1}, nil, "MaxEntries is negative"},
		{"min above max", Config{Servers: []string{"127.0.0.1"}, MinTTL: time.Hour, MaxTTL: time.Minute}, nil, "MinTTL (1h0m0s) exceeds MaxTTL (1m0s)"},
		{"min above default max", Config{Servers: []string{"127.0.0.1"}, MinTTL: 48 * time.Hour}, nil, "exceeds MaxTTL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCache(tt.cfg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "dns: ") {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := c.Servers(); !slices.Equal(got, tt.want) {
				t.Errorf("Servers() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDefaultServersFromResolvConf(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		want    []string
		wantErr string
	}{
		{"two servers", write("two", "# comment\nsearch example.test\nnameserver 127.0.0.53\nnameserver ::1\noptions ndots:2\n"),
			[]string{"127.0.0.53:53", "[::1]:53"}, ""},
		{"no nameserver", write("none", "search example.test\n"), nil, "lists no nameserver"},
		{"missing file", filepath.Join(dir, "absent"), nil, "cannot read system resolver config"},
	}
	saved := resolvConfPath
	t.Cleanup(func() { resolvConfPath = saved })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resolvConfPath = tt.path
			c, err := NewCache(Config{})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if got := c.Servers(); !slices.Equal(got, tt.want) {
				t.Errorf("Servers() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLookupErrorMessage(t *testing.T) {
	err := error(&LookupError{Host: "x.test", Err: ErrNotFound})
	if got, want := err.Error(), "dns: lookup x.test: no such host"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if err.(*LookupError).Timeout() {
		t.Errorf("not-found reported as a timeout")
	}
}

func TestCachedLookupDoesNotAllocate(t *testing.T) {
	z := newZone()
	z.set(t, "a.test.", mdns.TypeA, "a.test. 300 IN A 127.0.0.30")
	c, _ := newTestCache(t, Config{}, startServer(t, z, false))
	ctx := context.Background()
	mustLookup(t, c, "a.test")
	for _, h := range []string{"a.test", "a.test.", "127.0.0.1", "[::1]"} {
		if n := testing.AllocsPerRun(100, func() { c.Lookup(ctx, h) }); n != 0 {
			t.Errorf("Lookup(%q) from cache: %v allocations, want 0", h, n)
		}
	}
}

func BenchmarkLookupCached(b *testing.B) {
	z := newZone()
	z.set(b, "a.test.", mdns.TypeA, "a.test. 300 IN A 127.0.0.30")
	c, _ := newTestCache(b, Config{Now: time.Now}, startServer(b, z, false))
	ctx := context.Background()
	mustLookup(b, c, "a.test")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Lookup(ctx, "a.test"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := z.totalQueries(); n != 1 {
		b.Fatalf("%d queries, want 1", n)
	}
}

func BenchmarkLookupCachedParallel(b *testing.B) {
	z := newZone()
	const hosts = 1000
	for i := range hosts {
		name := fmt.Sprintf("h%d.test.", i)
		z.set(b, name, mdns.TypeA, name+" 300 IN A 127.0.0.31")
	}
	c, _ := newTestCache(b, Config{Now: time.Now}, startServer(b, z, false))
	names := make([]string, hosts)
	for i := range names {
		names[i] = fmt.Sprintf("h%d.test", i)
		mustLookup(b, c, names[i])
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := c.Lookup(ctx, names[i%hosts]); err != nil {
				b.Error(err)
				return
			}
			i++
		}
	})
}
