package tui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// eighths are the block characters a column of a chart is drawn with, from
// empty to full; a cell shows one eighth of its height per step.
var eighths = []rune{' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// chart is a column chart of a series, newest value at the right, drawn
// with eighth blocks so a chart h rows tall has 8h levels. It is a value;
// the zero value draws nothing.
type chart struct {
	Values []float64 // oldest first
	Max    float64   // top of the scale; 0 means the largest value
	// Floor starts the scale at the smallest value instead of zero, for
	// levels (a queue's depth) whose changes are small beside their size.
	Floor bool
	Style lipgloss.Style
	Axis  lipgloss.Style       // style of the scale labels
	Label func(float64) string // when set and h ≥ 2, the scale is labelled on the left
	// MinGutter is the least width of the labels' column, to line up the
	// scales of charts drawn one above the other.
	MinGutter int
	// Step is the time between two values: when set and h ≥ 3, the bottom
	// line is a time axis ("-2m … now") instead of chart.
	Step time.Duration
}

// render draws the chart in exactly w cells by h lines. Only the last w
// values (fewer when the scale is labelled) fit; missing ones are blank.
func (c chart) render(w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	var axis string
	if c.Step > 0 && h >= 3 {
		h--
		axis = c.timeAxis(w, c.gutter(w, h))
	}
	lo, top := c.scale(w)
	var gutter []string
	if gw := c.gutter(w, h); gw > 0 {
		gutter = make([]string, h)
		for i := range gutter {
			switch i {
			case 0:
				gutter[i] = c.Axis.Render(padLeft(c.Label(top), gw-1) + "┤")
			case h - 1:
				gutter[i] = c.Axis.Render(padLeft(c.Label(lo), gw-1) + "┤")
			default:
				gutter[i] = c.Axis.Render(strings.Repeat(" ", gw-1) + "│")
			}
		}
		w -= gw
	}
	vals := c.Values
	if len(vals) > w {
		vals = vals[len(vals)-w:]
	}
	// levels[i] is how many eighths of the chart's height column i fills.
	levels := make([]int, w)
	off := w - len(vals)
	for i, v := range vals {
		switch {
		case math.IsNaN(v) || v <= 0 && !c.Floor:
			continue
		case top <= lo:
			levels[off+i] = 4 * h // a flat series: a level line halfway up
			continue
		}
		l := int(math.Round((min(v, top) - lo) / (top - lo) * float64(8*h)))
		if l <= 0 {
			l = 1 // every value stays visible, the lowest included
		}
		levels[off+i] = l
	}
	rows := make([]string, h)
	var b strings.Builder
	for r := range h {
		b.Reset()
		floor := (h - 1 - r) * 8
		for _, l := range levels {
			b.WriteRune(eighths[min(max(l-floor, 0), 8)])
		}
		row := c.Style.Render(b.String())
		if gutter != nil {
			row = gutter[r] + row
		}
		rows[r] = row
	}
	if axis != "" {
		rows = append(rows, axis)
	}
	return strings.Join(rows, "\n")
}

// axisTicks are the spans a time axis is marked in, the first that leaves
// room between two labels winning.
var axisTicks = []time.Duration{10 * time.Second, 30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute,
	10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 6 * time.Hour}

// timeAxis is the line under a chart w cells wide (gutter of them for the
// scale): "now" under the newest column and "-30s", "-1m", ... under the
// columns that many steps older.
func (c chart) timeAxis(w, gutter int) string {
	cols := w - gutter
	if cols < 4 {
		return ""
	}
	line := []rune(strings.Repeat(" ", w))
	copy(line[w-3:], []rune("now"))
	tick := axisTicks[len(axisTicks)-1]
	for _, t := range axisTicks {
		if int(t/c.Step) >= 9 {
			tick = t
			break
		}
	}
	free := w - 4 // labels end before this column
	for k := 1; ; k++ {
		// A label ends under the column k ticks old.
		x := w - 1 - int(time.Duration(k)*tick/c.Step)
		label := []rune("-" + shortDuration(time.Duration(k)*tick))
		start := x - len(label) + 1
		if start < gutter {
			break
		}
		if x < free {
			copy(line[start:], label)
			free = start - 1
		}
	}
	return c.Axis.Render(string(line))
}

// shortDuration is a duration in its largest unit: 30s, 2m, 1h30m → 90m.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + "s"
	case d < time.Hour || d%time.Hour != 0:
		return strconv.Itoa(int(d/time.Minute)) + "m"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h"
}

// scale returns the bottom and the top of the chart's scale for the last
// w values.
func (c chart) scale(w int) (lo, hi float64) {
	vals := c.Values
	if len(vals) > w {
		vals = vals[len(vals)-w:]
	}
	hi = c.Max
	if hi <= 0 {
		for _, v := range vals {
			hi = max(hi, v)
		}
	}
	if c.Floor && len(vals) > 0 {
		lo = hi
		for _, v := range vals {
			lo = min(lo, v)
		}
	}
	return lo, hi
}

// gutter is the width the scale's labels take on the left of a chart of
// w×h cells: 0 when it is not labelled, or too small for labels.
func (c chart) gutter(w, h int) int {
	if c.Label == nil || h < 2 {
		return 0
	}
	lo, hi := c.scale(w)
	gw := max(ansi.StringWidth(c.Label(hi)), ansi.StringWidth(c.Label(lo)), c.MinGutter-1) + 1
	if gw >= w/2 {
		return 0
	}
	return gw
}
