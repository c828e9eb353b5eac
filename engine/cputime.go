package engine

import "time"

// cpuTimer measures the CPU time the calling goroutine spends on a short
// piece of work (fingerprinting a page, a duplicate decision), for
// Stats.Dup.Time. On a busy machine the wall clock would also count the
// time other goroutines and processes held the CPU, so the thread's own
// CPU clock is read where the system has one. A goroutine moved to another
// thread mid-way makes that reading meaningless; the result is therefore
// kept between zero and the wall time, which it can never exceed.
type cpuTimer struct {
	wall time.Time
	cpu  time.Duration
	ok   bool
}

func startCPUTimer() cpuTimer {
	cpu, ok := threadCPUTime()
	return cpuTimer{wall: time.Now(), cpu: cpu, ok: ok}
}

// elapsed returns the CPU time since the timer started, or the wall time
// when no thread clock is available.
func (t cpuTimer) elapsed() time.Duration {
	wall := time.Since(t.wall)
	if !t.ok {
		return wall
	}
	cpu, ok := threadCPUTime()
	if d := cpu - t.cpu; ok && d >= 0 && d < wall {
		return d
	}
	return wall
}
