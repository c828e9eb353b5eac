package storage_test

import (
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// makeReadOnly makes the file at path unwritable and returns the undo.
// root ignores permissions, so for root the file is made immutable (the
// flag chattr +i sets) instead.
func makeReadOnly(t *testing.T, path string) (undo func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o444); err != nil {
			t.Fatal(err)
		}
		return func() { os.Chmod(path, 0o644) }
	}
	const (
		fsIocGetFlags = 0x80086601
		fsIocSetFlags = 0x40086602
		fsImmutableFl = 0x10
	)
	setFlags := func(on bool) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		var flags int32
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocGetFlags, uintptr(unsafe.Pointer(&flags))); e != 0 {
			return e
		}
		if on {
			flags |= fsImmutableFl
		} else {
			flags &^= fsImmutableFl
		}
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), fsIocSetFlags, uintptr(unsafe.Pointer(&flags))); e != 0 {
			return e
		}
		return nil
	}
	if err := setFlags(true); err != nil {
		t.Skipf("cannot make %s read-only as root (no immutable flag here: %v)", path, err)
	}
	undo = func() {
		if err := setFlags(false); err != nil {
			t.Fatalf("cannot undo the immutable flag of %s: %v", path, err)
		}
	}
	t.Cleanup(func() { setFlags(false) }) // or TempDir's removal fails
	return undo
}
