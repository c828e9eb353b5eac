//go:build unix

package seen

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSweep checks that Open removes the temporary directory of a Set
// whose process died (its lock free, as the kernel leaves it after kill
// -9) and leaves a live Set's, and that Close removes its own.
func TestSweep(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	live, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	killed, err := Open(Options{Recent: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		killed.Add(uint64(i), int32(i))
	}
	// As when the process dies: its worker stops (left running, it could
	// write a run into the directory while the next Set sweeps it, and
	// the directory was left, seen once at load), the lock goes, the
	// directory stays.
	close(killed.stop)
	<-killed.done
	killed.lock.Close()
	next, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(killed.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead Set's directory is left: %v", err)
	}
	for _, s := range []*Set{live, next} {
		if _, err := os.Stat(filepath.Join(s.dir, lockName)); err != nil {
			t.Errorf("a live Set's directory was swept: %v", err)
		}
		dir := s.dir
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Close left %s: %v", dir, err)
		}
	}
}
