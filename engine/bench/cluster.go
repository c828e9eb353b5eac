package bench

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"lidi/engine/record"
	"lidi/engine/simweb"
)

// ClusterOptions sets up `lidi bench cluster`. The zero value is not
// usable: Command and OpenStore must be set (main.go wires them).
type ClusterOptions struct {
	Sites, Pages  int   // the synthetic web
	Seed          int64 // its seed
	Latency       time.Duration
	Slaves        []int // the cluster sizes measured
	Robots        int   // r of the single process, and of each slave
	PagesPerVisit int   // c
	Delay         time.Duration
	Faults        bool // the fault runs too
	// FaultRuns are the faults run (all when empty), each Repeat times.
	FaultRuns   []string
	Repeat      int
	FaultSlaves int // slaves in a fault run
	Cut         time.Duration
	Pause       time.Duration // how long pause-slave holds its slave stopped
	// SlowMaxDelay is politeness.max_delay in the kill-slave-slow run:
	// the sites whose robots.txt asks a Crawl-delay wait that long
	// between two requests, so the slave killed holds slow leases.
	SlowMaxDelay time.Duration
	// cluster.lease_slack and lease_grace: how soon a lease no slave
	// names in a heartbeat is given up.
	LeaseSlack, LeaseGrace time.Duration
	Heartbeat              time.Duration // cluster.heartbeat
	// Netns runs each slave in a network namespace of its own ("on",
	// "off", or "auto": where this process may make them), joined to
	// this one by a veth pair: the master and the sites are reached over
	// a link the cut-slave run sets down.
	Netns     string
	Netem     string        // tc netem's arguments for each slave's link ("": none)
	Limit     time.Duration // a run still going after it is stopped and reported unfinished
	Dir       string        // where the runs' files go ("": a temporary directory)
	Command   []string      // argv that runs lidi, e.g. {"/path/lidi"}
	OpenStore func(path string) (record.Store, io.Closer, error)
}

// RegisterFlags adds the benchmark's flags to fs, with their defaults.
func (o *ClusterOptions) RegisterFlags(fs *flag.FlagSet) {
	simweb.WebFlags(fs, &o.Sites, 128, &o.Pages, 6400, &o.Seed) // one address a site, up to simweb's limit
	fs.DurationVar(&o.Latency, "latency", 5*time.Millisecond, "the median time a site takes to answer")
	fs.Func("slaves", "the cluster sizes to measure, comma-separated (default 1,2,4; 0: none, the fault runs only)", func(s string) error { return parseList(s, &o.Slaves) })
	fs.IntVar(&o.Robots, "robots", 4, "r: the single process's robots, and each slave's")
	fs.IntVar(&o.PagesPerVisit, "c", 20, "pages per lease (keep-alive connection)")
	fs.DurationVar(&o.Delay, "delay", 20*time.Millisecond, "w: the delay between two requests to a site")
	fs.BoolVar(&o.Faults, "faults", true, "run the fault runs too (each lasts past a lease's deadline and grace)")
	fs.IntVar(&o.FaultSlaves, "fault-slaves", 2, "slaves in a fault run")
	fs.Func("fault-runs", "the fault runs, comma-separated (default all: "+strings.Join(faultNames(), ",")+")", func(s string) error {
		for _, f := range strings.Split(s, ",") {
			if !slices.Contains(faultNames(), f) {
				return fmt.Errorf("bench: no fault run %q (%s)", f, strings.Join(faultNames(), ", "))
			}
			o.FaultRuns = append(o.FaultRuns, f)
		}
		return nil
	})
	fs.IntVar(&o.Repeat, "repeat", 1, "how many times each fault run is run")
	fs.DurationVar(&o.Cut, "cut", 30*time.Second, "how long the cut-off slave is cut off")
	fs.DurationVar(&o.Pause, "pause", 5*time.Second, "how long pause-slave holds its slave stopped (SIGSTOP, then SIGCONT): past three heartbeats, it is declared gone and delivers late")
	fs.DurationVar(&o.SlowMaxDelay, "slow-max-delay", 250*time.Millisecond, "politeness.max_delay of the kill-slave-slow run: how slow the Crawl-delay sites are")
	fs.DurationVar(&o.Heartbeat, "heartbeat", 500*time.Millisecond, "cluster.heartbeat: a slave silent three is declared gone")
	fs.DurationVar(&o.LeaseSlack, "lease-slack", 30*time.Second, "cluster.lease_slack: a lease's time for its slowest page (at least the fetch timeouts, 7s here); a lease outlives a cut of --cut only if its deadline does")
	fs.DurationVar(&o.LeaseGrace, "lease-grace", 2*time.Second, "cluster.lease_grace: past a lease's deadline, its site is leased again (master and slaves share this machine's clock)")
	fs.StringVar(&o.Netem, "netem", "", "with --netns, slow each slave's link with tc netem, e.g. \"delay 50ms loss 1%\" (where the kernel has netem)")
	fs.StringVar(&o.Netns, "netns", "auto", "run each slave in a network namespace of its own: on, off, or auto (where this process may make them: root)")
	limitFlag(fs, &o.Limit, 6*time.Minute)
	dirFlag(fs, &o.Dir, "the runs' files")
}

