package tui

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// fill lays out a panel made of text lines and charts: the text lines go
// first, in order of importance, and the chart takes the lines left, at
// least minChart of them, which the least important text gives up first.
func fill(w, h int, text []string, minChart int, draw func(w, h int) string) string {
	if h <= 0 {
		return ""
	}
	chartH := max(h-len(text), min(minChart, h))
	if len(text) > h-chartH {
		text = text[:h-chartH]
	}
	out := strings.Join(text, "\n")
	if chartH > 0 {
		if out != "" {
			out += "\n"
		}
		out += draw(w, chartH)
	}
	return out
}

// byCount lists a map's keys by decreasing count, then by name, as
// "name count" figures.
func byCount[K ~string](c *common, m map[K]int64) []string {
	type kv struct {
		k string
		v int64
	}
	var kvs []kv
	for k, v := range m {
		if v != 0 {
			kvs = append(kvs, kv{string(k), v})
		}
	}
	slices.SortFunc(kvs, func(a, b kv) int {
		if c := cmp.Compare(b.v, a.v); c != 0 {
			return c
		}
		return strings.Compare(a.k, b.k)
	})
	out := make([]string, len(kvs))
	for i, e := range kvs {
		out[i] = c.styles.Label.Render(clean(kindName(e.k))) + " " + c.styles.Value.Render(count(e.v))
	}
	return out
}

// queuePanel shows the frontier: pages queued, sites by state, discovered
// against fetched, and the queue's history.
type queuePanel struct {
	com    *common
	w, h   int
	zoomed bool
}

func (p *queuePanel) setSize(w, h int, zoomed bool)          { p.w, p.h, p.zoomed = w, h, zoomed }
func (p *queuePanel) update(tea.KeyPressMsg) (tea.Cmd, bool) { return nil, false }
func (p *queuePanel) helpKeys() []key.Binding                { return nil }
func (p *queuePanel) title() (string, string) {
	return "Queue", count(int64(p.com.stats.Sites)) + " sites"
}

func (p *queuePanel) view() string {
	c, s := p.com, p.com.stats
	w := p.w
	text := []string{
		c.fit(w, c.fig(count(s.QueueDepth), "queued"), c.fig(count(s.Discovered), "found"), c.fig(count(s.Pages), "fetched")),
		c.fit(w, c.fig(count(int64(s.SitesReady)), "ready"), c.fig(count(int64(s.SitesWaiting)), "waiting"),
			c.fig(count(int64(s.SitesParked)), "parked"), c.fig(count(int64(s.SitesDone)), "done")),
	}
	if p.zoomed {
		text[0] = c.fit(w, c.fig(count(s.QueueDepth), "URLs queued"), c.fig(count(s.Discovered), "found"), c.fig(count(s.Pages), "fetched"))
		text[1] = c.fit(w, c.fig(count(int64(s.Sites)), "sites:"), c.fig(count(int64(s.SitesReady)), "ready"),
			c.fig(count(int64(s.SitesWaiting)), "waiting (delay, DNS, robots.txt retry)"), c.fig(count(int64(s.SitesParked)), "parked"),
			c.fig(count(int64(s.SitesDone)), "done"))
	}
	if sk := byCount(c, s.Skipped); len(sk) > 0 {
		if p.zoomed {
			text = append(text, c.styles.Label.Render("URLs not fetched, by reason:"))
			for _, e := range sk {
				text = append(text, "  "+e)
			}
		} else {
			sk[0] = c.styles.Label.Render("skipped ") + sk[0]
			text = append(text, c.fit(w, sk...))
		}
	}
	if !p.zoomed && p.h < 6 {
		// Two lines of figures and a chart read better than four of figures.
		text = text[:min(2, len(text))]
	}
	ch := chart{Values: c.hist.queue.vals, Floor: true, Style: c.styles.Chart, Axis: c.styles.Axis, Step: historyStep}
	if p.zoomed {
		ch.Label = func(v float64) string { return count(int64(v)) }
	}
	return fill(p.w, p.h, text, 2, ch.render)
}

// throughputPanel shows pages/s and bytes/s with their history, and the
// errors by kind.
type throughputPanel struct {
	com    *common
	w, h   int
	zoomed bool
}

func (p *throughputPanel) setSize(w, h int, zoomed bool)          { p.w, p.h, p.zoomed = w, h, zoomed }
func (p *throughputPanel) update(tea.KeyPressMsg) (tea.Cmd, bool) { return nil, false }
func (p *throughputPanel) helpKeys() []key.Binding                { return nil }
func (p *throughputPanel) title() (string, string) {
	return "Throughput", rate(p.com.stats.FetchesPerSec) + " fetches/s"
}

