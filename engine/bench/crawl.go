// Package bench measures lidi against its synthetic web: `lidi bench crawl`.
// The synthetic web runs in a child process (`lidi simweb`), so the figures
// (CPU, peak RSS) are the crawler's own.
package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"lidi/engine"
	"lidi/engine/cputime"
	"lidi/engine/dns"
	"lidi/engine/record"
	"lidi/engine/simweb"
)

// CrawlOptions sets up `lidi bench crawl`. The zero value is not usable:
// OpenStore and SimwebCommand must be set (main.go wires them).
type CrawlOptions struct {
	Sites, Pages     int   // the synthetic web
	Seed             int64 // the synthetic web's seed
	MaxPages         int64 // stop after this many pages (0: the whole web)
	UntilDiscovered  int64 // stop once this many URLs are known (0: no such stop)
	Robots           int   // r
	PagesPerVisit    int   // c
	KeepBodies       bool
	KeepHeaders      bool
	Dir              string // where the crawl's database goes ("" : a temporary directory)
	OpenStore        func(path string) (record.Store, io.Closer, error)
	SimwebCommand    []string // argv that serves simweb, e.g. {"/path/lidi", "simweb"}
	SimwebIdentity   bool     // simweb serves pages identity-coded, not gzip (simweb.ServerConfig.Identity)
	ProgressInterval time.Duration
	CPUProfile       string // write a CPU profile of the crawl here
	// CPUProfileEvery, when positive, starts a new CPU profile every so
	// many pages fetched, CPUProfile-000, -001, ...: the first and the
	// last show what a page costs early and late in a big crawl.
	CPUProfileEvery int64
	MemProfile      string // write a heap profile of the running crawl here (the last of one a progress interval), and to MemProfile.1m, .2m, ... as discovery passes each million
	// Window is how many pages the first and the last rates are taken
	// over (pages_per_s_first, pages_per_s_last); at most half the pages
	// fetched, so that the two never overlap.
	Window int64
}

// RegisterFlags adds the benchmark's flags to fs, with their defaults.
func (o *CrawlOptions) RegisterFlags(fs *flag.FlagSet) {
	// About 16% of simweb's pages are disallowed by robots.txt or on
	// unreachable sites (168,733 of 200,000 fetched at seed 1), so the
	// default web has 250,000 pages for the default run to fetch at least
	// 200,000 (100 a site, as before).
	simweb.WebFlags(fs, &o.Sites, 2500, &o.Pages, 250000, &o.Seed)
	fs.Int64Var(&o.MaxPages, "max-pages", 0, "stop after this many pages (0: crawl the whole web)")
	fs.Int64Var(&o.UntilDiscovered, "until-discovered", 0, "stop once this many URLs are known (the 1,000,000-URL memory check)")
	crawlerFlags(fs, &o.Robots, 256, &o.PagesPerVisit, 100)
	fs.BoolVar(&o.KeepBodies, "bodies", true, "store page bodies (zlib)")
	simweb.IdentityFlag(fs, &o.SimwebIdentity)
	fs.BoolVar(&o.KeepHeaders, "headers", true, "store each fetch's request and response headers (storage.keep_headers)")
	dirFlag(fs, &o.Dir, "the crawl database")
	progressFlag(fs, &o.ProgressInterval)
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of the crawl to this file")
	fs.Int64Var(&o.CPUProfileEvery, "cpuprofile-every", 0, "with --cpuprofile: a new profile every this many pages, FILE-000, FILE-001, ... (0: one profile of the whole crawl)")
	fs.StringVar(&o.MemProfile, "memprofile", "", "write a heap profile of the crawl to this file (rewritten at every progress line, so it shows the crawl near its end), and one to FILE.1m, FILE.2m, ... as the URLs discovered pass each million")
	fs.Int64Var(&o.Window, "window", 100000, "pages the first and last rates are measured over (at most half the pages fetched)")
}

// simwebChild is the child process serving the synthetic web.
type simwebChild struct {
	cmd   *exec.Cmd
	dns   string
	admin string
	seeds []string
	// coding is simweb's Coding line: how it codes the pages it serves.
	coding string
}

