package dedup

// keyTable is an open-addressing hash multimap from a 64-bit key hash to
// page numbers, in 5 bytes a slot: the page number (plus one, 0 for an empty
// slot) and 8 bits of the key hash as a tag. Key hashes are not stored: a
// tag match is confirmed, and the table rehashed when it grows, by
// recomputing the key of the stored page (keyOf), which every page can give
// from its URL or digest. That keeps each index at about 8 bytes a page.
//
// Each key keeps at most perKey pages: its first page (often the original
// that later copies duplicate) and the most recent ones, so a key shared by
// thousands of pages ("index.html") costs bounded time.
type keyTable struct {
	slots []uint32
	tags  []uint8
	used  int
	shift uint // home slot = hash >> shift
	keyOf func(page uint32) uint64
}

const minTableBits = 10

func newKeyTable(keyOf func(uint32) uint64) keyTable {
	return keyTable{
		slots: make([]uint32, 1<<minTableBits),
		tags:  make([]uint8, 1<<minTableBits),
		shift: 64 - minTableBits,
		keyOf: keyOf,
	}
}

func (t *keyTable) mask() int { return len(t.slots) - 1 }

// each calls fn with the pages stored under key h, until fn returns false.
func (t *keyTable) each(h uint64, fn func(page uint32) bool) {
	m := t.mask()
	tag := uint8(h)
	for i := int(h >> t.shift); t.slots[i] != 0; i = (i + 1) & m {
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
	m := t.mask()
	tag := uint8(h)
	count := 0
	oldest, second := -1, -1
	i := int(h >> t.shift)
	for ; t.slots[i] != 0; i = (i + 1) & m {
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

// grow doubles the table, recomputing each page's key.
func (t *keyTable) grow() {
	old := t.slots
	t.slots = make([]uint32, 2*len(old))
	t.tags = make([]uint8, 2*len(old))
	t.shift--
	m := t.mask()
	for _, s := range old {
		if s == 0 {
			continue
		}
		h := t.keyOf(s - 1)
		i := int(h >> t.shift)
		for t.slots[i] != 0 {
			i = (i + 1) & m
		}
		t.slots[i], t.tags[i] = s, uint8(h)
	}
}

func (t *keyTable) bytes() int { return 5 * len(t.slots) }
