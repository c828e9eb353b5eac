package dedup

import (
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"
)

// keyTable is an open-addressing hash multimap from a 64-bit key hash to
// page numbers, in 5 bytes a slot: the page number and 8 bits of the key
// hash as a tag, never 0 (tag 0 marks an empty slot), so a look-up scans
// the tags alone, eight at a time, and reads a page number only when its
// tag matches. Key hashes are not stored: a tag match is confirmed, and a
// page moved when the table grows, by recomputing the key of the stored
// page (keyOf), which every page can give from its URL or digest.
//
// The table grows by a quarter when fifteen sixteenths of its slots are
// used (a key's home slot is its hash scaled to the table's size, not its
// top bits), so it is 75 to 94% full: 6.2 bytes a page on average over
// the sizes it passes through (BenchmarkKeyTable; growing by an eighth at
// seven eighths, 78 to 88% full, it took 6.4 and moved each page about
// eight times in its life, twice as often; doubling, 38 to 75% full, 13
// just after it grew). A look-up that misses scans some 30 tags at 88%, 128 at
// 94%, which the eight-at-a-time scan reads in a few tens of nanoseconds;
// a tag that matches another key's costs a key recomputed (keyOf), 0.12 an
// insert on average against 0.07 at 7/8 (session 39's review).
//
// A key's pages are visited in the order they were inserted, a page that
// replaced another (perKey) in its place, whatever its growths: the
// detector's decisions take the first suspect of equal worth, so that
// order is theirs, and it must not depend on when the tables grow.
//
// Growing moves the pages a few at a time, at each insert, not all at
// once: recomputing every page's key is a few hundred nanoseconds a page,
// and a detector's dozen tables reach their sizes together, so moving all
// at once stopped the crawl's loop for 0.8 s at 1,000,000 pages and 7.6 s
// at 3,000,000. While it grows, the table before (old) is kept as it was,
// read-only but for the pages it holds, and its slots not yet moved are
// looked up as well. An insert first moves its own key's pages still in
// old, so that they stay before it.
//
// The slots are held in chunks (slotArray), each allocated when a page is
// first put in it, so that an insert allocates a few chunks at most,
// however large the table: allocated whole when it grew, the eight tables
// that grow together took 24 to 38 MB in one decision at 460,000 to
// 740,000 pages, more than the collector's headroom
// (memory.gc_headroom_mb), and those decisions took 59 to 119 ms, one to
// three collections running inside them.
//
// Each key keeps at most perKey pages: its first page (often the original
// that later copies duplicate) and the most recent ones, so a key shared by
// thousands of pages ("index.html") costs bounded time.
type keyTable struct {
	cur   slotArray
	used  int // pages stored, in cur and in old's slots not yet moved
	keyOf func(page uint32) uint64
	// warm, if set, reads the memory keyOf(page) will read and returns
	// something of it; see move.
	warm   func(page uint32) uint64
	warmed uint64 // the sum of warm's results, kept so that no compiler drops their reads
	grows  growth

	// old is the table before it last grew (n 0: none). Its slots are
	// moved in order from start, an empty slot, so that a run of full
	// slots moves whole and in its order; the moved ones (moved of them,
	// from start on, wrapping) are in cur already, as are the pages of
	// the slots marked gone.
	old   slotArray
	start int
	moved int
}

// growth is when a keyTable grows, full sixteenths of its slots used, and
// by how much, step sixteenths. Tests set others to check that the order a
// key's pages are visited in does not depend on it.
type growth struct{ full, step int }

var defaultGrowth = growth{full: 15, step: 4}

// gone marks a slot of old whose page an insert of its key moved to cur
// before its turn (no page is numbered so high: pages are records).
const gone = ^uint32(0)

// slotArray is n slots of a keyTable in chunks of chunkSlots (the last
// may be shorter). A chunk is allocated when a page is first put in it; a
// chunk not allocated reads as empty slots.
type slotArray struct {
	pages [][]uint32
	tags  [][]uint8 // tagOf(key) of pages; 0 for an empty slot
	n     int
	alloc int // slots in the chunks allocated
}

