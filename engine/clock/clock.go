// Package clock tells the time to the crawl and lets tests and simulations
// replace it: one Clock interface, the system's clock and a fake one.
package clock

import (
	"sync"
	"time"
)

// Clock tells the time. The engine, its robots and its features read the
// time only through a Clock, so a test or a simulation can move it.
type Clock interface {
	Now() time.Time
}

// System is the system's clock.
var System Clock = systemClock{}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Or returns c, or the system's clock when c is nil.
func Or(c Clock) Clock {
	if c == nil {
		return System
	}
	return c
}

// Fake is a Clock that moves only when told to. Its zero value stands at
// the zero time; it is safe for concurrent use.
type Fake struct {
	mu  sync.Mutex
	now time.Time
}

// NewFake returns a Fake standing at t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the fake time forward by d and returns the new time.
func (f *Fake) Advance(d time.Duration) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	return f.now
}

// Set moves the fake time to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
}
