package tui

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"

	"lidi/engine"
)

// count formats n with thousands separators: 1234567 → "1,234,567".
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// bytesSI formats a byte count with decimal (SI) units, the way network
// rates are usually given: 999 B, 12.3 kB, 1.2 MB.
func bytesSI(n float64) string {
	if n < 0 {
		n = 0
	}
	const units = "kMGTPE"
	if n < 1000 {
		return fmt.Sprintf("%.0f B", n)
	}
	// Move up a unit while the figure would print as 1000 or more.
	i := -1
	for n >= 999.5 && i < len(units)-1 {
		n /= 1000
		i++
	}
	if n >= 99.95 {
		return fmt.Sprintf("%.0f %cB", n, units[i])
	}
	return fmt.Sprintf("%.1f %cB", n, units[i])
}

// rate formats a per-second figure with one decimal below 100 and none above.
func rate(v float64) string {
	if v < 0 {
		v = 0
	}
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// percent formats part/whole as a percentage; "–" when whole is zero.
// pagesFetches says how many pages a crawl stored and, when it fetched
// some again, in how many fetches: "3,961 pages" or "3,961 pages, 8,232
// fetches (4,271 recrawls)".
func pagesFetches(s *engine.Stats) string {
	if s.Recrawls == 0 {
		return count(s.Pages) + " pages"
	}
	return fmt.Sprintf("%s pages, %s fetches (%s recrawls)", count(s.Pages), count(s.Fetches), count(s.Recrawls))
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "–"
	}
	p := 100 * float64(part) / float64(whole)
	if p >= 99.95 && part < whole {
		return "99.9%" // never claim 100% while something is missing
	}
	return fmt.Sprintf("%.1f%%", p)
}

// span formats a duration compactly for a narrow column: "0.4s", "12s",
// "3m07s", "2h05m", "3d04h".
func span(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}

// uptime formats the running time of a crawl as h:mm:ss (with days when
// needed), which reads like a clock and does not jump in width every second.
func uptime(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	d = d.Truncate(time.Second)
	h := int(d / time.Hour)
	m := int(d % time.Hour / time.Minute)
	s := int(d % time.Minute / time.Second)
	if h >= 24 {
		return fmt.Sprintf("%dd %02d:%02d:%02d", h/24, h%24, m, s)
	}
	return fmt.Sprintf("%d:%02d:%02d", h, m, s)
}

// clock formats an event time in the local zone.
func clock(t time.Time) string {
	if t.IsZero() {
		return "--:--:--"
	}
	return t.Local().Format("15:04:05")
}

// clean makes text that came from the crawl (host names, URLs, error
// messages) safe to put on the screen: control characters, including the
// escape that starts a terminal sequence, become spaces or are dropped, so a
// hostile server cannot move the cursor or recolour the console.
func clean(s string) string {
	ok := true
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == unicode.ReplacementChar {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			// dropped
		case r == unicode.ReplacementChar:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// siteName is a site as the screen shows it: the scheme goes, since
// columns are narrow and nearly every site shares it; the port stays.
func siteName(site string) string {
	s := clean(site)
	for _, scheme := range []string{"https://", "http://"} {
		if rest, ok := strings.CutPrefix(s, scheme); ok {
			return rest
		}
	}
	return s
}

// cut shortens s (which may hold styles) to at most w cells, ending with an
// ellipsis when something was cut.
func cut(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) <= w {
		return s
	}
	if w == 1 {
		return ansi.Truncate(s, 1, "")
	}
	return ansi.Truncate(s, w, "…")
}

// pad cuts or pads s to exactly w cells.
func pad(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		s = cut(s, w)
		sw = ansi.StringWidth(s)
	}
	if sw < w {
		s += strings.Repeat(" ", w-sw)
	}
	return s
}

// padLeft right-aligns s in exactly w cells.
func padLeft(s string, w int) string {
	s = cut(s, w)
	if n := w - ansi.StringWidth(s); n > 0 {
		s = strings.Repeat(" ", n) + s
	}
	return s
}

// block makes s exactly w cells wide and h lines tall: long lines are cut,
// short ones padded, missing lines added and extra lines dropped. Every
// piece of the screen goes through it, which is what keeps the console from
// ever drawing past the terminal's edge.
func block(s string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		lines = lines[:h]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i, l := range lines {
		lines[i] = pad(l, w)
	}
	return strings.Join(lines, "\n")
}

// joinColumns places blocks side by side, separated by gap spaces. Every
// block must have the same number of lines (block guarantees it).
func joinColumns(gap int, blocks ...string) string {
	var cols [][]string
	n := 0
	for _, b := range blocks {
		if b == "" {
			continue
		}
		l := strings.Split(b, "\n")
		n = max(n, len(l))
		cols = append(cols, l)
	}
	sep := strings.Repeat(" ", gap)
	out := make([]string, n)
	for i := range n {
		var b strings.Builder
		for j, c := range cols {
			if j > 0 {
				b.WriteString(sep)
			}
			if i < len(c) {
				b.WriteString(c[i])
			}
		}
		out[i] = b.String()
	}
	return strings.Join(out, "\n")
}

// kindName is how the console names an error kind, skip reason or event
// kind: the engine's "robots" reasons concern robots.txt, and the console
// keeps "robots" for the visits running at once.
func kindName(k string) string {
	switch {
	case k == "robots", strings.HasPrefix(k, "robots-"): // robots-5xx: its text says what
		return "robots.txt"
	}
	return k
}

// perHost is n per host with one decimal, "–" with no host.
func perHost(n, hosts int64) string {
	if hosts == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f", float64(n)/float64(hosts))
}
