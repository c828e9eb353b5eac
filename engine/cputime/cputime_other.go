//go:build !linux

package cputime

import "time"

// threadCPUTime has no thread clock to read here: cpuTimer falls back to
// the wall clock.
func threadCPUTime() (time.Duration, bool) { return 0, false }

// threadUsage has no thread usage to read here.
func threadUsage() (Usage, bool) { return Usage{}, false }
