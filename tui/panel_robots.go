package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"lidi/engine"
	"lidi/engine/fetch"
)

// robotsPanel shows the visits in flight (one robot on one site each) and
// the sites waiting for their politeness delay. "/" filters both lists by
// site.
type robotsPanel struct {
	com    *common
	w, h   int
	zoomed bool
	scroll scroller

	filter  string // applied filter, matched case-insensitively in the site
	editing bool   // the filter input is open
	input   []rune // the text being typed
}

func newRobotsPanel(c *common) *robotsPanel { return &robotsPanel{com: c} }

func (p *robotsPanel) setSize(w, h int, zoomed bool) {
	p.w, p.h = w, h
	if zoomed != p.zoomed {
		p.scroll = scroller{}
	}
	p.zoomed = zoomed
}

func (p *robotsPanel) title() (string, string) {
	s := p.com.stats
	sum := fmt.Sprintf("%d of %d busy", s.RobotsBusy, s.Robots)
	if s.SitesWaiting > 0 {
		sum = fields(sum, count(int64(s.SitesWaiting))+" waiting")
	}
	if n := len(s.GivenUp); n > 0 {
		sum = fields(sum, count(int64(n))+" given up")
	}
	if sm := s.Sitemaps; sm.Read > 0 {
		sum = fields(sum, count(sm.Read)+" sitemaps, "+count(sm.URLs)+" URLs")
	}
	if s.RobotsRedirected > 0 {
		sum = fields(sum, count(s.RobotsRedirected)+" robots.txt redirected")
	}
	return "Robots", sum
}

func (p *robotsPanel) helpKeys() []key.Binding {
	k := p.com.keys
	switch {
	case p.editing:
		return []key.Binding{k.FilterApply, k.FilterClear}
	case p.zoomed:
		return []key.Binding{withHelp(k.Down, "↑/↓", "scroll")}
	case p.filter != "":
		return []key.Binding{withHelp(k.Back, "esc", "unfilter")}
	}
	return nil
}

// activeFilter is the filter in force: the text being typed while the
// input is open, so the list narrows as one types.
func (p *robotsPanel) activeFilter() string {
	if p.editing {
		return string(p.input)
	}
	return p.filter
}

// startFilter opens the filter input, starting from the current filter.
func (p *robotsPanel) startFilter() {
	p.editing = true
	p.input = []rune(p.filter)
}

// clearFilter drops the filter and closes the input.
func (p *robotsPanel) clearFilter() {
	p.editing = false
	p.input = nil
	p.filter = ""
	p.scroll = scroller{}
}

// update takes the keys of the filter input while it is open, and scroll
// keys when zoomed.
func (p *robotsPanel) update(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := p.com.keys
	if !p.editing {
		if p.zoomed {
			return nil, p.scroll.key(k, msg, p.h)
		}
		return nil, false
	}
	switch {
	case key.Matches(msg, k.FilterApply):
		p.filter = strings.TrimSpace(string(p.input))
		p.editing = false
		p.input = nil
	case key.Matches(msg, k.FilterClear):
		p.clearFilter()
	case msg.String() == "backspace":
		if len(p.input) > 0 {
			p.input = p.input[:len(p.input)-1]
		}
	case msg.String() == "ctrl+u":
		p.input = nil
	case msg.String() == "ctrl+w":
		t := strings.TrimRightFunc(string(p.input), unicode.IsSpace)
		i := strings.LastIndexFunc(t, func(r rune) bool { return r == '.' || r == '/' || r == ':' || unicode.IsSpace(r) })
		p.input = []rune(t[:i+1])
	case msg.Text != "" && msg.Mod&^tea.ModShift == 0:
		p.addText(msg.Text)
	}
	p.scroll = scroller{}
	return nil, true
}

// addText appends typed or pasted text to the filter input, without
// control characters or line breaks.
func (p *robotsPanel) addText(s string) {
	for _, r := range clean(s) {
		if r == ' ' && len(p.input) == 0 {
			continue
		}
		if len(p.input) < 200 {
			p.input = append(p.input, r)
		}
	}
}

func (p *robotsPanel) match(site string) bool {
	f := p.activeFilter()
	return f == "" || strings.Contains(strings.ToLower(site), strings.ToLower(strings.TrimSpace(f)))
}