func startSimweb(ctx context.Context, o CrawlOptions) (*simwebChild, error) {
	args := append(append([]string(nil), o.SimwebCommand[1:]...),
		"--sites", strconv.Itoa(o.Sites), "--pages", strconv.Itoa(o.Pages), "--seed", strconv.FormatInt(o.Seed, 10),
		"--identity="+strconv.FormatBool(o.SimwebIdentity))
	cmd := exec.CommandContext(ctx, o.SimwebCommand[0], args...)
	cmd.Stderr = os.Stderr
	ownGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: starting simweb: %w", err)
	}
	s := &simwebChild{cmd: cmd}
	// The lines of simweb.Server.Info that matter here.
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "DNS:":
			s.dns = f[1]
		case len(f) >= 2 && f[0] == "Coding:":
			s.coding = strings.TrimSpace(strings.TrimPrefix(line, "Coding:"))
		case len(f) >= 2 && f[0] == "Admin:":
			s.admin = strings.TrimSuffix(strings.TrimPrefix(f[1], "http://"), "/witness")
		case len(f) == 1 && strings.HasPrefix(f[0], "http://"):
			s.seeds = append(s.seeds, f[0])
		case strings.HasPrefix(line, "Serving until interrupted"):
			go io.Copy(io.Discard, out)
			if s.dns == "" || s.admin == "" || len(s.seeds) == 0 {
				break
			}
			return s, nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, errors.New("bench: simweb ended before it was ready")
}

func (s *simwebChild) close() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
}

