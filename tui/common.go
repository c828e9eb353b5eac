package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"lidi/engine"
)

// common is what the root model hands to every panel: the terminal's size,
// the styles, the keys, the clock and the latest figures. The panels read
// it; only the root model writes it, from its Update, so no locking is
// needed.
type common struct {
	width, height int // the terminal
	styles        *Styles
	keys          *KeyMap
	now           func() time.Time

	stats *engine.Stats // the latest snapshot; zero until the first arrives
	hist  *history
	// cluster is the latest cluster snapshot; nil when the crawl is no
	// cluster's master.
	cluster *clusterSnapshot
}

// at is the time "now" for figures of the current snapshot: the time the
// snapshot was taken, so durations shown agree with the figures beside
// them; the clock when the engine gave no time.
func (c *common) at() time.Time {
	if !c.stats.Time.IsZero() {
		return c.stats.Time
	}
	return c.now()
}

// panel is one area of the console. The root model lays panels out, draws
// their frames, gives them their size and routes keys to them; a panel draws
// only its content.
type panel interface {
	// title is the panel's name and, after it, a short summary.
	title() (name, summary string)
	// setSize gives the panel its content area (the frame's title line is
	// not part of it), and says whether the panel fills the screen.
	setSize(w, h int, zoomed bool)
	// update handles a key sent to the focused panel; it reports whether
	// the key was used.
	update(msg tea.KeyPressMsg) (tea.Cmd, bool)
	// view draws the content in the size last given.
	view() string
	// helpKeys lists the keys the panel answers to itself.
	helpKeys() []key.Binding
}

// frame draws a panel with its title rule above its content, in exactly
// w×h cells.
func frame(st *Styles, p panel, w, h int, focused bool) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	name, summary := p.title()
	title := " " + name + " "
	ruleChar, ts, rs := "─", st.Title, st.Rule
	if focused {
		ruleChar, ts, rs = "━", st.TitleFocused, st.RuleFocused
	}
	var b strings.Builder
	b.WriteString(rs.Render(ruleChar))
	b.WriteString(ts.Render(cut(title, max(w-1, 0))))
	used := 1 + min(ansi.StringWidth(title), max(w-1, 0))
	if summary != "" && w-used > 3 {
		s := cut(" "+summary+" ", w-used-1)
		b.WriteString(st.Label.Render(s))
		used += ansi.StringWidth(s)
	}
	if rest := w - used; rest > 0 {
		b.WriteString(rs.Render(strings.Repeat(ruleChar, rest)))
	}
	head := b.String()
	if h == 1 {
		return cut(head, w)
	}
	return cut(head, w) + "\n" + block(p.view(), w, h-1)
}

// scroller keeps a scroll offset over a list of lines in a zoomed panel.
// Its zero value shows the first lines.
type scroller struct {
	off int
}

// window returns the lines to show out of n in h rows, starting at the
// offset, after clamping it.
func (s *scroller) window(n, h int) (from, to int) {
	s.off = min(max(s.off, 0), max(n-h, 0))
	return s.off, min(s.off+h, n)
}

// key moves the offset for an arrow or page key; page is the page height.
func (s *scroller) key(keys *KeyMap, msg tea.KeyPressMsg, page int) bool {
	switch {
	case key.Matches(msg, keys.Up):
		s.off--
	case key.Matches(msg, keys.Down):
		s.off++
	case key.Matches(msg, keys.PageUp):
		s.off -= max(page-1, 1)
	case key.Matches(msg, keys.PageDn):
		s.off += max(page-1, 1)
	default:
		return false
	}
	if s.off < 0 {
		s.off = 0
	}
	return true
}

// fields joins the non-empty parts with a middle dot, the separator used
// throughout the console.
func fields(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, " · ")
}

// fig renders a figure followed by its label: "1,234 queued".
func (c *common) fig(value, label string) string {
	if label == "" {
		return c.styles.Value.Render(value)
	}
	return c.styles.Value.Render(value) + " " + c.styles.Label.Render(label)
}

// recrawlFigs shows the fetches and recrawls of a crawl that fetched
// pages again ("8,232 fetches · 4,271 recrawls"); "" when it did not,
// as its fetches are its pages.
func (c *common) recrawlFigs(s *engine.Stats) string {
	if s.Recrawls == 0 {
		return ""
	}
	return c.line(c.fig(count(s.Fetches), "fetches"), c.fig(count(s.Recrawls), "recrawls"))
}

// dim renders secondary text.
func (c *common) dim(s string) string { return c.styles.Dim.Render(s) }

// sep is the styled separator between figures on one line.
func (c *common) sep() string { return c.styles.Label.Render(" · ") }

// line joins styled figures with the separator, skipping empty ones.
func (c *common) line(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, c.sep())
}

// fit joins styled parts with the separator, as many as fit in w cells,
// dropping the last ones whole rather than cutting one in the middle. The
// first part is kept, cut if it must be.
func (c *common) fit(w int, parts ...string) string {
	sep := c.sep()
	sw := ansi.StringWidth(sep)
	var b strings.Builder
	used := 0
	for _, p := range parts {
		if p == "" {
			continue
		}
		pw := ansi.StringWidth(p)
		if used == 0 {
			b.WriteString(cut(p, w))
			used = min(pw, w)
			continue
		}
		if used+sw+pw > w {
			break
		}
		b.WriteString(sep)
		b.WriteString(p)
		used += sw + pw
	}
	return b.String()
}
