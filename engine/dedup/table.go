package dedup

import (
	"cmp"
	"slices"
)

// keyTable is an open-addressing hash multimap from a 64-bit key hash to
// page numbers, in 5 bytes a slot: the page number (plus one, 0 for an empty
// slot) and 8 bits of the key hash as a tag. Key hashes are not stored: a
// tag match is confirmed, and the table rehashed when it grows, by
// recomputing the key of the stored page (keyOf), which every page can give
// from its URL or digest. The table grows by a quarter when three quarters
// of its slots are used (a key's home slot is its hash scaled to the
// table's size, not its top bits), so it is 60 to 75% full: about 7.5
// bytes a page (doubling, it was 38 to 75% full, 13 bytes a page just
// after it grew).
//
// Each key keeps at most perKey pages: its first page (often the original
// that later copies duplicate) and the most recent ones, so a key shared by
// thousands of pages ("index.html") costs bounded time.
type keyTable struct {
	slots []uint32
	tags  []uint8
	used  int
	keyOf func(page uint32) uint64
}

const minTableBits = 10

func newKeyTable(keyOf func(uint32) uint64) keyTable {
	return keyTable{
		slots: make([]uint32, 1<<minTableBits),
		tags:  make([]uint8, 1<<minTableBits),
		keyOf: keyOf,
	}
}

// home returns the first slot of key h: its top 32 bits scaled to the
// table's size.
func (t *keyTable) home(h uint64) int { return int(h >> 32 * uint64(len(t.slots)) >> 32) }

// next returns the slot after i, round the end of the table.
func (t *keyTable) next(i int) int {
	if i++; i == len(t.slots) {
		return 0
	}
	return i
}

// each calls fn with the pages stored under key h, until fn returns false.
func (t *keyTable) each(h uint64, fn func(page uint32) bool) {
	tag := uint8(h)
	for i := t.home(h); t.slots[i] != 0; i = t.next(i) {
		if t.tags[i] == tag {
			page := t.slots[i] - 1
			if t.keyOf(page) == h && !fn(page) {
				return
			}
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
	tag := uint8(h)
	count := 0
	oldest, second := -1, -1
	i := t.home(h)
	for ; t.slots[i] != 0; i = t.next(i) {
		if t.tags[i] != tag {
			continue
		}
		p := t.slots[i] - 1
		if t.keyOf(p) != h {
			continue
		}
		count++
		switch {
		case oldest < 0 || p < t.slots[oldest]-1:
			oldest, second = i, oldest
		case second < 0 || p < t.slots[second]-1:
			second = i
		}
	}
	if perKey > 0 && count >= perKey {
		victim := second
		if victim < 0 {
			victim = oldest
		}
		t.slots[victim] = page + 1
		return
	}
	t.slots[i], t.tags[i] = page+1, tag
	t.used++
	if 4*t.used > 3*len(t.slots) {
		t.grow()
	}
}

// grow makes the table a quarter larger, recomputing each page's key.
func (t *keyTable) grow() {
	old := t.slots
	n := len(old) + len(old)/4
	t.slots = make([]uint32, n)
	t.tags = make([]uint8, n)
	for _, s := range old {
		if s == 0 {
			continue
		}
		h := t.keyOf(s - 1)
		i := t.home(h)
		for t.slots[i] != 0 {
			i = t.next(i)
		}
		t.slots[i], t.tags[i] = s, uint8(h)
	}
}

func (t *keyTable) bytes() int { return 5 * len(t.slots) }

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
