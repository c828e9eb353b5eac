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
// command that starts a slave of this master.
type Cluster interface {
	Slaves() []cluster.SlaveInfo
	Events() []cluster.SlaveEvent
	Stats() cluster.MasterStats
	Join() string
}

// clusterSnapshot is a Cluster's state polled at one time.
type clusterSnapshot struct {
	join   string
	slaves []cluster.SlaveInfo
	events []cluster.SlaveEvent
	stats  cluster.MasterStats
}

// clusterMsg carries a cluster snapshot polled off the event loop.
type clusterMsg struct{ snap clusterSnapshot }

// pollCluster asks the cluster for a snapshot after d.
func pollCluster(cl Cluster, d time.Duration) tea.Cmd {
	return tea.Tick(d, func(time.Time) tea.Msg {
		return clusterMsg{clusterSnapshot{join: cl.Join(), slaves: cl.Slaves(), events: cl.Events(), stats: cl.Stats()}}
	})
}

// slavesPanel shows a master's slaves: each one's id, address, leases in
// hand, pages per second, last heartbeat and failures. It is on screen only
// when the crawl is a cluster's master.
type slavesPanel struct {
	com    *common
	w, h   int
	zoomed bool
	scroll scroller
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
	if len(cl.slaves) == 0 {
		return c.dim("no slave connected; start one with:") + "\n" + cl.join
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
	lines := []string{c.styles.Column.Render(cut(head, p.w))}
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
	from, to := p.scroll.window(len(rows), max(p.h-1, 0))
	lines = append(lines, rows[from:to]...)
	return strings.Join(lines, "\n")
}
