package seen

// table is the Set's in-memory part: a hash table from IDs to int32 values
// with open addressing and linear probing over two flat arrays, 12 bytes a
// slot. A Go map of the same entries took about 40 bytes an entry, and as
// much again for the table being written as a run. It is sized once, for
// at most limit entries, at a load of at most 3/4 (a miss, which is what
// most look-ups of new URLs are, then scans a few adjacent slots of one or
// two cache lines).
//
// ID 0 marks an empty slot; the entry of ID 0 itself is kept aside. The
// zero table is empty and holds nothing: use newTable. A table is not safe
// for concurrent use, but once no longer written it may be read by many
// goroutines.
type table struct {
	keys  []uint64
	vals  []int32
	n     int // entries, zero's included
	mask  uint64
	zero  bool  // ID 0 is in the table
	zeroV int32 // its value
	shift uint  // 64 - log2(len(keys)): the slot is the top bits of the mixed ID
}

// newTable returns an empty table for limit entries.
func newTable(limit int) *table {
	size := 8
	for size*3/4 < limit {
		size <<= 1
	}
	shift := uint(64)
	for s := size; s > 1; s >>= 1 {
		shift--
	}
	return &table{keys: make([]uint64, size), vals: make([]int32, size), mask: uint64(size - 1), shift: shift}
}

// reset empties the table, for limit entries as before.
func (t *table) reset() {
	clear(t.keys)
	clear(t.vals)
	t.n, t.zero, t.zeroV = 0, false, 0
}

// slot is where the probe for id starts.
func (t *table) slot(id uint64) uint64 { return mix(id) >> t.shift }

// get returns the value of id and whether it is in the table.
func (t *table) get(id uint64) (int32, bool) {
	if t == nil {
		return 0, false
	}
	if id == 0 {
		return t.zeroV, t.zero
	}
	for i := t.slot(id); ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case id:
			return t.vals[i], true
		case 0:
			return 0, false
		}
	}
}

// set sets the value of id. The table must not be full (len < limit) when
// id is new.
func (t *table) set(id uint64, val int32) {
	if id == 0 {
		if !t.zero {
			t.n++
		}
		t.zero, t.zeroV = true, val
		return
	}
	for i := t.slot(id); ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case id:
			t.vals[i] = val
			return
		case 0:
			t.keys[i], t.vals[i] = id, val
			t.n++
			return
		}
	}
}

// len returns the number of entries (0 for a nil table).
func (t *table) len() int {
	if t == nil {
		return 0
	}
	return t.n
}

// bytes is the memory the table holds.
func (t *table) bytes() int64 {
	if t == nil {
		return 0
	}
	return int64(len(t.keys)) * 12 // a key's 8 bytes and a value's 4
}

// each calls fn with every entry, in no particular order.
func (t *table) each(fn func(id uint64, val int32)) {
	if t.zero {
		fn(0, t.zeroV)
	}
	for i, k := range t.keys {
		if k != 0 {
			fn(k, t.vals[i])
		}
	}
}
