package cputime

import (
	"runtime"
	"time"
)

// Usage is what a thread used over a stretch of work: its CPU time, its
// page faults, the times the kernel gave its CPU to another thread
// (Switches: involuntary context switches) and the times it slept
// (Sleeps: voluntary ones, waiting for the disk, or parked by Go's
// scheduler while the goroutine locked to it waited for a processor or
// the collector). A stretch far longer than its CPU time, with switches,
// waited for the machine's CPUs; with sleeps, for something else. The
// zero Usage is nothing used (or nothing measured).
type Usage struct {
	CPU      time.Duration
	Faults   int64
	Switches int64
	Sleeps   int64
}

// Meter measures the Usage of the calling goroutine's thread over a
// stretch of work, with the goroutine locked to its thread from
// StartMeter to Stop. Call Stop exactly once, on the goroutine that
// started the meter: it unlocks the thread. A Meter is not safe for
// concurrent use.
type Meter struct {
	start Usage
	ok    bool
}

// StartMeter starts a Meter on the calling goroutine, locking it to its
// thread until Stop. Reading the thread's usage takes two system calls at
// each end (a few microseconds): measure stretches longer than that.
func StartMeter() Meter {
	runtime.LockOSThread()
	u, ok := threadUsage()
	return Meter{start: u, ok: ok}
}

// Stop unlocks the thread and returns what it used since StartMeter, and
// false where the system does not say (only Linux does).
func (m Meter) Stop() (Usage, bool) {
	u, ok := threadUsage()
	runtime.UnlockOSThread()
	if !m.ok || !ok {
		return Usage{}, false
	}
	return Usage{CPU: u.CPU - m.start.CPU, Faults: u.Faults - m.start.Faults, Switches: u.Switches - m.start.Switches, Sleeps: u.Sleeps - m.start.Sleeps}, true
}
