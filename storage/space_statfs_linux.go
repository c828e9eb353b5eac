package storage

import "syscall"

// blockSize is the unit of st's block counts: Linux counts them in
// fragments (f_frsize, as statvfs does), which differ from f_bsize, the
// preferred I/O size, on some file systems (NFS, FUSE); a kernel that
// does not fill f_frsize counts in f_bsize.
func blockSize(st *syscall.Statfs_t) uint64 {
	if st.Frsize > 0 {
		return uint64(st.Frsize)
	}
	return uint64(st.Bsize)
}
