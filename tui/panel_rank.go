package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"lidi/engine/record"
)

// noRankRun is what the coverage panel says until the engine's first
// PageRank run fills Stats.Coverage: the state, not a missing feature.
const noRankRun = "no PageRank run yet"

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
		return c.dim(noRankRun) + "\n" + c.dim("share of PageRank in pages fetched")
	}
	if len(cov) == 0 {
		return c.dim("no point yet")
	}
	last := cov[len(cov)-1]
	// The x axis is pages stored (distinct URLs fetched): recrawls add
	// no page to the graph, and the header has the fetches.
	pages := "pages"
	if c.stats.Recrawls > 0 {
		pages = "pages stored"
	}
	text := []string{c.line(c.fig(pct(last.Coverage), "of PageRank"), c.fig(count(last.Pages), pages))}
	if last.Oracle >= 0 {
		text = append(text, c.line(c.fig(pct(last.Oracle), "against the true PageRank")))
	}
	ch := chart{Max: 1, Style: c.styles.Chart, Axis: c.styles.Axis}
	if p.zoomed {
		ch.Label = pct
	}
	estimate := func(pt record.CoveragePoint) float64 { return pt.Coverage }
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
		oracle.Values = resample(cov, w-gw, func(pt record.CoveragePoint) float64 { return pt.Oracle })
		return c.styles.Label.Render("share of PageRank of the graph known") + "\n" + ch.render(w, top) + "\n" +
			c.styles.Label.Render("share of the true PageRank") + "\n" + oracle.render(w, h-2-top)
	})
}

// resample turns a coverage curve (the value y of each point), whose points
// need not be evenly spaced in pages, into n values evenly spaced from its
// first to its last point, interpolating linearly, so the chart's x axis is
// pages fetched.
func resample(cov []record.CoveragePoint, n int, y func(record.CoveragePoint) float64) []float64 {
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
