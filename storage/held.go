package storage

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
)

// heldFile counts the handles this package has open on one crawl file (a
// DB, a snapshot's source, Captures) and keeps the descriptors of the file
// and its WAL that are not SQLite's (the checkpointer's, to sync them) until
// the last handle closes. Closing any descriptor of a file drops every
// POSIX lock the process holds on it, SQLite's included, whoever took
// them: closed while another handle of the process had the file open, they
// took that handle's locks with them. SQLite's own connections know of each
// other and defer such closes; these descriptors close only when no
// connection of this package has the file open.
//
// Safe for concurrent use.
type heldFile struct {
	fi    os.FileInfo
	refs  int        // handles open on the file; guarded by held.mu
	files []*os.File // closed when refs reaches 0; guarded by held.mu
}

// held is the files with handles open, found by identity (os.SameFile),
// not by name: a file reached by two paths is one file.
var held struct {
	mu    sync.Mutex
	files []*heldFile
}

// holdFile counts a handle on the file at path, which exists; release ends
// it.
func holdFile(path string) (*heldFile, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("storage: %w", err)
	}
	held.mu.Lock()
	defer held.mu.Unlock()
	for _, h := range held.files {
		if os.SameFile(h.fi, fi) {
			h.refs++
			return h, nil
		}
	}
	h := &heldFile{fi: fi, refs: 1}
	held.files = append(held.files, h)
	return h, nil
}

// keep gives f to h: it closes with h's last handle.
func (h *heldFile) keep(f *os.File) {
	held.mu.Lock()
	defer held.mu.Unlock()
	h.files = append(h.files, f)
}

// release ends a handle holdFile counted, after the handle's connections
// are closed; the last one closes the descriptors kept. A nil h does
// nothing.
func (h *heldFile) release() error {
	if h == nil {
		return nil
	}
	held.mu.Lock()
	defer held.mu.Unlock()
	if h.refs--; h.refs > 0 {
		return nil
	}
	held.files = slices.DeleteFunc(held.files, func(x *heldFile) bool { return x == h })
	var errs []error
	for _, f := range h.files {
		errs = append(errs, f.Close())
	}
	h.files = nil
	return errors.Join(errs...)
}
