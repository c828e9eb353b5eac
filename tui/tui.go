// Package tui is lidi's terminal console: a full-screen view of a running
// crawl that refreshes a few times a second and takes keys to steer it.
//
// The console reads the crawl only through Crawler.Stats, polled on a
// timer, and steers it only through the other Crawler methods, each called
// from a command off the event loop, so the crawl never waits on the screen
// and a slow engine call never freezes the screen.
//
// Run is all a program needs:
//
//	err := tui.Run(ctx, eng, tui.Options{})
//	// the user pressed q: stop the engine, which saves its state
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"lidi/engine"
	"lidi/engine/record"
)

// Crawler is what the console needs of a crawl. *engine.Engine implements
// it. Its methods are called from goroutines other than the caller's, one
// at a time per method, so they must be safe for concurrent use.
type Crawler interface {
	// Stats returns a snapshot of the crawl.
	Stats() engine.Stats
	// Pause stops new fetches from starting and saves the crawl's state;
	// visits in flight finish their current page.
	Pause()
	// Resume undoes Pause.
	Resume()
	// SetRobots changes the number of robots (concurrent visits) to n ≥ 1.
	SetRobots(n int)
	// Snapshot writes a SQLite snapshot of the crawl and returns its path.
	Snapshot(ctx context.Context) (path string, err error)
}

// Options configures the console. The zero value is ready to use. Run and
// New copy it; it is not read afterwards.
type Options struct {
	// Refresh is how often Stats is polled; zero means 250 ms.
	Refresh time.Duration
	// Profile forces a colour profile (colorprofile.Ascii in tests, for
	// example); zero means detect it from the terminal and the environment,
	// which honours NO_COLOR.
	Profile colorprofile.Profile
	// Now is the clock, for the times of the console's own events and the
	// age of status messages; nil means time.Now.
	Now func() time.Time
	// RobotStep is how many robots + and - add or remove; zero means 1.
	RobotStep int
	// Until is when limits.max_duration ends the crawl, shown with the
	// time elapsed; zero means no such limit.
	Until time.Time
	// Keys and Styles replace the defaults when non-nil.
	Keys   *KeyMap
	Styles *Styles
	// Input and Output replace the terminal when non-nil (for tests and
	// for serving the console over another channel).
	Input  io.Reader
	Output io.Writer
	// Cluster, when the crawl is a cluster's master, adds the slaves
	// panel, and the slaves' joins, leaves and lease expiries to the
	// events; nil means no cluster.
	Cluster Cluster
}

// statusTTL is how long a status message stays before the status line
// falls back to what the crawl is doing.
const statusTTL = 30 * time.Second

// Run shows the console for c until the user quits (q or ctrl+c) or ctx is
// done, and returns nil in both cases; it returns an error only if the
// terminal could not be used. It does not stop the crawl: the caller does,
// after Run returns.
func Run(ctx context.Context, c Crawler, opt Options) error {
	m := New(c, opt)
	m.ctx = ctx
	return runProgram(ctx, m, opt)
}

// runProgram runs a console's model on the terminal (or opt's input and
// output) until it quits or ctx is done.
func runProgram(ctx context.Context, m tea.Model, opt Options) error {
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if profile := colorProfile(opt, os.LookupEnv); profile != colorprofile.Unknown {
		opts = append(opts, tea.WithColorProfile(profile))
	}
	if opt.Input != nil {
		opts = append(opts, tea.WithInput(opt.Input))
	}
	if opt.Output != nil {
		opts = append(opts, tea.WithOutput(opt.Output))
	}
	_, err := tea.NewProgram(m, opts...).Run()
	switch {
	case err == nil, errors.Is(err, tea.ErrInterrupted):
		return nil
	case ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled):
		return nil
	}
	return fmt.Errorf("tui: %w", err)
}

// colorProfile is the colour profile the console forces: the one in opt,
// else none but with NO_COLOR set, else Unknown, which lets Bubble Tea
// detect the terminal's.
func colorProfile(opt Options, lookupEnv func(string) (string, bool)) colorprofile.Profile {
	if opt.Profile != colorprofile.Unknown {
		return opt.Profile
	}
	if v, ok := lookupEnv("NO_COLOR"); ok && v != "" {
		// Bubble Tea's detection reads NO_COLOR too, but only when it parses
		// as a boolean; no-color.org asks for any non-empty value.
		return colorprofile.Ascii
	}
	return colorprofile.Unknown
}