// visits returns the visits that pass the filter, longest-running first,
// so robots keep their rows from one refresh to the next.
func (p *robotsPanel) visits() []engine.VisitStats {
	var out []engine.VisitStats
	for _, v := range p.com.stats.Visits {
		if p.match(v.Site) {
			out = append(out, v)
		}
	}
	slices.SortStableFunc(out, func(a, b engine.VisitStats) int {
		if c := a.Started.Compare(b.Started); c != 0 {
			return c
		}
		return strings.Compare(a.Site, b.Site)
	})
	return out
}

// waitHeads head the waiting sites of each reason.
var waitHeads = map[engine.WaitReason]string{
	engine.WaitDelay:     " for their politeness delay",
	engine.WaitRobotsTxt: " to retry robots.txt (5xx or unreachable: nothing fetched until then)",
	engine.WaitBackoff:   " backing off after errors",
}

// waiting returns the waiting sites that pass the filter, soonest first.
func (p *robotsPanel) waiting() []engine.WaitingSite {
	var out []engine.WaitingSite
	for _, w := range p.com.stats.Waiting {
		if p.match(w.Site) {
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b engine.WaitingSite) int {
		if c := a.Until.Compare(b.Until); c != 0 {
			return c
		}
		return strings.Compare(a.Site, b.Site)
	})
	return out
}

// path returns the part of a URL after its host, which is all that is
// left to say once the site is in its own column.
func path(u string) string {
	rest := u
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			rest = rest[j:]
		} else {
			rest = "/"
		}
	}
	return rest
}

func (p *robotsPanel) view() string {
	c, st := p.com, p.com.styles
	var top []string
	now := c.at()
	visits, waiting := p.visits(), p.waiting()
	switch {
	case p.editing:
		in := "/" + string(p.input) + st.Cursor.Render(" ")
		top = append(top, in+"  "+c.dim("enter keeps · esc clears"))
	case p.filter != "":
		top = append(top, c.fit(p.w, st.Value.Render("/"+clean(p.filter)),
			c.fig(fmt.Sprintf("%d of %d", len(visits), len(c.stats.Visits)), "visits"),
			c.fig(fmt.Sprintf("%d of %d", len(waiting), len(c.stats.Waiting)), "waiting"),
			c.dim("esc clears")))
	}

	// Columns: site and page, pages on the connection, bytes, time. The
	// site and the page share a column until there is room for two.
	const pgW, byW, tW = 5, 7, 5
	rest := max(p.w-pgW-byW-tW-3, 4)
	siteW := 0
	if rest >= 50 {
		siteW = min(rest*2/5, 32)
	}
	row := func(site, page, pg, by, t string) string {
		var s string
		if siteW > 0 {
			s = pad(site, siteW) + " " + pad(page, rest-siteW-1)
		} else {
			s = pad(site+page, rest)
		}
		return s + " " + padLeft(pg, pgW) + " " + padLeft(by, byW) + " " + padLeft(t, tW)
	}
	siteHead, pageHead := "site and page", ""
	if siteW > 0 {
		siteHead, pageHead = "site", "page"
	}

	var vis []string
	vis = append(vis, st.Column.Render(row(siteHead, pageHead, "pages", "bytes", "time")))
	for _, v := range visits {
		pg := fmt.Sprintf("%d/%d", v.Pages, v.Planned)
		if v.Planned <= 0 {
			pg = fmt.Sprint(v.Pages)
		}
		vis = append(vis, row(siteName(v.Site), clean(path(v.URL)), pg, bytesSI(float64(v.Bytes)), span(now.Sub(v.Started))))
	}
	if len(visits) == 0 {
		msg := "no visit in flight"
		switch {
		case p.activeFilter() != "" && len(c.stats.Visits) > 0:
			msg = "no visit matches the filter"
		case c.stats.State == engine.StatePaused:
			msg = "paused: no visit in flight"
		case c.stats.State == engine.StateDone:
			msg = "crawl finished: no visit in flight"
		case c.stats.State == engine.StateFailed:
			msg = "crawl failed: no visit in flight"
		}
		vis = append(vis, c.dim(msg))
		if s := c.stats; s.State == engine.StateDone || s.State == engine.StateFailed {
			// The run's totals, where the visits were.
			vis = append(vis, "",
				c.fit(p.w, c.fig(count(s.Pages), "pages"), c.recrawlFigs(s), c.fig(bytesSI(float64(s.Bytes)), ""),
					c.fig(count(s.Errors), "errors ("+percent(s.Errors, s.Fetches)+")")),
				c.fit(p.w, c.fig(count(int64(s.SitesDone)), "sites done"), c.fig(count(int64(s.SitesParked)), "parked"),
					c.fig(count(s.Discovered), "URLs found")),
			)
			if !s.Started.IsZero() {
				vis = append(vis, c.fig(uptime(now.Sub(s.Started)), "this run"))
			}
		}
	}

	var wait []string
	if len(waiting) > 0 || c.stats.SitesWaiting > 0 {
		n := count(int64(c.stats.SitesWaiting)) + " sites"
		switch {
		case len(waiting) == 0 && len(c.stats.Waiting) > 0:
			n += ", none matches"
		case len(waiting) > 0 && len(waiting) < c.stats.SitesWaiting:
			n += ", soonest"
		}
		head := "waiting: " + n
		wait = append(wait, st.Column.Render(pad(head, p.w)))
		const pendW, inW = 14, 9
		sw := max(p.w-pendW-inW-2, 4)
		// By reason: the politeness delay, then the sites whose robots.txt
		// is to be retried, then those backing off after errors.
		for _, r := range []engine.WaitReason{engine.WaitDelay, engine.WaitRobotsTxt, engine.WaitBackoff} {
			first := true
			for _, ws := range waiting {
				if ws.Reason != r {
					continue
				}
				if first {
					wait = append(wait, c.dim(waitHeads[r]))
					first = false
				}
				wait = append(wait, pad(siteName(ws.Site), sw)+" "+padLeft(count(ws.Pending)+" queued", pendW)+" "+padLeft(waitFor(ws.Until.Sub(now)), inW))
			}
		}
	}

	avail := p.h - len(top)
	if p.zoomed {
		all := append(append(vis, p.chains()...), wait...)
		from, to := p.scroll.window(len(all), avail)
		return strings.Join(append(top, all[from:to]...), "\n")
	}
	// Waiting sites get up to a third of the room when both lists overflow.
	wantV, wantW := len(vis), len(wait)
	if wantV+wantW > avail {
		wb := 0
		if wantW > 0 {
			wb = min(wantW, max(2, avail/3))
		}
		if wantV < avail-wb {
			wb = avail - wantV
		}
		vis = trimList(c, vis, avail-wb)
		wait = trimList(c, wait, wb)
	}
	return strings.Join(append(append(top, vis...), wait...), "\n")
}