// chunkBits sizes a slotArray's chunks: 4096 slots, 20 KiB, an allocation
// the runtime takes from its small size classes.
const (
	chunkBits  = 12
	chunkSlots = 1 << chunkBits
	chunkMask  = chunkSlots - 1
)

func makeSlots(n int) slotArray {
	k := (n + chunkMask) >> chunkBits
	return slotArray{pages: make([][]uint32, k), tags: make([][]uint8, k), n: n}
}

// tag returns the tag of slot i, 0 when it is empty.
func (a *slotArray) tag(i int) uint8 {
	if c := a.tags[i>>chunkBits]; c != nil {
		return c[i&chunkMask]
	}
	return 0
}

// page returns the page of slot i, which is not empty.
func (a *slotArray) page(i int) uint32 { return a.pages[i>>chunkBits][i&chunkMask] }

// setPage replaces the page of slot i, which is not empty.
func (a *slotArray) setPage(i int, page uint32) { a.pages[i>>chunkBits][i&chunkMask] = page }

// set puts page with tag in slot i, allocating its chunk if need be.
func (a *slotArray) set(i int, page uint32, tag uint8) {
	c := i >> chunkBits
	if a.tags[c] == nil {
		size := min(chunkSlots, a.n-c<<chunkBits)
		a.pages[c], a.tags[c] = make([]uint32, size), make([]uint8, size)
		a.alloc += size
	}
	a.pages[c][i&chunkMask], a.tags[c][i&chunkMask] = page, tag
}

const minTableBits = 10

// moveEach is how many of old's slots an insert moves: old is moved in
// len(old)/128 inserts, a thirtieth of the len(old)*15/64 after which the
// table grows again (from 75% to 94% of its new size), so the two are
// held together only that long, for at most 128 keys recomputed at an
// insert, some 30 µs. (With 32 slots an insert, growing by an eighth, the
// 1,000,000-URL crawl's peak RSS was 438 MB.)
const moveEach = 128

func newKeyTable(keyOf func(uint32) uint64) keyTable {
	return keyTable{cur: makeSlots(1 << minTableBits), keyOf: keyOf, grows: defaultGrowth}
}

// tagOf returns the tag of key h: its low 8 bits, 0 taken as 1.
func tagOf(h uint64) uint8 {
	t := uint8(h)
	if t == 0 {
		return 1
	}
	return t
}

// home returns the first slot of key h in a table of n slots: h's top 32
// bits scaled to n.
func home(h uint64, n int) int { return int(h >> 32 * uint64(n) >> 32) }

// inOld reports whether slot i of old holds a page not yet in cur.
func (t *keyTable) inOld(i int, page uint32) bool {
	return page != gone && (i-t.start+t.old.n)%t.old.n >= t.moved
}

// each calls fn with each page stored under key h, in the order they
// were inserted, until fn returns false: those of cur first, then old's
// not yet moved. While the table grows, cur holds either the first of
// the key's pages, moved from old in their order, or all of them (an
// insert under h moves those left in old first).
func (t *keyTable) each(h uint64, fn func(page uint32) bool) {
	tag := tagOf(h)
	more := true
	t.cur.probe(h, tag, func(_ int, page uint32) bool {
		if t.keyOf(page) == h {
			more = fn(page)
		}
		return more
	})
	if o := &t.old; more && o.n > 0 {
		// old is never changed but for the page a slot holds, so its
		// probe sequences are whole.
		o.probe(h, tag, func(i int, page uint32) bool {
			return !t.inOld(i, page) || t.keyOf(page) != h || fn(page)
		})
	}
}

// Tags are scanned eight at a time: lsb has the low bit of each byte of
// a word, msb the high one.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// zeroBytes returns x with the high bit of each byte set whose byte is
// 0, and perhaps of some bytes above such a byte (a borrow), never below:
// the lowest byte it marks is 0 whenever it marks one.
func zeroBytes(x uint64) uint64 { return (x - lsb) &^ x & msb }

