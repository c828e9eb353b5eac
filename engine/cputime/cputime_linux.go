package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID

// threadCPUTime returns the CPU time of the calling thread.
func threadCPUTime() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

const rusageThread = 1 // RUSAGE_THREAD

// threadUsage reads the calling thread's CPU clock (getrusage's times are
// updated only at the scheduler's ticks, milliseconds apart) and its
// counts of faults and switches.
func threadUsage() (Usage, bool) {
	var ru syscall.Rusage
	cpu, ok := threadCPUTime()
	if !ok || syscall.Getrusage(rusageThread, &ru) != nil {
		return Usage{}, false
	}
	// The counts are int32 on 32-bit systems.
	return Usage{CPU: cpu, Faults: int64(ru.Minflt) + int64(ru.Majflt), Switches: int64(ru.Nivcsw), Sleeps: int64(ru.Nvcsw)}, true
}
