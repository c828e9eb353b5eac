//go:build darwin || freebsd

package storage

import "syscall"

// blockSize is the unit of st's block counts: the BSDs' f_bsize is the
// fundamental block size (f_iosize is the preferred I/O size).
func blockSize(st *syscall.Statfs_t) uint64 { return uint64(st.Bsize) }
