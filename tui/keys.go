package tui

import "charm.land/bubbles/v2/key"

// KeyMap is every key the console answers to. The help line and the full
// help page (?) are drawn from it, so what they say is what the keys do.
//
// The zero value binds nothing; use DefaultKeyMap. A KeyMap is plain data:
// safe to copy, and to read from several goroutines once built.
type KeyMap struct {
	// Steering the crawl.
	Pause    key.Binding // pause, or resume when paused
	Resume   key.Binding
	Snapshot key.Binding
	More     key.Binding // one more robot
	Fewer    key.Binding // one robot fewer

	// Moving around.
	Next   key.Binding // focus the next panel
	Prev   key.Binding
	Up     key.Binding // focus the panel above, or scroll up in a zoomed panel
	Down   key.Binding
	Left   key.Binding
	Right  key.Binding
	PageUp key.Binding // scroll a zoomed panel by a page
	PageDn key.Binding
	Zoom   key.Binding // zoom the focused panel, or unzoom
	Back   key.Binding // unzoom, close help, clear the filter

	// The robots filter.
	Filter      key.Binding
	FilterApply key.Binding // keep the filter and close the input
	FilterClear key.Binding // clear the filter and close the input

	Help key.Binding
	Quit key.Binding
}

// DefaultKeyMap returns the console's keys.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Pause:    key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Resume:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "resume")),
		Snapshot: key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "snapshot")),
		// "=" is "+" without shift on most layouts; "−" is the Unicode minus
		// some keyboards and input methods send; plus and minus are the
		// keypad's keys without text.
		More:  key.NewBinding(key.WithKeys("+", "=", "plus"), key.WithHelp("+", "more robots")),
		Fewer: key.NewBinding(key.WithKeys("-", "−", "minus", "_"), key.WithHelp("-", "fewer robots")),

		Next:   key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next panel")),
		Prev:   key.NewBinding(key.WithKeys("shift+tab"), key.WithHelp("shift+tab", "previous panel")),
		Up:     key.NewBinding(key.WithKeys("up"), key.WithHelp("↑", "panel above / scroll")),
		Down:   key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "panel below / scroll")),
		Left:   key.NewBinding(key.WithKeys("left"), key.WithHelp("←", "panel left")),
		Right:  key.NewBinding(key.WithKeys("right"), key.WithHelp("→", "panel right")),
		PageUp: key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up (zoomed)")),
		PageDn: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down (zoomed)")),
		Zoom:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "zoom")),
		Back:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),

		Filter:      key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter sites")),
		FilterApply: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "keep filter")),
		FilterClear: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "clear filter")),

		Help: key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit: key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}
