package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"lidi/engine/cluster"
)

// Cluster is what the console shows of a cluster when the crawl is its
// master; its methods must be safe for concurrent use. Join is the exact
// command that starts a slave of this master. Waiting returns the leases
// out on slaves, what a stopping crawl waits for (a lease of a slave
// declared gone is not among them). Stop stops the crawl while the
// console stays open on what it waits for (the first q with leases out);
// Abandon stops waiting, the leases kept for the crawl's next run (the
// second q).
type Cluster interface {
	Slaves() []cluster.SlaveInfo
	Events() []cluster.SlaveEvent
	Stats() cluster.MasterStats
	Join() string
	Waiting() []cluster.Waiting
	Stop()
	Abandon()
}

// clusterSnapshot is a Cluster's state polled at one time.
type clusterSnapshot struct {
	join    string
	slaves  []cluster.SlaveInfo
	events  []cluster.SlaveEvent
	stats   cluster.MasterStats
	waiting []cluster.Waiting
}

// clusterMsg carries a cluster snapshot polled off the event loop.
type clusterMsg struct{ snap clusterSnapshot }

// pollCluster asks the cluster for a snapshot after d.
func pollCluster(cl Cluster, d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg {
		return clusterMsg{clusterSnapshot{join: cl.Join(), slaves: cl.Slaves(), events: cl.Events(), stats: cl.Stats(), waiting: cl.Waiting()}}
	})
}

// clusterQuit handles q (or ctrl+c) on a cluster's master, and reports
// whether it did: the first, with leases out on slaves, stops the crawl
// and keeps the console open, the slaves panel zoomed on the leases it
// waits for; the console quits when none is left. The second stops at
// once: the leases stay in the master's book for the next run.
func (m *Model) clusterQuit() (tea.Cmd, bool) {
	cl := m.opt.Cluster
	p := m.panels[slavesPanelID].(*slavesPanel)
	switch {
	case cl == nil:
		return nil, false
	case p.stopping:
		m.quitting = true
		return tea.Sequence(func() tea.Msg { cl.Abandon(); return nil }, tea.Quit), true
	case len(m.cluster.waiting) == 0:
		return nil, false
	}
	p.stopping = true
	m.focus = slavesPanelID
	m.setZoom(true)
	return func() tea.Msg { cl.Stop(); return nil }, true
}

// clusterPolled quits a stopping master's console once no lease is out.
func (m *Model) clusterPolled() tea.Cmd {
	if p := m.panels[slavesPanelID].(*slavesPanel); p.stopping && len(m.cluster.waiting) == 0 {
		m.quitting = true
		return tea.Quit
	}
	return nil
}

// clusterStatus is the status line of a master stopping while leases are
// out; "" otherwise.
func (m *Model) clusterStatus() string {
	if p := m.panels[slavesPanelID].(*slavesPanel); !p.stopping || m.quitting {
		return ""
	}
	return fmt.Sprintf("stopping: waiting for %d leases on slaves · q again stops now, the leases kept for the next run", len(m.cluster.waiting))
}

// slavesPanel shows a master's slaves: each one's id, address, leases in
// hand, pages per second, last heartbeat and failures. It is on screen only
// when the crawl is a cluster's master.
type slavesPanel struct {
	com    *common
	w, h   int
	zoomed bool
	scroll scroller
	// stopping: the crawl stops and waits for the leases out on slaves,
	// listed first.
	stopping bool
}

func (p *slavesPanel) setSize(w, h int, zoomed bool) {
	if zoomed != p.zoomed {
		p.scroll = scroller{}
	}
	p.w, p.h, p.zoomed = w, h, zoomed
}

func (p *slavesPanel) helpKeys() []key.Binding {
	if p.zoomed {
		return []key.Binding{withHelp(p.com.keys.Down, "↑/↓", "scroll")}
	}
	return nil
}

func (p *slavesPanel) update(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if !p.zoomed {
		return nil, false
	}
	return nil, p.scroll.key(p.com.keys, msg, p.h-1)
}

func (p *slavesPanel) title() (string, string) {
	cl := p.com.cluster
	if cl == nil {
		return "Slaves", ""
	}
	robots := 0
	for _, s := range cl.slaves {
		robots += s.Robots
	}
	return "Slaves", fields(fmt.Sprintf("%d connected", len(cl.slaves)), count(int64(robots))+" robots",
		count(int64(cl.stats.InHand))+" leases out")
}

// slaveColumns are the table's headings and widths (the id takes the rest).
var slaveColumns = []struct {
	name string
	w    int
}{{"address", 21}, {"leases", 6}, {"pages/s", 7}, {"heartbeat", 9}, {"fails", 5}}

func (p *slavesPanel) view() string {
	c, cl := p.com, p.com.cluster
	if cl == nil {
		return ""
	}
	var lines []string
	if p.stopping {
		lines = p.waitingLines()
	}
	if len(cl.slaves) == 0 {
		lines = append(lines, c.dim("no slave connected; start one with:"), cl.join)
		return strings.Join(lines, "\n")
	}
	idW := p.w
	for _, col := range slaveColumns {
		idW -= col.w + 1
	}
	idW = max(idW, 6)
	head := pad("slave", idW)
	for _, col := range slaveColumns {
		head += " " + padLeft(col.name, col.w)
	}
	lines = append(lines, c.styles.Column.Render(cut(head, p.w)))
	now := c.now()
	rows := make([]string, 0, len(cl.slaves))
	for _, s := range cl.slaves {
		beat := span(now.Sub(s.LastHeartbeat).Round(100*time.Millisecond)) + " ago"
		fail := count(s.Failures)
		if s.Failures > 0 {
			fail = c.styles.Warn.Render(padLeft(fail, slaveColumns[4].w))
		} else {
			fail = padLeft(fail, slaveColumns[4].w)
		}
		id := s.ID
		if s.Stopping {
			id += " (stopping)"
		}
		row := pad(cut(id, idW), idW) + " " + padLeft(cut(s.Addr, slaveColumns[0].w), slaveColumns[0].w) +
			" " + padLeft(count(int64(s.Leases)), slaveColumns[1].w) + " " + padLeft(rate(s.PagesPerSec), slaveColumns[2].w) +
			" " + padLeft(beat, slaveColumns[3].w) + " " + fail
		rows = append(rows, row)
	}
	from, to := p.scroll.window(len(rows), max(p.h-len(lines), 0))
	lines = append(lines, rows[from:to]...)
	return strings.Join(lines, "\n")
}

// waitingLines list the leases a stopping master waits for: each one's
// site, slave and the time the master gives it up.
func (p *slavesPanel) waitingLines() []string {
	c, ws := p.com, p.com.cluster.waiting
	out := []string{c.styles.Warn.Render(cut(fmt.Sprintf("stopping: waiting for %d leases on slaves", len(ws)), p.w)),
		c.dim(cut("each ends after its page in flight, its pages delivered and the rest handed back", p.w))}
	// Half the panel at most: the slaves stay in view.
	room := max(p.h/2-len(out), 1)
	for i, w := range ws {
		if i == room-1 && len(ws) > room {
			out = append(out, c.dim(fmt.Sprintf("… and %d more", len(ws)-i)))
			break
		}
		slave := "no slave has named it yet"
		if w.Slave != "" {
			slave = "slave " + w.Slave
		}
		out = append(out, cut(fmt.Sprintf("lease %s of %s, %s, until %s", w.ID, w.Site, slave, w.Until.Format(time.TimeOnly)), p.w))
	}
	return append(out, "")
}