// witnessDNS returns the DNS queries simweb answered, the names asked and
// the most queries for one name, from its witness endpoint.
func (s *simwebChild) witnessDNS() (queries, names, most int, err error) {
	resp, err := http.Get("http://" + s.admin + "/witness")
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	var w struct {
		DNS struct {
			ByName map[string]int `json:"by_name"`
		} `json:"dns"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&w); err != nil {
		return 0, 0, 0, fmt.Errorf("bench: reading simweb's witness: %w", err)
	}
	for _, n := range w.DNS.ByName {
		queries += n
		names++
		most = max(most, n)
	}
	return queries, names, most, nil
}

// Crawl runs the crawl benchmark and writes its report to out, ending with
// one line of key=value pairs.
func Crawl(ctx context.Context, o CrawlOptions, out io.Writer) error {
	dir, cleanup, err := benchDir(o.Dir)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Fprintf(out, "bench crawl: simweb of %d sites, %d pages (seed %d); r=%d c=%d w=0; storage in %s\n", o.Sites, o.Pages, o.Seed, o.Robots, o.PagesPerVisit, dir)
	// simweb outlives an interrupted crawl, whose report reads its
	// witness; sw.close ends it.
	sw, err := startSimweb(context.WithoutCancel(ctx), o)
	if err != nil {
		return err
	}
	defer sw.close()
	fmt.Fprintf(out, "simweb serves pages: %s\n", sw.coding)
	store, closer, err := o.OpenStore(filepath.Join(dir, "bench.db"))
	if err != nil {
		return err
	}
	defer closer.Close()
	resolver, err := dns.NewCache(dns.Config{Servers: []string{sw.dns}})
	if err != nil {
		return err
	}
	defer resolver.Close()
	cfg := benchConfig(sw.seeds, o.Robots, o.PagesPerVisit)
	cfg.MaxPages = o.MaxPages
	cfg.KeepBodies = o.KeepBodies
	cfg.KeepHeaders = o.KeepHeaders
	eng, err := engine.New(cfg, store, resolver, nil)
	if err != nil {
		return err
	}
	var prof cpuProfiles
	if err := prof.start(o.CPUProfile, o.CPUProfileEvery); err != nil {
		return err
	}
	defer prof.stop()
	cpu0 := cpuTime()
	var tr trace
	tr.sample(eng.Stats().Pages)
	gc0 := tr.gcCPU
	waits0 := readSchedWaits()
	var memErr error
	lastProfile := time.Now()
	var mem engine.MemoryStats // the structures at the last poll, while the crawl still held them
	var rankMost int64         // the most PageRank held at a poll (a run in flight), printed per URL discovered at the end
	var millions []millionMark // as the URLs discovered passed each million
	elapsed, runErr := runEngine(ctx, eng, out, o.ProgressInterval, func(s engine.Stats) bool {
		tr.sample(s.Pages)
		prof.next(s.Pages)
		mem = s.Memory
		rankMost = max(rankMost, s.Memory.Rank)
		for s.Discovered >= int64(len(millions)+1)*perMillion {
			millions = append(millions, millionMark{peak: peakRSS(), split: tr.atPeak})
			if o.MemProfile != "" && memErr == nil {
				// Kept per million, so two can be compared (go tool
				// pprof -diff_base): what grew between the marks.
				memErr = writeHeapProfile(fmt.Sprintf("%s.%dm", o.MemProfile, len(millions)))
			}
		}
		enough := o.UntilDiscovered > 0 && s.Discovered >= o.UntilDiscovered
		if o.MemProfile != "" && memErr == nil && (enough || time.Since(lastProfile) >= o.ProgressInterval) {
			// While the crawl runs, its structures are live: a profile
			// taken after Run returned would show little of them.
			memErr = writeHeapProfile(o.MemProfile)
			lastProfile = time.Now()
		}
		if enough || ctx.Err() != nil {
			tr.stopped() // the last window ends here (enough, or interrupted), not after the crawl has closed
		}
		return enough
	})
	cpu := cpuTime() - cpu0
	tr.sample(eng.Stats().Pages)
	waitP99, waitMost := schedWaits(waits0, readSchedWaits())
	if err := prof.stop(); err != nil {
		return err
	}
	if memErr != nil {
		return memErr
	}
	if runErr != nil {
		return runErr
	}
	s := eng.Stats()
	// The crawl file's size once closed (its WAL checkpointed into it):
	// what a page costs on disk.
	if err := closer.Close(); err != nil {
		return err
	}
	var fileBytes int64
	if fi, err := os.Stat(filepath.Join(dir, "bench.db")); err == nil {
		fileBytes = fi.Size()
	}
	queries, names, most, err := sw.witnessDNS()
	if err != nil {
		return err
	}
	// Per host resolved: a crawl stopped early has found hosts it has not
	// looked up yet (they are resolved ahead of their first visit).
	perHost := 0.0
	if names > 0 {
		perHost = float64(queries) / float64(names)
	}
	var errs int64
	for _, n := range s.ErrorKind {
		errs += n
	}
	pps := float64(s.Pages) / elapsed.Seconds()
	cpuPer1000 := cpu.Seconds() / float64(max(s.Pages, 1)) * 1000
	rss := float64(peakRSS()) / 1e6
	window := min(o.Window, s.Pages/2)
	first, last := tr.first(window), tr.last(window)
	perURL := float64(tr.maxLive) / float64(max(s.Discovered, 1))
	// The collector's share of the crawler's CPU: what a larger heap limit
	// (or GOGC) would buy back, and what a smaller one costs.
	gcShare := (tr.gcCPU - gc0) / max(cpu.Seconds(), 1e-9)
	fmt.Fprintf(out, "pages fetched        %d in %s\n", s.Pages, elapsed.Round(time.Millisecond))
	fmt.Fprintf(out, "pages/s              %.0f (first %d pages %.0f, last %d pages %.0f)\n", pps, window, first.pagesPerSec(), window, last.pagesPerSec())
	fmt.Fprintf(out, "CPU s per 1000 pages %.3f (first %d pages %.3f, last %.3f; crawler process only)\n", cpuPer1000, window, first.cpuPer1000(), last.cpuPer1000())
	fmt.Fprintf(out, "peak RSS             %.0f MB (crawler process only)\n", rss)
	fmt.Fprintf(out, "garbage collection   %.1f%% of the crawler's CPU (the runtime's estimate)\n", 100*gcShare)
	fmt.Fprintf(out, "live heap            %.0f MB at most, %.0f bytes per URL discovered\n", float64(tr.maxLive)/1e6, perURL)
	pk := tr.atPeak
	fmt.Fprintf(out, "RSS at its largest   %s\n", pk)
	for i, m := range millions {
		fmt.Fprintf(out, "peak RSS at %dM URLs  %.0f MB; at its largest sample %s\n", i+1, float64(m.peak)/1e6, m.split)
	}
	fmt.Fprintf(out, "URLs discovered      %d\n", s.Discovered)
	perURLOf := func(b int64) float64 { return float64(b) / float64(max(s.Discovered, 1)) }
	fmt.Fprintf(out, "bytes per URL        detection %.0f, link graph %.0f, seen set %.1f, PageRank %.0f (%.0f at most, a run in flight) (as the structures estimate themselves)\n",
		perURLOf(mem.Detection), perURLOf(mem.Graph), perURLOf(mem.Seen), perURLOf(mem.Rank), perURLOf(rankMost))
	fmt.Fprintf(out, "longest loop pause   %s (the longest wait for the store: %s; the store's longest write %s, of %d records%s; its longest queue-head read %s%s)\n",
		s.LoopPause.Round(time.Microsecond), s.StoreWait.Round(time.Microsecond), s.StoreApply.Round(time.Microsecond), s.StoreApplyRecords, usageNote(s.StoreApplyUsage), s.StoreHead.Round(time.Microsecond), usageNote(s.StoreHeadUsage))
	fmt.Fprintf(out, "waits to run         99%% of the goroutines' sampled waits to run were within %s, the longest %s or more (runtime/metrics /sched/latencies, every goroutine's, one wait in 8 sampled: the loop and the writer, each alone on every page's path, wait their turn among the robots when both CPUs are busy)\n",
		waitP99.Round(time.Microsecond), waitMost.Round(time.Microsecond))
	fmt.Fprintf(out, "  without the store  %s (the longest wake-up less its waits for the writer: the loop's own work)\n", s.LoopWork.Round(time.Microsecond))
	fmt.Fprintf(out, "  its steps          %s\n", stepList(s.LoopSteps))
	fmt.Fprintf(out, "  without the store, its steps %s\n", stepList(s.LoopWorkSteps))
	fmt.Fprintf(out, "waiting to be written  %.1f MiB at most (results gathered for the store, bounded by storage.max_pending_mb: %d)\n", float64(s.StorePendingMax)/(1<<20), cfg.MaxPendingMB)
	sn := s.Seen
	fmt.Fprintf(out, "seen set             longest call %s; the longest measured %s: its thread's CPU %s, %d page faults, %d times preempted, %d asleep; %d calls over 1 ms; %d runs, %d blocks read, %d merges\n",
		sn.MaxPause.Round(time.Microsecond), sn.MaxMeasured.Round(time.Microsecond), sn.MaxPauseCPU.Round(time.Microsecond), sn.MaxPauseFaults, sn.MaxPauseSwitches, sn.MaxPauseSleeps, sn.SlowCalls, sn.Runs, sn.DiskReads, sn.Merges)
	fmt.Fprintf(out, "  its merges' hold  %s at most: queueing a full table for the background writer %s (its thread's CPU %s, %d page faults, %d times preempted, %d asleep; %d times), taking over its runs %s (CPU %s, %d page faults, %d times preempted, %d asleep; %d times)\n",
		sn.MaxHandOff.Round(time.Microsecond), sn.Freeze.Longest.Round(time.Microsecond), sn.Freeze.CPU.Round(time.Microsecond), sn.Freeze.Faults, sn.Freeze.Switches, sn.Freeze.Sleeps, sn.Freeze.Count,
		sn.Install.Longest.Round(time.Microsecond), sn.Install.CPU.Round(time.Microsecond), sn.Install.Faults, sn.Install.Switches, sn.Install.Sleeps, sn.Install.Count)
	fmt.Fprintf(out, "sites                %d found, %d resolved (names asked of simweb's DNS server)\n", s.Sites, names)
	fmt.Fprintf(out, "DNS queries per host %.3f (%d queries for %d names; at most %d for one name)\n", perHost, queries, names, most)
	fmt.Fprintf(out, "errors               %d %v\n", errs, s.ErrorKind)
	filePerPage := float64(fileBytes) / float64(max(s.Pages, 1))
	fmt.Fprintf(out, "crawl file           %.1f MB, %.0f bytes per page (bodies kept %v, headers kept %v)\n", float64(fileBytes)/1e6, filePerPage, o.KeepBodies, o.KeepHeaders)
	fmt.Fprintf(out, "pages=%d pages_per_s=%.0f peak_rss_mb=%.0f%s dns_queries_per_host=%.3f discovered=%d cpu_s_per_1000_first=%.3f cpu_s_per_1000_last=%.3f file_bytes_per_page=%.0f store_wait_ms=%.1f store_longest_write_cpu_ms=%.1f sched_wait_p99_ms=%.2f sched_wait_max_ms=%.0f seen_pause_ms=%.1f detection_bytes_per_url=%.0f graph_bytes_per_url=%.0f seen_bytes_per_url=%.1f bytes_per_url=%.0f pages_per_s_first=%.0f pages_per_s_last=%.0f gc_cpu_share=%.3f cpu_s_per_1000=%.3f loop_pause_ms=%.1f loop_work_ms=%.1f rank_bytes_per_url=%.1f pending_mb_max=%.1f seen_merge_pause_ms=%.1f\n",
		s.Pages, pps, rss, millionKeys(millions), perHost, s.Discovered, first.cpuPer1000(), last.cpuPer1000(), filePerPage, ms(s.StoreWait), ms(s.StoreApplyUsage.CPU), ms(waitP99), ms(waitMost), ms(s.Seen.MaxPause),
		perURLOf(mem.Detection), perURLOf(mem.Graph), perURLOf(mem.Seen),
		perURL, first.pagesPerSec(), last.pagesPerSec(), gcShare, cpuPer1000, ms(s.LoopPause), ms(s.LoopWork), perURLOf(rankMost), float64(s.StorePendingMax)/(1<<20), ms(sn.MaxHandOff))
	return nil
}

// perMillion is the step at which Crawl notes the peak RSS so far.
const perMillion = 1_000_000

// millionMark is the crawl's memory as the URLs discovered passed a
// million: the peak RSS so far (getrusage's), and the split of the largest
// RSS sampled so far.
type millionMark struct {
	peak  int64
	split rssSplit
}

// millionKeys are the key=value pairs of the peak RSS, in MB, as the URLs
// discovered passed each million (peak_rss_mb_1m=...), and from two
// millions on how much it grew a million past the first
// (rss_growth_mb_per_million): the memory goal's two figures. Each pair
// starts with a space; there are none before the first million.
func millionKeys(millions []millionMark) string {
	var b strings.Builder
	for i, m := range millions {
		fmt.Fprintf(&b, " peak_rss_mb_%dm=%.0f", i+1, float64(m.peak)/1e6)
	}
	if n := len(millions); n >= 2 {
		fmt.Fprintf(&b, " rss_growth_mb_per_million=%.0f", float64(millions[n-1].peak-millions[0].peak)/1e6/float64(n-1))
	}
	return b.String()
}

// stepList says where the loop's longest wake-up spent its time: its
// five longest steps.
func stepList(steps []engine.LoopStepTime) string {
	var b strings.Builder
	for i, st := range steps[:min(5, len(steps))] {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %.1f ms", st.Step, ms(st.Took))
	}
	return b.String()
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return d.Seconds() * 1000 }

// writeHeapProfile writes the heap profile to path, replacing what was there.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// benchDir returns dir, or a new temporary directory if dir is empty, and
// a function that removes what was created.
func benchDir(dir string) (string, func(), error) {
	if dir != "" {
		return dir, func() {}, os.MkdirAll(dir, 0o755)
	}
	tmp, err := os.MkdirTemp("", "lidi-bench-")
	if err != nil {
		return "", nil, err
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// benchConfig is the engine's configuration for crawling simweb as fast as
// it serves: politeness off, since every site is on loopback.
func benchConfig(seeds []string, robots, pagesPerVisit int) engine.Config {
	cfg := engine.Defaults()
	cfg.Seeds = seeds
	cfg.Robots = robots
	cfg.Delay = 0
	cfg.MaxDelay = 0                         // politeness off: Crawl-delay ignored too
	cfg.RobotsRetry = 200 * time.Millisecond // sites whose robots.txt answers 5xx are
	cfg.ParkAfter = 3                        // retried quickly, then parked
	cfg.PagesPerVisit = pagesPerVisit
	cfg.PerAddress = false // politeness off: simweb puts many sites on one address
	return cfg
}

// runEngine runs eng until its crawl ends, ctx is done or enough reports
// true for a Stats snapshot (polled ten times a second), writing a progress
// line to out every interval. It returns the time the run took and its
// error, nil when the crawl was stopped.
func runEngine(ctx context.Context, eng *engine.Engine, out io.Writer, interval time.Duration, enough func(engine.Stats) bool) (time.Duration, error) {
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case err := <-done:
			if errors.Is(err, engine.ErrStopped) {
				err = nil
			}
			return time.Since(start), err
		case <-poll.C:
			if enough != nil && enough(eng.Stats()) {
				stop()
			}
		case <-tick.C:
			s := eng.Stats()
			fmt.Fprintf(out, "  %6.1fs pages=%d fetches/s=%.0f discovered=%d queue=%d busy=%d rss_mb=%.0f\n",
				time.Since(start).Seconds(), s.Pages, s.FetchesPerSec, s.Discovered, s.QueueDepth, s.RobotsBusy, float64(peakRSS())/1e6)
		}
	}
}

// trace is a crawl's progress sampled as it runs (every 100 ms): pages
// fetched against wall and CPU time, and the largest live heap seen. The
// zero value is empty; it is not safe for concurrent use.
type trace struct {
	points  []tracePoint
	maxLive uint64  // live heap after the last GC's marking, the most seen
	gcCPU   float64 // the runtime's estimate of the CPU seconds its collector has used, at the last sample
	samples []metrics.Sample
	// atPeak is the resident memory's split at the sample where it was
	// largest.
	atPeak rssSplit
	// stop is the number of points when the crawl was asked to stop (0:
	// it was not): the last window ends there, so that closing the crawl
	// (its last writes, a checkpoint) does not count as fetching time.
	stop int
}

// stopped marks the crawl asked to stop at the last point.
func (t *trace) stopped() {
	if t.stop == 0 {
		t.stop = len(t.points)
	}
}

// ended returns the points up to where the crawl was asked to stop, or
// all of them.
func (t *trace) ended() []tracePoint {
	if t.stop > 0 {
		return t.points[:t.stop]
	}
	return t.points
}

// rssSplit is the process's resident memory and what the Go runtime holds
// of it: Heap in objects (live, or garbage not yet collected), Unused the
// free room in the heap's spans that hold objects (it takes objects of
// their size only, and cannot go back to the system), Free the heap's
// spans free and not yet returned to the system, Other the stacks and the
// runtime's metadata. What is resident beyond is outside Go's runtime:
// SQLite's page caches (its allocator maps its own memory) and the
// program's code.
type rssSplit struct {
	RSS, Live, Heap, Unused, Free, Other uint64
}

// outside is the resident memory the Go runtime does not account for.
func (r rssSplit) outside() uint64 {
	if inGo := r.Heap + r.Unused + r.Free + r.Other; r.RSS > inGo {
		return r.RSS - inGo
	}
	return 0
}

func (r rssSplit) String() string {
	mb := func(b uint64) float64 { return float64(b) / 1e6 }
	return fmt.Sprintf("%.0f MB: Go heap objects %.0f (live at the last collection %.0f), room in their spans %.0f, free spans %.0f, stacks and runtime %.0f, outside Go (SQLite, code) %.0f",
		mb(r.RSS), mb(r.Heap), mb(r.Live), mb(r.Unused), mb(r.Free), mb(r.Other), mb(r.outside()))
}

type tracePoint struct {
	at    time.Time
	cpu   time.Duration
	pages int64
}

// span is the progress between two points.
type span struct{ from, to tracePoint }

// sample records the crawl at pages fetched.
func (t *trace) sample(pages int64) {
	t.points = append(t.points, tracePoint{at: time.Now(), cpu: cpuTime(), pages: pages})
	if t.samples == nil {
		t.samples = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/cpu/classes/gc/total:cpu-seconds"},
			{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"}, {Name: "/memory/classes/heap/unused:bytes"},
			{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	}
	metrics.Read(t.samples)
	u := func(i int) uint64 {
		if v := t.samples[i].Value; v.Kind() == metrics.KindUint64 {
			return v.Uint64()
		}
		return 0
	}
	t.maxLive = max(t.maxLive, u(0))
	if v := t.samples[1].Value; v.Kind() == metrics.KindFloat64 {
		t.gcCPU = v.Float64()
	}
	if rss := residentBytes(); rss > t.atPeak.RSS {
		sp := rssSplit{RSS: rss, Live: u(0), Heap: u(2), Free: u(3), Unused: u(4)}
		if total, held := u(5)-u(6), sp.Heap+sp.Unused+sp.Free; total > held {
			sp.Other = total - held
		}
		t.atPeak = sp
	}
}

// residentBytes returns the process's resident set size now, from
// /proc/self/statm; 0 where there is none.
func residentBytes() uint64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * uint64(os.Getpagesize())
}

// first returns the span from the start to the first point at least n
// pages on.
func (t *trace) first(n int64) span {
	if len(t.points) == 0 {
		return span{}
	}
	p0 := t.points[0]
	for _, p := range t.points {
		if p.pages-p0.pages >= n {
			return span{p0, p}
		}
	}
	return span{p0, t.points[len(t.points)-1]}
}

// last returns the span from the last point at least n pages before the end
// to the end: where the crawl was asked to stop, when it was.
func (t *trace) last(n int64) span {
	points := t.ended()
	if len(points) == 0 {
		return span{}
	}
	end := points[len(points)-1]
	for i := len(points) - 1; i >= 0; i-- {
		if end.pages-points[i].pages >= n {
			return span{points[i], end}
		}
	}
	return span{points[0], end}
}

func (s span) pagesPerSec() float64 {
	d := s.to.at.Sub(s.from.at).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(s.to.pages-s.from.pages) / d
}

func (s span) cpuPer1000() float64 {
	n := s.to.pages - s.from.pages
	if n <= 0 {
		return 0
	}
	return (s.to.cpu - s.from.cpu).Seconds() / float64(n) * 1000
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSS returns the process's peak resident set size in bytes.
func peakRSS() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return int64(ru.Maxrss) * 1024 // kilobytes on Linux; int32 on 32-bit systems
}

// cpuProfiles writes the crawl's CPU profile: one file, or a new one every
// so many pages. The zero value writes none.
type cpuProfiles struct {
	path  string
	every int64 // pages a profile covers; 0: one profile
	n     int   // profiles started
	f     *os.File
}

// start begins the first profile (nothing when path is empty).
func (p *cpuProfiles) start(path string, every int64) error {
	p.path, p.every = path, max(every, 0)
	if path == "" {
		return nil
	}
	return p.open()
}

// name is the file of profile k.
func (p *cpuProfiles) name(k int) string {
	if p.every == 0 {
		return p.path
	}
	return fmt.Sprintf("%s-%03d", p.path, k)
}

func (p *cpuProfiles) open() error {
	f, err := os.Create(p.name(p.n))
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("bench: %w", err)
	}
	p.f = f
	p.n++
	return nil
}

// next starts a new profile when pages has passed the current one's end.
// A failure to start one ends the profiling; stop reports nothing of it,
// the profiles written so far being whole.
func (p *cpuProfiles) next(pages int64) {
	if p.f == nil || p.every == 0 || pages < int64(p.n)*p.every {
		return
	}
	if p.stop() == nil {
		p.open()
	}
}

// stop ends the profile being written, if any.
func (p *cpuProfiles) stop() error {
	if p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	return err
}

// usageNote says what a thread used during one call to the store, for the
// longest-pause line; empty where the system does not say.
func usageNote(u cputime.Usage) string {
	if u == (cputime.Usage{}) {
		return ""
	}
	return fmt.Sprintf(" (its thread's CPU %s, %d times preempted, %d asleep)", u.CPU.Round(time.Microsecond), u.Switches, u.Sleeps)
}

// readSchedWaits reads the runtime's histogram of the time goroutines
// spent runnable before they ran; nil where the runtime has none.
func readSchedWaits() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// schedWaits returns, of the waits to run counted between two readings of
// the runtime's histogram (its buckets 12.5-25% wide), a bound 99% of them
// were within, the end of the 99th percentile's bucket, and a bound the
// longest was at least, the start of its bucket.
func schedWaits(before, after *metrics.Float64Histogram) (p99, most time.Duration) {
	if before == nil || after == nil || len(before.Counts) != len(after.Counts) {
		return 0, 0
	}
	var total uint64
	for i := range after.Counts {
		total += after.Counts[i] - before.Counts[i]
	}
	if total == 0 {
		return 0, 0
	}
	// Bucket i holds [Buckets[i], Buckets[i+1]); the first may start at
	// -Inf and the last end at +Inf.
	edge := func(i int) time.Duration {
		b := after.Buckets[i]
		if math.IsInf(b, 1) {
			b = after.Buckets[i-1] // no end: its start is the best bound there is
		}
		return time.Duration(max(b, 0) * float64(time.Second))
	}
	var seen uint64
	p99Done := false
	for i := range after.Counts {
		c := after.Counts[i] - before.Counts[i]
		seen += c
		if !p99Done && seen*100 >= total*99 {
			p99, p99Done = edge(i+1), true
		}
		if c > 0 {
			most = edge(i)
		}
	}
	return p99, most
}
