//go:build unix

package seen

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// lockName is the file in a Set's temporary directory that its process
// holds an flock(2) on for the Set's life. The kernel releases the lock
// when the process dies, kill -9 included, so another Set's Open can tell
// an abandoned directory from a live one.
const lockName = "lock"

// lockDir takes the lock of dir; Close releases it with the file. The
// file is locked under another name and renamed, so that a sweep never
// finds it unlocked.
func lockDir(dir string) (*os.File, error) {
	tmp := filepath.Join(dir, lockName+".new")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, lockName)); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// sweep removes the temporary directories (pattern, under parent) of Sets
// whose process has died: those whose lock it can take. A directory being
// made (no lock file yet) is left alone.
func sweep(parent, pattern string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, pattern))
	for _, d := range dirs {
		f, err := os.OpenFile(filepath.Join(d, lockName), os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if flock(f) == nil {
			os.RemoveAll(d) // its owner is gone; the lock goes with the file
		}
		f.Close()
	}
}
