package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"lidi/engine"
)

// notMeasured is what the panels filled by later measurements say until
// the engine sets their fields.
const notMeasured = "not measured yet"

// coveragePanel shows the PageRank coverage curve: the share of PageRank
// held by the pages fetched so far, against the number of pages.
type coveragePanel struct {
	com    *common
	w, h   int
	zoomed bool
}

func (p *coveragePanel) setSize(w, h int, zoomed bool)          { p.w, p.h, p.zoomed = w, h, zoomed }
func (p *coveragePanel) update(tea.KeyPressMsg) (tea.Cmd, bool) { return nil, false }
func (p *coveragePanel) helpKeys() []key.Binding                { return nil }

func (p *coveragePanel) title() (string, string) {
	cov := p.com.stats.Coverage
	if len(cov) == 0 {
		return "PageRank coverage", ""
	}
	return "PageRank coverage", pct(cov[len(cov)-1].Coverage)
}

// pct formats a share in [0, 1] as a percentage.
func pct(f float64) string { return fmt.Sprintf("%.1f%%", 100*min(max(f, 0), 1)) }

func (p *coveragePanel) view() string {
	c := p.com
	cov := c.stats.Coverage
	if cov == nil {
		return c.dim(notMeasured) + "\n" + c.dim("share of PageRank in pages fetched")
	}
	if len(cov) == 0 {
		return c.dim("no point yet")
	}
	last := cov[len(cov)-1]
	text := []string{c.line(c.fig(pct(last.Coverage), "of PageRank"), c.fig(count(last.Pages), "pages"))}
	if last.Oracle >= 0 {
		text = append(text, c.line(c.fig(pct(last.Oracle), "against the true PageRank")))
	}
	ch := chart{Max: 1, Style: c.styles.Chart, Axis: c.styles.Axis}
	if p.zoomed {
		ch.Label = pct
	}
	estimate := func(pt engine.CoveragePoint) float64 { return pt.Coverage }
	if last.Oracle < 0 || p.h < len(text)+6 {
		// One curve when there is no oracle, or no room for two.
		return fill(p.w, p.h, text, 2, func(w, h int) string {
			ch.Values = resample(cov, w-ch.gutter(w, h), estimate)
			return ch.render(w, h)
		})
	}
	// Both curves, one above the other on the same scale: the estimate
	// over the graph known so far, and the chapter's measure.
	oracle := ch
	oracle.Style = c.styles.ChartAlt
	return fill(p.w, p.h, text, 6, func(w, h int) string {
		gw := max(ch.gutter(w, 2), oracle.gutter(w, 2))
		ch.MinGutter, oracle.MinGutter = gw, gw
		top := (h - 2) / 2
		ch.Values = resample(cov, w-gw, estimate)
		oracle.Values = resample(cov, w-gw, func(pt engine.CoveragePoint) float64 { return pt.Oracle })
		return c.styles.Label.Render("share of PageRank of the graph known") + "\n" + ch.render(w, top) + "\n" +
			c.styles.Label.Render("share of the true PageRank") + "\n" + oracle.render(w, h-2-top)
	})
}

// resample turns a coverage curve (the value y of each point), whose points
// need not be evenly spaced in pages, into n values evenly spaced from its
// first to its last point, interpolating linearly, so the chart's x axis is
// pages fetched.
func resample(cov []engine.CoveragePoint, n int, y func(engine.CoveragePoint) float64) []float64 {
	if n <= 0 || len(cov) == 0 {
		return nil
	}
	if len(cov) == 1 {
		return []float64{y(cov[0])}
	}
	lo, hi := float64(cov[0].Pages), float64(cov[len(cov)-1].Pages)
	n = min(n, max(int(hi-lo)+1, 2))
	out := make([]float64, n)
	j := 0
	for i := range out {
		x := lo + (hi-lo)*float64(i)/float64(n-1)
		for j < len(cov)-2 && float64(cov[j+1].Pages) < x {
			j++
		}
		a, b := cov[j], cov[j+1]
		if b.Pages == a.Pages {
			out[i] = y(b)
			continue
		}
		t := (x - float64(a.Pages)) / float64(b.Pages-a.Pages)
		out[i] = y(a) + t*(y(b)-y(a))
	}
	return out
}

// intervalsPanel shows the recrawl interval of each priority group.
type intervalsPanel struct {
	com    *common
	w, h   int
	zoomed bool
	scroll scroller
}

func (p *intervalsPanel) setSize(w, h int, zoomed bool) {
	p.w, p.h, p.zoomed = w, h, zoomed
}

func (p *intervalsPanel) update(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if !p.zoomed {
		return nil, false
	}
	return nil, p.scroll.key(p.com.keys, msg, p.h)
}

func (p *intervalsPanel) helpKeys() []key.Binding {
	if p.zoomed {
		return []key.Binding{withHelp(p.com.keys.Down, "↑/↓", "scroll")}
	}
	return nil
}

func (p *intervalsPanel) title() (string, string) {
	n := len(p.com.stats.Intervals)
	if n == 0 {
		return "Recrawl intervals", ""
	}
	return "Recrawl intervals", fmt.Sprintf("%d groups", n)
}

func (p *intervalsPanel) view() string {
	c := p.com
	groups := c.stats.Intervals
	if groups == nil {
		return c.dim(notMeasured) + "\n" + c.dim("recrawl interval per priority group")
	}
	if len(groups) == 0 {
		return c.dim("no group yet")
	}
	const ivW, pgW = 9, 14
	nameW := max(p.w-ivW-pgW-2, 4)
	lines := []string{c.styles.Column.Render(pad("group", nameW) + " " + padLeft("interval", ivW) + " " + padLeft("pages", pgW))}
	for _, g := range groups {
		lines = append(lines, pad(clean(g.Name), nameW)+" "+padLeft(every(g.Interval), ivW)+" "+padLeft(count(g.Pages), pgW))
	}
	if p.zoomed {
		from, to := p.scroll.window(len(lines)-1, p.h-1)
		return strings.Join(append(lines[:1:1], lines[1+from:1+to]...), "\n")
	}
	if len(lines) > p.h {
		lines = lines[1:] // the rows say more than their headings
	}
	return strings.Join(trimList(c, lines, p.h), "\n")
}

// every formats a recrawl interval: "45s", "12m", "6h", "3d".
func every(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Round(time.Second)/time.Second))
	case d < time.Hour:
		return trimZero(fmt.Sprintf("%.1fm", d.Minutes()))
	case d < 48*time.Hour:
		return trimZero(fmt.Sprintf("%.1fh", d.Hours()))
	}
	return trimZero(fmt.Sprintf("%.1fd", d.Hours()/24))
}

// trimZero drops a ".0" before the unit.
func trimZero(s string) string {
	if i := strings.Index(s, ".0"); i > 0 && i+3 == len(s) {
		return s[:i] + s[i+2:]
	}
	return s
}