// chains lists where the robots.txt of the sites that pass the filter was
// read after redirects (RFC 9309 2.3.1.2: up to five, across hosts and
// schemes), a site a line and its last request below: "301 → 308 → 200",
// or why the chain was given up.
func (p *robotsPanel) chains() []string {
	c, s := p.com, p.com.stats
	var out []string
	for _, ch := range s.RobotsChains {
		if !p.match(ch.Site) {
			continue
		}
		var steps []string
		for _, h := range ch.Redirects {
			steps = append(steps, fmt.Sprint(h.Status))
		}
		last := fmt.Sprint(ch.Status)
		switch {
		case ch.End == fetch.ChainTooLong, ch.End == fetch.ChainLoop, ch.End == fetch.ChainBadTarget:
			last = ch.End.String() + ": read as no robots.txt, all allowed"
		case ch.Status < 0:
			last = "unreachable: nothing fetched until it is retried"
		}
		steps = append(steps, last)
		out = append(out, cut(pad(siteName(ch.Site), min(32, p.w/3))+" "+c.styles.Value.Render(strings.Join(steps, " → ")), p.w),
			cut(c.dim("  read at "+clean(ch.URL)), p.w))
	}
	if len(out) == 0 {
		return nil
	}
	head := "robots.txt read after redirects: " + count(s.RobotsRedirected) + " sites"
	if int64(len(s.RobotsChains)) < s.RobotsRedirected {
		head += ", latest"
	}
	return append([]string{"", c.styles.Column.Render(pad(head, p.w))}, out...)
}

// waitFor says how long until a site may be visited again.
func waitFor(d time.Duration) string {
	if d <= 0 {
		return "now"
	}
	return "in " + span(d)
}

// trimList keeps the first n lines of a list, replacing the last kept line
// by "… k more" when lines are cut.
func trimList(c *common, lines []string, n int) []string {
	if n <= 0 {
		return nil
	}
	if len(lines) <= n {
		return lines
	}
	if n == 1 {
		return lines[:1]
	}
	hidden := len(lines) - n + 1
	return append(lines[:n-1:n-1], c.dim(fmt.Sprintf("… %d more", hidden)))
}
