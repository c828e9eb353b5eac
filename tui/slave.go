package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"lidi/engine/cluster"
)

// Slave is what the slave console shows of a light slave.
// *cluster.Slave implements it; its methods must be safe for concurrent
// use.
type Slave interface {
	Stats() cluster.SlaveStats
	Events() []cluster.SlaveLogEntry
}

// RunSlave shows a light slave's console (its leases, rates and master
// connection, and what it did) until the user quits or ctx is done. Like
// Run, it does not stop the slave: the caller does.
func RunSlave(ctx context.Context, s Slave, opt Options) error {
	return runProgram(ctx, NewSlave(s, opt), opt)
}

// SlaveModel is the slave console as a Bubble Tea model: two panels, the
// slave's figures and its log. The zero value is not usable; use NewSlave.
// A SlaveModel is not safe for concurrent use.
type SlaveModel struct {
	s      Slave
	opt    Options
	keys   KeyMap
	styles Styles
	com    *common
	help   help.Model

	figures *slaveFiguresPanel
	log     *slaveLogPanel
}

// slaveStatsMsg carries a slave snapshot polled off the event loop.
type slaveStatsMsg struct {
	st     cluster.SlaveStats
	events []cluster.SlaveLogEntry
	at     time.Time
}

// NewSlave returns the slave console's model for s.
func NewSlave(s Slave, opt Options) *SlaveModel {
	if opt.Refresh <= 0 {
		opt.Refresh = 250 * time.Millisecond
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	m := &SlaveModel{s: s, opt: opt, keys: DefaultKeyMap(), styles: DefaultStyles()}
	if opt.Keys != nil {
		m.keys = *opt.Keys
	}
	if opt.Styles != nil {
		m.styles = *opt.Styles
	}
	m.com = &common{styles: &m.styles, keys: &m.keys, now: opt.Now}
	m.help = help.New()
	m.help.Styles = m.styles.Help
	m.figures = &slaveFiguresPanel{com: m.com}
	m.log = &slaveLogPanel{com: m.com}
	return m
}

func (m *SlaveModel) poll(d time.Duration) tea.Cmd {
	s, now := m.s, m.opt.Now
	return tea.Tick(d, func(time.Time) tea.Msg { return slaveStatsMsg{st: s.Stats(), events: s.Events(), at: now()} })
}

// Init starts polling the slave.
func (m *SlaveModel) Init() tea.Cmd { return m.poll(time.Millisecond) }

// Update routes a message: a size to the panels, a snapshot to both, keys
// to the log (scrolling) or to quitting.
func (m *SlaveModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.com.width, m.com.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		body, figH := m.layout()
		m.figures.setSize(msg.Width, max(figH-1, 0), false)
		m.log.setSize(msg.Width, max(body-figH-1, 0), false)
	case slaveStatsMsg:
		m.figures.observe(msg.st, msg.at)
		m.log.events = msg.events
		return m, m.poll(m.opt.Refresh)
	case tea.KeyPressMsg:
		if key.Matches(msg, m.keys.Quit) || msg.String() == "ctrl+c" {
			return m, tea.Quit
		}
		cmd, _ := m.log.update(msg)
		return m, cmd
	}
	return m, nil
}

// View draws the console on the alternate screen.
func (m *SlaveModel) View() tea.View { return altScreen(m.render(), "lidi slave") }

func (m *SlaveModel) render() string {
	w, h := m.com.width, m.com.height
	if w <= 0 || h <= 0 {
		return ""
	}
	st := m.figures.st
	conn := m.styles.Good.Render("connected")
	switch {
	case st.Stopping:
		conn = m.styles.Warn.Render("STOPPING: leases end after their page in flight, the rest handed back")
	case !st.Connected:
		conn = m.styles.Warn.Render("DISCONNECTED: results wait in the spool")
	case st.Halted && st.MasterState == "stopping":
		conn = m.styles.Warn.Render("connected, the master is STOPPING: leases end after their page in flight")
	case st.Halted:
		conn = m.styles.Warn.Render("connected, PAUSED: the master's crawl is paused")
	case !st.Free:
		conn = m.styles.Warn.Render("connected, no answer from the master: no request started")
	}
	head := pad(m.styles.Brand.Render(" lidi slave ")+"  "+m.styles.Value.Render(clean(st.ID))+"  "+m.styles.Label.Render("master ")+
		m.styles.Value.Render(clean(st.Master))+"  "+conn, w)
	body, figH := m.layout()
	mid := frame(&m.styles, m.figures, w, figH, false)
	if rest := body - figH; rest > 0 {
		mid += "\n" + frame(&m.styles, m.log, w, rest, true)
	}
	keys := append([]key.Binding{m.keys.Quit}, m.log.helpKeys()...)
	return cut(head, w) + "\n" + block(mid, w, body) + "\n" + pad(m.help.ShortHelpView(keys), w)
}

