package tui

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"lidi/internal/testkit"

	"lidi/engine/cluster"
)

// fakeCluster is a master's cluster as the console polls it. Its waiting
// list may change while a program polls it.
type fakeCluster struct {
	slaves []cluster.SlaveInfo
	events []cluster.SlaveEvent

	mu              sync.Mutex
	waiting         []cluster.Waiting
	stops, abandons int
}

func (f *fakeCluster) Slaves() []cluster.SlaveInfo  { return f.slaves }
func (f *fakeCluster) Events() []cluster.SlaveEvent { return f.events }
func (f *fakeCluster) Stats() cluster.MasterStats   { return cluster.MasterStats{InHand: 3} }
func (f *fakeCluster) Waiting() []cluster.Waiting {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.waiting)
}
func (f *fakeCluster) Stop()    { f.mu.Lock(); f.stops++; f.mu.Unlock() }
func (f *fakeCluster) Abandon() { f.mu.Lock(); f.abandons++; f.waiting = nil; f.mu.Unlock() }
func (f *fakeCluster) calls() (stops, abandons int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.stops, f.abandons
}
func (f *fakeCluster) setWaiting(ws []cluster.Waiting) { f.mu.Lock(); f.waiting = ws; f.mu.Unlock() }
func (f *fakeCluster) Join() string {
	return "lidi slave --master nats://master.test:4222 --token-file crawl.db.cluster-token"
}

// On a cluster's master the console shows the slaves and puts their joins,
// leaves and lease expiries among the events, each once.
func TestMasterConsoleShowsSlaves(t *testing.T) {
	now := t0.Add(time.Hour + 5*time.Minute)
	cl := &fakeCluster{
		slaves: []cluster.SlaveInfo{
			{ID: "s1", Addr: "10.0.0.7:51200", Robots: 4, Leases: 2, PagesPerSec: 12.5, LastHeartbeat: now.Add(-time.Second)},
			{ID: "s2", Addr: "10.0.0.8:51300", Robots: 4, Leases: 1, Failures: 3, LastHeartbeat: now.Add(-2 * time.Second)},
		},
		events: []cluster.SlaveEvent{
			{Time: now.Add(-time.Minute), Kind: cluster.SlaveJoined, Slave: "s1", Text: "slave s1 joined from 10.0.0.7:51200"},
			{Time: now.Add(-time.Second), Kind: cluster.LeaseExpired, Text: "lease 9 of http://x.test expired"},
		},
	}
	m := New(newFake(awkward()), Options{Now: func() time.Time { return now }, Cluster: cl})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(statsMsg{m.c.Stats()})
	snap := clusterSnapshot{slaves: cl.Slaves(), events: cl.Events(), stats: cl.Stats()}
	m.Update(clusterMsg{snap})
	m.Update(clusterMsg{snap}) // polled again: no event twice
	screen := ansi.Strip(m.View().Content)
	for _, want := range []string{"Slaves", "2 connected", "8 robots", "3 leases out", "s1", "10.0.0.7:51200", "12.5", "1.0s ago", "s2", "slave s1 joined", "lease 9 of http://x.test expired"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	if n := strings.Count(screen, "slave s1 joined"); n != 1 {
		t.Errorf("the join shows %d times", n)
	}
	// Without a cluster there is no slaves panel.
	plain := New(newFake(awkward()), Options{Now: func() time.Time { return now }})
	plain.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	if strings.Contains(ansi.Strip(plain.View().Content), "Slaves") {
		t.Error("a slaves panel without a cluster")
	}
}

type fakeSlave struct {
	st     cluster.SlaveStats
	events []cluster.SlaveLogEntry
}

func (f *fakeSlave) Stats() cluster.SlaveStats       { return f.st }
func (f *fakeSlave) Events() []cluster.SlaveLogEntry { return f.events }

func TestSlaveConsole(t *testing.T) {
	now := t0
	s := &fakeSlave{st: cluster.SlaveStats{ID: "s1", Master: "nats://10.0.0.1:4222", Connected: true, Free: true, Robots: 4, Leases: 2, LeasesDone: 17, Pages: 340, Spooled: 0, Delivered: 17, BytesOut: 2 << 20},
		events: []cluster.SlaveLogEntry{{Time: now, Text: "connected to the master again"}}}
	m := NewSlave(s, Options{Now: func() time.Time { return now }})
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 16})
	m.Update(slaveStatsMsg{st: s.Stats(), events: s.Events(), at: now})
	s.st.Pages = 400
	now = now.Add(2 * time.Second)
	m.Update(slaveStatsMsg{st: s.Stats(), events: s.Events(), at: now})
	screen := ansi.Strip(m.View().Content)
	for _, want := range []string{"lidi slave", "s1", "nats://10.0.0.1:4222", "connected", "2 in hand", "17 done", "400 pages", "30.0 pages/s", "connected to the master again"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	for _, c := range []struct{ state, want string }{{"paused", "PAUSED"}, {"stopping", "the master is STOPPING"}} {
		s.st.Halted, s.st.MasterState = true, c.state
		m.Update(slaveStatsMsg{st: s.Stats(), events: s.Events(), at: now})
		if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, c.want) {
			t.Errorf("a slave whose master is %s:\n%s", c.state, screen)
		}
	}
	s.st.Stopping = true
	m.Update(slaveStatsMsg{st: s.Stats(), events: s.Events(), at: now})
	if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, "STOPPING: leases end") {
		t.Errorf("a stopping slave:\n%s", screen)
	}
	s.st.Stopping = false
	s.st.Connected, s.st.Spooled = false, 3
	m.Update(slaveStatsMsg{st: s.Stats(), events: s.Events(), at: now})
	if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, "DISCONNECTED") || !strings.Contains(screen, "3 spooled") {
		t.Errorf("a slave cut off from its master:\n%s", screen)
	}
	if _, cmd := m.Update(keyMsg("q")); cmd == nil {
		t.Error("q does not quit")
	}
}

