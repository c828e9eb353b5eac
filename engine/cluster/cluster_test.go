package cluster

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lidi/internal/testkit"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// testTiming keeps the tests short.
// testTiming's heartbeat leaves a slave its liberty through the pauses of
// a loaded machine running the race detector: at 50 ms, live slaves lost
// it and were declared gone now and then, each costing pages fetched twice.
var testTiming = Timing{Grace: 100 * time.Millisecond, Heartbeat: 200 * time.Millisecond}

// waitFor waits until cond holds, failing the test after two minutes (a
// loaded machine is slow, and a condition that never holds fails anyway).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, 2*time.Minute, what, cond)
}

// applied records the results a master applies, and stores them at once
// unless unstored is set: then they are taken and never stored, as by a
// master killed before its commit.
type applied struct {
	mu       sync.Mutex
	byLease  map[string][]string
	calls    int
	unstored bool
}

func (a *applied) apply(_ context.Context, lease string, part []byte, stored func(error)) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byLease == nil {
		a.byLease = make(map[string][]string)
	}
	a.calls++
	if a.unstored {
		return nil
	}
	a.byLease[lease] = append(a.byLease[lease], string(part))
	stored(nil)
	return nil
}

// of returns the parts applied of lease, in order.
func (a *applied) of(lease string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.byLease[lease])
}

func (a *applied) count() (leases, calls int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.byLease), a.calls
}

type testCluster struct {
	t *testing.T
	// dispatcherOnly starts the master without Apply: its results wait
	// for a Dispatcher's Resume.
	dispatcherOnly bool
	dir            string
	srv            *Server
	addr           string
	m              *Master
	got            *applied
	token          string
	timing         Timing // testTiming when zero
}

func newTestCluster(t *testing.T) *testCluster {
	c := &testCluster{t: t, dir: t.TempDir(), got: &applied{}, token: "test-token", addr: "127.0.0.1:0"}
	c.startMaster()
	t.Cleanup(c.stopMaster)
	return c
}

func (c *testCluster) startMaster() {
	t := c.t
	srv, err := StartServer(ServerOptions{Listen: c.addr, StoreDir: filepath.Join(c.dir, "nats"), Auth: Auth{Token: c.token}})
	if err != nil {
		t.Fatal(err)
	}
	c.srv = srv
	c.addr = strings.TrimPrefix(srv.URL(), "nats://") // the same port after a restart
	var apply ApplyFunc
	if !c.dispatcherOnly {
		apply = c.got.apply
	}
	timing := c.timing
	if timing.Heartbeat == 0 {
		timing = testTiming
	}
	c.m, err = StartMaster(context.Background(), MasterOptions{Server: srv, Dial: DialOptions{Auth: Auth{Token: c.token}}, Timing: timing, Apply: apply,
		Pins: []Pin{{Suffix: "example.fr", Tag: "eu"}}})
	if err != nil {
		t.Fatal(err)
	}
}

func (c *testCluster) stopMaster() {
	if c.m != nil {
		c.m.Close()
		c.srv.Close()
		c.m = nil
	}
}

// slave starts a slave; stop ends it and waits for its end.
func (c *testCluster) slave(id string, tags []string, work Work) (s *Slave, stop func()) {
	return c.runSlave(SlaveOptions{ID: id, Tags: tags, Robots: 2, Work: work})
}

