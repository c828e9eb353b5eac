package tui

// panelID names a panel; the order is the tab order.
type panelID int

const (
	robotsPanelID panelID = iota
	slavesPanelID
	queuePanelID
	throughputPanelID
	dnsPanelID
	coveragePanelID
	intervalsPanelID
	eventsPanelID
	numPanels
)

// rect is an area of the screen in cells. A panel with an empty rect is
// not on screen (the terminal is too small for it).
type rect struct{ x, y, w, h int }

func (r rect) empty() bool { return r.w <= 0 || r.h <= 0 }

// slot asks for room in a column: at least min lines (title included), at
// most max (0: no limit), and a share of what is left in proportion to
// weight.
type slot struct {
	id             panelID
	min, max, grow int
}

// column is a vertical stack of panels taking a share of the width.
type column struct {
	share int // relative width
	minW  int // width below which the column's text stops making sense
	slots []slot
}

// Two columns up to 149 cells: visits and events on the left, figures on
// the right. From 150 cells the figures split into two columns.
var (
	narrowColumns = []column{
		{share: 3, slots: []slot{
			{id: robotsPanelID, min: 6, grow: 3},
			{id: eventsPanelID, min: 4, grow: 2},
		}},
		{share: 2, minW: 35, slots: []slot{
			{id: queuePanelID, min: 4, grow: 2},
			{id: throughputPanelID, min: 4, grow: 2},
			{id: dnsPanelID, min: 5, max: 5},
			{id: coveragePanelID, min: 3, grow: 1},
			{id: intervalsPanelID, min: 3, grow: 1},
		}},
	}
	wideColumns = []column{
		{share: 4, slots: []slot{
			{id: robotsPanelID, min: 6, grow: 3},
			{id: eventsPanelID, min: 4, grow: 2},
		}},
		{share: 3, minW: 35, slots: []slot{
			{id: queuePanelID, min: 4, grow: 1},
			{id: throughputPanelID, min: 4, grow: 1},
		}},
		{share: 3, minW: 35, slots: []slot{
			{id: dnsPanelID, min: 5, max: 6},
			{id: coveragePanelID, min: 3, grow: 1},
			{id: intervalsPanelID, min: 3, grow: 1},
		}},
	}
)

// wideLayout is the width from which the figures take two columns.
const wideLayout = 150

// columnGap is the blank space between two columns.
const columnGap = 1

// slavesSlot is the slaves panel's room, under the robots, on a cluster's
// master.
var slavesSlot = slot{id: slavesPanelID, min: 4, grow: 2}

// layoutFor places the panels in an area of w×h cells whose top-left
// corner is at (x, y), with the slaves panel when clustered.
func layoutFor(x, y, w, h int, clustered bool) [numPanels]rect {
	cols := narrowColumns
	if w >= wideLayout {
		cols = wideColumns
	}
	if clustered {
		cols = append([]column(nil), cols...)
		first := cols[0]
		first.slots = append([]slot{first.slots[0], slavesSlot}, first.slots[1:]...)
		cols[0] = first
	}
	var rects [numPanels]rect
	widths := splitWidth(w, cols)
	cx := x
	for i, c := range cols {
		cw := widths[i]
		if cw <= 0 {
			continue
		}
		hs := splitHeight(h, c.slots)
		cy := y
		for j, s := range c.slots {
			if hs[j] >= 2 { // a title and at least one line
				rects[s.id] = rect{cx, cy, cw, hs[j]}
			}
			cy += hs[j]
		}
		cx += cw + columnGap
	}
	return rects
}

// splitWidth shares w between the columns by their shares, keeping the
// columns that ask for a minimum width at it when there is room.
func splitWidth(w int, cols []column) []int {
	avail := w - columnGap*(len(cols)-1)
	out := make([]int, len(cols))
	if avail <= 0 {
		return out
	}
	total := 0
	for _, c := range cols {
		total += c.share
	}
	used := 0
	for i, c := range cols[1:] {
		cw := avail * c.share / total
		if cw < c.minW {
			cw = c.minW
		}
		out[i+1] = cw
		used += cw
	}
	out[0] = avail - used
	if out[0] < avail*cols[0].share/total/2 {
		// Too narrow to keep the minimums: share plainly.
		used = 0
		for i := 1; i < len(cols); i++ {
			out[i] = avail * cols[i].share / total
			used += out[i]
		}
		out[0] = avail - used
	}
	return out
}

// splitHeight shares h lines between slots: first every minimum (in order,
// while lines last), then the rest by weight up to each maximum. Rounding
// leftovers go to the first slots that can grow.
func splitHeight(h int, slots []slot) []int {
	out := make([]int, len(slots))
	left := h
	for i, s := range slots {
		n := min(s.min, left)
		out[i] = n
		left -= n
	}
	for left > 0 {
		weight := 0
		for i, s := range slots {
			if s.grow > 0 && (s.max == 0 || out[i] < s.max) {
				weight += s.grow
			}
		}
		if weight == 0 {
			break
		}
		given := 0
		share := left
		for i, s := range slots {
			if s.grow == 0 || (s.max > 0 && out[i] >= s.max) {
				continue
			}
			n := share * s.grow / weight
			if s.max > 0 {
				n = min(n, s.max-out[i])
			}
			out[i] += n
			given += n
		}
		left -= given
		if given == 0 {
			for i, s := range slots {
				if left == 0 {
					break
				}
				if s.grow > 0 && (s.max == 0 || out[i] < s.max) {
					out[i]++
					left--
				}
			}
		}
	}
	return out
}

// direction is an arrow key's way.
type direction int

const (
	dirUp direction = iota
	dirDown
	dirLeft
	dirRight
)

// neighbour finds the panel next to from in direction d: among the panels
// lying wholly on that side, those that overlap from across the direction
// of travel win over those that do not, then the nearest, then the top-most
// (or left-most), so that right from a tall panel lands at the top of the
// column beside it. It returns from when there is none.
func neighbour(rects [numPanels]rect, from panelID, d direction) panelID {
	r := rects[from]
	if r.empty() {
		return from
	}
	best := from
	var bestKey [3]int
	for id, o := range rects {
		if panelID(id) == from || o.empty() {
			continue
		}
		var gap, off, start int
		switch d {
		case dirUp, dirDown:
			if d == dirUp && o.y+o.h > r.y || d == dirDown && o.y < r.y+r.h {
				continue
			}
			gap = max(r.y-(o.y+o.h), o.y-(r.y+r.h))
			off, start = apart(r.x, r.w, o.x, o.w), o.x
		case dirLeft, dirRight:
			if d == dirLeft && o.x+o.w > r.x || d == dirRight && o.x < r.x+r.w {
				continue
			}
			gap = max(r.x-(o.x+o.w), o.x-(r.x+r.w))
			off, start = apart(r.y, r.h, o.y, o.h), o.y
		}
		key := [3]int{off, gap, start}
		if best == from || less(key, bestKey) {
			best, bestKey = panelID(id), key
		}
	}
	return best
}

// apart is how far the spans [a, a+an) and [b, b+bn) are from overlapping:
// 0 when they overlap.
func apart(a, an, b, bn int) int {
	return max(b-(a+an), a-(b+bn), -1) + 1
}

func less(a, b [3]int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
