package tui

import (
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"lidi/engine/record"
)

func TestCount(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 123456: "123,456", 1234567: "1,234,567",
		-1234: "-1,234", -999: "-999", 1 << 62: "4,611,686,018,427,387,904",
	} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBytesSI(t *testing.T) {
	for _, tc := range []struct {
		n    float64
		want string
	}{
		{0, "0 B"}, {-5, "0 B"}, {999, "999 B"}, {1000, "1.0 kB"}, {18_000, "18.0 kB"}, {144_000, "144 kB"},
		{99_949, "99.9 kB"}, {99_960, "100 kB"}, {999_499, "999 kB"}, {999_500, "1.0 MB"}, {2_900_000_000, "2.9 GB"}, {1 << 62, "4.6 EB"},
	} {
		if got := bytesSI(tc.n); got != tc.want {
			t.Errorf("bytesSI(%v) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestDurations(t *testing.T) {
	for _, tc := range []struct {
		d          time.Duration
		span, up   string
		everyLabel string
	}{
		{0, "0.0s", "0:00:00", "–"},
		{400 * time.Millisecond, "0.4s", "0:00:00", "0s"},
		{12*time.Second + 300*time.Millisecond, "12s", "0:00:12", "12s"},
		{3*time.Minute + 7*time.Second, "3m07s", "0:03:07", "3.1m"},
		{2*time.Hour + 5*time.Minute, "2h05m", "2:05:00", "2.1h"},
		{6 * time.Hour, "6h00m", "6:00:00", "6h"},
		{76 * time.Hour, "3d04h", "3d 04:00:00", "3.2d"},
		{-time.Second, "0.0s", "0:00:00", "–"},
	} {
		if got := span(tc.d); got != tc.span {
			t.Errorf("span(%v) = %q, want %q", tc.d, got, tc.span)
		}
		if got := uptime(tc.d); got != tc.up {
			t.Errorf("uptime(%v) = %q, want %q", tc.d, got, tc.up)
		}
		if got := every(tc.d); got != tc.everyLabel {
			t.Errorf("every(%v) = %q, want %q", tc.d, got, tc.everyLabel)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct {
		part, whole int64
		want        string
	}{
		{0, 0, "–"}, {1, 2, "50.0%"}, {9999, 10000, "99.9%"}, {99999, 100000, "99.9%"}, {5, 5, "100.0%"},
	} {
		if got := percent(tc.part, tc.whole); got != tc.want {
			t.Errorf("percent(%d, %d) = %q, want %q", tc.part, tc.whole, got, tc.want)
		}
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"www.example.org":         "www.example.org",
		"a\nb\tc\rd":              "a b c d",
		"x\x1b[31my":              "x[31my",
		"\u009b2J":                "2J",
		"ok\x00\x07\x7f":          "ok",
		"例え.テスト":                  "例え.テスト",
		string([]byte{'a', 0xff}): "a?",
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCutAndPad(t *testing.T) {
	styled := lipgloss.NewStyle().Bold(true).Render("bold text")
	for _, tc := range []struct {
		s    string
		w    int
		cut  string
		pad  string
		left string
	}{
		{"hello", 10, "hello", "hello     ", "     hello"},
		{"hello", 5, "hello", "hello", "hello"},
		{"hello world", 5, "hell…", "hell…", "hell…"},
		{"hello", 1, "h", "h", "h"},
		{"hello", 0, "", "", ""},
		{"例え例え", 5, "例え…", "例え…", "例え…"},
	} {
		if got := cut(tc.s, tc.w); got != tc.cut {
			t.Errorf("cut(%q, %d) = %q, want %q", tc.s, tc.w, got, tc.cut)
		}
		if got := pad(tc.s, tc.w); got != tc.pad {
			t.Errorf("pad(%q, %d) = %q, want %q", tc.s, tc.w, got, tc.pad)
		}
		if got := padLeft(tc.s, tc.w); got != tc.left {
			t.Errorf("padLeft(%q, %d) = %q, want %q", tc.s, tc.w, got, tc.left)
		}
	}
	// Styles survive cutting, and count for nothing in the width.
	got := pad(styled, 6)
	if ansi.StringWidth(got) != 6 || ansi.Strip(got) != "bold …" || !strings.Contains(got, "\x1b[") {
		t.Errorf("pad(styled, 6) = %q", got)
	}
}

func TestBlock(t *testing.T) {
	got := block("a\nlonger line\nc\nd", 6, 3)
	want := "a     \nlonge…\nc     "
	if got != want {
		t.Errorf("block = %q, want %q", got, want)
	}
	if got := block("x", 3, 2); got != "x  \n   " {
		t.Errorf("block adds lines: %q", got)
	}
	if got := joinColumns(1, "ab\ncd", "", "ef\ngh"); got != "ab ef\ncd gh" {
		t.Errorf("joinColumns = %q", got)
	}
}

func TestChart(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    chart
		w, h int
		want string
	}{
		{"eighths", chart{Values: []float64{0, 1, 2, 3, 4, 5, 6, 7, 8}}, 9, 1, " ▁▂▃▄▅▆▇█"},
		{"two rows", chart{Values: []float64{2, 8, 16}}, 3, 2, "  █\n▂██"},
		{"newest right, blanks left", chart{Values: []float64{4, 8}}, 4, 1, "  ▄█"},
		{"only the last w", chart{Values: []float64{8, 8, 8, 4, 8}}, 2, 1, "▄█"},
		{"small values stay visible", chart{Values: []float64{0.01, 100}}, 2, 1, "▁█"},
		{"fixed max", chart{Values: []float64{0.5, 2}, Max: 1}, 2, 1, "▄█"},
		{"floor", chart{Values: []float64{100, 104, 108}, Floor: true}, 3, 1, "▁▄█"},
		{"flat floor", chart{Values: []float64{7, 7}, Floor: true}, 2, 2, "  \n██"},
		{"empty", chart{}, 3, 2, "   \n   "},
		{"labels", chart{Values: []float64{5, 10}, Label: rate}, 12, 2, "10.0┤      █\n 0.0┤     ██"},
		{"labels too wide", chart{Values: []float64{5, 10}, Label: rate}, 6, 2, "     █\n    ██"},
		{"aligned labels", chart{Values: []float64{10}, Label: rate, MinGutter: 7}, 16, 2, "  10.0┤        █\n   0.0┤        █"},
		{"labels, three rows", chart{Values: []float64{10}, Label: rate}, 12, 3, "10.0┤      █\n    │      █\n 0.0┤      █"},
	} {
		got := ansi.Strip(tc.c.render(tc.w, tc.h))
		if got != tc.want {
			t.Errorf("%s: got\n%q\nwant\n%q", tc.name, got, tc.want)
		}
		checkFits(t, got, tc.w, tc.h, tc.name)
	}
}

func TestResample(t *testing.T) {
	cov := []record.CoveragePoint{{Pages: 0, Coverage: 0, Oracle: 0}, {Pages: 10, Coverage: 0.5, Oracle: 0.2}, {Pages: 30, Coverage: 0.7, Oracle: 0.4}}
	estimate := func(p record.CoveragePoint) float64 { return p.Coverage }
	oracle := func(p record.CoveragePoint) float64 { return p.Oracle }
	for _, tc := range []struct {
		y    func(record.CoveragePoint) float64
		want []float64
	}{
		{estimate, []float64{0, 0.5, 0.6, 0.7}},
		{oracle, []float64{0, 0.2, 0.3, 0.4}},
	} {
		got := resample(cov, 4, tc.y)
		for i := range tc.want {
			if len(got) != len(tc.want) || got[i] < tc.want[i]-1e-9 || got[i] > tc.want[i]+1e-9 {
				t.Fatalf("resample = %v, want %v", got, tc.want)
			}
		}
	}
	if got := resample(cov[:1], 10, estimate); len(got) != 1 || got[0] != 0 {
		t.Errorf("one point: %v", got)
	}
	if got := resample(nil, 10, estimate); got != nil {
		t.Errorf("no point: %v", got)
	}
	// No more columns than pages between the ends.
	if got := resample([]record.CoveragePoint{{Pages: 5}, {Pages: 7, Coverage: 1}}, 50, estimate); len(got) != 3 {
		t.Errorf("%d values for 3 page counts", len(got))
	}
}

func TestNeighbour(t *testing.T) {
	// ┌────┬──┐
	// │ A  │B │
	// │    ├──┤
	// ├────┤C │
	// │ D  │  │
	// └────┴──┘
	var r [numPanels]rect
	r[0] = rect{0, 0, 10, 6} // A
	r[1] = rect{11, 0, 5, 3} // B
	r[2] = rect{11, 3, 5, 7} // C
	r[3] = rect{0, 6, 10, 4} // D
	for _, tc := range []struct {
		from panelID
		d    direction
		want panelID
	}{
		{0, dirRight, 1}, // the top-most of the panels beside it
		{0, dirDown, 3},
		{0, dirUp, 0},
		{0, dirLeft, 0},
		{1, dirDown, 2},
		{1, dirLeft, 0},
		{2, dirLeft, 0}, // overlaps both A and D: the top-most
		{2, dirUp, 1},
		{3, dirRight, 2},
		{3, dirUp, 0},
	} {
		if got := neighbour(r, tc.from, tc.d); got != tc.want {
			t.Errorf("neighbour(%d, %d) = %d, want %d", tc.from, tc.d, got, tc.want)
		}
	}
}