// runSlave starts a slave with opt, by default on the master's server,
// its spool in the test's directory, at the tests' heartbeat; stop ends it
// and waits for its end (the test's cleanup does too).
func (c *testCluster) runSlave(opt SlaveOptions) (s *Slave, stop func()) {
	c.t.Helper()
	if opt.Dial.URL == "" {
		opt.Dial.URL = c.srv.URL()
	}
	opt.Dial.Auth = Auth{Token: c.token}
	opt.SpoolPath = filepath.Join(c.dir, opt.ID+".spool")
	opt.Heartbeat = testTiming.Heartbeat
	s, err := NewSlave(opt)
	if err != nil {
		c.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	c.t.Cleanup(stop)
	return s, stop
}

// echo is a Work that returns its lease, upper-cased, in two parts.
func echo(_ context.Context, lease []byte, _ func([]byte) error) (Outcome, error) {
	return Outcome{Parts: [][]byte{[]byte(strings.ToUpper(string(lease))), []byte("end")}, Pages: 1}, nil
}

func TestLeasesAreWorkedAndAppliedOnce(t *testing.T) {
	c := newTestCluster(t)
	c.slave("a", nil, echo)
	c.slave("b", nil, echo)
	ctx := context.Background()
	for i := range 10 {
		if err := c.m.Lease(ctx, testLease(fmt.Sprint("L", i), fmt.Sprintf("site%d.test", i), fmt.Sprint("lease ", i))); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "10 leases applied", func() bool { n, _ := c.got.count(); return n == 10 })
	waitFor(t, "an empty book", func() bool { return len(c.m.Book()) == 0 && c.m.Stats().Applied == 10 })
	_, calls := c.got.count()
	if calls != 20 {
		t.Errorf("Apply called %d times for 10 leases of two parts each", calls)
	}
	if got := c.got.byLease["L3"]; !slices.Equal(got, []string{"LEASE 3", "end"}) {
		t.Errorf("L3's result %q", got)
	}
	waitFor(t, "both slaves heard from", func() bool { return len(c.m.Slaves()) == 2 })
	st := c.m.Stats()
	if st.Published != 10 || st.Applied != 10 || st.InHand != 0 || st.MsgsIn == 0 {
		t.Errorf("master stats %+v", st)
	}
}

// A pinned site's lease goes to a slave with the tag, never to another.
func TestPinnedLeasesGoToTaggedSlaves(t *testing.T) {
	c := newTestCluster(t)
	var mu sync.Mutex
	worked := map[string]string{}
	work := func(id string) Work {
		return func(ctx context.Context, lease []byte, _ func([]byte) error) (Outcome, error) {
			mu.Lock()
			worked[string(lease)] = id
			mu.Unlock()
			return echo(ctx, lease, nil)
		}
	}
	c.slave("plain", nil, work("plain"))
	c.slave("europe", []string{"eu"}, work("europe"))
	ctx := context.Background()
	for i := range 6 {
		site := fmt.Sprintf("s%d.example.com", i)
		if i%2 == 0 {
			site = fmt.Sprintf("s%d.example.fr", i)
		}
		if err := c.m.Lease(ctx, testLease(fmt.Sprint("P", i), site, site)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "6 leases applied", func() bool { n, _ := c.got.count(); return n == 6 })
	mu.Lock()
	defer mu.Unlock()
	for site, by := range worked {
		if strings.HasSuffix(site, ".fr") && by != "europe" {
			t.Errorf("%s was worked by %s, not the eu slave", site, by)
		}
	}
}

// testLease is a lease of host, due in a minute.
func testLease(id, host, payload string) LeaseMsg {
	return LeaseMsg{ID: id, Site: "http://" + host, Host: host, Addr: netip.MustParseAddr("127.0.0.1"), Deadline: time.Now().Add(time.Minute), Payload: []byte(payload)}
}

// A slave that dies in the middle of a lease (its connection gone, no
// acknowledgement, no heartbeat) has its results in its spool; started
// again, it delivers them, and they are applied once. The lease is never
// handed to another slave meanwhile: giving it up is the master's call.
func TestASlaveKilledAndStartedAgainDeliversItsSpool(t *testing.T) {
	c := newTestCluster(t)
	started := make(chan struct{})
	release := make(chan struct{})
	a, stopA := c.slave("a", nil, func(ctx context.Context, lease []byte, _ func([]byte) error) (Outcome, error) {
		close(started)
		<-release
		return echo(ctx, lease, nil)
	})
	if err := c.m.Lease(context.Background(), testLease("L1", "one.test", "one")); err != nil {
		t.Fatal(err)
	}
	<-started
	b, _ := c.slave("b", nil, echo) // once a has the lease
	a.nc.Close()                    // as if killed: no heartbeat, no delivery
	close(release)
	stopA()
	if a.spool.Len() != 2 {
		t.Fatalf("the dead slave spooled %d parts, want 2", a.spool.Len())
	}
	a2, _ := c.slave("a", nil, echo)
	waitFor(t, "the lease applied", func() bool { n, _ := c.got.count(); return n == 1 })
	waitFor(t, "a's spool delivered", func() bool { return a2.spool.Len() == 0 })
	if _, calls := c.got.count(); calls != 2 {
		t.Errorf("Apply called %d times for one lease of two parts", calls)
	}
	if n := b.Stats().LeasesDone; n != 0 {
		t.Errorf("b worked %d leases: the dead slave's lease was handed over", n)
	}
}

// A lease that reaches a slave after its deadline is not worked: the
// master gives it up by itself.
func TestALeasePastItsDeadlineIsNotWorked(t *testing.T) {
	c := newTestCluster(t)
	worked := make(chan struct{}, 1)
	s, _ := c.slave("a", nil, func(ctx context.Context, lease []byte, _ func([]byte) error) (Outcome, error) {
		worked <- struct{}{}
		return echo(ctx, lease, nil)
	})
	l := testLease("late", "late.test", "x")
	l.Deadline = time.Now().Add(-time.Second)
	if err := c.m.Lease(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lease seen stale", func() bool { return s.Stats().Stale == 1 })
	select {
	case <-worked:
		t.Fatal("a lease past its deadline was worked")
	default:
	}
	c.m.Forget(context.Background(), "late")
	if len(c.m.Book()) != 0 {
		t.Errorf("book after Forget: %+v", c.m.Book())
	}
}

// A master killed and started again finds its leases in hand in the book,
// and applies their results when the slave delivers them.
func TestAMasterStartedAgainKeepsItsLeases(t *testing.T) {
	c := newTestCluster(t)
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	started := make(chan struct{}, 1)
	s, _ := c.slave("a", nil, func(ctx context.Context, lease []byte, _ func([]byte) error) (Outcome, error) {
		started <- struct{}{}
		<-release
		return echo(ctx, lease, nil)
	})
	// Before the slave's stop (cleanups run last first): a test that
	// fails before it lets the work end does not wait on it for ever.
	t.Cleanup(free)
	l := testLease("L1", "one.test", "one")
	l.Addr = netip.MustParseAddr("127.0.0.9")
	if err := c.m.Lease(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	<-started
	c.stopMaster()
	c.startMaster()
	book := c.m.Book()
	if len(book) != 1 || book[0].ID != "L1" || book[0].Site != "http://one.test" || book[0].Addr != "127.0.0.9" {
		t.Fatalf("book after restart: %+v", book)
	}
	free()
	// The lease leaves the book once its last part is stored, which may
	// come after the slave's spool emptied (its parts in the stream).
	waitFor(t, "the lease applied by the new master and out of its book", func() bool { return len(c.m.Book()) == 0 && c.m.Stats().Applied == 1 })
	if got := c.got.of("L1"); !slices.Equal(got, []string{"ONE", "end"}) {
		t.Errorf("L1's result %q", got)
	}
	waitFor(t, "the slave's spool empty", func() bool { return s.spool.Len() == 0 })
}

// A result is acknowledged only once the crawl's store has it: a master
// killed after taking a result and before storing it finds the lease in
// its book and the result in its stream when started again, and applies it
// then.
func TestAResultIsAcknowledgedOnlyOnceStored(t *testing.T) {
	c := newTestCluster(t)
	c.got.unstored = true
	c.slave("a", nil, echo)
	if err := c.m.Lease(context.Background(), testLease("L1", "one.test", "one")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the result's two parts taken", func() bool { _, calls := c.got.count(); return calls == 2 })
	if len(c.m.Book()) != 1 || c.m.Stats().Applied != 0 {
		t.Fatalf("a result taken and not stored left the book: %+v, stats %+v", c.m.Book(), c.m.Stats())
	}
	c.stopMaster() // no store, no acknowledgement: as if killed
	c.got.mu.Lock()
	c.got.unstored = false
	c.got.mu.Unlock()
	c.startMaster()
	waitFor(t, "the result applied by the new master", func() bool { n, _ := c.got.count(); return n == 1 })
	waitFor(t, "the book empty and the result acknowledged", func() bool { return len(c.m.Book()) == 0 && c.m.Stats().Applied == 1 })
	if got := c.got.byLease["L1"]; !slices.Equal(got, []string{"ONE", "end"}) {
		t.Errorf("L1's result %q", got)
	}
	waitFor(t, "the result stream empty", func() bool {
		s, err := c.m.js.Stream(context.Background(), ResultStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(context.Background())
		return err == nil && info.State.Msgs == 0
	})
}

func TestPinMatches(t *testing.T) {
	tests := []struct {
		pin  Pin
		host string
		addr string
		want bool
	}{
		{Pin{Suffix: ".fr"}, "www.example.fr", "", true},
		{Pin{Suffix: "example.fr"}, "example.fr", "", true},
		{Pin{Suffix: "example.fr"}, "badexample.fr", "", false},
		{Pin{Prefix: netip.MustParsePrefix("10.0.0.0/8")}, "x.test", "10.1.2.3", true},
		{Pin{Prefix: netip.MustParsePrefix("10.0.0.0/8")}, "x.test", "11.1.2.3", false},
		{Pin{}, "x.test", "10.1.2.3", false},
	}
	for _, tt := range tests {
		var a netip.Addr
		if tt.addr != "" {
			a = netip.MustParseAddr(tt.addr)
		}
		if got := tt.pin.Matches(tt.host, a); got != tt.want {
			t.Errorf("%+v.Matches(%q, %q) = %v", tt.pin, tt.host, tt.addr, got)
		}
	}
}

// cutter forwards TCP connections to a target and can cut them all and
// refuse new ones: a network cut on loopback.
type cutter struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	cutOff bool
}

func newCutter(t *testing.T, target string) *cutter {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &cutter{l: l, target: target}
	t.Cleanup(func() { l.Close(); c.cut(true) })
	go func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			off := c.cutOff
			c.mu.Unlock()
			out, err := net.Dial("tcp", target)
			if off || err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns = append(c.conns, in, out)
			c.mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	return c
}

// cut closes every connection and, while off, refuses new ones.
func (c *cutter) cut(off bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cutOff = off
	if off {
		for _, cn := range c.conns {
			cn.Close()
		}
		c.conns = nil
	}
}

// A slave cut off from its master finishes its lease, keeps the result in
// its spool, and delivers it once the network is back.
func TestASlaveCutOffDeliversWhenBack(t *testing.T) {
	c := newTestCluster(t)
	link := newCutter(t, strings.TrimPrefix(c.srv.URL(), "nats://"))
	started := make(chan struct{})
	release := make(chan struct{})
	s, _ := c.runSlave(SlaveOptions{Dial: DialOptions{URL: "nats://" + link.l.Addr().String()}, ID: "far", Robots: 1,
		Work: func(ctx context.Context, lease []byte, _ func([]byte) error) (Outcome, error) {
			close(started)
			<-release
			return echo(ctx, lease, nil)
		}})
	if err := c.m.Lease(context.Background(), testLease("L1", "far.test", "far")); err != nil {
		t.Fatal(err)
	}
	<-started
	link.cut(true)
	waitFor(t, "the slave seeing the cut", func() bool { return !s.Stats().Connected })
	close(release)
	waitFor(t, "the result spooled", func() bool { return s.Stats().LeasesDone == 1 && s.spool.Len() == 2 })
	if n, _ := c.got.count(); n != 0 {
		t.Fatal("a result crossed the cut")
	}
	link.cut(false)
	waitFor(t, "the result applied", func() bool { n, _ := c.got.count(); return n == 1 })
	waitFor(t, "the spool emptied", func() bool { return s.spool.Len() == 0 })
}

// A lease delivered twice (a NATS server killed with kill -9 may deliver
// again a lease it had delivered: its consumer's state is not synced at
// every delivery) is worked by one slave only: the first claims it in the
// bucket, the other leaves it.
func TestALeaseDeliveredTwiceIsWorkedOnce(t *testing.T) {
	c := newTestCluster(t)
	l := testLease("L1", "twice.test", "twice")
	if err := c.m.Lease(context.Background(), l); err != nil {
		t.Fatal(err)
	}
	// The same lease message again, under another message id.
	msg := nats.NewMsg(leaseSubject(""))
	msg.Header.Set(hdrLease, l.ID)
	msg.Header.Set(hdrDead, l.Deadline.Format(time.RFC3339Nano))
	msg.Data = Compress(l.Payload)
	if _, err := c.m.js.PublishMsg(context.Background(), msg, jetstream.WithMsgID("L1-again")); err != nil {
		t.Fatal(err)
	}
	var worked atomic.Int64
	var mu sync.Mutex
	var slaves []*Slave
	left := func() bool {
		mu.Lock()
		defer mu.Unlock()
		var n int64
		for _, s := range slaves {
			n += s.Stats().Claimed
		}
		return n == 1
	}
	work := func(ctx context.Context, lease []byte, _ func([]byte) error) (Outcome, error) {
		worked.Add(1)
		// Held until the copy has been seen and left.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for give := time.Now().Add(2 * time.Minute); !left() && time.Now().Before(give); {
			<-tick.C
		}
		return echo(ctx, lease, nil)
	}
	for _, id := range []string{"a", "b"} {
		s, _ := c.slave(id, nil, work)
		mu.Lock()
		slaves = append(slaves, s)
		mu.Unlock()
	}
	waitFor(t, "the copy left", left)
	waitFor(t, "the lease applied", func() bool { n, _ := c.got.count(); return n == 1 })
	if n := worked.Load(); n != 1 {
		t.Errorf("the lease was worked %d times", n)
	}
}
