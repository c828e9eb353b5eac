package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// awkward is a snapshot made to break layouts: long and wide-character
// names, many error kinds, a long event log, measured curves.
func awkward() []engine.Stats {
	s := crawlSeries(90, engine.StateRunning)
	for i := range s {
		st := &s[i]
		*st = measured(*st)
		st.Visits = append(st.Visits,
			engine.VisitStats{Site: "例え.テスト", URL: "https://例え.テスト/記事/とても長いタイトルのページ?id=12345", Pages: 3, Planned: 8, Bytes: 1 << 20, Started: st.Time.Add(-time.Minute)},
			engine.VisitStats{Site: "a-very-long-host-name-that-goes-on.and-on.example.com", URL: "https://a-very-long-host-name-that-goes-on.and-on.example.com/" + strings.Repeat("segment/", 30), Pages: 120, Planned: 0, Bytes: 9 << 30, Started: st.Time.Add(-50 * time.Hour)},
		)
		for k := range 12 {
			st.ErrorKind[visit.FailureKind(fmt.Sprintf("kind-%d-with-a-long-name", k))] = int64(k * 1000)
		}
		for k := range 80 {
			st.Events = append(st.Events, record.Event{Time: st.Time.Add(-time.Duration(k) * time.Second), Kind: "mirror-labelled-long-kind",
				Site: "😀emoji.example", Text: strings.Repeat("very long text ", 20)})
		}
		st.Intervals = append(st.Intervals, engine.IntervalGroup{Name: strings.Repeat("name ", 30), Index: 1 << 30, Channels: 1 << 40, Interval: 400 * 24 * time.Hour, Updates: 1 << 40, Submitted: 1, SuccessRate: 7})
		st.Pages, st.Bytes, st.Errors = 1<<50, 1<<62, 1<<40
	}
	return s
}

// states puts the model in each of the states whose screens differ most.
var states = []struct {
	name string
	keys []string
}{
	{"main", nil},
	{"help", []string{"?"}},
	{"filter", []string{"/", "e", "x"}},
	{"zoom robots", []string{"enter"}},
	{"zoom queue", []string{"tab", "enter"}},
	{"zoom throughput", []string{"tab", "tab", "enter"}},
	{"zoom dns", []string{"tab", "tab", "tab", "enter"}},
	{"zoom coverage", []string{"tab", "tab", "tab", "tab", "enter"}},
	{"zoom intervals", []string{"tab", "tab", "tab", "tab", "tab", "enter"}},
	{"zoom events", []string{"shift+tab", "enter"}},
}

// TestEveryLineFits renders the console at sizes from 80×24 to 200×60 in
// each state and checks that it fills the terminal exactly: as many lines
// as the terminal has, none wider.
func TestEveryLineFits(t *testing.T) {
	var sizes [][2]int
	for w := 80; w <= 200; w++ {
		sizes = append(sizes, [2]int{w, 24 + (w*7)%37})
	}
	for _, w := range []int{80, 81, 119, 120, 149, 150, 200} {
		for h := 24; h <= 60; h++ {
			sizes = append(sizes, [2]int{w, h})
		}
	}
	// Each state at every size would take long under -race; every state
	// at every height of the widths where the layout changes, and the
	// states in turn at the other sizes, catch the same mistakes.
	for i, st := range states {
		c := newFake(awkward())
		hs := newHarness(t, c, 80, 24)
		hs.refresh(100)
		hs.press(st.keys...)
		for j, sz := range sizes {
			if j%len(states) != i && sz[0] != 80 && sz[0] != 150 && sz[0] != 200 {
				continue
			}
			hs.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			checkFits(t, hs.m.View().Content, sz[0], sz[1], st.name)
		}
		if t.Failed() {
			return // one state's failures are enough to read
		}
	}
}

// Below 80×24 the console is cramped but still never draws past the edge.
func TestSmallTerminals(t *testing.T) {
	for _, st := range states {
		c := newFake(awkward())
		hs := newHarness(t, c, 80, 24)
		hs.refresh(3)
		hs.press(st.keys...)
		for _, sz := range [][2]int{{1, 1}, {2, 5}, {10, 3}, {19, 30}, {20, 5}, {40, 10}, {60, 16}, {79, 23}, {80, 6}, {300, 4}} {
			hs.send(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			checkFits(t, hs.m.View().Content, sz[0], sz[1], st.name)
		}
	}
	// And before any size is known, it draws nothing rather than guess.
	m := New(newFake(awkward()), Options{})
	if v := m.View().Content; v != "" {
		t.Errorf("drew %q before knowing the size", v)
	}
}

// The layout gives every panel room at 80×24 and more: nothing is dropped,
// nothing overlaps, and everything lies inside the area. The slaves panel
// is there only on a cluster's master.
func TestLayoutPlacesEveryPanel(t *testing.T) {
	for _, sz := range [][3]int{{80, 21, 0}, {100, 30, 0}, {120, 37, 0}, {149, 40, 0}, {150, 40, 0}, {200, 57, 0},
		{80, 21, 1}, {120, 37, 1}, {150, 40, 1}, {200, 57, 1}} {
		w, h, clustered := sz[0], sz[1], sz[2] == 1
		rects := layoutFor(0, 1, w, h, clustered)
		for id, r := range rects {
			if panelID(id) == slavesPanelID && !clustered {
				if !r.empty() {
					t.Errorf("%dx%d: a slaves panel without a cluster", w, h)
				}
				continue
			}
			if r.empty() {
				t.Errorf("%dx%d clustered=%v: panel %d dropped", w, h, clustered, id)
				continue
			}
			if r.x < 0 || r.y < 1 || r.x+r.w > w || r.y+r.h > 1+h {
				t.Errorf("%dx%d: panel %d at %+v lies outside the area", w, h, id, r)
			}
			for other, o := range rects[id+1:] {
				if r.x < o.x+o.w && o.x < r.x+r.w && r.y < o.y+o.h && o.y < r.y+r.h {
					t.Errorf("%dx%d: panels %d and %d overlap: %+v %+v", w, h, id, id+1+other, r, o)
				}
			}
		}
	}
}

func TestSplitHeight(t *testing.T) {
	slots := []slot{{min: 4, grow: 2}, {min: 4, grow: 2}, {min: 5, max: 5}, {min: 3, grow: 1}, {min: 3, grow: 1}}
	for _, tc := range []struct {
		h    int
		want []int
	}{
		{21, []int{5, 5, 5, 3, 3}},
		{19, []int{4, 4, 5, 3, 3}},
		{10, []int{4, 4, 2, 0, 0}}, // minimums first, in order, while lines last
		{37, []int{10, 10, 5, 6, 6}},
	} {
		got := splitHeight(tc.h, slots)
		sum := 0
		for _, n := range got {
			sum += n
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) || (tc.h >= 19 && sum != tc.h) {
			t.Errorf("splitHeight(%d) = %v (sum %d), want %v", tc.h, got, sum, tc.want)
		}
	}
}
