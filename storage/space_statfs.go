//go:build linux || darwin || freebsd

package storage

import "syscall"

// diskFree returns the bytes free to this user on the file system that
// holds path (a file or a directory; a symlink is followed); ok is false
// when the system does not say.
func diskFree(path string) (free int64, ok bool) {
	var st syscall.Statfs_t
	if syscall.Statfs(path, &st) != nil {
		return 0, false
	}
	return int64(uint64(st.Bavail) * blockSize(&st)), true
}