func (p *throughputPanel) view() string {
	c, s := p.com, p.com.stats
	rates := c.fit(p.w, c.fig(rate(s.FetchesPerSec), "fetches/s"), c.fig(bytesSI(s.BytesPerSec)+"/s", ""))
	errs := c.fig(count(s.Errors), "errors")
	if s.Errors > 0 {
		errs = c.styles.Value.Render(count(s.Errors)) + " " + c.styles.Warn.Render("errors") +
			c.styles.Label.Render(" ("+percent(s.Errors, s.Fetches)+")")
	}
	kinds := byCount(c, s.ErrorKind)
	conns := p.connections()
	h := c.hist
	if !p.zoomed {
		text := []string{rates, c.fit(p.w, append([]string{errs}, kinds...)...), c.fit(p.w, conns...)}
		pages := chart{Values: h.pages.vals, Style: c.styles.Chart, Axis: c.styles.Axis, Step: historyStep}
		if p.h-len(text) < 6 {
			return fill(p.w, p.h, text, 2, pages.render)
		}
		// Room for two charts, each under a caption.
		pages.Step = 0
		bytes := chart{Values: h.bytes.vals, Style: c.styles.ChartAlt, Axis: c.styles.Axis, Step: historyStep}
		return fill(p.w, p.h, text, 6, func(w, hh int) string {
			top := (hh - 2) / 2
			return c.styles.Label.Render("fetches/s, peak "+rate(peak(h.pages.vals))) + "\n" +
				pages.render(w, top) + "\n" +
				c.styles.Label.Render("bytes/s, peak "+bytesSI(peak(h.bytes.vals))) + "\n" +
				bytes.render(w, hh-2-top)
		})
	}
	// Zoomed: every error kind, the connections, then three labelled charts.
	text := []string{rates, errs}
	for _, k := range kinds {
		text = append(text, "  "+k)
	}
	text = append(text, c.fit(p.w, conns...))
	type named struct {
		name string
		ch   chart
	}
	charts := []named{
		{"fetches/s", chart{Values: h.pages.vals, Style: c.styles.Chart, Label: rate}},
		{"bytes/s", chart{Values: h.bytes.vals, Style: c.styles.ChartAlt, Label: func(v float64) string { return bytesSI(v) }}},
	}
	if peak(h.errors.vals) > 0 {
		// An empty chart of errors says less than its absence.
		charts = append(charts, named{"errors/s", chart{Values: h.errors.vals, Style: c.styles.ChartBad, Label: rate}})
	}
	return fill(p.w, p.h, text, 9, func(w, hh int) string {
		gw := 0
		for _, e := range charts {
			gw = max(gw, e.ch.gutter(w, 2))
		}
		var parts []string
		each := hh / len(charts)
		for i, e := range charts {
			n := each
			if i == len(charts)-1 {
				n = hh - each*(len(charts)-1)
			}
			if n < 2 {
				continue
			}
			e.ch.Axis, e.ch.MinGutter = c.styles.Axis, gw
			if i == len(charts)-1 {
				e.ch.Step = historyStep
			}
			parts = append(parts, c.styles.Label.Render(e.name), e.ch.render(w, n-1))
		}
		return strings.Join(parts, "\n")
	})
}

// connections is how well keep-alive holds: requests per connection and
// the reconnects (a visit's connections after its first, when a server
// closed it: an idle timeout shorter than the politeness delay).
func (p *throughputPanel) connections() []string {
	c, cs := p.com, p.com.stats.Conns
	if cs.Connections == 0 {
		return nil
	}
	re := c.fig(count(cs.Reconnects()), "reconnects")
	if cs.Sessions > 0 && cs.Reconnects()*4 > cs.Sessions {
		// More than one visit in four reconnects: w is likely longer than
		// the servers keep an idle connection.
		re = c.styles.Value.Render(count(cs.Reconnects())) + " " + c.styles.Warn.Render("reconnects")
	}
	return []string{c.fig(fmt.Sprintf("%.1f", cs.PerConnection()), "requests/connection"), re,
		c.styles.Label.Render("in ") + c.styles.Value.Render(count(cs.Sessions)) + c.styles.Label.Render(" visits")}
}

// dnsPanel shows host name resolution and what duplicate detection pruned.
type dnsPanel struct {
	com    *common
	w, h   int
	zoomed bool
}

func (p *dnsPanel) setSize(w, h int, zoomed bool)          { p.w, p.h, p.zoomed = w, h, zoomed }
func (p *dnsPanel) update(tea.KeyPressMsg) (tea.Cmd, bool) { return nil, false }
func (p *dnsPanel) helpKeys() []key.Binding                { return nil }
func (p *dnsPanel) title() (string, string)                { return "DNS & duplicates", "" }

func (p *dnsPanel) view() string {
	c, s := p.com, p.com.stats
	d, dup := s.DNS, s.Dup
	failed := c.fig(count(d.Failures), "failed")
	if d.Failures > 0 {
		failed = c.styles.Value.Render(count(d.Failures)) + " " + c.styles.Warn.Render("failed")
	}
	w := p.w - 4
	lines := []string{
		c.styles.Title.Render("DNS ") + c.fit(w, c.fig(count(d.Lookups), "hosts"), c.fig(count(d.Queries), "queries")),
		"    " + c.fit(w, c.fig(perHost(d.Queries, d.Lookups), "queries/host"), failed, c.fig(count(d.Collapsed), "joined")),
	}
	lines = append(lines, dupLines(c, dup, w, p.zoomed)...)
	if p.zoomed {
		help := []string{"",
			c.dim("hosts: looked up once each, when first found (not one per page);"),
			c.dim("queries/host: DNS queries sent per host (1 is the least; AAAA and"),
			c.dim("retries add); joined: a look-up that waited for one already in flight."),
			c.dim("exact and near: pages whose content duplicates one already fetched;"),
			c.dim("soft 404: pages a host answers for URLs that do not exist;"),
			c.dim("rules: URL rewrites learned from duplicate pairs (docs/detection.md);"),
			c.dim("pruned: URLs a rule covers, exchanged for their canonical URL;"),
			c.dim("original: the side a swap keeps, by the pages' evidence or arrival;"),
			c.dim("prior: hosts whose rules of the shape let this one need fewer pairs.")}
		room := p.h - len(lines) - len(help)
		if room < 7 {
			// The rules matter more than the legend.
			help, room = nil, p.h-len(lines)
		}
		lines = append(lines, recentRules(c, dup.Recent, w, room)...)
		lines = append(lines, help...)
	}
	return strings.Join(lines, "\n")
}