// stoppingCluster is a master with two leases out: one on s1, one no
// slave has named yet.
func stoppingCluster(now time.Time) *fakeCluster {
	return &fakeCluster{
		slaves: []cluster.SlaveInfo{{ID: "s1", Addr: "10.0.0.7:51200", Robots: 4, Leases: 1, LastHeartbeat: now.Add(-time.Second)}},
		waiting: []cluster.Waiting{
			{ID: "412", Site: "http://site32.test", Slave: "s1", Until: now.Add(91 * time.Second)},
			{ID: "417", Site: "http://site40.test", Until: now.Add(89 * time.Second)},
		},
	}
}

// q on a master with leases out stops the crawl but keeps the console open
// on what it waits for: each lease, its slave, until when; the console
// quits by itself once none is left.
func TestMasterConsoleShowsWhatItWaitsFor(t *testing.T) {
	now := t0.Add(time.Hour)
	cl := stoppingCluster(now)
	m := New(newFake(awkward()), Options{Now: func() time.Time { return now }, Cluster: cl})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(statsMsg{m.c.Stats()})
	poll := func() tea.Cmd {
		_, cmd := m.Update(clusterMsg{clusterSnapshot{slaves: cl.Slaves(), stats: cl.Stats(), waiting: cl.Waiting()}})
		return cmd
	}
	poll()
	_, cmd := m.Update(keyMsg("q"))
	if cmd == nil || m.quitting {
		t.Fatal("q with leases out: no stop, or the console quits at once")
	}
	cmd() // Stop, off the event loop
	if stops, _ := cl.calls(); stops != 1 {
		t.Fatalf("Stop called %d times", stops)
	}
	screen := ansi.Strip(m.View().Content)
	for _, want := range []string{"stopping: waiting for 2 leases on slaves", "q again stops now",
		"lease 412 of http://site32.test, slave s1, until " + now.Add(91*time.Second).Format(time.TimeOnly),
		"lease 417 of http://site40.test, no slave has named it yet", "10.0.0.7:51200"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	cl.setWaiting(cl.Waiting()[:1])
	poll()
	if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, "waiting for 1 leases") || strings.Contains(screen, "lease 417") {
		t.Errorf("a lease in, the screen still shows it:\n%s", screen)
	}
	cl.setWaiting(nil)
	if cmd := poll(); cmd == nil || !m.quitting {
		t.Error("the last lease in, the console does not quit")
	}
	if _, abandons := cl.calls(); abandons != 0 {
		t.Errorf("Abandon called %d times", abandons)
	}
}

// The same in a running program (teatest): a second q stops at once, the
// leases abandoned to the next run.
func TestMasterConsoleSecondQStopsAtOnce(t *testing.T) {
	now := t0.Add(time.Hour)
	cl := stoppingCluster(now)
	c := newFake(awkward())
	m := New(c, Options{Refresh: 2 * time.Millisecond, Now: func() time.Time { return now }, Cluster: cl})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	settle(t, c)
	tm.Send(keyMsg("q"))
	testkit.WaitFor(t, time.Minute, "Stop", func() bool { stops, _ := cl.calls(); return stops == 1 })
	// A new size repaints the whole screen; the renderer may move the
	// cursor over blanks, so the text is compared without them.
	tm.Send(tea.WindowSizeMsg{Width: 110, Height: 40})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool {
		text := strings.Join(strings.Fields(ansi.Strip(string(b))), "")
		return strings.Contains(text, "stopping:waitingfor2leasesonslaves") && strings.Contains(text, "lease412ofhttp://site32.test,slaves1")
	}, teatest.WithDuration(time.Minute))
	tm.Send(keyMsg("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(time.Minute)).(*Model)
	if _, abandons := cl.calls(); abandons != 1 || !fm.quitting {
		t.Errorf("after a second q: %d calls to Abandon, quitting %v", abandons, fm.quitting)
	}
}

// Without leases out, q quits at once, as on a single process.
func TestMasterConsoleQuitsAtOnceWithNoLeaseOut(t *testing.T) {
	now := t0.Add(time.Hour)
	cl := stoppingCluster(now)
	cl.waiting = nil
	m := New(newFake(awkward()), Options{Now: func() time.Time { return now }, Cluster: cl})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(clusterMsg{clusterSnapshot{slaves: cl.Slaves()}})
	if _, cmd := m.Update(keyMsg("q")); cmd == nil || !m.quitting {
		t.Error("q does not quit")
	}
	if stops, abandons := cl.calls(); stops != 0 || abandons != 0 {
		t.Errorf("Stop %d, Abandon %d: the crawl is stopped by the caller once the console quits", stops, abandons)
	}
}
