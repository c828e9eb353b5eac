package tui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"lidi/engine"
)

// intervalsPanel shows recrawling: per priority group its channels, its
// estimated change interval, its recrawl interval now, the freshness the
// estimates expect, its updates and success rate since the last
// reassignment and its interval over time; when and by which policy the
// intervals were last reassigned; the freshness of the copies; and why the
// robots sit idle when they do.
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
	r := p.com.stats.Recrawl
	if r == nil {
		return "Recrawl intervals", ""
	}
	right := r.Policy
	if r.Freshness >= 0 {
		right += " · fresh " + freshLabel(r)
	}
	return "Recrawl intervals", right
}

// freshLabel is the freshness, "~" marking an estimate.
func freshLabel(r *engine.RecrawlStats) string {
	if r.FreshnessExact {
		return pct(r.Freshness)
	}
	return "~" + pct(r.Freshness)
}

func (p *intervalsPanel) view() string {
	c := p.com
	r := c.stats.Recrawl
	groups := c.stats.Intervals
	if r == nil {
		if groups != nil { // an engine that measures groups without the recrawl state
			return strings.Join(trimList(c, p.table(groups, nil, true), p.h), "\n")
		}
		return c.dim("recrawling is off") + "\n" + c.dim("recrawl.enabled in config.yaml")
	}
	var head []string
	fresh := ""
	if r.Freshness >= 0 {
		what := "fresh (estimated)"
		if r.FreshnessExact {
			what = "fresh (ground truth)"
		}
		fresh = c.fig(freshLabel(r), what)
	}
	if !r.WarmupEnds.IsZero() || r.PerPage && len(groups) == 0 {
		when := c.dim("each channel grouped by change rate once its evidence suffices")
		if !r.PerPage {
			when = c.dim("grouped by change rate in " + every(r.WarmupEnds.Sub(r.Now)) + " (recrawl clock)")
		}
		head = append(head, c.fit(p.w, c.fig("warming up", ""), c.fig(count(int64(r.Channels)), "channels probed")), when)
		if fresh != "" {
			head = append(head, fresh)
		}
		return strings.Join(trimList(c, head, p.h), "\n")
	}
	if r.PerPage {
		// No tasks nor reassignments: a plan page by page, re-solved as
		// its estimates move.
		head = append(head, c.fit(p.w, fresh, c.fig(count(int64(math.Round(r.Budget))), "recrawls/h planned")), c.fit(p.w,
			c.fig(count(int64(r.Channels)), "channels"), c.fig(count(int64(r.Warming)), "warming up"), c.fig(count(int64(r.Done)), "recrawls")))
	} else {
		last := c.dim("no reassignment yet")
		if !r.LastReassign.IsZero() {
			last = c.fig(every(r.Now.Sub(r.LastReassign)), "since "+r.LastPolicy+"'s reassignment #"+strconv.Itoa(r.Reassignments))
		}
		head = append(head, c.fit(p.w, fresh, last), c.fit(p.w,
			c.fig(count(int64(r.Channels)), "channels"), c.fig(count(int64(r.Done)), "recrawls"), c.fig(count(int64(r.Dropped)), "dropped")))
	}
	lines := append(head, p.table(groups, r.History, !r.PerPage)...)
	if why := idleReason(c.stats); why != "" {
		lines = append(lines, c.dim(why))
	}
	if p.zoomed {
		from, to := p.scroll.window(len(lines)-1, p.h-1)
		return strings.Join(append(lines[:1:1], lines[1+from:1+to]...), "\n")
	}
	if len(lines) > p.h {
		lines = append(lines[:1], lines[2:]...) // the counts say least
	}
	return strings.Join(trimList(c, lines, p.h), "\n")
}

