package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"lidi/engine"
)

// BenchmarkView measures drawing the whole screen, which Bubble Tea does
// after every message (every poll, every key).
func BenchmarkView(b *testing.B) {
	for _, sz := range [][2]int{{80, 24}, {200, 60}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			c := newFake(crawlSeries(120, engine.StateRunning))
			m := New(c, Options{})
			m.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			for range 120 {
				m.Update(statsMsg{c.Stats()})
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
}

// BenchmarkPoll measures taking in a snapshot.
func BenchmarkPoll(b *testing.B) {
	c := newFake(crawlSeries(2, engine.StateRunning))
	m := New(c, Options{})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	s := c.Stats()
	b.ReportAllocs()
	for b.Loop() {
		s.Time = s.Time.Add(time.Second)
		m.Update(statsMsg{s})
	}
}