// Model is the console as a Bubble Tea model. Most programs want Run; a
// Model is for embedding the console in another Bubble Tea program, and for
// tests. The zero value is not usable; use New. A Model is not safe for
// concurrent use: Bubble Tea calls it from one goroutine.
type Model struct {
	c      Crawler
	ctx    context.Context
	opt    Options
	keys   KeyMap
	styles Styles
	com    *common
	help   help.Model

	stats engine.Stats
	hist  history
	fresh bool // a snapshot has arrived

	panels  [numPanels]panel
	robots  *robotsPanel
	events  *eventsPanel
	cluster clusterSnapshot
	// lastClusterEvent is the time of the last cluster event added to
	// the events panel.
	lastClusterEvent time.Time
	rects            [numPanels]rect
	focus            panelID
	zoomed           bool
	showHelp         bool

	steer *steering

	paused       bool // what the user last asked for
	pausing      int  // pause or resume calls not yet returned
	robotsWant   int  // the robots the user last asked for
	robotsSet    int  // SetRobots calls not yet returned
	snapshotting bool

	status    string
	statusErr bool
	statusAt  time.Time
	quitting  bool
}

// steering makes the steering calls land in the order the keys were
// pressed, although each runs in its own command goroutine: a call older
// than the last one made is dropped.
type steering struct {
	pauseMu, robotsMu     sync.Mutex
	pauseDone, robotsDone uint64 // generation of the last call made, under its mutex
	pauseGen, robotsGen   uint64 // generation handed out last (event loop only)
}

