//go:build !linux || !(amd64 || arm64 || loong64 || mips64 || mips64le || ppc64 || ppc64le || riscv64 || s390x)

package seen

import "os"

// readBlock reads len(b) bytes of f at off.
func readBlock(f *os.File, _ uintptr, b []byte, off int64) error {
	_, err := f.ReadAt(b, off)
	return err
}
