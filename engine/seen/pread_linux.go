//go:build linux && (amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

// pread64 takes the offset in one register on 64-bit systems only.

package seen

import (
	"os"
	"syscall"
	"unsafe"
)

// readBlock reads len(b) bytes of f at off. A block is nearly always in
// the page cache, read in a microsecond or two, so the read does not tell
// Go's scheduler of a system call (RawSyscall, as a page fault of a mapped
// file would not): a call that did may give the caller's processor away,
// and the caller then waits for another, milliseconds on a busy crawl
// (the seen set's longest call took 155 ms that way, for 27 µs of CPU).
// A block not cached holds the processor while the disk answers. A short
// or failed read is done again through f.ReadAt, which says why.
func readBlock(f *os.File, fd uintptr, b []byte, off int64) error {
	if len(b) == 0 {
		return nil
	}
	n, _, errno := syscall.RawSyscall6(syscall.SYS_PREAD64, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
	if errno == 0 && int(n) == len(b) {
		return nil
	}
	_, err := f.ReadAt(b, off)
	return err
}