// New returns the console's model for c.
func New(c Crawler, opt Options) *Model {
	if opt.Refresh <= 0 {
		opt.Refresh = 250 * time.Millisecond
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.RobotStep <= 0 {
		opt.RobotStep = 1
	}
	m := &Model{c: c, ctx: context.Background(), opt: opt, steer: &steering{}}
	m.keys = DefaultKeyMap()
	if opt.Keys != nil {
		m.keys = *opt.Keys
	}
	m.styles = DefaultStyles()
	if opt.Styles != nil {
		m.styles = *opt.Styles
	}
	m.com = &common{styles: &m.styles, keys: &m.keys, now: opt.Now, stats: &m.stats, hist: &m.hist}
	m.help = help.New()
	m.help.Styles = m.styles.Help
	m.help.ShortSeparator = "  "
	m.robots = newRobotsPanel(m.com)
	m.events = &eventsPanel{com: m.com}
	m.panels = [numPanels]panel{
		robotsPanelID:     m.robots,
		slavesPanelID:     &slavesPanel{com: m.com},
		queuePanelID:      &queuePanel{com: m.com},
		throughputPanelID: &throughputPanel{com: m.com},
		dnsPanelID:        &dnsPanel{com: m.com},
		coveragePanelID:   &coveragePanel{com: m.com},
		intervalsPanelID:  &intervalsPanel{com: m.com},
		eventsPanelID:     m.events,
	}
	return m
}

// statsMsg carries a snapshot polled from the crawler.
type statsMsg struct{ s engine.Stats }

// steerDoneMsg says a Pause, Resume or SetRobots call returned.
type steerDoneMsg struct{ robots bool }

// snapshotMsg carries the outcome of a Snapshot call.
type snapshotMsg struct {
	path string
	err  error
}

// poll asks the crawler for a snapshot after d.
func (m *Model) poll(d time.Duration) tea.Cmd {
	c := m.c
	get := func(time.Time) tea.Msg { return statsMsg{c.Stats()} }
	if d <= 0 {
		return func() tea.Msg { return get(time.Time{}) }
	}
	return tea.Tick(d, get)
}

// Init starts polling the crawler (the first poll is immediate), and the
// cluster when there is one.
func (m *Model) Init() tea.Cmd {
	if m.opt.Cluster != nil {
		return tea.Batch(m.poll(0), pollCluster(m.opt.Cluster, time.Millisecond))
	}
	return m.poll(0)
}

// Update handles a message: a window size, a snapshot, the outcome of a
// steering call, a key. It never calls the crawler itself; the commands it
// returns do.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.com.width, m.com.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.resize()
	case statsMsg:
		m.stats = msg.s
		m.hist.add(&m.stats)
		if !m.fresh || m.pausing == 0 {
			m.paused = m.stats.State == engine.StatePaused
		}
		if !m.fresh || m.robotsSet == 0 {
			m.robotsWant = m.stats.Robots
		}
		m.fresh = true
		return m, m.poll(m.opt.Refresh)
	case clusterMsg:
		m.cluster = msg.snap
		m.com.cluster = &m.cluster
		// Joins, leaves and expiries go to the events panel; the
		// cluster keeps its latest events, so those not seen yet are
		// the ones after the last seen, matched by time.
		evs := msg.snap.events
		start := 0
		for i, ev := range evs {
			if !ev.Time.After(m.lastClusterEvent) {
				start = i + 1
			}
		}
		for _, ev := range evs[start:] {
			m.events.add(record.Event{Time: ev.Time, Kind: record.EventKind(ev.Kind), Text: ev.Text}, "")
			m.lastClusterEvent = ev.Time
		}
		if cmd := m.clusterPolled(); cmd != nil {
			return m, cmd
		}
		return m, pollCluster(m.opt.Cluster, m.opt.Refresh)
	case steerDoneMsg:
		if msg.robots {
			m.robotsSet--
		} else {
			m.pausing--
		}
	case snapshotMsg:
		m.snapshotting = false
		ev := record.Event{Time: m.opt.Now(), Kind: record.EventSnapshot}
		if msg.err != nil {
			ev.Text = "failed: " + msg.err.Error()
			m.setStatus("snapshot failed: "+msg.err.Error(), true)
			ev.Kind = "snapshot-failed"
			m.events.add(ev, "")
		} else {
			ev.Text = "written to " + msg.path
			m.setStatus("snapshot written to "+msg.path, false)
			m.events.add(ev, msg.path)
		}
	case tea.PasteMsg:
		if m.robots.editing {
			m.robots.addText(msg.Content)
		}
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

func (m *Model) setStatus(s string, isErr bool) {
	m.status, m.statusErr, m.statusAt = clean(s), isErr, m.opt.Now()
}

// key handles a key press.
func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := &m.keys
	if msg.String() == "ctrl+c" || (key.Matches(msg, k.Quit) && !m.robots.editing) {
		if cmd, ok := m.clusterQuit(); ok {
			return cmd
		}
		m.quitting = true
		return tea.Quit
	}
	if m.robots.editing {
		cmd, _ := m.robots.update(msg)
		return cmd
	}
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, k.Back):
		switch {
		case m.showHelp:
			m.showHelp = false
		case m.zoomed:
			m.setZoom(false)
		case m.robots.filter != "":
			m.robots.clearFilter()
		}
	case m.ended() && (key.Matches(msg, k.Pause) || key.Matches(msg, k.Resume) || key.Matches(msg, k.More) || key.Matches(msg, k.Fewer)):
		m.setStatus("the crawl has ended: nothing to steer · s writes a snapshot · q quits", false)
	case key.Matches(msg, k.Pause):
		return m.setPaused(!m.paused)
	case key.Matches(msg, k.Resume):
		if m.paused {
			return m.setPaused(false)
		}
	case key.Matches(msg, k.Snapshot):
		return m.snapshot()
	case key.Matches(msg, k.More):
		return m.addRobots(m.opt.RobotStep)
	case key.Matches(msg, k.Fewer):
		return m.addRobots(-m.opt.RobotStep)
	case key.Matches(msg, k.Filter):
		m.showHelp = false
		m.focus = robotsPanelID
		if m.zoomed {
			m.resize()
		}
		m.robots.startFilter()
	case key.Matches(msg, k.Zoom):
		m.showHelp = false
		m.setZoom(!m.zoomed)
	case key.Matches(msg, k.Next):
		m.cycle(1)
	case key.Matches(msg, k.Prev):
		m.cycle(-1)
	case m.zoomed:
		// Arrows and pages scroll the zoomed panel.
		cmd, _ := m.panels[m.focus].update(msg)
		return cmd
	case key.Matches(msg, k.Up):
		m.focus = neighbour(m.rects, m.focus, dirUp)
	case key.Matches(msg, k.Down):
		m.focus = neighbour(m.rects, m.focus, dirDown)
	case key.Matches(msg, k.Left):
		m.focus = neighbour(m.rects, m.focus, dirLeft)
	case key.Matches(msg, k.Right):
		m.focus = neighbour(m.rects, m.focus, dirRight)
	}
	return nil
}

