package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	neturl "net/url"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/charmbracelet/x/term"

	"lidi/engine"
	"lidi/engine/cluster"
	"lidi/engine/config"
	"lidi/engine/visit"
	"lidi/tui"
)

// masterRun is a crawl's side of the cluster when it is a master.
type masterRun struct {
	m    *cluster.Master
	d    *cluster.Dispatcher
	srv  *cluster.Server
	join string // the command that starts a slave of this master
	out  io.Writer
	// quiet is set while the console owns the terminal: the waiting list
	// of a stopping master is printed only once it has quit.
	quiet    atomic.Bool
	stopping atomic.Bool
	// abandoned counts the leases a second q in the console left to the
	// next run.
	abandoned atomic.Int64
	done      chan struct{}
	// stop stops the crawl (main sets it before the console opens): the
	// console's first q, with leases out, stops the crawl and stays open
	// on what it waits for.
	stop func()
}

// Slaves, Events and Stats are the master's, Join the command that starts
// a slave: what the console shows (tui.Cluster).
func (r *masterRun) Slaves() []cluster.SlaveInfo  { return r.m.Slaves() }
func (r *masterRun) Events() []cluster.SlaveEvent { return r.m.Events() }
func (r *masterRun) Stats() cluster.MasterStats   { return r.m.Stats() }
func (r *masterRun) Join() string                 { return r.join }

// Waiting, Stop and Abandon let the console say what a stopping master
// waits for, and stop waiting (tui.Cluster).
func (r *masterRun) Waiting() []cluster.Waiting { return r.d.Waiting() }
func (r *masterRun) Abandon()                   { r.abandon() }
func (r *masterRun) Stop() {
	if r.stop != nil {
		r.stop()
	}
}

// startMaster makes the crawl a cluster's master when cluster.listen or
// cluster.nats_url is set: it embeds (or connects to) the NATS server,
// publishes the crawl's settings for the slaves, and hands the engine's
// leases to a cluster.Dispatcher. The master is nil when the crawl is not
// clustered; stop undoes what was started.
func startMaster(ctx context.Context, cfg *config.File, eng *engine.Engine, stdout io.Writer) (mr *masterRun, stop func(), err error) {
	stop = func() {}
	if !cfg.Clustered() {
		return nil, stop, nil
	}
	cc := cfg.Cluster
	pins, err := cfg.ClusterPins()
	if err != nil {
		return nil, stop, err
	}
	auth := cluster.Auth{Token: cc.Token, NKey: cc.NKey, NKeySeedFile: cc.NKeySeed}
	dial := cluster.DialOptions{URL: cc.NATSURL, Auth: auth, CA: cc.TLSCA}
	tokenFile := ""
	var srv *cluster.Server
	if cc.Listen != "" {
		if auth.Token == "" && auth.NKey == "" {
			path := cfg.StoragePath + ".cluster-token"
			tok, created, err := cluster.TokenFile(path)
			if err != nil {
				return nil, stop, err
			}
			auth.Token, dial.Auth.Token = tok, tok
			tokenFile = path
			if created {
				fmt.Fprintf(stdout, "lidi: cluster token made and kept in %s (mode 0600): slaves read it with --token-file\n", path)
			}
		}
		srv, err = cluster.StartServer(cluster.ServerOptions{Listen: cc.Listen, StoreDir: cfg.StoragePath + ".nats", Auth: auth,
			TLS: cluster.TLSFiles{Cert: cc.TLSCert, Key: cc.TLSKey}})
		if err != nil {
			return nil, stop, err
		}
	}
	mr = &masterRun{srv: srv, out: stdout, done: make(chan struct{})}
	m, err := cluster.StartMaster(ctx, cluster.MasterOptions{Server: srv, Dial: dial, Pins: pins,
		Timing: cluster.Timing{Grace: cfg.LeaseGrace, Heartbeat: cc.Heartbeat}, OnEvent: mr.event})
	if err != nil {
		srv.Close()
		return nil, stop, err
	}
	// The slaves make fingerprints and digests as the crawl file's were
	// made, whatever dedup.word_hash and storage.digest say of a new file.
	pub := *cfg
	pub.WordHash, pub.Digest = eng.WordHash(), eng.Digest()
	settings, err := pub.Marshal()
	if err == nil {
		err = m.PublishSettings(ctx, settings)
	}
	if err != nil {
		m.Close()
		srv.Close()
		return nil, stop, err
	}
	mr.m = m
	mr.d = cluster.NewDispatcher(m, cluster.DispatcherOptions{Local: visit.LocalDispatcher{Robot: eng.Robot()},
		LocalRobots: cc.LocalRobots, SetRobots: eng.SetRobots, Stopping: mr.stopping.Load})
	eng.SetDispatcher(mr.d)
	url := cc.NATSURL
	if srv != nil {
		url = srv.URL()
	}
	mr.join = joinCommand(url, auth, tokenFile, cc.TLSCert != "")
	fmt.Fprintf(stdout, "lidi: cluster master on %s; start a slave with: %s\n", url, mr.join)
	go mr.watchStop(eng)
	return mr, func() { close(mr.done); mr.d.Close(); m.Close(); srv.Close() }, nil
}

