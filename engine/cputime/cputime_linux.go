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