// layout returns the lines between the header and the help line, and
// how many of them the figures panel takes, title included (the log has
// the rest).
func (m *SlaveModel) layout() (body, figH int) {
	body = max(m.com.height-2, 0)
	return body, min(slaveFigureLines+1, body)
}

// slaveFigureLines is the figures panel's height without its title.
const slaveFigureLines = 4

// slaveFiguresPanel shows a slave's leases, rates and traffic.
type slaveFiguresPanel struct {
	com  *common
	w, h int

	st     cluster.SlaveStats
	rate   float64 // pages per second over the last polls
	lastAt time.Time
	last   int64
}

// observe takes a snapshot and updates the page rate (over at least a
// second, so it does not jump at every poll).
func (p *slaveFiguresPanel) observe(st cluster.SlaveStats, at time.Time) {
	p.st = st
	if p.lastAt.IsZero() {
		p.lastAt, p.last = at, st.Pages
		return
	}
	if d := at.Sub(p.lastAt); d >= time.Second {
		p.rate = float64(st.Pages-p.last) / d.Seconds()
		p.lastAt, p.last = at, st.Pages
	}
}

func (p *slaveFiguresPanel) setSize(w, h int, _ bool)               { p.w, p.h = w, h }
func (p *slaveFiguresPanel) update(tea.KeyPressMsg) (tea.Cmd, bool) { return nil, false }
func (p *slaveFiguresPanel) helpKeys() []key.Binding                { return nil }
func (p *slaveFiguresPanel) title() (string, string) {
	return "Leases", fmt.Sprintf("%d robots", p.st.Robots)
}

func (p *slaveFiguresPanel) view() string {
	c, st := p.com, p.st
	spooled := c.fig(count(int64(st.Spooled)), "spooled")
	if st.Spooled > 0 && !st.Connected {
		spooled = c.styles.Warn.Render(count(int64(st.Spooled))) + " " + c.styles.Label.Render("spooled")
	}
	return strings.Join([]string{
		c.fit(p.w, c.fig(count(int64(st.Leases)), "in hand"), c.fig(count(st.LeasesDone), "done"), c.fig(count(st.Stale), "too late")),
		c.fit(p.w, c.fig(count(st.Pages), "pages"), c.fig(rate(p.rate), "pages/s"), c.fig(count(st.Failures), "failures")),
		c.fit(p.w, spooled, c.fig(count(st.Delivered), "delivered"), c.fig(count(st.Duplicates), "already there")),
		c.fit(p.w, c.fig(bytesSI(float64(st.BytesOut)), "sent"), c.fig(bytesSI(float64(st.BytesIn)), "received"),
			c.fig(count(int64(st.MsgsOut+st.MsgsIn)), "messages")),
	}, "\n")
}

// slaveLogPanel shows what the slave did, newest at the bottom.
type slaveLogPanel struct {
	com    *common
	w, h   int
	back   int // lines scrolled back from the newest
	events []cluster.SlaveLogEntry
}

func (p *slaveLogPanel) setSize(w, h int, _ bool) { p.w, p.h = w, h }
func (p *slaveLogPanel) title() (string, string)  { return "Log", "" }
func (p *slaveLogPanel) helpKeys() []key.Binding {
	return []key.Binding{withHelp(p.com.keys.Up, "↑/↓", "older/newer")}
}

func (p *slaveLogPanel) update(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	switch {
	case key.Matches(msg, p.com.keys.Up):
		p.back++
	case key.Matches(msg, p.com.keys.Down):
		p.back--
	default:
		return nil, false
	}
	p.back = min(max(p.back, 0), max(len(p.events)-p.h, 0))
	return nil, true
}

func (p *slaveLogPanel) view() string {
	if len(p.events) == 0 {
		return p.com.dim("nothing yet")
	}
	end := max(len(p.events)-p.back, 0)
	start := max(end-p.h, 0)
	var lines []string
	for _, e := range p.events[start:end] {
		lines = append(lines, cut(p.com.dim(clock(e.Time))+" "+clean(e.Text), p.w))
	}
	return strings.Join(lines, "\n")
}
