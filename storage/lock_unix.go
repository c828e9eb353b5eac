//go:build unix

package storage

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// fileLock is an flock(2) lock on path + ".lock". The kernel releases it
// when the process dies, so a crawl killed with kill -9 leaves no stale
// lock. The file itself stays; it holds the holder's pid for messages.
type fileLock struct {
	f *os.File
}

func lockFile(dbPath string) (*fileLock, error) {
	name := dbPath + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("storage: lock: %w", err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Path: dbPath, PID: readPID(f)}
		}
		return nil, fmt.Errorf("storage: lock %s: %w", name, err)
	}
	// Best effort: the pid only makes the message friendlier.
	if err := f.Truncate(0); err == nil {
		f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &fileLock{f: f}, nil
}

func readPID(f *os.File) int {
	buf := make([]byte, 32)
	n, _ := f.ReadAt(buf, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		return 0
	}
	return pid
}

func (l *fileLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	// Closing the descriptor releases the flock.
	err := l.f.Close()
	l.f = nil
	return err
}
