package simweb

import (
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time used by the process so far. The benchmarks
// report CPU per operation next to wall time because the machine they run
// on is shared: wall time varies with the neighbours, CPU time much less.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGenerate1M generates a 1,000,000-page web on 20,000 sites and
// reports the memory it keeps (heap after GC) and the memory the process
// got from the OS (Sys, which covers the peak). Run it with -benchtime=1x.
func BenchmarkGenerate1M(b *testing.B) {
	opt := Options{Seed: 1, Sites: 20_000, Pages: 1_000_000}
	var w *Web
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	c0 := cpuTime()
	for b.Loop() {
		w = nil
		var err error
		if w, err = Generate(opt); err != nil {
			b.Fatal(err)
		}
	}
	cpu := cpuTime() - c0
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	st := w.Stats()
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
	b.ReportMetric(float64(after.Sys)/(1<<20), "sys-MB")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
	b.ReportMetric(float64(st.Links), "links")
	b.Logf("%d pages, %d sites, %d links (%d external), max depth %d, largest site %d pages, PageRank %d iterations, Generate %v",
		st.Pages, st.Sites, st.Links, st.ExternalLinks, st.MaxDepth, st.MaxSitePages, st.PageRankIters, st.GenerateTime)
	runtime.KeepAlive(w)
}

// BenchmarkRender renders pages of the default size on one goroutine.
func BenchmarkRender(b *testing.B) {
	w := testWeb(b, Options{Seed: 1, Sites: 2000})
	var buf []byte
	total, i := 0, 0
	c0 := cpuTime()
	for b.Loop() {
		buf = w.AppendHTML(buf[:0], (i*7919)%w.NumPages(), 8080)
		total += len(buf)
		i++
	}
	cpu := cpuTime() - c0
	b.SetBytes(int64(total / i))
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(i), "cpu-ns/op")
}

// BenchmarkServe measures how fast the server hands pages to a plain
// keep-alive Go client: several goroutines, each fetching pages of its own
// site over http.Client with connection reuse (and the Apache-like close
// after 100 requests). It reports pages per second of wall time and the CPU
// time per page spent by server and client together.
func BenchmarkServe(b *testing.B) {
	for _, clients := range []int{4, 16} {
		b.Run("clients="+strconv.Itoa(clients), func(b *testing.B) { benchServe(b, clients) })
	}
}

func benchServe(b *testing.B, clients int) {
	w := testWeb(b, Options{Seed: 1, Sites: 2000})
	s := startServer(b, w, ServerConfig{})
	// The biggest sites, so each client has many pages of one host.
	sites := make([]Site, w.NumSites())
	for i := range sites {
		sites[i] = w.Site(i)
	}
	slices.SortFunc(sites, func(a, b Site) int { return b.Pages - a.Pages })
	urls := make([][]string, clients)
	for c := range clients {
		si := sites[c]
		for p := si.HomePage; p < si.HomePage+si.Pages; p++ {
			urls[c] = append(urls[c], s.URL(p))
		}
	}
	// Resolve through the web directly: this measures serving, not DNS.
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			id, _ := w.SiteByHost(host)
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort(w.Site(id).Addr.String(), port))
		},
		MaxIdleConnsPerHost: 4,
		DisableCompression:  true,
	}}
	defer client.CloseIdleConnections()

	var next, bytes atomic.Int64
	b.ResetTimer()
	c0 := cpuTime()
	start := time.Now()
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			buf := make([]byte, 64<<10)
			for i := 0; ; i++ {
				if next.Add(1) > int64(b.N) {
					return
				}
				resp, err := client.Get(urls[c][i%len(urls[c])])
				if err != nil {
					b.Error(err)
					return
				}
				var n int64
				for {
					k, err := resp.Body.Read(buf)
					n += int64(k)
					if err == io.EOF {
						break
					}
					if err != nil {
						b.Error(err)
						return
					}
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("status %s", resp.Status)
					return
				}
				bytes.Add(n)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := cpuTime() - c0
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "pages/s")
	b.ReportMetric(float64(bytes.Load())/float64(b.N), "bytes/page")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/page")
}

// BenchmarkReachableUnique computes the recall denominator of the default
// web (1000 sites, 50,000 pages) with DefaultTrapSites sites per trap kind,
// and reports what it found and the memory it allocated.
func BenchmarkReachableUnique(b *testing.B) {
	w := testWeb(b, Options{Seed: 1, Traps: DefaultTrapSites})
	seeds := w.Seeds(10)
	var r *Reach
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c0 := cpuTime()
	for b.Loop() {
		r = w.ReachableUnique(seeds)
	}
	cpu := cpuTime() - c0
	runtime.ReadMemStats(&after)
	b.ReportMetric(cpu.Seconds()*1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "alloc-MB/op")
	b.ReportMetric(float64(r.Unique), "unique")
	b.ReportMetric(float64(r.States), "states")
	b.Logf("%d pages, %d trap sites: %d genuine contents reachable, %d beyond depth 10, max distance %d, %d states",
		w.NumPages(), w.Stats().TrapSites, r.Unique, r.BeyondDepth10, r.MaxDistance, r.States)
}

