package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// harness drives a Model the way Bubble Tea does, but synchronously: it
// sends messages to Update and runs the commands Update returns, feeding
// their messages back, except the timer that schedules the next poll,
// which refresh stands in for.
type harness struct {
	t     *testing.T
	m     *Model
	c     *fakeCrawler
	quit  bool
	clock time.Time
}

func newHarness(t *testing.T, c *fakeCrawler, w, h int) *harness {
	t.Helper()
	hs := &harness{t: t, c: c, clock: t0.Add(time.Hour + 5*time.Minute)}
	hs.m = New(c, Options{Now: func() time.Time { return hs.clock }})
	hs.send(tea.WindowSizeMsg{Width: w, Height: h})
	hs.run(hs.m.Init()) // the first poll is immediate
	return hs
}

// send gives msg to the model and runs what it returns.
func (hs *harness) send(msg tea.Msg) {
	hs.t.Helper()
	_, cmd := hs.m.Update(msg)
	if _, ok := msg.(statsMsg); ok {
		return // cmd is the timer of the next poll
	}
	hs.run(cmd)
}

func (hs *harness) run(cmd tea.Cmd) {
	hs.t.Helper()
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			hs.run(c)
		}
	case tea.QuitMsg:
		hs.quit = true
	default:
		hs.send(msg)
	}
}

// refresh polls the crawler once, as the timer would.
func (hs *harness) refresh(n int) {
	hs.t.Helper()
	for range n {
		hs.send(statsMsg{hs.c.Stats()})
	}
}

// press sends key presses, named as tea.KeyPressMsg.String names them.
func (hs *harness) press(keys ...string) {
	hs.t.Helper()
	for _, k := range keys {
		hs.send(keyMsg(k))
	}
}

// typeText types text into the console, one key per character.
func (hs *harness) typeText(s string) {
	hs.t.Helper()
	for _, r := range s {
		hs.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// screen is what the console shows, without styles.
func (hs *harness) screen() string {
	return ansi.Strip(hs.m.View().Content)
}

// keyMsg builds the key press whose String is name.
func keyMsg(name string) tea.KeyPressMsg {
	special := map[string]tea.KeyPressMsg{
		"enter":     {Code: tea.KeyEnter},
		"esc":       {Code: tea.KeyEscape},
		"tab":       {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
		"up":        {Code: tea.KeyUp},
		"down":      {Code: tea.KeyDown},
		"left":      {Code: tea.KeyLeft},
		"right":     {Code: tea.KeyRight},
		"pgup":      {Code: tea.KeyPgUp},
		"pgdown":    {Code: tea.KeyPgDown},
		"backspace": {Code: tea.KeyBackspace},
		"ctrl+c":    {Code: 'c', Mod: tea.ModCtrl},
		"ctrl+u":    {Code: 'u', Mod: tea.ModCtrl},
		"plus":      {Code: tea.KeyKpPlus},
	}
	if k, ok := special[name]; ok {
		return k
	}
	r := []rune(name)
	return tea.KeyPressMsg{Code: r[0], Text: name}
}

// checkFits fails unless every line of s fits in w cells and there are
// exactly h lines.
func checkFits(t *testing.T, s string, w, h int, what string) {
	t.Helper()
	lines := strings.Split(s, "\n")
	if len(lines) != h {
		t.Errorf("%s at %dx%d: %d lines, want %d", what, w, h, len(lines), h)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Errorf("%s at %dx%d: line %d is %d cells wide: %q", what, w, h, i, lw, ansi.Strip(l))
		}
	}
}
