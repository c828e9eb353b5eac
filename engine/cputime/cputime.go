// Package cputime measures the CPU time a goroutine spends on a short piece
// of work, by the thread's own CPU clock where the system has one.
package cputime

import (
	"runtime"
	"sync/atomic"
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
// on the goroutine that started the timer: it unlocks the thread. The zero
// Timer measures nothing: its Elapsed is 0 (a Sampler's piece left
// untimed).
type Timer struct {
	wall   time.Time
	cpu    time.Duration
	ok     bool
	weight time.Duration // what a reading counts for: 1, or a Sampler's SampleEvery; 0: not started
}

// Start starts a Timer on the calling goroutine, locking it to its thread
// until Elapsed.
func Start() Timer {
	runtime.LockOSThread()
	cpu, ok := threadCPUTime()
	return Timer{wall: time.Now(), cpu: cpu, ok: ok, weight: 1}
}

// Elapsed returns the CPU time since the timer started, or the wall time
// when no thread clock is available.
func (t Timer) Elapsed() time.Duration {
	if t.weight == 0 {
		return 0
	}
	cpu, ok := threadCPUTime()
	runtime.UnlockOSThread()
	wall := time.Since(t.wall)
	if !t.ok {
		return t.weight * wall
	}
	if d := cpu - t.cpu; ok && d >= 0 && d < wall {
		return t.weight * d
	}
	return t.weight * wall
}

// SampleEvery is how many pieces of work a Sampler counts for each one it
// times.
const SampleEvery = 8

// Sampler times one piece of work in SampleEvery (the first, then every
// SampleEvery-th) and counts each timed one SampleEvery times, so a sum of
// its Elapsed over many pieces estimates their total at an eighth of the
// clock readings' cost: timing every page (two system calls and a thread
// lock in the robot, two more on the loop) took 1.2% of a default crawl's
// CPU. The zero value is ready to use. A Sampler is safe for concurrent
// use (its Timers are not: each is its goroutine's).
type Sampler struct {
	n atomic.Uint32 // pieces started
}

// Start starts a Timer for the next piece of work: a running one for one
// piece in SampleEvery, the zero Timer (Elapsed 0, no thread locked) for
// the others.
func (s *Sampler) Start() Timer {
	if (s.n.Add(1)-1)%SampleEvery != 0 {
		return Timer{}
	}
	t := Start()
	t.weight = SampleEvery
	return t
}

// Thread returns the CPU time the calling thread has used, and false where
// the system has no thread clock. The reading means something only between
// runtime.LockOSThread and UnlockOSThread: a goroutine may otherwise move
// to another thread.
func Thread() (time.Duration, bool) { return threadCPUTime() }
