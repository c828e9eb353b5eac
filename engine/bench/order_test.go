package bench

import (
	"context"
	"fmt"
	"io"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"lidi/engine/dns"
	"lidi/engine/sim"
	"lidi/engine/simweb"
	"lidi/storage"
)

// firstHostFirst is a resolver that answers for one host at once and for
// the others only once the first host's site has had a request from the
// crawl. With every site a seed, it makes the first seed's site the only
// one ready for the crawl's first visit, as it is in the simulator; the
// others are looked up while that visit waits for its answers (20 ms
// each). It is safe for concurrent use.
type firstHostFirst struct {
	*dns.Cache
	first string
	// visited reports whether the first host has had a request since the
	// resolver was made.
	visited func() bool
}

func newFirstHostFirst(c *dns.Cache, srv *simweb.Server, first string) firstHostFirst {
	before := srv.Witness().Hosts[first].Requests // the server is shared by the subtests
	return firstHostFirst{Cache: c, first: first, visited: func() bool {
		return srv.Witness().Hosts[first].Requests > before
	}}
}

func (r firstHostFirst) Lookup(ctx context.Context, host string) (netip.Addr, error) {
	if host != r.first {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for !r.visited() {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return netip.Addr{}, ctx.Err()
			}
		}
	}
	return r.Cache.Lookup(ctx, host)
}

// TestSimMatchesRealCrawl crawls a tiny simweb twice, with lidi's engine
// over real HTTP on loopback into a real SQLite file and with lidi sim, and
// checks that both fetch the same pages in the same order.
//
// With one robot and w = 0 the order depends on nothing but the scheduler,
// robots.txt and the links, except for DNS: the engine cannot visit a site
// before its address comes back, and the simulator has no DNS. So every
// site is a seed (all are looked up at the start), and the others answer
// only once the first seed's site has had a request. Each request waits the
// site's latency (20 ms), so the first visit lasts 40 ms or more, and the
// other look-ups (loopback) are in by then.
func TestSimMatchesRealCrawl(t *testing.T) {
	// Seed 37 gives a web of 12 sites with one whose robots.txt answers
	// 5xx, one that disallows everything and several that disallow some.
	web, err := simweb.Generate(simweb.Options{Seed: 37, Sites: 12, Pages: 180, LatencyMedian: 20 * time.Millisecond, LatencySigma: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := simweb.Start(context.Background(), web, simweb.ServerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	n := web.NumSites()
	first := web.Site(web.Page(web.Seeds(1)[0]).Site).Host
	sw := sim.FromSimweb(web, n)
	if _, reach := sw.Collection(); reach < 100 {
		t.Fatalf("the test web's crawl reaches only %d pages", reach)
	}
	parked := 0
	for _, s := range sw.Sites {
		if s.Robots == sim.RobotsError {
			parked++
		}
	}
	if parked == 0 {
		t.Fatal("the test web has no site whose robots.txt answers 5xx")
	}
	for _, strategy := range []string{"length", "depth"} {
		for _, c := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/c=%d", strategy, c), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				db, err := storage.Open(filepath.Join(t.TempDir(), "crawl.db"), storage.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				cache, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
				if err != nil {
					t.Fatal(err)
				}
				defer cache.Close()
				cfg := simConfig(srv.SeedURLs(n), strategy, 1, c, 0)
				real, _, other, err := crawlOrder(ctx, srv, cfg, db, newFirstHostFirst(cache, srv, first), io.Discard, time.Hour)
				if err != nil {
					t.Fatal(err)
				}
				if other != 0 {
					t.Errorf("%d fetches did not answer a page with 200", other)
				}
				s, err := sim.NewStrategy(strategy, sw, 0)
				if err != nil {
					t.Fatal(err)
				}
				res, err := sim.Run(ctx, sw, s, sim.Options{Robots: 1, PagesPerVisit: c})
				if err != nil {
					t.Fatal(err)
				}
				simulated := make([]int32, res.Pages())
				for i, f := range res.Fetches {
					simulated[i] = f.Page
				}
				if !slices.Equal(real, simulated) {
					i := 0
					for i < min(len(real), len(simulated)) && real[i] == simulated[i] {
						i++
					}
					t.Errorf("orders differ from fetch %d on (real crawl %d pages, simulated %d)\nreal %v\n sim %v",
						i, len(real), len(simulated), real[i:min(i+10, len(real))], simulated[i:min(i+10, len(simulated))])
				}
			})
		}
	}
}
