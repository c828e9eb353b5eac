// Package seen is the crawl's set of URLs seen, kept mostly on disk: a map
// from a URL's 64-bit ID to an int32 (the URL's node in the link graph)
// that answers as a Go map would, in a few bytes of memory per URL.
//
// The newest entries are in memory. When they reach Options.Recent, they
// are handed to a background goroutine that sorts them into a run on disk;
// runs of similar size are merged in the background, so there are about
// log2(n/Recent) of them, as in Mercator's disk-based URL set, IRLbot's
// DRUM and BUbiNG's sieve. For each run memory holds a Bloom filter (10
// bits an entry) and the first ID of each 1 KiB block, about 1.3 bytes an
// entry in all; a look-up the filters do not rule out reads one block. A
// small cache keeps the entries last read from disk, which a crawl asks
// for again and again (a site's navigation links). A look-up reads its
// block with one pread, mostly from the page cache, which the kernel
// empties under memory pressure and which is not the process's resident
// memory (mapped, the blocks read counted in it: 12 bytes an entry).
//
// Runs are a cache of what the crawl's store holds, not a second record of
// it: Open empties the directory, and the crawl adds its URLs again from
// the store (after a kill -9 too).
package seen

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"lidi/engine/cputime"
)

// ErrClosed is returned by a Set used after Close.
var ErrClosed = errors.New("seen: set closed")

// Options tunes a Set. The zero value keeps DefaultRecent entries in memory
// and spills to a new temporary directory.
type Options struct {
	// Dir is where runs are written; Open creates it and removes the runs
	// an earlier Set left there. Empty: a new directory under os.TempDir,
	// removed by Close, or, when its process was killed, by the next Open
	// that finds it (the Set holds a lock on it while it lives).
	Dir string
	// Recent is how many entries are kept in memory before they are
	// written out as a run (0: DefaultRecent). While the worker is busy,
	// the tables that fill up wait for it in memory, however many.
	Recent int
	// CacheEntries is the size of the cache of entries read from disk,
	// rounded up to a power of two (0: DefaultCacheEntries). Each costs
	// 16 bytes.
	CacheEntries int
}

// Defaults for the zero Options.
const (
	// DefaultRecent entries take a table of 262,144 slots, 3 MiB (as a
	// Go map, 1<<18 entries took about 10 MiB), and the table the last
	// run was written from, cleared for the next, as much: a run every
	// 196,608 new URLs.
	DefaultRecent       = 3 << 16
	DefaultCacheEntries = 1 << 16
)

// Set is a map from URL IDs to int32 values, spilled to disk.
//
// A Set is used by one goroutine (its methods are not safe for concurrent
// use); it runs one background goroutine of its own, which never holds the
// caller for more than the few microseconds of a hand-over. Use Open to
// make one; the zero Set is not usable.
type Set struct {
	dir     string
	tempDir bool
	lock    *os.File // held on a temporary directory for the Set's life
	recent  *table
	max     int
	// frozen are the recent tables that filled up, oldest first, queued
	// for the worker or being written as runs: read-only, read by both
	// until their runs are installed. A table that fills while the
	// worker is still busy joins the queue: growing it instead, moving
	// its entries to a table twice as large, held the caller for
	// milliseconds.
	frozen []*table
	// spare brings a table once frozen, cleared off the caller's
	// goroutine, to the next freeze, which then allocates nothing: an
	// allocation of megabytes took the caller milliseconds (its pages
	// faulted in and zeroed, and, under the crawl's tight collector
	// pacing, marking work the runtime makes a large allocation do).
	// spares is how many tables it holds or are being cleared for it:
	// one at most (Open makes the first).
	spare  chan *table
	spares int
	runs   []*run // on disk, newest first
	cache  []cacheSlot
	onDisk int // entries in runs

	qmu     sync.Mutex    // guards queue
	queue   []*table      // frozen tables the worker has not yet taken, oldest first
	queued  chan struct{} // a token when a table joined the queue
	mu      sync.Mutex    // guards pub
	pub     published     // the worker's latest state, for the caller
	changed chan struct{} // a token when pub changed
	stop    chan struct{}
	done    chan struct{}
	closing sync.WaitGroup // goroutines closing retired runs
	err     error          // sticky: the set is unusable

	stats     Stats
	diskCalls int64 // getOnDisk calls, for usageEvery
}

