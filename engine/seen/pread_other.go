//go:build !linux

package seen

import "os"

// readBlock reads len(b) bytes of f at off.
func readBlock(f *os.File, _ uintptr, b []byte, off int64) error {
	_, err := f.ReadAt(b, off)
	return err
}
