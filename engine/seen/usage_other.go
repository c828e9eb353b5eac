//go:build !linux

package seen

// The thread's usage is not measured on this system.
func usageStart() threadUsage          { return threadUsage{} }
func usageEnd(threadUsage) threadUsage { return threadUsage{} }
