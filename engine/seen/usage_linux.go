package seen

import (
	"runtime"
	"syscall"

	"lidi/engine/cputime"
)

const rusageThread = 1 // RUSAGE_THREAD

// usageStart locks the calling goroutine to its thread (so that the
// reading at usageEnd is the same thread's) and reads its usage.
func usageStart() threadUsage {
	runtime.LockOSThread()
	return readThreadUsage()
}

// usageEnd reads the thread's usage again, unlocks it and returns what
// was used since u.
func usageEnd(u threadUsage) threadUsage {
	v := readThreadUsage()
	runtime.UnlockOSThread()
	if !u.ok || !v.ok {
		return threadUsage{}
	}
	return threadUsage{cpu: v.cpu - u.cpu, faults: v.faults - u.faults, switches: v.switches - u.switches, sleeps: v.sleeps - u.sleeps, ok: true}
}

// readThreadUsage reads the thread's CPU clock (getrusage's times are
// updated only at the scheduler's ticks, milliseconds apart) and its
// counts of faults and switches.
func readThreadUsage() threadUsage {
	var ru syscall.Rusage
	cpu, ok := cputime.Thread()
	if !ok || syscall.Getrusage(rusageThread, &ru) != nil {
		return threadUsage{}
	}
	// The counts are int32 on 32-bit systems.
	return threadUsage{cpu: cpu, faults: int64(ru.Minflt) + int64(ru.Majflt), switches: int64(ru.Nivcsw), sleeps: int64(ru.Nvcsw), ok: true}
}
