package dedup

import (
	"cmp"
	"slices"
)

// keyTable is an open-addressing hash multimap from a 64-bit key hash to
// page numbers, in 5 bytes a slot: the page number and 8 bits of the key
// hash as a tag, never 0 (tag 0 marks an empty slot), so a look-up scans
// the tags alone, 64 slots a cache line, and reads a page number only when
// its tag matches. Key hashes are not stored: a tag match is confirmed,
// and a page moved when the table grows, by recomputing the key of the
// stored page (keyOf), which every page can give from its URL or digest.
// The table grows by an eighth when seven eighths of its slots are used (a
// key's home slot is its hash scaled to the table's size, not its top
// bits), so it is 78 to 88% full: about 6.1 bytes a page (growing by a
// quarter at three quarters, 60 to 75% full, it took 7.8; doubling, 38 to
// 75% full, 13 just after it grew). A look-up that misses scans some 30
// tags at 88% (8 at 75%), a few tens of nanoseconds.
//
// Growing moves the pages a few at a time, at each insert, not all at
// once: recomputing every page's key is a few hundred nanoseconds a page,
// and a detector's dozen tables reach their sizes together, so moving all
// at once stopped the crawl's loop for 0.8 s at 1,000,000 pages and 7.6 s
// at 3,000,000. While it grows, the table before (old) is kept as it was,
// read-only but for the pages it holds, and its slots from moved on are
// looked up as well.
//
// Each key keeps at most perKey pages: its first page (often the original
// that later copies duplicate) and the most recent ones, so a key shared by
// thousands of pages ("index.html") costs bounded time.
type keyTable struct {
	slots []uint32
	tags  []uint8 // tagOf(key) of slots' page; 0 for an empty slot
	used  int     // pages stored, in slots and in old's slots not yet moved
	keyOf func(page uint32) uint64

	// old is the table before it last grew; its slots before moved are
	// in slots already. nil once every page is moved.
	old     []uint32
	oldTags []uint8
	moved   int
}

const minTableBits = 10

// moveEach is how many of old's slots an insert moves: old is moved in
// len(old)/128 inserts, a fourteenth of the len(old)*7/64 after which the
// table grows again (from 78% to 88% of its new size), so the two are
// held together only that long (each table its 2.1 slots a page instead
// of 1.1; with 32 slots an insert, the 1,000,000-URL crawl's peak RSS was
// 438 MB), for at most 128 keys recomputed at an insert, some 30 µs.
const moveEach = 128

func newKeyTable(keyOf func(uint32) uint64) keyTable {
	return keyTable{
		slots: make([]uint32, 1<<minTableBits),
		tags:  make([]uint8, 1<<minTableBits),
		keyOf: keyOf,
	}
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

// next returns the slot after i in a table of n slots, round its end.
func next(i, n int) int {
	if i++; i == n {
		return 0
	}
	return i
}

// slot names a stored page's slot: in old or in slots.
type slot struct {
	old bool
	i   int
}

// visit calls fn with the slot of each page stored under key h, until fn
// returns false: old's pages not yet moved first, then those of slots. The
// order is no promise: while the table grows, a page inserted since comes
// before older pages of its key that move after it.
func (t *keyTable) visit(h uint64, fn func(s slot, page uint32) bool) {
	tag := tagOf(h)
	if t.old != nil {
		// old is never changed but for the page a slot holds, so its
		// probe sequences are whole; its slots before moved are skipped,
		// their pages being in slots.
		tags := t.oldTags
		n := len(tags)
		for i := home(h, n); tags[i] != 0; i = next(i, n) {
			if tags[i] == tag && i >= t.moved {
				if page := t.old[i]; t.keyOf(page) == h && !fn(slot{true, i}, page) {
					return
				}
			}
		}
	}
	tags := t.tags
	n := len(tags)
	for i := home(h, n); tags[i] != 0; i = next(i, n) {
		if tags[i] == tag {
			if page := t.slots[i]; t.keyOf(page) == h && !fn(slot{false, i}, page) {
				return
			}
		}
	}
}

// each calls fn with the pages stored under key h, until fn returns false.
func (t *keyTable) each(h uint64, fn func(page uint32) bool) {
	t.visit(h, func(_ slot, page uint32) bool { return fn(page) })
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
	count := 0
	var oldest, second slot
	var oldestPage, secondPage uint32
	t.visit(h, func(s slot, p uint32) bool {
		count++
		switch {
		case count == 1 || p < oldestPage:
			second, secondPage = oldest, oldestPage
			oldest, oldestPage = s, p
		case count == 2 || p < secondPage:
			second, secondPage = s, p
		}
		return true
	})
	if perKey > 0 && count >= perKey {
		victim := second
		if count < 2 {
			victim = oldest
		}
		if victim.old {
			t.old[victim.i] = page // same key, same tag; moved later
		} else {
			t.slots[victim.i] = page
		}
		return
	}
	t.put(h, page)
	t.used++
	if 8*t.used > 7*len(t.slots) {
		t.grow()
	}
}

// put stores page under key h in slots.
func (t *keyTable) put(h uint64, page uint32) {
	n := len(t.tags)
	i := home(h, n)
	for t.tags[i] != 0 {
		i = next(i, n)
	}
	t.slots[i], t.tags[i] = page, tagOf(h)
}

// grow makes the table an eighth larger; its pages move at the inserts
// that follow (move).
func (t *keyTable) grow() {
	t.move(len(t.old)) // what is left of the last growth, if inserts came faster than moveEach allowed
	t.old, t.oldTags, t.moved = t.slots, t.tags, 0
	n := len(t.old) + len(t.old)/8
	t.slots = make([]uint32, n)
	t.tags = make([]uint8, n)
}

// move moves the pages of up to k of old's slots into slots.
func (t *keyTable) move(k int) {
	if t.old == nil {
		return
	}
	end := min(t.moved+k, len(t.old))
	for i := t.moved; i < end; i++ {
		if t.oldTags[i] != 0 {
			p := t.old[i]
			t.put(t.keyOf(p), p)
		}
	}
	t.moved = end
	if end == len(t.old) {
		t.old, t.oldTags, t.moved = nil, nil, 0
	}
}

func (t *keyTable) bytes() int { return 5 * (len(t.slots) + len(t.old)) }

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
