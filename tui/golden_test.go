package tui

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"lidi/engine"
	"lidi/internal/testkit"
)

// goldenNow is the clock of the golden tests: a few minutes after the last
// snapshot, so no status message or event is fresh unless a test makes it.
var goldenNow = t0.Add(time.Hour + 5*time.Minute)

// settle waits until the model has taken in every snapshot the fake has
// handed out so far: the console asks for the next snapshot only after it
// has handled the last, so two more calls mean the last one was handled.
func settle(t *testing.T, c *fakeCrawler) {
	t.Helper()
	testkit.WaitFor(t, time.Minute, "the whole series", func() bool { _, all := c.served(); return all })
	n, _ := c.served()
	testkit.WaitFor(t, time.Minute, "two more polls", func() bool { m, _ := c.served(); return m >= n+2 })
}

// sgr matches Select Graphic Rendition sequences, which carry colours.
var sgr = regexp.MustCompile("\x1b\\[([0-9;:]*)m")

// colours lists the colour parameters of the SGR sequences in out.
func colours(out string) []string {
	var found []string
	for _, m := range sgr.FindAllStringSubmatch(out, -1) {
		params := strings.FieldsFunc(m[1], func(r rune) bool { return r == ';' || r == ':' })
		for i := 0; i < len(params); i++ {
			n, err := strconv.Atoi(params[i])
			if err != nil {
				continue
			}
			switch {
			case n == 38 || n == 48 || n == 58:
				found = append(found, m[0])
				i = len(params) // the rest are the colour's components
			case (n >= 30 && n <= 37) || (n >= 40 && n <= 47) || (n >= 90 && n <= 97) || (n >= 100 && n <= 107):
				found = append(found, m[0])
			}
		}
	}
	return found
}

// golden scenarios: the keys pressed once the whole series is on screen.
var goldenScenarios = []struct {
	name     string
	last     engine.RunState
	measured bool // PageRank coverage and recrawl intervals are set
	keys     []string
}{
	{name: "main"},
	{name: "paused", keys: []string{"p"}},
	{name: "help", keys: []string{"?"}},
	{name: "zoomed", keys: []string{"tab", "tab", "enter"}},
	{name: "done", last: engine.StateDone},
	{name: "filtered", keys: []string{"/", "e", "x", "a", "m", "p", "l", "e", ".", "o", "r", "g", "enter"}},
	{name: "measured", measured: true},
	{name: "duplicates", keys: []string{"tab", "tab", "tab", "enter"}},
}

// TestGolden runs the console in a Bubble Tea program (teatest), with the
// ASCII colour profile, over a crawl played back by a fake crawler, and
// compares the screen it ends on with testdata/TestGolden/*.golden. Run
// with -update to rewrite them, then read them: they are what people see.
func TestGolden(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		for _, sc := range goldenScenarios {
			w, h := size[0], size[1]
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, w, h), func(t *testing.T) {
				last := sc.last
				if last == 0 {
					last = engine.StateRunning
				}
				series := crawlSeries(60, last)
				if sc.measured {
					for i := range series {
						series[i] = measured(series[i])
					}
				}
				c := newFake(series)
				m := New(c, Options{Refresh: 2 * time.Millisecond, Now: func() time.Time { return goldenNow }})
				tm := teatest.NewTestModel(t, m,
					teatest.WithInitialTermSize(w, h),
					teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
				settle(t, c)
				for _, k := range sc.keys {
					tm.Send(keyMsg(k))
				}
				if sc.name == "paused" {
					testkit.WaitFor(t, time.Minute, "Pause", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.pauses == 1 })
					settle(t, c)
				}
				if err := tm.Quit(); err != nil {
					t.Fatal(err)
				}
				fm := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*Model)
				out, err := io.ReadAll(tm.FinalOutput(t))
				if err != nil {
					t.Fatal(err)
				}
				if cs := colours(string(out)); len(cs) > 0 {
					t.Errorf("colour sequences in the output with the ASCII profile: %q", cs[:min(len(cs), 5)])
				}
				screen := fm.View().Content
				checkFits(t, screen, w, h, sc.name)
				golden.RequireEqual(t, ansi.Strip(screen))
			})
		}
	}
}

// TestColoursWithANSIProfile is the other side of the ASCII check in
// TestGolden: with a colour profile, the same screen does carry colours,
// so the check can fail.
func TestColoursWithANSIProfile(t *testing.T) {
	c := newFake(crawlSeries(10, engine.StateRunning))
	m := New(c, Options{Refresh: 2 * time.Millisecond, Now: func() time.Time { return goldenNow }})
	tm := teatest.NewTestModel(t, m,
		teatest.WithInitialTermSize(80, 24),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.ANSI)))
	settle(t, c)
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(tm.FinalOutput(t, teatest.WithFinalTimeout(10*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if len(colours(string(out))) == 0 {
		t.Error("no colour in the output with the ANSI profile")
	}
}