// ended reports whether the crawl is over (done or failed).
func (m *Model) ended() bool {
	return m.stats.State == engine.StateDone || m.stats.State == engine.StateFailed
}

func (m *Model) setZoom(z bool) {
	m.zoomed = z
	m.resize()
}

// cycle moves the focus by step panels in tab order, skipping panels that
// are not on screen.
func (m *Model) cycle(step int) {
	for range numPanels {
		m.focus = (m.focus + panelID(step) + numPanels) % numPanels
		if m.zoomed || !m.rects[m.focus].empty() {
			break
		}
	}
	if m.zoomed {
		m.resize()
	}
}

func (m *Model) setPaused(p bool) tea.Cmd {
	m.paused = p
	m.pausing++
	m.steer.pauseGen++
	gen, c, st := m.steer.pauseGen, m.c, m.steer
	return func() tea.Msg {
		st.pauseMu.Lock()
		defer st.pauseMu.Unlock()
		if gen > st.pauseDone {
			st.pauseDone = gen
			if p {
				c.Pause()
			} else {
				c.Resume()
			}
		}
		return steerDoneMsg{}
	}
}

func (m *Model) addRobots(d int) tea.Cmd {
	n := max(m.robotsWant+d, 1)
	if n == m.robotsWant {
		m.setStatus(fmt.Sprintf("robots: %d is the fewest", n), false)
		return nil
	}
	m.robotsWant = n
	m.robotsSet++
	m.steer.robotsGen++
	gen, c, st := m.steer.robotsGen, m.c, m.steer
	m.setStatus(fmt.Sprintf("robots: %d asked", n), false)
	return func() tea.Msg {
		st.robotsMu.Lock()
		defer st.robotsMu.Unlock()
		if gen > st.robotsDone {
			st.robotsDone = gen
			c.SetRobots(n)
		}
		return steerDoneMsg{robots: true}
	}
}

func (m *Model) snapshot() tea.Cmd {
	if m.snapshotting {
		m.setStatus("a snapshot is being written already", false)
		return nil
	}
	m.snapshotting = true
	m.setStatus("writing a snapshot…", false)
	c, ctx := m.c, m.ctx
	return func() tea.Msg {
		p, err := c.Snapshot(ctx)
		return snapshotMsg{p, err}
	}
}

// Layout: the top bar, the panels, the status line and the help line.
const (
	headerLines = 1
	footerLines = 2
)

// resize lays the panels out again for the terminal's size and zoom.
func (m *Model) resize() {
	w, h := m.com.width, m.com.height
	body := h - headerLines - footerLines
	if m.zoomed {
		m.rects = [numPanels]rect{}
		m.rects[m.focus] = rect{0, headerLines, w, body}
	} else {
		m.rects = layoutFor(0, headerLines, w, body, m.opt.Cluster != nil)
	}
	for id, p := range m.panels {
		r := m.rects[id]
		p.setSize(r.w, max(r.h-1, 0), m.zoomed)
	}
	if !m.zoomed && m.rects[m.focus].empty() {
		for id := range m.rects {
			if !m.rects[id].empty() {
				m.focus = panelID(id)
				break
			}
		}
	}
}

// View draws the console on the alternate screen.
func (m *Model) View() tea.View { return altScreen(m.render(), "lidi") }

// altScreen is a console's view: content on the alternate screen, the
// terminal's window titled title.
func altScreen(content, title string) tea.View {
	v := tea.NewView(content)
	v.AltScreen = true
	v.WindowTitle = title
	return v
}

// render draws the console as text: exactly the terminal's height in lines,
// none wider than the terminal.
func (m *Model) render() string {
	w, h := m.com.width, m.com.height
	if w <= 0 || h <= 0 {
		return ""
	}
	if h < headerLines+footerLines+2 || w < 20 {
		// Too small for panels: the gist on as many lines as there are.
		return block(strings.Join([]string{m.header(), m.statusLine(), m.helpLine()}, "\n"), w, h)
	}
	body := h - headerLines - footerLines
	var mid string
	switch {
	case m.showHelp:
		mid = m.fullHelp(w, body)
	default:
		mid = m.body(w, body)
	}
	// Every part is already exactly w wide: the header and the two lines
	// at the bottom are padded, and block makes the middle w×body.
	return m.header() + "\n" + block(mid, w, body) + "\n" + m.statusLine() + "\n" + m.helpLine()
}

