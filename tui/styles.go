package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
)

// Styles holds every style the console draws with. Colours are the 16 basic
// ANSI colours, so they follow the terminal's own palette on light and dark
// backgrounds. Nothing is told by colour alone: focus, pause and errors also
// change the text, the rule or an attribute, so the console reads the same
// under NO_COLOR, where the colour profile drops every colour.
//
// The zero value draws plain text; use DefaultStyles. A Styles is plain
// data: safe to copy, and to read from several goroutines once built.
type Styles struct {
	Header lipgloss.Style // the top bar
	Brand  lipgloss.Style // "lidi" in the top bar

	Starting lipgloss.Style // the run state in the top bar, one style per state
	Running  lipgloss.Style
	Paused   lipgloss.Style
	Done     lipgloss.Style
	Failed   lipgloss.Style

	Title        lipgloss.Style // a panel's title
	TitleFocused lipgloss.Style // the focused panel's title
	Rule         lipgloss.Style // the rule that follows a title
	RuleFocused  lipgloss.Style

	Label  lipgloss.Style // words around figures
	Value  lipgloss.Style // figures
	Column lipgloss.Style // column headings of tables
	Dim    lipgloss.Style // secondary text, "no PageRank run yet"
	Warn   lipgloss.Style // errors, failures
	Good   lipgloss.Style

	Chart    lipgloss.Style // the main series of a chart
	ChartAlt lipgloss.Style // a second series
	ChartBad lipgloss.Style // errors
	Axis     lipgloss.Style

	Status      lipgloss.Style // the status line
	StatusError lipgloss.Style
	Cursor      lipgloss.Style // the cursor of the filter input
	Overlay     lipgloss.Style // the full help page

	Help help.Styles // the help line and the full help page
}

// DefaultStyles returns the console's styles.
func DefaultStyles() Styles {
	var (
		subtle = lipgloss.BrightBlack
		accent = lipgloss.Cyan
	)
	key := lipgloss.NewStyle().Bold(true)
	desc := lipgloss.NewStyle().Foreground(subtle)
	sep := lipgloss.NewStyle().Foreground(subtle)
	return Styles{
		Header: lipgloss.NewStyle().Reverse(true),
		Brand:  lipgloss.NewStyle().Bold(true).Reverse(true),

		Starting: lipgloss.NewStyle().Bold(true),
		Running:  lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Green),
		Paused:   lipgloss.NewStyle().Bold(true).Reverse(true).Foreground(lipgloss.Yellow),
		Done:     lipgloss.NewStyle().Bold(true).Reverse(true).Foreground(lipgloss.Blue),
		Failed:   lipgloss.NewStyle().Bold(true).Reverse(true).Foreground(lipgloss.Red),

		Title:        lipgloss.NewStyle().Bold(true),
		TitleFocused: lipgloss.NewStyle().Bold(true).Reverse(true).Foreground(accent),
		Rule:         lipgloss.NewStyle().Foreground(subtle),
		RuleFocused:  lipgloss.NewStyle().Foreground(accent),

		Label:  lipgloss.NewStyle().Foreground(subtle),
		Value:  lipgloss.NewStyle().Bold(true),
		Column: lipgloss.NewStyle().Underline(true).Foreground(subtle),
		Dim:    lipgloss.NewStyle().Faint(true),
		Warn:   lipgloss.NewStyle().Foreground(lipgloss.Red),
		Good:   lipgloss.NewStyle().Foreground(lipgloss.Green),

		Chart:    lipgloss.NewStyle().Foreground(accent),
		ChartAlt: lipgloss.NewStyle().Foreground(lipgloss.Magenta),
		ChartBad: lipgloss.NewStyle().Foreground(lipgloss.Red),
		Axis:     lipgloss.NewStyle().Foreground(subtle),

		Status:      lipgloss.NewStyle(),
		StatusError: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Red),
		Cursor:      lipgloss.NewStyle().Reverse(true),
		Overlay:     lipgloss.NewStyle(),

		Help: help.Styles{
			Ellipsis:       sep,
			ShortKey:       key,
			ShortDesc:      desc,
			ShortSeparator: sep,
			FullKey:        key,
			FullDesc:       desc,
			FullSeparator:  sep,
		},
	}
}
