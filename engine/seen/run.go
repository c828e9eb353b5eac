package seen

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
)

// A run file holds entries sorted by ID, entrySize bytes each: the ID and
// the value, little-endian. It has no header: it lives as long as the Set
// that wrote it.
const (
	entrySize    = 12
	blockEntries = 85 // a 1,020-byte block: one read per look-up
	blockSize    = blockEntries * entrySize
	runExt       = ".run"
)

// run is a sorted run on disk, immutable once written. Its file is read with
// ReadAt, by the caller's look-ups and the worker's merges at once. It is
// read, not mapped into memory: the blocks a crawl's look-ups touched
// counted in the process's resident memory when mapped (12 bytes a URL,
// growing with the crawl), where the page cache they are read from does
// not, and a read of one block from the page cache takes a microsecond or
// two.
type run struct {
	f     *os.File
	fd    uintptr // f's descriptor, for readBlock
	n     int
	index []uint64 // the first ID of each block
	bloom bloom
}

// get looks id up in the run's file.
func (r *run) get(id uint64) (int32, bool, error) {
	b := sort.Search(len(r.index), func(i int) bool { return r.index[i] > id }) - 1
	if b < 0 {
		return 0, false, nil
	}
	k := min(blockEntries, r.n-b*blockEntries)
	var buf [blockSize]byte
	if err := readBlock(r.f, r.fd, buf[:k*entrySize], int64(b)*blockSize); err != nil {
		return 0, false, fmt.Errorf("seen: reading %s: %w", r.f.Name(), err)
	}
	lo, hi := 0, k
	for lo < hi {
		m := (lo + hi) / 2
		if binary.LittleEndian.Uint64(buf[m*entrySize:]) < id {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < k && binary.LittleEndian.Uint64(buf[lo*entrySize:]) == id {
		return int32(binary.LittleEndian.Uint32(buf[lo*entrySize+8:])), true, nil
	}
	return 0, false, nil
}

// close closes the run's file; Close may meet a run twice.
func (r *run) close() {
	r.f.Close()
}

// runWriter writes a run's entries in ID order, building its index and
// filter as it goes.
type runWriter struct {
	f    *os.File
	w    *bufio.Writer
	r    *run
	last uint64
	buf  [entrySize]byte
}

func newRunWriter(dir string, seq int, entries int) (*runWriter, error) {
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(seq)+runExt), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("seen: %w", err)
	}
	return &runWriter{f: f, w: bufio.NewWriterSize(f, 1<<16), r: &run{f: f, fd: f.Fd(), bloom: newBloom(entries)}}, nil
}

func (w *runWriter) add(id uint64, val int32) error {
	if w.r.n > 0 && id <= w.last {
		return fmt.Errorf("seen: run out of order at %x after %x", id, w.last)
	}
	if w.r.n%blockEntries == 0 {
		w.r.index = append(w.r.index, id)
	}
	w.last = id
	w.r.n++
	w.r.bloom.add(id)
	binary.LittleEndian.PutUint64(w.buf[:8], id)
	binary.LittleEndian.PutUint32(w.buf[8:], uint32(val))
	_, err := w.w.Write(w.buf[:])
	return err
}

// finish flushes the run; it is not synced, being rebuilt at a restart.
func (w *runWriter) finish() (*run, error) {
	if err := w.w.Flush(); err != nil {
		w.abort()
		return nil, fmt.Errorf("seen: writing %s: %w", w.f.Name(), err)
	}
	w.r.index = slices.Clip(w.r.index)
	return w.r, nil
}

// abort removes a run that will not be finished.
func (w *runWriter) abort() {
	w.f.Close()
	os.Remove(w.f.Name())
}

// runReader reads a run's entries in order, for a merge.
type runReader struct {
	r   *bufio.Reader
	id  uint64
	val int32
	ok  bool
	err error
	buf [entrySize]byte
}

func newRunReader(r *run) *runReader {
	rr := &runReader{r: bufio.NewReaderSize(io.NewSectionReader(r.f, 0, int64(r.n)*entrySize), 1<<16)}
	rr.next()
	return rr
}

func (rr *runReader) next() {
	if _, err := io.ReadFull(rr.r, rr.buf[:]); err != nil {
		rr.ok = false
		if !errors.Is(err, io.EOF) {
			rr.err = fmt.Errorf("seen: reading a run: %w", err)
		}
		return
	}
	rr.id = binary.LittleEndian.Uint64(rr.buf[:8])
	rr.val = int32(binary.LittleEndian.Uint32(rr.buf[8:]))
	rr.ok = true
}

// bloom is a blocked Bloom filter: an ID sets bloomK bits of one 512-bit
// block (a cache line), at about 10 bits an entry: 1 to 2% false
// positives.
type bloom []uint64

const bloomK = 6

func newBloom(entries int) bloom {
	blocks := max((entries*10+511)/512, 1)
	return make(bloom, blocks*8)
}

// block returns the block of id and the hash its bits are taken from.
func (b bloom) block(id uint64) ([]uint64, uint64) {
	h := mix(id)
	i := (h >> 32) * uint64(len(b)/8) >> 32
	return b[i*8 : i*8+8], mix(h + 0x9e3779b97f4a7c15)
}

func (b bloom) add(id uint64) {
	blk, h := b.block(id)
	for i := range bloomK {
		bit := (h >> (i * 9)) & 511
		blk[bit>>6] |= 1 << (bit & 63)
	}
}

func (b bloom) has(id uint64) bool {
	blk, h := b.block(id)
	for i := range bloomK {
		bit := (h >> (i * 9)) & 511
		if blk[bit>>6]&(1<<(bit&63)) == 0 {
			return false
		}
	}
	return true
}