// joinCommand is the command that starts a slave of a master at url: the
// address as a slave reaches it (the host's name when the master listens
// on every interface), and the token read from a file (or standard input,
// --token-file -), never put on a command line where the shell's history
// and ps would show it.
func joinCommand(url string, a cluster.Auth, tokenFile string, tlsCert bool) string {
	if u, err := neturl.Parse(url); err == nil {
		if ip, perr := netip.ParseAddr(u.Hostname()); u.Hostname() == "" || perr == nil && ip.IsUnspecified() {
			host, _ := os.Hostname()
			if host == "" {
				host = "MASTER_HOST"
			}
			u.Host = net.JoinHostPort(host, u.Port())
			url = u.String()
		}
	}
	cmd := "lidi slave --master " + url
	switch {
	case a.NKey != "":
		cmd += " --nkey-seed SEED_FILE"
	case tokenFile != "":
		cmd += " --token-file " + tokenFile + " (a copy of this file on the slave's machine)"
	default:
		cmd += " --token-file FILE (a file holding cluster.token)"
	}
	if tlsCert {
		// Slaves verify the certificate: against the system's
		// authorities, or the one named here.
		cmd += " [--tls-ca CA_FILE, when cluster.tls_cert's authority is not the system's]"
	}
	return cmd
}

// stopPoll is how often a stopping master looks at what it waits for.
const stopPoll = 500 * time.Millisecond

// watchStop follows the crawl's stop: once stopping, the slaves are told so
// (not "paused"), and what the master waits for is printed when it
// changes, while nothing else owns the terminal: each lease still out, on
// which slave, until when. A second interrupt (or q, in the console) stops
// at once: the leases stay in the book for the next run.
func (r *masterRun) watchStop(eng *engine.Engine) {
	t := time.NewTicker(stopPoll)
	defer t.Stop()
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	interrupts := 0
	last := ""
	for {
		select {
		case <-r.done:
			return
		case <-sig:
			interrupts++
			if interrupts >= 2 {
				r.abandon()
			}
			continue
		case <-t.C:
		}
		if !r.stopping.Load() {
			if eng.Stats().State != engine.StateStopping {
				continue
			}
			r.stopping.Store(true)
			r.d.Recall(true) // said again: "stopping", not "paused"
		}
		if r.quiet.Load() {
			continue
		}
		if w := waitingText(r.d.Waiting(), time.Now()); w != last {
			fmt.Fprint(r.out, w)
			last = w
		}
	}
}

// event prints a cluster event (a join, a leave, a lease given back or
// expired) while nothing else owns the terminal: the headless log.
func (r *masterRun) event(ev cluster.SlaveEvent) {
	if !r.quiet.Load() {
		fmt.Fprintf(r.out, "%s  cluster %s: %s\n", ev.Time.Format("15:04:05.000"), ev.Kind, ev.Text)
	}
}