// published is what the worker hands the caller: the runs now, those
// retired since the last hand-over (for the caller to close) and how many
// of the oldest frozen tables are now runs.
type published struct {
	runs    []*run
	retired []*run
	flushed int
	err     error

	flushes, merges int64
}

// Stats describes a Set's work.
type Stats struct {
	Entries   int           // entries in the set
	Runs      int           // runs on disk
	Recent    int           // entries in memory, not yet in a run
	Lookups   int64         // Get calls
	DiskReads int64         // blocks read from disk (look-ups the filters and the cache did not answer)
	CacheHits int64         // look-ups answered by the cache of disk entries
	Flushes   int64         // runs written from memory
	Merges    int64         // merges done
	MaxPause  time.Duration // the longest a Get or Add took that read disk, froze its table or took over the worker's results
	// MaxHandOff is the longest of those calls that did not read disk:
	// the background writing and merging's whole hold on the caller, the
	// longer of Freeze and Install.
	MaxHandOff time.Duration
	// The hand-overs with the worker, each kind apart: freezing the
	// full recent table and queueing it for the worker (Freeze), taking
	// over the worker's results (Install).
	Freeze, Install Hold
	// What the thread of the longest call measured did meanwhile (every
	// freeze and take-over is, and one look-up on disk in
	// usageEvery: reading the thread's usage took two system calls at
	// each end, twice the cost of the read), where the system says
	// (Linux): the call's wall time, its CPU time, its page faults and
	// how often the kernel gave its CPU to another thread (switches) or
	// the thread slept (sleeps: waiting for the disk). A pause far
	// longer than its CPU time, with switches, is the machine's load,
	// not the set's work.
	MaxMeasured      time.Duration
	MaxPauseCPU      time.Duration
	MaxPauseFaults   int64
	MaxPauseSwitches int64
	MaxPauseSleeps   int64
	SlowCalls        int64 // calls that took over a millisecond
	Bytes            int64 // memory held, estimated
	DiskBytes        int64 // bytes in runs on disk
}

// Hold is how one kind of hand-over between a Set's caller and its
// worker held the caller: how many there were, the longest's wall time,
// and what the caller's thread used during the longest, where the system
// says (Linux; zero elsewhere). A hold far longer than its CPU time, with
// switches, is the machine's load; one as long as its CPU time is the
// set's work. The zero Hold is no hand-over yet.
type Hold struct {
	Count   int64
	Longest time.Duration
	cputime.Usage
}

// holdKind says which Hold of Stats a pause counts in.
type holdKind int

const (
	diskRead holdKind = iota // a look-up that read disk: no Hold
	freezeHold
	installHold
)

type cacheSlot struct {
	id  uint64
	val int32
	ok  bool
}

// Open returns an empty Set that spills to opt.Dir.
func Open(opt Options) (*Set, error) {
	s := &Set{dir: opt.Dir, max: opt.Recent}
	if s.max <= 0 {
		s.max = DefaultRecent
	}
	ce := opt.CacheEntries
	if ce <= 0 {
		ce = DefaultCacheEntries
	}
	size := 1
	for size < ce {
		size <<= 1
	}
	s.cache = make([]cacheSlot, size)
	if s.dir == "" {
		sweep(os.TempDir(), tempPattern+"*")
		d, err := os.MkdirTemp("", tempPattern)
		if err != nil {
			return nil, fmt.Errorf("seen: %w", err)
		}
		s.dir, s.tempDir = d, true
		if s.lock, err = lockDir(d); err != nil {
			os.RemoveAll(d)
			return nil, fmt.Errorf("seen: %w", err)
		}
	} else {
		if err := os.MkdirAll(s.dir, 0o755); err != nil {
			return nil, fmt.Errorf("seen: %w", err)
		}
		old, err := filepath.Glob(filepath.Join(s.dir, "*"+runExt))
		if err != nil {
			return nil, fmt.Errorf("seen: %w", err)
		}
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return nil, fmt.Errorf("seen: removing an earlier run: %w", err)
			}
		}
	}
	s.recent = newTable(s.max)
	s.spare = make(chan *table, 1)
	s.spare <- newTable(s.max) // for the first freeze, which otherwise allocates one
	s.spares = 1
	s.queued = make(chan struct{}, 1)
	s.changed = make(chan struct{}, 1)
	s.stop = make(chan struct{})
	s.done = make(chan struct{})
	w := &worker{s: s, dir: s.dir}
	go w.run()
	return s, nil
}