// BenchmarkTruth asks for the truth of URLs a crawl of the trapped web
// meets: pages, copies, calendar months, soft 404s.
func BenchmarkTruth(b *testing.B) {
	w := testWeb(b, Options{Seed: 1, Traps: DefaultTrapSites})
	var urls []string
	for _, in := range w.Traps() {
		urls = append(urls, in.URL+"?sid=0123456789abcdef", in.Original)
	}
	for p := 0; p < w.NumPages(); p += 97 {
		urls = append(urls, w.URL(p)+"?utm_source=x&utm_medium=y")
	}
	i := 0
	for b.Loop() {
		w.Truth(urls[i%len(urls)])
		i++
	}
}

// BenchmarkGenerateTraps generates the default web with and without traps.
func BenchmarkGenerateTraps(b *testing.B) {
	for _, traps := range []int{0, DefaultTrapSites} {
		b.Run("traps="+strconv.Itoa(traps), func(b *testing.B) {
			for b.Loop() {
				if _, err := Generate(Options{Seed: 1, Traps: traps}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// naiveCrawl crawls w like a crawler without duplicate detection: breadth
// first from the seeds, every distinct URL once, robots.txt obeyed, links
// followed to maxDepth (unlimited if negative) or until limit URLs are
// fetched. It returns the URLs fetched and the genuine contents among them.
func naiveCrawl(w *Web, seeds, maxDepth, limit int) (fetched int, unique map[uint64]bool) {
	unique = map[uint64]bool{}
	type item struct {
		u     string
		depth int
	}
	seen := map[string]bool{}
	var queue []item
	for _, p := range w.Seeds(seeds) {
		seen[w.URL(p)] = true
		queue = append(queue, item{w.URL(p), 0})
	}
	for len(queue) > 0 && fetched < limit {
		it := queue[0]
		queue = queue[1:]
		u, _ := url.Parse(it.u)
		site, _ := w.SiteByHost(u.Hostname())
		if w.Disallowed(site, u.RequestURI()) {
			continue
		}
		fetched++
		tr := w.Truth(it.u)
		if tr.Genuine {
			unique[tr.Content] = true
		}
		if tr.Status != 200 || tr.Trap == TrapBinaryAsHTML || (maxDepth >= 0 && it.depth >= maxDepth) {
			continue
		}
		res := w.resolve(site, u.EscapedPath())
		var body []byte
		if res.page >= 0 {
			body = w.appendPage(nil, res.page, 0, res.view)
		} else {
			body = w.appendVirtual(nil, site, res.virt, u.EscapedPath())
		}
		for _, m := range hrefRE.FindAllSubmatch(body, -1) {
			ref, err := url.Parse(html.UnescapeString(string(m[1])))
			if err != nil {
				continue
			}
			next := u.ResolveReference(ref).String()
			if !seen[next] {
				seen[next] = true
				queue = append(queue, item{next, it.depth + 1})
			}
		}
	}
	return fetched, unique
}

// BenchmarkFixedDepthCrawl reports the precision and recall of a crawler
// without duplicate detection limited to depth 10 on a trapped web: what
// traps cost a crawler that does not detect them.
func BenchmarkFixedDepthCrawl(b *testing.B) {
	for _, opt := range []Options{{Seed: 1, Sites: 200, Pages: 10000, Traps: DefaultTrapSites}, {Seed: 1, Traps: DefaultTrapSites}} {
		b.Run(fmt.Sprintf("sites=%d", opt.Sites), func(b *testing.B) {
			w := testWeb(b, opt)
			reach := w.ReachableUnique(w.Seeds(10))
			var fetched int
			var unique map[uint64]bool
			for b.Loop() {
				fetched, unique = naiveCrawl(w, 10, 10, 2_000_000)
			}
			b.ReportMetric(float64(fetched), "fetched")
			b.ReportMetric(float64(len(unique))/float64(fetched), "precision")
			b.ReportMetric(float64(len(unique))/float64(reach.Unique), "recall")
			b.Logf("%d pages, %d trap sites: reachable %d (%d beyond depth 10); depth-10 crawl fetched %d URLs, %d genuine contents",
				w.NumPages(), w.Stats().TrapSites, reach.Unique, reach.BeyondDepth10, fetched, len(unique))
		})
	}
}
