// Package cputime measures the CPU time a goroutine spends on a short piece
// of work, by the thread's own CPU clock where the system has one.
package cputime

import (
	"runtime"
	"time"
)

// Timer measures the CPU time the calling goroutine spends on a short
// piece of work (fingerprinting a page, a duplicate decision), for
// Stats.Dup.Time. On a busy machine the wall clock would also count the
// time other goroutines and processes held the CPU, so the thread's own
// CPU clock is read where the system has one, with the goroutine locked to
// its thread from start to end: a goroutine moved to another thread
// mid-way would make the reading meaningless (and so fell back to the wall
// time, which a loaded machine inflates). The result is kept between zero
// and the wall time, which it can never exceed. Call Elapsed exactly once,
// on the goroutine that started the timer: it unlocks the thread.
type Timer struct {
	wall time.Time
	cpu  time.Duration
	ok   bool
}

// Start starts a Timer on the calling goroutine, locking it to its thread
// until Elapsed.
func Start() Timer {
	runtime.LockOSThread()
	cpu, ok := threadCPUTime()
	return Timer{wall: time.Now(), cpu: cpu, ok: ok}
}

// Elapsed returns the CPU time since the timer started, or the wall time
// when no thread clock is available.
func (t Timer) Elapsed() time.Duration {
	cpu, ok := threadCPUTime()
	runtime.UnlockOSThread()
	wall := time.Since(t.wall)
	if !t.ok {
		return wall
	}
	if d := cpu - t.cpu; ok && d >= 0 && d < wall {
		return d
	}
	return wall
}

// Thread returns the CPU time the calling thread has used, and false where
// the system has no thread clock. The reading means something only between
// runtime.LockOSThread and UnlockOSThread: a goroutine may otherwise move
// to another thread.
func Thread() (time.Duration, bool) { return threadCPUTime() }