// Get returns the value of id and whether id is in the set.
func (s *Set) Get(id uint64) (int32, bool, error) {
	if s.err != nil {
		return 0, false, s.err
	}
	s.stats.Lookups++
	if v, ok := s.recent.get(id); ok {
		return v, true, nil
	}
	for i := len(s.frozen) - 1; i >= 0; i-- { // the newest first
		if v, ok := s.frozen[i].get(id); ok {
			return v, true, nil
		}
	}
	if len(s.runs) == 0 {
		return 0, false, nil
	}
	slot := &s.cache[mix(id)&uint64(len(s.cache)-1)]
	if slot.ok && slot.id == id {
		s.stats.CacheHits++
		return slot.val, true, nil
	}
	for i, r := range s.runs {
		if r.bloom.has(id) {
			return s.getOnDisk(id, slot, s.runs[i:])
		}
	}
	return 0, false, nil
}

// getOnDisk looks id up in runs, whose first one's filter may hold it: the
// part of Get that reads blocks, timed as a pause (most look-ups of new
// URLs end at the filters, in memory, and are not).
func (s *Set) getOnDisk(id uint64, slot *cacheSlot, runs []*run) (int32, bool, error) {
	s.diskCalls++
	start := s.startPause(s.diskCalls%usageEvery == 1)
	defer s.pause(start, diskRead)
	for _, r := range runs {
		if !r.bloom.has(id) {
			continue
		}
		s.stats.DiskReads++
		v, ok, err := r.get(id)
		if err != nil {
			s.err = err
			return 0, false, err
		}
		if ok {
			*slot = cacheSlot{id: id, val: v, ok: true}
			return v, true, nil
		}
	}
	return 0, false, nil
}

// Add sets the value of id, as a map assignment does: a later Get returns
// val.
func (s *Set) Add(id uint64, val int32) error {
	if s.err != nil {
		return s.err
	}
	s.recent.set(id, val)
	if slot := &s.cache[mix(id)&uint64(len(s.cache)-1)]; slot.ok && slot.id == id {
		slot.val = val
	}
	select {
	case <-s.changed:
		s.install()
	default:
	}
	if s.recent.len() >= s.max && s.err == nil {
		// The table goes to the worker's queue, and a new one starts.
		start := s.startPause(true)
		full := s.recent
		s.frozen = append(s.frozen, full)
		s.recent = s.newRecent()
		s.qmu.Lock()
		s.queue = append(s.queue, full)
		s.qmu.Unlock()
		select {
		case s.queued <- struct{}{}:
		default: // the worker has a token already
		}
		s.pause(start, freezeHold)
	}
	return s.err
}

// newRecent returns an empty table for the next entries: the spare one if
// it is ready, a new one otherwise.
func (s *Set) newRecent() *table {
	select {
	case t := <-s.spare:
		s.spares--
		return t
	default:
		return newTable(s.max)
	}
}

// install takes over what the worker published.
func (s *Set) install() {
	start := s.startPause(true)
	defer s.pause(start, installHold)
	s.mu.Lock()
	p := s.pub
	if p.err == nil {
		// After an error they stay published, for Close to close.
		s.pub.retired, s.pub.flushed = nil, 0
	}
	s.mu.Unlock()
	if p.err != nil {
		s.err = p.err
		return
	}
	s.runs = p.runs
	s.onDisk = 0
	for _, r := range s.runs {
		s.onDisk += r.n
	}
	s.stats.Flushes, s.stats.Merges = p.flushes, p.merges
	if p.flushed > 0 {
		if s.spares == 0 {
			// Neither the caller nor the worker reads it any more.
			t := s.frozen[0]
			s.spares++
			s.closing.Add(1)
			go func() {
				defer s.closing.Done()
				t.reset()
				s.spare <- t
			}()
		}
		s.frozen = slices.Delete(s.frozen, 0, p.flushed)
	}
	if len(p.retired) > 0 {
		// The worker has removed their files and the caller's reads of
		// them ended with this hand-over. Closing the last descriptor of
		// a removed file frees its blocks, which may take the system a
		// while for a large run: off the caller's goroutine.
		s.closing.Add(1)
		go func() {
			defer s.closing.Done()
			for _, r := range p.retired {
				r.close()
			}
		}()
	}
}

