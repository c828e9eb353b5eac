package seen

import "time"

// threadUsage is what the calling thread has used: CPU time, page faults,
// the times the kernel took the CPU from it (involuntary context switches)
// and the times it slept (voluntary ones: waiting for the disk, or for a
// processor of Go's own after a system call). ok is false where the system
// does not say (usageStart and usageEnd are per system).
type threadUsage struct {
	cpu      time.Duration
	faults   int64
	switches int64
	sleeps   int64
	ok       bool
}