// body draws the panels in their places, column by column.
func (m *Model) body(w, h int) string {
	if m.zoomed {
		return frame(&m.styles, m.panels[m.focus], w, h, true)
	}
	var xs []int
	for _, r := range m.rects {
		if !r.empty() && !slices.Contains(xs, r.x) {
			xs = append(xs, r.x)
		}
	}
	slices.Sort(xs)
	var blocks []string
	for _, x := range xs {
		var ids []panelID
		cw := 0
		for id, r := range m.rects {
			if !r.empty() && r.x == x {
				ids = append(ids, panelID(id))
				cw = r.w
			}
		}
		slices.SortFunc(ids, func(a, b panelID) int { return m.rects[a].y - m.rects[b].y })
		var parts []string
		y := headerLines
		for _, id := range ids {
			r := m.rects[id]
			if r.y > y {
				parts = append(parts, block("", cw, r.y-y))
			}
			parts = append(parts, frame(&m.styles, m.panels[id], r.w, r.h, id == m.focus))
			y = r.y + r.h
		}
		blocks = append(blocks, block(strings.Join(parts, "\n"), cw, h))
	}
	return joinColumns(columnGap, blocks...)
}

// stateBadge names what the crawl is doing, in its style.
func (m *Model) stateBadge() string {
	st := &m.styles
	s := m.stats.State
	switch {
	case !m.fresh:
		return st.Starting.Render("… connecting")
	case m.pausing > 0 && m.paused && s != engine.StatePaused:
		return st.Paused.Render(" ❚❚ pausing… ")
	case m.pausing > 0 && !m.paused && s == engine.StatePaused:
		return st.Running.Render("▶ resuming…")
	}
	switch s {
	case engine.StateStarting:
		return st.Starting.Render("… starting")
	case engine.StateRunning:
		return st.Running.Render("▶ running")
	case engine.StatePaused:
		return st.Paused.Render(" ❚❚ PAUSED ")
	case engine.StateStopping:
		return st.Starting.Render("■ stopping")
	case engine.StateDone:
		return st.Done.Render(" ■ DONE ")
	case engine.StateFailed:
		return st.Failed.Render(" ✖ FAILED ")
	}
	return st.Starting.Render(s.String())
}

// header draws the top bar: the state first, then the figures that matter
// most, as many as fit.
func (m *Model) header() string {
	w := m.com.width
	st := &m.styles
	s := &m.stats
	c := m.com
	// Each figure has a rank: when the line is too narrow, the figures of
	// the highest rank go first, so that pages and errors always show.
	type part struct {
		text string
		rank int
	}
	parts := []part{{st.Brand.Render(" lidi "), 0}, {m.stateBadge(), 0}}
	if m.fresh {
		if s.Strategy != "" {
			parts = append(parts, part{st.Label.Render(clean(s.Strategy)), 5})
		}
		if !s.Started.IsZero() {
			elapsed := c.fig(uptime(c.at().Sub(s.Started)), "elapsed")
			if !m.opt.Until.IsZero() {
				elapsed = c.fig(uptime(c.at().Sub(s.Started)), "of "+uptime(m.opt.Until.Sub(s.Started)))
			}
			parts = append(parts, part{elapsed, 3})
		}
		// Pages are the distinct URLs fetched; with recrawls, fetches
		// (what limits.max_pages counts) and recrawls have figures of
		// their own.
		pages := c.fig(count(s.Pages), "pages")
		var fetches, recrawls string
		if s.Recrawls > 0 {
			fetches, recrawls = c.fig(count(s.Fetches), "fetches"), c.fig(count(s.Recrawls), "recrawls")
		}
		if s.MaxPages > 0 {
			if s.Recrawls > 0 {
				fetches = st.Value.Render(count(s.Fetches)) + st.Label.Render(" / ") + c.fig(count(s.MaxPages), "fetches")
			} else {
				pages = st.Value.Render(count(s.Pages)) + st.Label.Render(" / ") + c.fig(count(s.MaxPages), "pages")
			}
		}
		errs := c.fig(count(s.Errors), "errors")
		if s.Errors > 0 {
			errs = st.Value.Render(count(s.Errors)) + " " + st.Warn.Render("errors")
		}
		parts = append(parts, part{pages, 1})
		if fetches != "" {
			parts = append(parts, part{fetches, 2}, part{recrawls, 3})
		}
		parts = append(parts,
			part{errs, 1},
			// Label first here: "robots busy/allowed" reads as one figure.
			part{st.Label.Render("robots ") + st.Value.Render(fmt.Sprintf("%d/%d", s.RobotsBusy, m.robotsShown())), 2},
			part{c.fig(bytesSI(float64(s.Bytes)), ""), 4},
		)
	}
	width := func(ps []part) int {
		n := 0
		for i, p := range ps {
			n += ansi.StringWidth(p.text)
			if i > 0 {
				n += 2
			}
		}
		return n
	}
	for width(parts) > w {
		worst := 0
		for i, p := range parts {
			if p.rank >= parts[worst].rank {
				worst = i
			}
		}
		if parts[worst].rank == 0 {
			break
		}
		parts = slices.Delete(parts, worst, worst+1)
	}
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.text
	}
	return pad(cut(strings.Join(texts, "  "), w), w)
}

