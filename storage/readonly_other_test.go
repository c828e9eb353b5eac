//go:build !linux

package storage_test

import (
	"os"
	"testing"
)

// makeReadOnly makes the file at path unwritable and returns the undo.
func makeReadOnly(t *testing.T, path string) (undo func()) {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skip("root ignores file permissions")
	}
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	return func() { os.Chmod(path, 0o644) }
}