// clusterRun is one run's figures.
type clusterRun struct {
	finished              bool // the master ended by itself (the frontier empty)
	name                  string
	fault                 fault
	slaves                int
	order                 []int32 // the web's pages stored (status 200), in fetch order
	stored                int     // URLs stored as fetched
	counted               int64   // pages the store's counter says were fetched
	requests              int64   // page requests simweb served (robots.txt left out)
	elapsed               time.Duration
	cpuMaster, cpuSlaves  time.Duration
	violations            int
	dnsWitness, dnsMaster int64
	bytes, msgs           int64 // between the master and its slaves
	// Fault runs: the longest time no new page was requested (between
	// two pages: simweb's page log polled every 100 ms), and the time
	// from the fault to the last of the leases given back being handed
	// out again (-1: none given back).
	stall, release time.Duration
	givenBack      int // leases of the faulty slave given back with URLs to fetch
	again          int // of those, handed out again
	late           int // pages the faulty slave delivered after it was declared gone, applied
}

// Cluster runs the cluster benchmark: one process alone, a master with
// each number of slaves, then the fault runs, and writes its report to out,
// ending with one key=value line per run.
func Cluster(ctx context.Context, o ClusterOptions, out io.Writer) error {
	if len(o.Slaves) == 0 {
		o.Slaves = []int{1, 2, 4}
	}
	dir, cleanup, err := benchDir(o.Dir)
	if err != nil {
		return err
	}
	defer cleanup()
	web, err := simweb.Generate(simweb.Options{Seed: o.Seed, Sites: o.Sites, Pages: o.Pages, Addresses: o.Sites, LatencyMedian: o.Latency})
	if err != nil {
		return err
	}
	srv, err := simweb.Start(ctx, web, simweb.ServerConfig{LogPages: true})
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(out, "bench cluster: simweb of %d sites (one address each), %d pages, latency %s; r=%d per process, c=%d, w=%s; files in %s\n",
		o.Sites, o.Pages, o.Latency, o.Robots, o.PagesPerVisit, o.Delay, dir)
	b := &clusterBench{o: o, dir: dir, srv: srv, web: web, out: out}
	switch o.Netns {
	case "on", "auto":
		l, err := newNetLink(0)
		if err != nil {
			if o.Netns == "on" {
				return err
			}
			fmt.Fprintf(out, "slaves on loopback: %v\n", err)
			break
		}
		l.close()
		b.netns = true
		fmt.Fprintln(out, "slaves in network namespaces of their own, each over a veth link (link-local addresses, 127.0.0.0/8 routed over it)")
	case "off":
	default:
		return fmt.Errorf("bench: --netns %q: on, off or auto", o.Netns)
	}
	runs := []*clusterRun{}
	single, err := b.run(ctx, "single", 0, noFault)
	if err != nil {
		return err
	}
	runs = append(runs, single)
	for _, n := range o.Slaves {
		if n == 0 {
			continue
		}
		r, err := b.run(ctx, fmt.Sprintf("master+%d", n), n, noFault)
		if err != nil {
			return err
		}
		runs = append(runs, r)
	}
	if o.Faults {
		names := o.FaultRuns
		if len(names) == 0 {
			names = faultNames()
		}
		for _, f := range names {
			for i := range max(o.Repeat, 1) {
				name := f
				if o.Repeat > 1 {
					name = fmt.Sprintf("%s-%d", f, i+1)
				}
				r, err := b.run(ctx, name, o.FaultSlaves, fault(f))
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
		}
	}
	b.report(runs, single)
	return nil
}

// fault is what a fault run does to the cluster once a quarter of the web
// is fetched.
type fault string

const (
	noFault       fault = ""
	killSlave     fault = "kill-slave"      // kill -9 a slave in the middle of its leases, start it again 2s later
	killSlaveSlow fault = "kill-slave-slow" // the same, the Crawl-delay sites slow (o.SlowMaxDelay)
	killMaster    fault = "kill-master"     // kill -9 the master, start it again 1s later
	cutSlave      fault = "cut-slave"       // cut a slave off from the master (o.Cut)
	stopSlave     fault = "stop-slave"      // SIGSTOP a slave: no heartbeat, no exit, until the end
	quitSlave     fault = "quit-slave"      // SIGTERM a slave: a clean stop (its page in flight finished, the rest handed back)
	pauseSlave    fault = "pause-slave"     // SIGSTOP a slave for o.Pause, then SIGCONT: declared gone, it comes back with late pages
)

// faults are the fault runs, in the order they run.
var faults = []fault{killSlave, killSlaveSlow, killMaster, cutSlave, stopSlave, pauseSlave, quitSlave}

func faultNames() []string {
	out := make([]string, len(faults))
	for i, f := range faults {
		out[i] = string(f)
	}
	return out
}

type clusterBench struct {
	o   ClusterOptions
	dir string
	srv *simweb.Server
	web *simweb.Web
	out io.Writer
	// quarter is when the faults strike: a quarter of what the single
	// process stored.
	quarter int64
	netns   bool // slaves run in namespaces of their own
}

var (
	pagesRe    = regexp.MustCompile(`\bpages=(\d+)`)
	givenRe    = regexp.MustCompile(`cluster lease-returned: lease \d+ of (\S+) given back: slave (\S+) is gone; \d+ pages came back, (\d+) URLs`)
	againRe    = regexp.MustCompile(`cluster lease-again: lease \d+ of (\S+) handed out again`)
	dnsRe      = regexp.MustCompile(`\bdns_queries=(\d+)`)
	lateRe     = regexp.MustCompile(`\blate_pages=(\d+)`)
	trafficRe  = regexp.MustCompile(`\bbytes_in=(\d+) bytes_out=(\d+) msgs_in=(\d+) msgs_out=(\d+)`)
	clusterTok = "bench-token"
)

// run runs one crawl of the web from scratch and measures it.
func (b *clusterBench) run(ctx context.Context, name string, slaves int, f fault) (*clusterRun, error) {
	o := b.o
	rdir := filepath.Join(b.dir, name)
	// Every run crawls from scratch: nothing of an earlier bench's run
	// in the same directory is continued.
	if err := os.RemoveAll(rdir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(rdir, 0o755); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(rdir, "config.yaml")
	maxDelay := o.Delay
	if f == killSlaveSlow {
		maxDelay = o.SlowMaxDelay
	}
	if err := os.WriteFile(cfgPath, []byte(b.config(rdir, port, slaves > 0, maxDelay)), 0o644); err != nil {
		return nil, err
	}
	b.srv.ResetWitness()
	res := &clusterRun{name: name, fault: f, slaves: slaves}
	fmt.Fprintf(b.out, "run %s: ", name)
	start := time.Now()

	var masterMu sync.Mutex
	var masterPages, masterDNS int64
	// The faulty slave's leases given back, by site, and when their sites
	// were leased again (the master's cluster events, as they come).
	backSites := map[string]bool{}
	var lastAgain time.Time
	againSites := map[string]bool{}
	var masterDNSDone int64 // from masters that ended
	late := 0               // pages of slaves declared gone applied late
	masters := 0
	startMaster := func() (*proc, error) {
		masters++
		return startProc(append(b.cmd("crawl"), "--config", cfgPath, "--headless"), filepath.Join(rdir, fmt.Sprintf("master-%d.log", masters)), func(line string) {
			masterMu.Lock()
			defer masterMu.Unlock()
			if m := pagesRe.FindStringSubmatch(line); m != nil {
				masterPages, _ = strconv.ParseInt(m[1], 10, 64)
			}
			if m := dnsRe.FindStringSubmatch(line); m != nil {
				masterDNS, _ = strconv.ParseInt(m[1], 10, 64)
			}
			if m := lateRe.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				late += n
			}
			if m := givenRe.FindStringSubmatch(line); m != nil && m[2] == "s1" && m[3] != "0" {
				backSites[m[1]] = true
			}
			if m := againRe.FindStringSubmatch(line); m != nil && backSites[m[1]] && !againSites[m[1]] {
				againSites[m[1]] = true
				lastAgain = time.Now()
			}
		})
	}
	master, err := startMaster()
	if err != nil {
		return nil, err
	}
	masterURL := fmt.Sprintf("nats://127.0.0.1:%d", port)
	var links []*netLink
	defer func() {
		for _, l := range links {
			l.close()
		}
	}()
	if b.netns {
		for i := range slaves {
			l, err := newNetLink(i)
			if err != nil {
				master.kill()
				return nil, err
			}
			links = append(links, l)
			if o.Netem != "" {
				if err := l.slow(o.Netem); err != nil {
					fmt.Fprintf(b.out, "[no netem: %v] ", err)
				}
			}
		}
	}
	var proxy *cutProxy
	if f == cutSlave && links == nil {
		if proxy, err = newCutProxy(fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
			master.kill()
			return nil, err
		}
		defer proxy.close()
	}
	var slaveProcs []*proc
	defer func() {
		// Whatever happened, no process of the run outlives it.
		master.kill()
		for _, s := range slaveProcs {
			s.kill()
		}
	}()
	traffic := make([][4]int64, slaves*2) // per slave process, its last counts
	startSlave := func(i, n int) (*proc, error) {
		url := masterURL
		if i == 0 && proxy != nil {
			url = "nats://" + proxy.addr()
		}
		id := fmt.Sprintf("s%d", i+1)
		argv := b.cmd("slave")
		if links != nil {
			argv = links[i].argv(argv)
		}
		return startProc(append(argv, "--master", url, "--token", clusterTok, "--robots", strconv.Itoa(o.Robots),
			"--id", id, "--spool", filepath.Join(rdir, id+".spool"), "--headless"), filepath.Join(rdir, fmt.Sprintf("%s-%d.log", id, n)), func(line string) {
			if m := trafficRe.FindStringSubmatch(line); m != nil {
				masterMu.Lock()
				for k := range 4 {
					traffic[n][k], _ = strconv.ParseInt(m[k+1], 10, 64)
				}
				masterMu.Unlock()
			}
		})
	}
	for i := range slaves {
		s, err := startSlave(i, i)
		if err != nil {
			master.kill()
			return nil, err
		}
		slaveProcs = append(slaveProcs, s)
	}
	// The fault strikes once a quarter of the web is stored.
	struck := f == noFault
	var struckAt time.Time
	// The longest time between two new pages requested.
	lastCount, lastChange := 0, time.Time{}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	limit := time.NewTimer(o.Limit)
	defer limit.Stop()
	res.finished = true
	for !master.exited() {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-limit.C:
			res.finished = false
			fmt.Fprintf(b.out, "[stopped after %s] ", o.Limit)
			master.stop()
			continue
		case <-tick.C:
		}
		if n := b.srv.PagesRequested(); n != lastCount {
			now := time.Now()
			if lastCount > 0 {
				res.stall = max(res.stall, now.Sub(lastChange))
			}
			lastCount, lastChange = n, now
		}
		masterMu.Lock()
		p := masterPages
		masterMu.Unlock()
		if struck || p < b.quarter {
			continue
		}
		struck = true
		struckAt = time.Now()
		fmt.Fprintf(b.out, "[%s at %d pages] ", f, p)
		switch f {
		case killSlave, killSlaveSlow:
			slaveProcs[0].kill()
			time.Sleep(2 * time.Second)
			s, err := startSlave(0, slaves)
			if err != nil {
				return nil, err
			}
			slaveProcs = append(slaveProcs, s)
		case killMaster:
			master.kill()
			res.cpuMaster += master.cpu()
			masterMu.Lock()
			masterDNSDone += masterDNS
			masterDNS = 0
			masterMu.Unlock()
			time.Sleep(time.Second)
			if master, err = startMaster(); err != nil {
				return nil, err
			}
		case cutSlave:
			if links != nil {
				if err := links[0].down(); err != nil {
					return nil, err
				}
				l := links[0]
				t := time.AfterFunc(o.Cut, func() { l.up() })
				defer t.Stop()
			} else {
				proxy.cut(o.Cut)
			}
		case stopSlave:
			slaveProcs[0].signal(syscall.SIGSTOP)
		case pauseSlave:
			s := slaveProcs[0]
			s.signal(syscall.SIGSTOP)
			t := time.AfterFunc(o.Pause, func() { s.signal(syscall.SIGCONT) })
			defer t.Stop()
		case quitSlave:
			slaveProcs[0].signal(syscall.SIGTERM)
		}
	}
	res.elapsed = time.Since(start)
	masterMu.Lock()
	res.givenBack, res.again, res.release, res.late = len(backSites), len(againSites), -1, late
	if !lastAgain.IsZero() && !struckAt.IsZero() {
		res.release = lastAgain.Sub(struckAt)
	}
	masterMu.Unlock()
	if err := master.err(); err != nil && res.finished {
		return nil, fmt.Errorf("bench: run %s: the master failed: %w (see %s)", name, err, filepath.Join(rdir, fmt.Sprintf("master-%d.log", masters)))
	}
	res.cpuMaster += master.cpu()
	for _, s := range slaveProcs {
		s.signal(syscall.SIGCONT)
		s.stop()
		res.cpuSlaves += s.cpu()
	}
	masterMu.Lock()
	res.dnsMaster = masterDNSDone + masterDNS
	for _, t := range traffic {
		res.bytes += t[0] + t[1]
		res.msgs += t[2] + t[3]
	}
	masterMu.Unlock()
	if err := b.measure(ctx, res, filepath.Join(rdir, "crawl.db")); err != nil {
		return nil, err
	}
	if name == "single" {
		b.quarter = int64(res.stored) / 4
	}
	fmt.Fprintf(b.out, "%d pages in %s\n", res.stored, res.elapsed.Round(100*time.Millisecond))
	return res, nil
}

