//go:build !linux

package seen

import "time"

// threadUsage is what the calling thread has used; not measured on this
// system (ok is false).
type threadUsage struct {
	cpu      time.Duration
	faults   int64
	switches int64
	sleeps   int64
	ok       bool
}

func usageStart() threadUsage          { return threadUsage{} }
func usageEnd(threadUsage) threadUsage { return threadUsage{} }