// abandon stops waiting for the slaves: their leases end now in this run
// and stay in the book, so the next run takes them over.
func (r *masterRun) abandon() {
	n := r.d.Abandon()
	if r.quiet.Load() {
		r.abandoned.Add(int64(n)) // said once the console has closed
		return
	}
	if n > 0 {
		fmt.Fprintf(r.out, "lidi: stopped without waiting: %d leases kept for the next run\n", n)
	}
}

// waitingText says what a stopping master waits for.
func waitingText(ws []cluster.Waiting, now time.Time) string {
	if len(ws) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  stopping: waiting for %d leases on slaves (each ends after its page in flight; q or ctrl+c again stops now, the leases kept for the next run):\n", now.Format(time.TimeOnly), len(ws))
	for _, w := range ws {
		slave := w.Slave
		if slave == "" {
			slave = "no slave has named it yet"
		} else {
			slave = "slave " + slave
		}
		fmt.Fprintf(&b, "  lease %s of %s, %s, until %s\n", w.ID, w.Site, slave, w.Until.Format(time.TimeOnly))
	}
	return b.String()
}

// consoleClosed is called once the console has quit (the crawl is
// stopping): the waiting list goes to the terminal, and a second q stops
// at once.
func (r *masterRun) consoleClosed() {
	r.quiet.Store(false)
	if n := r.abandoned.Load(); n > 0 {
		fmt.Fprintf(r.out, "lidi: stopped without waiting: %d leases kept for the next run\n", n)
	}
	fd := os.Stdin.Fd()
	if !term.IsTerminal(fd) {
		return
	}
	old, err := term.MakeRaw(fd)
	if err != nil {
		return
	}
	restore := func() { term.Restore(fd, old) }
	go func() {
		<-r.done
		restore()
	}()
	go func() {
		buf := make([]byte, 1)
		for {
			n, err := os.Stdin.Read(buf)
			if err != nil {
				return
			}
			if n == 1 && (buf[0] == 'q' || buf[0] == 3) { // q or ctrl+c
				restore()
				r.abandon()
				return
			}
		}
	}()
}

// slaveCmd is `lidi slave`: a light slave of a remote master.
func slaveCmd(fs *flag.FlagSet) runFunc {
	master := fs.String("master", "", "the master's NATS `url` (nats://host:port)")
	token := fs.String("token", "", "the master's cluster token (--token-file keeps it out of the shell's history)")
	tokenFile := fs.String("token-file", "", "a `file` holding the master's cluster token (its DB.cluster-token), - for standard input")
	seed := fs.String("nkey-seed", "", "an nkey seed `file` to sign with instead of a token")
	ca := fs.String("tls-ca", "", "the `file` of the authority that signed the master's TLS certificate (default: the system's; the certificate is always verified)")
	robots := fs.Int("robots", 4, "leases worked on at once")
	id := fs.String("id", "", "the slave's name, the same across restarts so that its spool is found again (default: the host name)")
	spool := fs.String("spool", "", "the `file` results wait in until the master has them (default lidi-slave-ID.spool)")
	headless := fs.Bool("headless", false, "no console: print a progress line every few seconds")
	var tags tagList
	fs.Var(&tags, "tag", "a `tag` the master's cluster.pins may pin sites to (repeatable)")
	return func(ctx context.Context, out output) error {
		if *master == "" {
			return &usageError{msg: "--master is required"}
		}
		if *tokenFile != "" {
			tok, err := readTokenFile(*tokenFile, os.Stdin)
			if err != nil {
				return err
			}
			*token = tok
		}
		if *token == "" && *seed == "" {
			return &usageError{msg: "--token-file, --token or --nkey-seed is required: the master's console shows the command that joins it"}
		}
		if *robots <= 0 {
			return &usageError{msg: "--robots must be positive"}
		}
		if *id == "" {
			// A name that survives a restart, so the spool is found again.
			*id, _ = os.Hostname()
		}
		s, err := cluster.NewSlave(cluster.SlaveOptions{
			Dial: cluster.DialOptions{URL: *master, Auth: cluster.Auth{Token: *token, NKeySeedFile: *seed}, CA: *ca},
			ID:   *id, Tags: tags, Robots: *robots, SpoolPath: *spool, NewWork: slaveWork,
			OnEvent: func(text string) {
				if *headless {
					fmt.Fprintf(out.stdout, "%s  %s\n", time.Now().Format(time.TimeOnly), text)
				}
			},
		})
		if err != nil {
			return err
		}
		if *headless {
			return runSlaveHeadless(ctx, s, out.stdout)
		}
		return runSlaveConsole(ctx, s)
	}
}

