package cluster

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
)

// ErrSpoolClosed is returned by a Spool used after Close.
var ErrSpoolClosed = errors.New("cluster: spool closed")

// Spool keeps a slave's result messages in a small local file until the
// master acknowledges them, so that a slave that loses the master, or is
// killed and started again, delivers them later. The file is a log of
// records, each "put" (id, payload) or "done" (id), with a CRC-32; a torn
// record at the end (a kill in the middle of a write) is cut off when the
// file is opened. A put is synced to disk before Put returns.
//
// A Spool is safe for concurrent use.
type Spool struct {
	mu      sync.Mutex
	f       *os.File
	path    string
	size    int64
	pending map[string][]byte
	order   []string // ids in the order put; done ones are skipped
}

// SpoolEntry is one message waiting for the master's acknowledgement.
type SpoolEntry struct {
	ID      string
	Payload []byte
}

const (
	recPut  = 'P'
	recDone = 'D'
	// compactAt is the file size over which done records are dropped by
	// rewriting the file with only what is pending.
	compactAt = 4 << 20
)

// OpenSpool opens (or creates) the spool file at path and reads what it
// holds.
func OpenSpool(path string) (*Spool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cluster: spool: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("cluster: spool: %w", err)
	}
	s := &Spool{f: f, path: path, pending: make(map[string][]byte)}
	good := s.replay(data)
	if good < int64(len(data)) || len(s.pending) == 0 && good > 0 || good > compactAt {
		// A torn tail, or done records to drop.
		if err := s.rewrite(); err != nil {
			f.Close()
			return nil, err
		}
		return s, nil
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("cluster: spool: %w", err)
	}
	s.size = good
	return s, nil
}

// replay reads records until the end or the first damaged one, and returns
// the length of the good part.
func (s *Spool) replay(data []byte) int64 {
	var off int64
	for {
		kind, id, payload, n := decodeRecord(data[off:])
		if n == 0 {
			return off
		}
		off += int64(n)
		switch kind {
		case recPut:
			if _, ok := s.pending[id]; !ok {
				s.order = append(s.order, id)
			}
			s.pending[id] = payload
		case recDone:
			delete(s.pending, id)
		}
	}
}

// decodeRecord returns a record and its length, or n == 0 when data does
// not start with a whole, undamaged record.
func decodeRecord(data []byte) (kind byte, id string, payload []byte, n int) {
	if len(data) < 1 {
		return 0, "", nil, 0
	}
	kind = data[0]
	if kind != recPut && kind != recDone {
		return 0, "", nil, 0
	}
	p := 1
	idLen, k := binary.Uvarint(data[p:])
	if k <= 0 || idLen > 1024 || uint64(len(data)-p-k) < idLen {
		return 0, "", nil, 0
	}
	p += k
	id = string(data[p : p+int(idLen)])
	p += int(idLen)
	if kind == recPut {
		pl, k := binary.Uvarint(data[p:])
		if k <= 0 || uint64(len(data)-p-k) < pl {
			return 0, "", nil, 0
		}
		p += k
		payload = bytes.Clone(data[p : p+int(pl)])
		p += int(pl)
	}
	if len(data)-p < 4 || binary.LittleEndian.Uint32(data[p:]) != crc32.ChecksumIEEE(data[:p]) {
		return 0, "", nil, 0
	}
	return kind, id, payload, p + 4
}

func appendRecord(dst []byte, kind byte, id string, payload []byte) []byte {
	start := len(dst)
	dst = append(dst, kind)
	dst = binary.AppendUvarint(dst, uint64(len(id)))
	dst = append(dst, id...)
	if kind == recPut {
		dst = binary.AppendUvarint(dst, uint64(len(payload)))
		dst = append(dst, payload...)
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}

// Put keeps a message until Done is called with its id. Putting an id
// already pending replaces its payload.
func (s *Spool) Put(id string, payload []byte) error {
	if len(id) == 0 || len(id) > 1024 {
		return fmt.Errorf("cluster: spool: bad id length %d", len(id))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return ErrSpoolClosed
	}
	rec := appendRecord(nil, recPut, id, payload)
	if _, err := s.f.Write(rec); err != nil {
		return fmt.Errorf("cluster: spool: %w", err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("cluster: spool: %w", err)
	}
	s.size += int64(len(rec))
	if _, ok := s.pending[id]; !ok {
		s.order = append(s.order, id)
	}
	s.pending[id] = bytes.Clone(payload)
	return nil
}

// Done forgets a message the master acknowledged. An unknown id is ignored.
func (s *Spool) Done(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return ErrSpoolClosed
	}
	if _, ok := s.pending[id]; !ok {
		return nil
	}
	delete(s.pending, id)
	if len(s.pending) == 0 || s.size > compactAt {
		return s.rewrite()
	}
	// Not synced: a done record lost in a crash only means the message
	// is delivered again, and the master recognises it.
	rec := appendRecord(nil, recDone, id, nil)
	if _, err := s.f.Write(rec); err != nil {
		return fmt.Errorf("cluster: spool: %w", err)
	}
	s.size += int64(len(rec))
	return nil
}

// rewrite replaces the file with one holding only what is pending.
func (s *Spool) rewrite() error {
	var buf []byte
	order := s.order[:0]
	for _, id := range s.order {
		if p, ok := s.pending[id]; ok {
			buf = appendRecord(buf, recPut, id, p)
			order = append(order, id)
		}
	}
	s.order = order
	tmp := s.path + ".tmp"
	if err := os.WriteFile(tmp, buf, 0o600); err != nil {
		return fmt.Errorf("cluster: spool: %w", err)
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fmt.Errorf("cluster: spool: %w", err)
	}
	f, err := os.OpenFile(s.path, os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("cluster: spool: %w", err)
	}
	s.f.Close()
	s.f, s.size = f, int64(len(buf))
	return nil
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("cluster: spool: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("cluster: spool: %w", err)
	}
	return nil
}

// Pending returns the messages not yet acknowledged, oldest first.
func (s *Spool) Pending() []SpoolEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SpoolEntry, 0, len(s.pending))
	for _, id := range s.order {
		if p, ok := s.pending[id]; ok {
			out = append(out, SpoolEntry{ID: id, Payload: p})
		}
	}
	return out
}

// Len is the number of messages not yet acknowledged.
func (s *Spool) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// Close closes the file; what is pending stays in it.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