// robotsShown is the number of robots to show: what the user asked for
// while the engine has not taken it yet.
func (m *Model) robotsShown() int {
	if m.robotsSet > 0 {
		return m.robotsWant
	}
	return m.stats.Robots
}

// statusLine tells, by priority: the latest status message while it is
// fresh, then what a paused or ended crawl means, then the newest event.
func (m *Model) statusLine() string {
	w := m.com.width
	st := &m.styles
	c := m.com
	if m.quitting {
		return pad(st.Status.Render("quitting: the crawl stops and saves its state…"), w)
	}
	if s := m.clusterStatus(); s != "" {
		return pad(st.Status.Render(s), w)
	}
	if m.status != "" && m.opt.Now().Sub(m.statusAt) < statusTTL {
		s := st.Status
		if m.statusErr {
			s = st.StatusError
		}
		return pad(s.Render(m.status), w)
	}
	s := &m.stats
	switch s.State {
	case engine.StatePaused:
		return pad(st.Paused.Render(" paused ")+" "+c.dim("no new fetch starts; the state is saved · p or r resumes"), w)
	case engine.StateDone:
		return pad(st.Done.Render(" crawl finished ")+" "+
			c.dim(fmt.Sprintf("%s%s, %s in %s · final figures kept · q quits", endReason(s), pagesFetches(s), bytesSI(float64(s.Bytes)), uptime(c.at().Sub(s.Started)))), w)
	case engine.StateFailed:
		return pad(st.Failed.Render(" crawl failed ")+" "+c.dim(endReason(s)+"see the events · q quits"), w)
	}
	if evs := m.events.events(); len(evs) > 0 {
		// News, while it is news.
		e := evs[len(evs)-1]
		if m.opt.Now().Sub(e.Time) < statusTTL {
			return pad(c.dim(fields(clock(e.Time)+" "+clean(string(e.Kind)), siteName(e.Site), clean(e.Text))), w)
		}
	}
	return pad(c.dim("tab and arrows move between panels · enter zooms · ? lists every key"), w)
}

// shortKeys are the keys the help line lists, as they apply now, in the
// order shown, each with a rank: when the line is too narrow the keys of
// highest rank go first, so quit and help stay. The focused panel adds its
// own keys.
func (m *Model) shortKeys() ([]key.Binding, []int) {
	k := m.keys
	own := m.panels[m.focus].helpKeys()
	if m.robots.editing {
		return append(m.robots.helpKeys(), withHelp(k.Quit, "ctrl+c", "quit")), []int{0, 0, 0}
	}
	var keys []key.Binding
	var ranks []int
	add := func(rank int, b ...key.Binding) {
		for _, b := range b {
			keys = append(keys, b)
			ranks = append(ranks, rank)
		}
	}
	if !m.ended() {
		pause := k.Pause
		if m.paused {
			pause = withHelp(k.Pause, "p", "resume")
		}
		add(1, pause)
	}
	add(2, k.Snapshot)
	if !m.ended() {
		add(3, withHelp(k.More, "+/-", "robots"))
	}
	add(6, withHelp(k.Next, "tab", "panel"))
	if m.zoomed {
		add(4, withHelp(k.Zoom, "esc", "unzoom"))
	} else {
		add(4, withHelp(k.Zoom, "enter", "zoom"))
	}
	add(5, own...)
	if m.robots.filter == "" {
		add(7, withHelp(k.Filter, "/", "filter"))
	}
	if m.showHelp {
		add(0, withHelp(k.Help, "?", "close keys"), k.Quit)
	} else {
		add(0, withHelp(k.Help, "?", "keys"), k.Quit)
	}
	return keys, ranks
}