// readTokenFile reads a cluster token from a file, or from stdin for "-".
func readTokenFile(path string, stdin io.Reader) (string, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(stdin, 4096))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("--token-file %s: no token in it", path)
	}
	return tok, nil
}

// slaveWork builds a slave's robot from the master's settings: its crawl
// configuration, so that the slave fetches and extracts exactly as a local
// robot of the master would. It never resolves a name.
func slaveWork(settings []byte, halt func() bool) (cluster.Work, error) {
	cfg, err := config.ParseSettings(settings)
	if err != nil {
		return nil, err
	}
	r, err := visit.NewRobot(cfg.Engine().Robot(), nil)
	if err != nil {
		return nil, err
	}
	return cluster.RobotWork(r, halt), nil
}

// tagList is a repeatable flag.
type tagList []string

func (t *tagList) String() string { return strings.Join(*t, ",") }

func (t *tagList) Set(v string) error {
	if err := cluster.CheckTag(v); err != nil {
		return err
	}
	*t = append(*t, v)
	return nil
}

// runSlaveHeadless runs the slave with a progress line every few seconds.
func runSlaveHeadless(ctx context.Context, s *cluster.Slave, out io.Writer) error {
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			fmt.Fprintln(out, slaveLine(s.Stats()))
			return err
		case <-tick.C:
			fmt.Fprintln(out, slaveLine(s.Stats()))
		}
	}
}

func slaveLine(st cluster.SlaveStats) string {
	conn := "connected"
	if !st.Connected {
		conn = "disconnected"
	}
	el := time.Since(st.Started).Seconds()
	switch {
	case st.Stopping:
		conn += " stopping"
	case st.Halted && st.MasterState != "":
		conn += " master_" + st.MasterState
	case st.Halted:
		conn += " halted"
	case st.Connected && !st.Free:
		conn += " no_liberty"
	}
	return fmt.Sprintf("%s  slave=%s master=%s %s leases=%d leases_done=%d pages=%d pages/s=%.1f failures=%d spooled=%d delivered=%d stale=%d claimed_elsewhere=%d bytes_in=%d bytes_out=%d msgs_in=%d msgs_out=%d",
		time.Now().Format(time.TimeOnly), st.ID, st.Master, conn, st.Leases, st.LeasesDone, st.Pages, float64(st.Pages)/max(el, 1), st.Failures, st.Spooled, st.Delivered,
		st.Stale, st.Claimed, st.BytesIn, st.BytesOut, st.MsgsIn, st.MsgsOut)
}

// masterLine is the master's cluster figures, printed when a headless
// crawl ends (lidi bench cluster reads it).
func masterLine(r *masterRun) string {
	st, ds := r.m.Stats(), r.d.Stats()
	return fmt.Sprintf("cluster: leases_published=%d results_applied=%d duplicates=%d in_hand=%d slaves=%d leases_given_back=%d leases_expired=%d late_pages=%d bytes_in=%d bytes_out=%d msgs_in=%d msgs_out=%d",
		st.Published, st.Applied, st.Duplicates, st.InHand, len(r.m.Slaves()), ds.Given, ds.Expired, ds.Late, st.BytesIn, st.BytesOut, st.MsgsIn, st.MsgsOut)
}

// runSlaveConsole runs the slave under its console; quitting the console
// stops the slave, which delivers what it can and keeps the rest spooled.
func runSlaveConsole(ctx context.Context, s *cluster.Slave) error {
	slaveCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- s.Run(slaveCtx) }()
	uiErr := tui.RunSlave(ctx, s, tui.Options{})
	stop()
	err := <-done
	if uiErr != nil {
		return uiErr
	}
	return err
}