// usageEvery is how many look-ups on disk there are to one whose thread
// usage is read (Stats.MaxMeasured).
const usageEvery = 16

// pauseStart is when a call that does more than touch memory started, and
// its thread's usage then, when measured.
type pauseStart struct {
	wall     time.Time
	meter    cputime.Meter
	measured bool
}

// startPause starts timing a call, and reads its thread's usage when
// measure is true.
func (s *Set) startPause(measure bool) pauseStart {
	if !measure {
		return pauseStart{wall: time.Now()}
	}
	return pauseStart{meter: cputime.StartMeter(), wall: time.Now(), measured: true}
}

// pause records how long a call that did more than touch memory took
// (of kind, when it dealt with the worker, not the disk), and for the
// longest measured, and the longest of each kind, what its thread did
// meanwhile.
func (s *Set) pause(start pauseStart, kind holdKind) {
	d := time.Since(start.wall)
	var u cputime.Usage
	if start.measured {
		u, _ = start.meter.Stop()
		if d > s.stats.MaxMeasured {
			s.stats.MaxMeasured = d
			s.stats.MaxPauseCPU, s.stats.MaxPauseFaults, s.stats.MaxPauseSwitches, s.stats.MaxPauseSleeps = u.CPU, u.Faults, u.Switches, u.Sleeps
		}
	}
	s.stats.MaxPause = max(s.stats.MaxPause, d)
	var h *Hold
	switch kind {
	case freezeHold:
		h = &s.stats.Freeze
	case installHold:
		h = &s.stats.Install
	}
	if h != nil {
		s.stats.MaxHandOff = max(s.stats.MaxHandOff, d)
		h.Count++
		if d > h.Longest || h.Count == 1 {
			*h = Hold{Count: h.Count, Longest: d, Usage: u}
		}
	}
	if d > time.Millisecond {
		s.stats.SlowCalls++
	}
}

// Len returns the number of entries. An ID added again once its entry is
// on disk counts twice until a merge meets both entries.
func (s *Set) Len() int { return s.onDisk + s.inMemory() }

// inMemory is the number of entries in the recent and frozen tables.
func (s *Set) inMemory() int {
	n := s.recent.len()
	for _, t := range s.frozen {
		n += t.len()
	}
	return n
}

// Stats returns the set's figures.
func (s *Set) Stats() Stats {
	st := s.stats
	st.Entries, st.Runs, st.Recent = s.Len(), len(s.runs), s.inMemory()
	// Every table has the recent one's size: the frozen ones, and the
	// spare held or being cleared.
	st.Bytes = s.recent.bytes()*int64(1+len(s.frozen)+s.spares) + int64(len(s.cache))*16
	for _, r := range s.runs {
		st.Bytes += int64(len(r.bloom))*8 + int64(len(r.index))*8
		st.DiskBytes += int64(r.n) * entrySize
	}
	return st
}

// Close stops the worker, closes the runs and removes their files (and the
// directory, when Open made it). The Set answers ErrClosed afterwards.
func (s *Set) Close() error {
	if s.err == ErrClosed {
		return nil
	}
	close(s.stop)
	<-s.done
	s.closing.Wait()
	s.mu.Lock()
	p := s.pub
	s.mu.Unlock()
	var errs []error
	for _, r := range slices.Concat(s.runs, p.runs, p.retired) {
		if r.f != nil {
			r.close()
			os.Remove(r.f.Name())
		}
	}
	if s.tempDir {
		errs = append(errs, os.RemoveAll(s.dir))
		if s.lock != nil {
			s.lock.Close()
		}
	}
	s.err = ErrClosed
	s.recent, s.frozen, s.runs = nil, nil, nil
	return errors.Join(errs...)
}

// tempPattern names the temporary directories of Sets.
const tempPattern = "lidi-seen-"

// mix scrambles an ID (splitmix64's finaliser), so that IDs that are not
// uniform hashes still spread over the cache and the filters.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
