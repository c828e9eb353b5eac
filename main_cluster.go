package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"lidi/engine"
	"lidi/engine/cluster"
	"lidi/engine/config"
	"lidi/engine/visit"
	"lidi/tui"
)

// startMaster makes the crawl a cluster's master when cluster.listen or
// cluster.nats_url is set: it embeds (or connects to) the NATS server,
// publishes the crawl's settings for the slaves, and hands the engine's
// leases to a cluster.Dispatcher. The master is nil when the crawl is not
// clustered; stop undoes what was started.
func startMaster(ctx context.Context, cfg *config.File, eng *engine.Engine, stdout io.Writer) (m *cluster.Master, stop func(), err error) {
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
	var srv *cluster.Server
	if cc.Listen != "" {
		if auth.Token == "" && auth.NKey == "" {
			path := cfg.StoragePath + ".cluster-token"
			tok, created, err := cluster.TokenFile(path)
			if err != nil {
				return nil, stop, err
			}
			auth.Token, dial.Auth.Token = tok, tok
			how := "kept in"
			if created {
				how = "made and kept in"
			}
			fmt.Fprintf(stdout, "lidi: cluster token %s %s: %s\n", how, path, tok)
		}
		srv, err = cluster.StartServer(cluster.ServerOptions{Listen: cc.Listen, StoreDir: cfg.StoragePath + ".nats", Auth: auth,
			TLS: cluster.TLSFiles{Cert: cc.TLSCert, Key: cc.TLSKey}})
		if err != nil {
			return nil, stop, err
		}
	}
	m, err = cluster.StartMaster(ctx, cluster.MasterOptions{Server: srv, Dial: dial, Pins: pins,
		Timing: cluster.Timing{Grace: cfg.LeaseGrace, Heartbeat: cc.Heartbeat}})
	if err != nil {
		srv.Close()
		return nil, stop, err
	}
	settings, err := cfg.Marshal()
	if err == nil {
		err = m.PublishSettings(ctx, settings)
	}
	if err != nil {
		m.Close()
		srv.Close()
		return nil, stop, err
	}
	d := cluster.NewDispatcher(m, cluster.DispatcherOptions{Local: visit.LocalDispatcher{Robot: eng.Robot()},
		LocalRobots: cc.LocalRobots, SetRobots: eng.SetRobots})
	eng.SetDispatcher(d)
	url := cc.NATSURL
	if srv != nil {
		url = srv.URL()
	}
	tlsHint := ""
	if cc.TLSCert != "" {
		// Slaves verify the certificate: against the system's
		// authorities, or the one named here.
		tlsHint = " [--tls-ca CA_FILE, the authority of cluster.tls_cert when it is not the system's]"
	}
	fmt.Fprintf(stdout, "lidi: cluster master on %s; start slaves with: lidi slave --master %s %s%s\n", url, url, slaveAuthFlags(auth), tlsHint)
	return m, func() { d.Close(); m.Close(); srv.Close() }, nil
}

// slaveAuthFlags is how a slave proves itself, as lidi slave's flags.
func slaveAuthFlags(a cluster.Auth) string {
	if a.NKey != "" {
		return "--nkey-seed SEED_FILE"
	}
	return "--token " + a.Token
}

// slaveCmd is `lidi slave`: a light slave of a remote master.
func slaveCmd(fs *flag.FlagSet) runFunc {
	master := fs.String("master", "", "the master's NATS `url` (nats://host:port)")
	token := fs.String("token", "", "the master's cluster token")
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
		if *token == "" && *seed == "" {
			return &usageError{msg: "--token or --nkey-seed is required: the master prints its token at start"}
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

// slaveWork builds a slave's robot from the master's settings: its crawl
// configuration, so that the slave fetches and extracts exactly as a local
// robot of the master would. It never resolves a name.
func slaveWork(settings []byte, halt func() bool) (cluster.Work, error) {
	cfg, err := config.Parse(settings)
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
	if st.Halted {
		conn += " halted"
	}
	return fmt.Sprintf("%s  slave=%s master=%s %s leases=%d leases_done=%d pages=%d pages/s=%.1f failures=%d spooled=%d delivered=%d stale=%d claimed_elsewhere=%d bytes_in=%d bytes_out=%d msgs_in=%d msgs_out=%d",
		time.Now().Format(time.TimeOnly), st.ID, st.Master, conn, st.Leases, st.LeasesDone, st.Pages, float64(st.Pages)/max(el, 1), st.Failures, st.Spooled, st.Delivered,
		st.Stale, st.Claimed, st.BytesIn, st.BytesOut, st.MsgsIn, st.MsgsOut)
}

// masterLine is the master's cluster figures, printed when a headless
// crawl ends (lidi bench cluster reads it).
func masterLine(m *cluster.Master) string {
	st := m.Stats()
	return fmt.Sprintf("cluster: leases_published=%d results_applied=%d duplicates=%d in_hand=%d slaves=%d bytes_in=%d bytes_out=%d msgs_in=%d msgs_out=%d",
		st.Published, st.Applied, st.Duplicates, st.InHand, len(m.Slaves()), st.BytesIn, st.BytesOut, st.MsgsIn, st.MsgsOut)
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
