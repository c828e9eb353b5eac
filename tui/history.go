package tui

import (
	"time"

	"lidi/engine"
)

// historyLen is how many samples each series keeps: wide enough for the
// widest chart on a 200-column terminal with room to spare.
const historyLen = 512

// historyStep is the time between two samples. Charts then show the same
// span of time whatever the refresh interval.
const historyStep = time.Second

// series is a bounded sequence of samples, oldest first: vals holds the
// last historyLen of them.
type series struct {
	vals []float64
	buf  []float64 // vals is the tail of buf, which is moved down when full
}

func (s *series) push(v float64) {
	if len(s.buf) == 2*historyLen {
		// Drop the older half at once, so a push costs O(1) on average.
		n := copy(s.buf, s.buf[historyLen:])
		s.buf = s.buf[:n]
	}
	s.buf = append(s.buf, v)
	s.vals = s.buf[max(len(s.buf)-historyLen, 0):]
}

// history keeps the recent past of the figures the charts draw. It samples
// the Stats snapshots it is given, at most one sample per historyStep of
// snapshot time, so polling faster does not squeeze the charts.
type history struct {
	last time.Time // Time of the last sampled snapshot

	queue      series // URLs queued
	pages      series // pages/s
	bytes      series // bytes/s
	errors     series // errors/s, from the growth of the error count
	lastErrors int64
}

// add samples s if enough snapshot time has passed since the last sample.
// A snapshot without a time (an engine that does not set it) is sampled
// every time.
func (h *history) add(s *engine.Stats) bool {
	if !s.Time.IsZero() && !h.last.IsZero() && s.Time.Sub(h.last) < historyStep {
		return false
	}
	errRate := 0.0
	if !h.last.IsZero() && !s.Time.IsZero() && s.Errors >= h.lastErrors {
		errRate = float64(s.Errors-h.lastErrors) / s.Time.Sub(h.last).Seconds()
	}
	h.last = s.Time
	h.lastErrors = s.Errors
	h.queue.push(float64(s.QueueDepth))
	h.pages.push(s.FetchesPerSec)
	h.bytes.push(s.BytesPerSec)
	h.errors.push(errRate)
	return true
}

// peak is the largest value of a series, 0 when it is empty.
func peak(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