// probe calls fn with each slot of key h's probe sequence whose tag is
// tag, and its page, until an empty slot or until fn returns false.
func (a *slotArray) probe(h uint64, tag uint8, fn func(i int, page uint32) bool) {
	i := home(h, a.n)
	want := uint64(tag) * lsb
	for {
		c := i >> chunkBits
		tags := a.tags[c]
		if tags == nil {
			return
		}
		j := i & chunkMask
		for ; j+8 <= len(tags); j += 8 {
			x := binary.LittleEndian.Uint64(tags[j:])
			// The bytes marked, each checked: empty slots and this tag,
			// and some others above them.
			for m := zeroBytes(x) | zeroBytes(x^want); m != 0; m &= m - 1 {
				if !a.step(c, j+bits.TrailingZeros64(m)>>3, tag, fn) {
					return
				}
			}
		}
		for ; j < len(tags); j++ {
			if !a.step(c, j, tag, fn) {
				return
			}
		}
		if i = (c + 1) << chunkBits; i >= a.n {
			i = 0
		}
	}
}

// step is probe's at slot k of chunk c: it calls fn if the slot's tag is
// tag, and reports whether the probe goes on (not at an empty slot, nor
// when fn returned false).
func (a *slotArray) step(c, k int, tag uint8, fn func(i int, page uint32) bool) bool {
	switch a.tags[c][k] {
	case 0:
		return false
	case tag:
		return fn(c<<chunkBits|k, a.pages[c][k])
	}
	return true
}

// free returns the first empty slot from slot i on, wrapping.
func (a *slotArray) free(i int) int {
	for {
		c := i >> chunkBits
		tags := a.tags[c]
		if tags == nil {
			return i
		}
		j := i & chunkMask
		for ; j+8 <= len(tags); j += 8 {
			if m := zeroBytes(binary.LittleEndian.Uint64(tags[j:])); m != 0 {
				return c<<chunkBits | j + bits.TrailingZeros64(m)>>3
			}
		}
		for ; j < len(tags); j++ {
			if tags[j] == 0 {
				return c<<chunkBits | j
			}
		}
		if i = (c + 1) << chunkBits; i >= a.n {
			i = 0
		}
	}
}

// first returns the first page stored under h that ok accepts.
func (t *keyTable) first(h uint64, ok func(page uint32) bool) (uint32, bool) {
	var found uint32
	var hit bool
	t.each(h, func(p uint32) bool {
		if ok(p) {
			found, hit = p, true
			return false
		}
		return true
	})
	return found, hit
}

// insert adds page under key h. When the key already holds perKey pages
// (perKey > 0), the newest page replaces the second oldest, so the key
// keeps its first page and the latest ones.
func (t *keyTable) insert(h uint64, page uint32, perKey int) {
	t.move(moveEach)
	tag := tagOf(h)
	if o := &t.old; o.n > 0 {
		// The key's pages not yet moved go first, in their order, so
		// that the page inserted comes after them whenever the table
		// grew.
		o.probe(h, tag, func(i int, p uint32) bool {
			if t.inOld(i, p) && t.keyOf(p) == h {
				t.put(h, p)
				o.setPage(i, gone)
			}
			return true
		})
	}
	count := 0
	var oldest, second int // slots of cur
	var oldestPage, secondPage uint32
	t.cur.probe(h, tag, func(i int, p uint32) bool {
		if t.keyOf(p) != h {
			return true
		}
		count++
		switch {
		case count == 1 || p < oldestPage:
			second, secondPage = oldest, oldestPage
			oldest, oldestPage = i, p
		case count == 2 || p < secondPage:
			second, secondPage = i, p
		}
		return true
	})
	if perKey > 0 && count >= perKey {
		victim := second
		if count < 2 {
			victim = oldest
		}
		t.cur.setPage(victim, page)
		return
	}
	t.put(h, page)
	t.used++
	if 16*t.used > t.grows.full*t.cur.n {
		t.grow()
	}
}