func (b *clusterBench) cmd(sub string) []string {
	return append(append([]string(nil), b.o.Command...), sub)
}

// config is the crawl's config.yaml: the master's when clustered.
func (b *clusterBench) config(dir string, port int, clustered bool, maxDelay time.Duration) string {
	o := b.o
	seeds := b.srv.SeedURLs(5)
	c := fmt.Sprintf(`seeds: [%s]
scope:
  allowed_domains: [test] # simweb's hosts
robots: %d
politeness:
  delay: %s
  max_delay: %s
  pages_per_connection: %d
  one_per_address: true
fetch:
  connect_timeout: 2s
  header_timeout: 5s
  body_timeout: 5s
robots_txt:
  retry: 1s
dns:
  servers: [%q]
pagerank:
  enabled: false
storage:
  path: %q
`, `"`+strings.Join(seeds, `", "`)+`"`, o.Robots, o.Delay, maxDelay, o.PagesPerVisit, b.srv.DNSAddr(), filepath.Join(dir, "crawl.db"))
	if clustered {
		c += fmt.Sprintf("cluster:\n  listen: 127.0.0.1:%d\n  token: %s\n  heartbeat: %s\n  lease_slack: %s\n  lease_grace: %s\n", port, clusterTok, o.Heartbeat, o.LeaseSlack, o.LeaseGrace)
	}
	return c
}
