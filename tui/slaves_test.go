package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"lidi/engine/cluster"
)

// fakeCluster is a master's cluster as the console polls it.
type fakeCluster struct {
	slaves []cluster.SlaveInfo
	events []cluster.SlaveEvent
}

func (f *fakeCluster) Slaves() []cluster.SlaveInfo  { return f.slaves }
func (f *fakeCluster) Events() []cluster.SlaveEvent { return f.events }
func (f *fakeCluster) Stats() cluster.MasterStats   { return cluster.MasterStats{InHand: 3} }
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
