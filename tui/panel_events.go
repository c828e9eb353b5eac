package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"lidi/engine/record"
)

// maxLocalEvents bounds the events the console adds itself.
const maxLocalEvents = 64

// eventsPanel shows the log of notable events: the engine's (site parked,
// mirror labelled, robots.txt 5xx, ...) and the console's own (snapshot
// written or failed), newest at the bottom.
type eventsPanel struct {
	com    *common
	w, h   int
	zoomed bool
	back   int // lines scrolled back from the newest, when zoomed

	local []localEvent // events the console added
}

// localEvent is an event of the console's own. key, when set, is text
// (a snapshot's path) by which the same event reported by the engine is
// recognised.
type localEvent struct {
	record.Event
	key string
}

func (p *eventsPanel) setSize(w, h int, zoomed bool) {
	if zoomed != p.zoomed {
		p.back = 0
	}
	p.w, p.h, p.zoomed = w, h, zoomed
}

func (p *eventsPanel) helpKeys() []key.Binding {
	if p.zoomed {
		return []key.Binding{withHelp(p.com.keys.Up, "↑/↓", "older/newer")}
	}
	return nil
}

func (p *eventsPanel) title() (string, string) {
	return "Events", ""
}

// add records an event of the console's own.
func (p *eventsPanel) add(e record.Event, key string) {
	p.local = append(p.local, localEvent{e, key})
	if n := len(p.local) - maxLocalEvents; n > 0 {
		p.local = slices.Delete(p.local, 0, n)
	}
}

func (p *eventsPanel) update(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if !p.zoomed {
		return nil, false
	}
	k := p.com.keys
	switch {
	case key.Matches(msg, k.Up):
		p.back++
	case key.Matches(msg, k.Down):
		p.back--
	case key.Matches(msg, k.PageUp):
		p.back += max(p.h-1, 1)
	case key.Matches(msg, k.PageDn):
		p.back -= max(p.h-1, 1)
	default:
		return nil, false
	}
	p.back = max(p.back, 0)
	return nil, true
}

// events merges the engine's events and the console's by time, leaving out
// a console event the engine reported too (a snapshot both logged).
func (p *eventsPanel) events() []record.Event {
	eng := p.com.stats.Events
	out := make([]record.Event, 0, len(eng)+len(p.local))
	out = append(out, eng...)
	for _, l := range p.local {
		dup := false
		for _, e := range eng {
			if e.Kind == l.Kind && (e.Text == l.Text || (l.key != "" && strings.Contains(e.Text, l.key))) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, l.Event)
		}
	}
	slices.SortStableFunc(out, func(a, b record.Event) int { return a.Time.Compare(b.Time) })
	return out
}

func (p *eventsPanel) view() string {
	c := p.com
	evs := p.events()
	if len(evs) == 0 {
		return c.dim("nothing notable yet")
	}
	kindW := 6
	for _, e := range evs {
		kindW = max(kindW, min(ansi.StringWidth(clean(kindName(string(e.Kind)))), 16))
	}
	lines := make([]string, len(evs))
	for i, e := range evs {
		ks := c.styles.Label
		switch {
		case strings.Contains(string(e.Kind), "fail") || strings.Contains(string(e.Kind), "5xx") || e.Kind == record.EventParked || e.Kind == record.EventStop || strings.Contains(string(e.Kind), "error"):
			ks = c.styles.Warn
		case e.Kind == record.EventSnapshot || e.Kind == record.EventResume || e.Kind == record.EventDone || e.Kind == record.EventUnparked:
			ks = c.styles.Good
		}
		l := c.dim(clock(e.Time)) + " " + ks.Render(pad(clean(kindName(string(e.Kind))), kindW)) + " "
		if e.Site != "" {
			l += c.styles.Value.Render(siteName(e.Site)) + " "
		}
		lines[i] = l + clean(e.Text)
	}
	h := p.h
	p.back = min(p.back, max(len(lines)-h, 0))
	to := len(lines) - p.back
	from := max(to-h, 0)
	return strings.Join(lines[from:to], "\n")
}
