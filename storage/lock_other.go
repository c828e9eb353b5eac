//go:build !unix

package storage

import "fmt"

// fileLock is unavailable where flock(2) is missing: Open refuses rather
// than risk two writers on one crawl.
type fileLock struct{}

func lockFile(dbPath string) (*fileLock, error) {
	return nil, fmt.Errorf("storage: cannot lock %s: advisory file locks are not supported on this platform", dbPath)
}

func (l *fileLock) unlock() error { return nil }