// put stores page under key h in cur, after the pages already there.
func (t *keyTable) put(h uint64, page uint32) {
	t.cur.set(t.cur.free(home(h, t.cur.n)), page, tagOf(h))
}

// grow makes the table larger by grows.step sixteenths; its pages move at
// the inserts that follow (move), each allocating the chunks it puts
// pages in.
func (t *keyTable) grow() {
	t.move(t.old.n) // what is left of the last growth, if inserts came faster than moveEach allowed
	t.old, t.moved = t.cur, 0
	t.start = t.old.free(0)
	t.cur = makeSlots(t.old.n + t.old.n*t.grows.step/16)
}

// move moves the pages of up to k of old's slots into cur, moveEach
// slots at a time. The keys of the pages moved are recomputed from their
// records and URLs, scattered in memory: called one after the other,
// each keyOf waited for its own cache misses (a move was 64% of
// BenchmarkObserve's CPU). So move first calls warm for the batch's
// pages, whose reads do not depend on each other and so overlap, and then
// keyOf, which finds them in the cache. The pages go into cur in the same
// order either way.
func (t *keyTable) move(k int) {
	o := &t.old
	if o.n == 0 {
		return
	}
	end := min(t.moved+k, o.n)
	var batch [moveEach]uint32
	var warmed uint64
	for m := t.moved; m < end; {
		stop := min(m+moveEach, end)
		nb := 0
		for ; m < stop; m++ {
			i := t.start + m
			if i >= o.n {
				i -= o.n
			}
			if o.tag(i) != 0 && o.page(i) != gone {
				batch[nb] = o.page(i)
				nb++
			}
		}
		if t.warm != nil {
			for _, p := range batch[:nb] {
				warmed += t.warm(p)
			}
		}
		for _, p := range batch[:nb] {
			t.put(t.keyOf(p), p)
		}
	}
	t.warmed += warmed
	t.moved = end
	if end == o.n {
		t.old, t.start, t.moved = slotArray{}, 0, 0
	}
}

// allocated returns the slots of the chunks the table holds.
func (t *keyTable) allocated() int { return t.cur.alloc + t.old.alloc }

func (t *keyTable) bytes() int { return 5 * t.allocated() }

// pageItems holds the Page.Items of the stored pages that have one. Pages
// are numbered in the order they are stored, so it is a pair of sorted
// arrays, appended to and searched by bisection: 12 bytes a page (a Go map
// took about 38), in fixed chunks that growing never copies. The zero
// value is empty.
type pageItems struct {
	pages [][]uint32 // chunks of itemsChunk page numbers, ascending
	items [][]uint64 // the items of pages, chunk for chunk
	n     int
}

const itemsChunk = 1 << 14

// add records the items of page, which must be above every page added
// before (pages are added as they are stored).
func (t *pageItems) add(page uint32, items uint64) {
	if t.n%itemsChunk == 0 {
		t.pages = append(t.pages, make([]uint32, 0, itemsChunk))
		t.items = append(t.items, make([]uint64, 0, itemsChunk))
	}
	last := len(t.pages) - 1
	t.pages[last] = append(t.pages[last], page)
	t.items[last] = append(t.items[last], items)
	t.n++
}

// get returns the items of page and whether it has any.
func (t *pageItems) get(page uint32) (uint64, bool) {
	// The last chunk whose first page is at most page, then the page in it.
	c, _ := slices.BinarySearchFunc(t.pages, page, func(chunk []uint32, p uint32) int {
		return cmp.Compare(chunk[0], p+1)
	})
	if c == 0 {
		return 0, false
	}
	chunk := t.pages[c-1]
	if i, ok := slices.BinarySearch(chunk, page); ok {
		return t.items[c-1][i], true
	}
	return 0, false
}

func (t *pageItems) len() int { return t.n }

func (t *pageItems) bytes() int { return len(t.pages) * itemsChunk * 12 }
