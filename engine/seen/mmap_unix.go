//go:build unix

package seen

import (
	"os"
	"syscall"
)

// mapFile maps a run's file read-only: a look-up then reads the block in
// place, without a system call, during which the Go scheduler could hand
// the caller's processor to another goroutine. The pages are the page
// cache's: the kernel drops them under memory pressure and reads them
// again when touched. It returns nil when the file cannot be mapped; reads
// then go through ReadAt.
func mapFile(f *os.File, size int) []byte {
	if size == 0 {
		return nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	return m
}

func unmap(m []byte) {
	if m != nil {
		syscall.Munmap(m)
	}
}