// withHelp returns b with other help text.
func withHelp(b key.Binding, k, desc string) key.Binding {
	b.SetHelp(k, desc)
	return b
}

// helpLine is the bottom line: the common keys.
func (m *Model) helpLine() string {
	keys, ranks := m.shortKeys()
	hm := m.help
	hm.SetWidth(0)
	for drop := slices.Max(ranks); drop > 0; drop-- {
		if ansi.StringWidth(hm.ShortHelpView(keys)) <= m.com.width {
			break
		}
		for i := len(keys) - 1; i >= 0; i-- {
			if ranks[i] == drop {
				keys = slices.Delete(keys, i, i+1)
				ranks = slices.Delete(ranks, i, i+1)
			}
		}
	}
	return pad(m.help.ShortHelpView(keys), m.com.width)
}

// fullHelp draws the page ? shows: every key, then what each panel shows.
func (m *Model) fullHelp(w, h int) string {
	k := m.keys
	groups := [][]key.Binding{
		{withHelp(k.Pause, "p", "pause / resume"), k.Resume, k.Snapshot, k.More, k.Fewer},
		{k.Next, k.Prev, withHelp(k.Up, "←↑↓→", "move focus"), k.Zoom, withHelp(k.Back, "esc", "unzoom, close")},
		{withHelp(k.Up, "↑/↓", "scroll (zoomed)"), withHelp(k.PageUp, "pgup/pgdn", "page (zoomed)"), k.Filter,
			withHelp(k.FilterClear, "esc", "clear filter"), withHelp(k.Help, "?", "this page"), withHelp(k.Quit, "q", "quit, state saved")},
	}
	hm := m.help
	hm.SetWidth(0)
	// As many key groups side by side as fit, in rows.
	var rows []string
	for i := 0; i < len(groups); {
		n := len(groups) - i
		for ; n > 1; n-- {
			if ansi.StringWidth(firstLine(hm.FullHelpView(groups[i:i+n]))) <= w-2 {
				break
			}
		}
		rows = append(rows, hm.FullHelpView(groups[i:i+n]))
		i += n
	}
	st := &m.styles
	lines := []string{st.TitleFocused.Render(" Keys ") + " " + m.com.dim("? or esc closes this page")}
	for _, r := range rows {
		for l := range strings.SplitSeq(r, "\n") {
			lines = append(lines, " "+l)
		}
		lines = append(lines, "")
	}
	lines = lines[:len(lines)-1]
	legend := [][2]string{
		{"Robots", "visits in flight, and sites waiting for their politeness delay"},
		{"Queue", "pages queued, sites by state, found and fetched, with history"},
		{"Throughput", "fetches/s and bytes/s with history, errors by kind"},
		{"DNS & dup", "host look-ups and cache; duplicates and mirrors pruned"},
		{"PageRank", "share of PageRank held by the pages fetched"},
		{"Recrawl", "recrawl interval per priority group"},
		{"Events", "parked sites, robots.txt errors, mirrors, snapshots"},
	}
	if len(lines)+2+len(legend) <= h {
		lines = append(lines, "", st.TitleFocused.Render(" Panels "))
		for _, l := range legend {
			lines = append(lines, " "+st.Value.Render(pad(l[0], 11))+" "+m.com.dim(l[1]))
		}
	}
	if m.cluster.join != "" && len(lines)+3 <= h {
		// A slave joins with this command (panel_slaves.go).
		lines = append(lines, "", st.TitleFocused.Render(" Slaves ")+" "+m.com.dim("start one with:"), " "+cut(m.cluster.join, w-2))
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// endReason is why the crawl ended, as the footer starts it ("" while it
// runs).
func endReason(s *engine.Stats) string {
	if s.EndText == "" {
		return ""
	}
	return clean(s.EndText) + " · "
}