// idleReason says why robots sit idle while recrawling, or "" when they
// do not: nothing is queued, so every channel (every page, for a policy of
// pages) is recrawled as often as its interval wants; or what is queued
// waits for its sites' politeness.
func idleReason(st *engine.Stats) string {
	if st == nil || st.Recrawl == nil || st.RobotsBusy >= st.Robots || st.Robots == 0 {
		return ""
	}
	idle := st.Robots - st.RobotsBusy
	switch {
	case st.QueueDepth == 0 && st.Recrawl.PerPage:
		return fmt.Sprintf("%d robots idle: every page is recrawled as often as its plan wants (recrawls keep to half the robots' capacity)", idle)
	case st.QueueDepth == 0:
		return fmt.Sprintf("%d robots idle: every channel is recrawled as often as its interval wants", idle)
	case st.SitesReady == 0 && st.SitesWaiting > 0:
		return fmt.Sprintf("%d robots idle: the %d sites with queued pages wait for their politeness delay", idle, st.SitesWaiting)
	}
	return ""
}

// Column widths of the groups' table.
const (
	grpW   = 3 // "g0"
	chW    = 6 // channels
	ivW    = 6 // an interval, as every writes it
	frW    = 5 // a freshness, "82%"
	updW   = 5
	succW  = 5
	spkMin = 6 // the narrowest sparkline worth drawing
)

// table is a heading and a row per group: its channels, its estimated
// change interval, its recrawl interval now, the freshness the estimates
// expect, updates and success rate since the last reassignment (tasks:
// false for a policy of pages, which has neither), and a sparkline of its
// interval over history when there is room.
func (p *intervalsPanel) table(groups []engine.IntervalGroup, history []engine.IntervalPoint, tasks bool) []string {
	c := p.com
	fixed := grpW + chW + 2*ivW + frW + 4
	if tasks {
		fixed += updW + succW + 2
	}
	spk := p.w - fixed - 1
	// Short of room for the sparkline, the updates give theirs.
	upd := tasks
	if tasks && spk < spkMin && spk+updW+1 >= spkMin && len(history) >= 2 {
		upd, spk = false, spk+updW+1
	}
	if spk < spkMin || len(history) < 2 {
		spk = 0
	}
	heading := pad("grp", grpW) + " " + padLeft("chans", chW) + " " + padLeft("change", ivW) + " " + padLeft("every", ivW) +
		" " + padLeft("fresh", frW)
	if upd {
		heading += " " + padLeft("upd", updW)
	}
	if tasks {
		heading += " " + padLeft("succ", succW)
	}
	if spk > 0 {
		heading += " " + pad("interval over time", spk)
	}
	lines := []string{c.styles.Column.Render(heading)}
	for _, g := range groups {
		change, fresh := g.Change, "–"
		if change == 0 {
			change = g.Initial // an engine that keeps only the start's estimate
		} else {
			fresh = fmt.Sprintf("%.0f%%", 100*min(max(g.Freshness, 0), 1))
		}
		row := pad("g"+strconv.Itoa(g.Index), grpW) + " " + padLeft(count(int64(g.Channels)), chW) + " " +
			padLeft(every(change), ivW) + " " + padLeft(every(g.Interval), ivW) + " " + padLeft(fresh, frW)
		if upd {
			row += " " + padLeft(count(int64(g.Updates)), updW)
		}
		if tasks {
			row += " " + padLeft(succ(g), succW)
		}
		if spk > 0 {
			vals := make([]float64, 0, len(history))
			for _, pt := range history {
				v := 0.0
				if g.Index < len(pt.Intervals) {
					v = pt.Intervals[g.Index].Minutes()
				}
				vals = append(vals, v)
			}
			ch := chart{Values: vals, Style: c.styles.Chart}
			row += " " + ch.render(spk, 1)
		}
		lines = append(lines, row)
	}
	return lines
}

// succ is a group's success rate since the last reassignment, "–" before
// any task.
func succ(g engine.IntervalGroup) string {
	if g.Submitted == 0 {
		return "–"
	}
	return fmt.Sprintf("%.0f%%", 100*min(max(g.SuccessRate, 0), 1))
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
