package fetch

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"sync"
)

// Why an inflater of our own: a page the server sent gzip-coded is
// decoded whole, and klauspost/compress's streaming reader took 78 µs of
// CPU for one of simweb's pages (18.8 KB, BenchmarkInflate), a sixth of
// a crawl's CPU, much of it in the bookkeeping of a stream: a 32 KiB
// window every byte is written to and then copied out of, and the bit
// buffer in the decoder's fields. Here the whole compressed body is at
// hand and the output is one flat slice, so a match is copied from the
// output itself, the bit buffer lives in registers and is refilled eight
// bytes at a time, and a literal that follows a literal is decoded
// without a refill (as zlib's inflate_fast does): 56 µs. Then, as the
// fast inflaters do (libdeflate, zlib-ng): a fast loop that checks
// neither the input's end nor the limit while both are far, writes by
// index and copies a match eight bytes at a time; a table entry that
// holds two literals when both codes fit in its index; a length's or
// distance's code and extra bits taken in one shift; the next code's
// entry looked up before the refill and while a match is copied: 39 µs
// (66 before, measured alongside on a loaded machine).
//
// It only decodes streams it can vouch for: an invalid stream, or one of
// a form it leaves alone (an incomplete code other than a single
// distance code or none, a code without end of block), returns
// errInflate, and the caller then decodes the body with the streaming
// reader, which gives the error, if any, its usual kind. The gzip
// trailer's CRC-32 and size check every output before it is used
// (gunzip.whole).

// errInflate is any stream inflate does not decode; the caller falls back
// to the streaming reader.
var errInflate = errors.New("fetch: inflate: not decoded")

// errShort says the input ended before the output limit was reached or
// the stream ended: more input may decode further.
var errShort = errors.New("fetch: inflate: input ends early")

// A decoding table entry (uint32): the bits its lookup consumes (0: no
// such code, the stream is invalid), which for a length or distance are
// its code's and then the extra bits that follow it, so that one shift
// takes both; the code's own bits, below which the extra bits start (a
// link's: its subtable's index bits); flags; and a value: the literal,
// the base length or distance, or a subtable's offset.
const (
	entBits    = 0x3f // bits consumed by this lookup (at most 15+13)
	entCodeSh  = 8    // 4 bits: the code's own bits at this level
	entLiteral = 1 << 12
	entEnd     = 1 << 13
	entLink    = 1 << 14 // a subtable: value is its offset
	entBase    = 1 << 15 // a length or distance: value is its base
	entValSh   = 16
	// A literal entry holds one literal or two (2 bits: the output it
	// makes); a second (bits 24-31 of the value) is one whose code
	// follows the first's within the primary index: the entry consumes
	// both codes, and its code bits field gives the first's alone.
	entCountSh = 6
	entCount   = 3 << entCountSh
)

// Table sizes: the primary tables are indexed by this many bits; longer
// codes go through a subtable.
const (
	litRoot  = 10
	distRoot = 8
	lenRoot  = 7 // the code lengths' code: at most 7 bits, one level
)

var lengthBase = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
var lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
var distBase = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
var distExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}

// The orders of the code length code's lengths (RFC 1951, 3.2.7).
var clOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}

// tableKind says what a table's symbols mean.
type tableKind int

const (
	litLenTable tableKind = iota
	distTable
	codeLenTable
)

// entryOf returns the entry of symbol s in a table of kind k, without its
// bits, and the extra bits that follow its code; entry 0 for a symbol
// that never occurs in a valid stream.
func entryOf(k tableKind, s int) (uint32, uint) {
	switch k {
	case litLenTable:
		switch {
		case s < 256:
			return entLiteral | 1<<entCountSh | uint32(s)<<entValSh, 0
		case s == 256:
			return entEnd, 0
		case s < 286:
			return entBase | uint32(lengthBase[s-257])<<entValSh, uint(lengthExtra[s-257])
		}
		return 0, 0
	case distTable:
		if s < 30 {
			return entBase | uint32(distBase[s])<<entValSh, uint(distExtra[s])
		}
		return 0, 0
	}
	return uint32(s) << entValSh, 0
}

// buildTable fills t (reusing its storage) with the decoding table of the
// code whose lengths lens gives, root bits at the first level. It fails
// on an over-subscribed code, and on an incomplete one except a
// distance code of one code of one bit (which RFC 1951 allows) or of no
// code at all (a block of literals only).
func buildTable(t []uint32, lens []uint8, root uint, kind tableKind) ([]uint32, bool) {
	var count [16]int
	for _, l := range lens {
		count[l]++
	}
	count[0] = 0
	left, used := 1, 0
	for l := 1; l < 16; l++ {
		left = left<<1 - count[l]
		if left < 0 {
			return t, false // over-subscribed
		}
		used += count[l]
	}
	if left > 0 && (kind != distTable || used > 1 || used == 1 && count[1] != 1) {
		return t, false
	}
	// The symbols in canonical order (by length, then by symbol), and the
	// first code of each length.
	var offs, next [16]int
	for l, code := 1, 0; l < 16; l++ {
		offs[l] = offs[l-1] + count[l-1]
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	var sorted [288]uint16
	for s, l := range lens {
		if l != 0 {
			sorted[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	size := 1 << root
	if cap(t) < size {
		t = make([]uint32, size)
	}
	t = t[:size]
	// The codes of root bits or fewer are written as the table grows
	// from one entry, doubled (copied onto its upper half) each time the
	// codes get a bit longer: an entry written once at its code's length
	// stands for every index that starts with the code. An index no code
	// starts with keeps entry 0, invalid.
	t[0] = 0
	width := uint(0) // t[:1<<width] is the table so far
	remaining := count
	curPrefix := -1 // the primary index whose subtable is being filled
	subOff, subBits := 0, uint(0)
	for _, s16 := range sorted[:used] {
		s := int(s16)
		l := uint(lens[s])
		rev := reverse(uint(next[l]), l)
		next[l]++
		remaining[l]--
		e, extra := entryOf(kind, s)
		valid := e != 0 || kind == codeLenTable
		if l <= root {
			if valid {
				e |= uint32(l+extra) | uint32(l)<<entCodeSh
			}
			for ; width < l; width++ {
				copy(t[1<<width:2<<width], t[:1<<width])
			}
			t[rev] = e
			continue
		}
		for ; width < root; width++ {
			copy(t[1<<width:2<<width], t[:1<<width])
		}
		if prefix := int(rev & (1<<root - 1)); prefix != curPrefix {
			// A new subtable, as large as the longest of the codes that
			// share this prefix (they follow one another).
			curPrefix = prefix
			subBits = l - root
			room := 1<<subBits - remaining[l] - 1
			for ll := l + 1; room > 0 && ll < 16; ll++ {
				subBits++
				room = room<<1 - remaining[ll]
			}
			subOff = len(t)
			t = append(t, make([]uint32, 1<<subBits)...)
			t[prefix] = entLink | uint32(root) | uint32(subBits)<<entCodeSh | uint32(subOff)<<entValSh
		}
		n := l - root
		if valid {
			e |= uint32(n+extra) | uint32(n)<<entCodeSh
		}
		for i := rev >> root; i < 1<<subBits; i += 1 << n {
			t[subOff+int(i)] = e
		}
	}
	for ; width < root; width++ {
		copy(t[1<<width:2<<width], t[:1<<width])
	}
	if kind == litLenTable {
		pairLiterals(t[:size], root)
	}
	return t, true
}

// pairLiterals makes each entry of a primary literal/length table t
// whose literal's code leaves room in the index for a second literal's
// whole code an entry of both. From the last entry down, so
// that the entry the second code is read from (a lower index) is still
// a single one. Without a branch: which entries pair depends on the
// codes, and the branches on it were half the table build's time in the
// crawl's profile (s37.prof: 0.81 of 1.60 s).
func pairLiterals(t []uint32, root uint) {
	for i := len(t) - 1; i >= 0; i-- {
		e := t[i]
		l1 := e & entBits
		e2 := t[uint(i)>>l1]
		l2 := e2 & entBits
		paired := e&^(entBits|entCount) | 2<<entCountSh | (l1 + l2) | (e2>>entValSh&0xff)<<(entValSh+8)
		// All ones when both are literals and both codes fit the index.
		mask := -(e & e2 & entLiteral >> 12) & uint32(int32(l1+l2-uint32(root)-1)>>31)
		t[i] = e ^ (e^paired)&mask
	}
}

// reverse returns the n (1 to 15) low bits of c in reverse order.
func reverse(c, n uint) uint {
	return uint(bits.Reverse16(uint16(c))) >> (16 - n)
}

// fixedTables are the tables of a block of fixed Huffman codes.
var fixedTables = sync.OnceValues(func() ([]uint32, []uint32) {
	var lens [288]uint8
	for i := range lens {
		switch {
		case i < 144:
			lens[i] = 8
		case i < 256:
			lens[i] = 9
		case i < 280:
			lens[i] = 7
		default:
			lens[i] = 8
		}
	}
	lit, ok1 := buildTable(nil, lens[:], litRoot, litLenTable)
	var dl [32]uint8
	for i := range dl {
		dl[i] = 5
	}
	dist, ok2 := buildTable(nil, dl[:], distRoot, distTable)
	if !ok1 || !ok2 {
		panic("fetch: inflate: fixed tables")
	}
	return lit, dist
})

// inflater holds the tables of dynamic blocks from one stream to the
// next. The zero value is ready to use; not safe for concurrent use.
type inflater struct {
	lit, dist, codeLen []uint32
	lens               [286 + 30]uint8

	src   []byte
	pos   int    // next byte of src to load into bits
	bits  uint64 // bits loaded, the next at bit 0
	nbits uint
}

// refill loads bits until at least 56 are held. Past the end of src it
// loads zero bytes, and consumed tells how far that went.
func (f *inflater) refill() {
	if f.pos+8 <= len(f.src) {
		f.bits |= binary.LittleEndian.Uint64(f.src[f.pos:]) << f.nbits
		f.pos += int(63-f.nbits) >> 3
		f.nbits |= 56
		return
	}
	for f.nbits <= 56 {
		if f.pos < len(f.src) {
			f.bits |= uint64(f.src[f.pos]) << f.nbits
		}
		f.pos++
		f.nbits += 8
	}
}

// consumed returns the bytes of src consumed so far, whole or in part;
// more than len(src) when the decoder read past its end.
func (f *inflater) consumed() int { return f.pos - int(f.nbits>>3) }

// overrun reports whether the decoder read bits past the end of src.
func (f *inflater) overrun() bool { return f.consumed() > len(f.src) }

func (f *inflater) take(n uint) uint64 {
	v := f.bits & (1<<n - 1)
	f.bits >>= n
	f.nbits -= n
	return v
}

// inflate decodes the deflate stream (RFC 1951) at the start of src,
// appending at most limit bytes to dst[:0], and returns the output and
// how many bytes of src the stream took (to its last whole byte). Every
// byte of the output returned was decoded from src, also with an error:
//   - errLimit: the output reached limit first (out holds limit bytes);
//   - errShort: src ends before the stream does (out holds what was
//     decoded before the end);
//   - errInflate: the stream is invalid or of a form left to the
//     streaming reader.
func (f *inflater) inflate(dst, src []byte, limit int) ([]byte, int, error) {
	f.src, f.pos, f.bits, f.nbits = src, 0, 0, 0
	defer func() { f.src = nil }()
	out := dst[:0]
	for {
		f.refill()
		final := f.take(1)
		kind := f.take(2)
		var err error
		switch kind {
		case 0:
			out, err = f.stored(out, limit)
		case 1:
			lit, dist := fixedTables()
			out, err = f.codes(out, limit, lit, dist)
		case 2:
			if err = f.dynamic(); err == nil {
				out, err = f.codes(out, limit, f.lit, f.dist)
			}
		default:
			err = errInflate
		}
		if err != errLimit && f.overrun() {
			// Whatever the bits past the end made of it: the end of a
			// block, an invalid code.
			err = errShort
		}
		if err != nil {
			return out, 0, err
		}
		if final == 1 {
			return out, f.consumed(), nil
		}
	}
}

// errLimit says the output reached its limit.
var errLimit = errors.New("fetch: inflate: output limit reached")

// stored copies a stored block.
func (f *inflater) stored(out []byte, limit int) ([]byte, error) {
	f.take(f.nbits & 7)
	p := f.consumed()
	f.bits, f.nbits, f.pos = 0, 0, p
	if p+4 > len(f.src) {
		return out, errShort
	}
	n := int(binary.LittleEndian.Uint16(f.src[p:]))
	if uint16(n) != ^binary.LittleEndian.Uint16(f.src[p+2:]) {
		return out, errInflate
	}
	p += 4
	f.pos = p
	k := min(n, limit-len(out), len(f.src)-p)
	out = append(out, f.src[p:p+k]...)
	f.pos += k
	switch {
	case k == n:
		return out, nil
	case len(out) == limit:
		return out, errLimit
	}
	return out, errShort
}

// dynamic reads a dynamic block's code lengths and builds its tables.
func (f *inflater) dynamic() error {
	f.refill()
	nlit := int(f.take(5)) + 257
	ndist := int(f.take(5)) + 1
	ncl := int(f.take(4)) + 4
	if nlit > 286 || ndist > 30 {
		return errInflate
	}
	var cl [19]uint8
	for i := range ncl {
		if f.nbits < 3 {
			f.refill()
		}
		cl[clOrder[i]] = uint8(f.take(3))
	}
	var ok bool
	if f.codeLen, ok = buildTable(f.codeLen, cl[:], lenRoot, codeLenTable); !ok {
		return errInflate
	}
	lens := f.lens[:nlit+ndist]
	for i := 0; i < len(lens); {
		if f.nbits < 16 {
			f.refill()
			if f.overrun() {
				return errShort
			}
		}
		e := f.codeLen[f.bits&(1<<lenRoot-1)]
		n := uint(e & entBits)
		if n == 0 {
			return errInflate
		}
		f.take(n)
		sym := int(e >> entValSh)
		var v uint8
		var rep int
		switch {
		case sym < 16:
			lens[i] = uint8(sym)
			i++
			continue
		case sym == 16:
			if i == 0 {
				return errInflate
			}
			v, rep = lens[i-1], 3+int(f.take(2))
		case sym == 17:
			rep = 3 + int(f.take(3))
		default:
			rep = 11 + int(f.take(7))
		}
		if i+rep > len(lens) {
			return errInflate
		}
		for range rep {
			lens[i] = v
			i++
		}
	}
	if f.overrun() {
		return errShort
	}
	if lens[256] == 0 {
		return errInflate // no end of block
	}
	if f.lit, ok = buildTable(f.lit, lens[:nlit], litRoot, litLenTable); !ok {
		return errInflate
	}
	if f.dist, ok = buildTable(f.dist, lens[nlit:], distRoot, distTable); !ok {
		return errInflate
	}
	return nil
}

// fastRoom is the room the fast loop of codes needs in its output
// buffer past the output: a match of 258 bytes copied eight bytes at a
// time writes up to 264.
const fastRoom = 264

// fastCodes decodes a block's codes while the input has eight bytes left
// to load at once and the output has room for a longest match before the
// limit: it never checks the input's end nor the limit, writes the
// output by index into the buffer's capacity (grown when short), and
// copies a match eight bytes at a time, the copy's last word running past
// the match's end into room that the next codes overwrite. It returns
// done with the block's end or an invalid code; otherwise codes goes on
// from where it stopped.
func (f *inflater) fastCodes(out []byte, limit int, lit, dist []uint32) (_ []byte, done bool, _ error) {
	src, pos, bits, nbits := f.src, f.pos, f.bits, f.nbits
	src = src[:len(src):len(src)] // load64's bounds check is against cap
	litT := (*[1 << litRoot]uint32)(lit)
	distT := (*[1 << distRoot]uint32)(dist)
	buf := out[:cap(out)]
	o := len(out)
	// Each turn of the loop starts with the entry of the next code looked
	// up (e), from at least litRoot bits held: a refill leaves the bits
	// held as they are, so the lookup need not wait for it. A turn loads
	// the input twice at most, 15 bytes.
	var e uint32
	if pos+16 <= len(src) {
		bits |= load64(src, pos) << (nbits & 63)
		pos += int(63-nbits) >> 3
		nbits |= 56
		e = litT[bits&(1<<litRoot-1)]
	}
	oEnd := min(limit-258, len(buf)-fastRoom) // o's last value for a turn
	for pos+16 <= len(src) {
		if o > oEnd {
			if o > limit-258 {
				break
			}
			buf = growOutput(buf, o, limit)
			oEnd = min(limit-258, len(buf)-fastRoom)
		}
		// 56 bits hold a literal/length code (15) with its extra bits
		// (5) and a distance code (15) with its own (13).
		bits |= load64(src, pos) << (nbits & 63)
		pos += int(63-nbits) >> 3
		nbits |= 56
		if e&entLiteral != 0 {
			// One literal or two (entCount): both bytes are written,
			// the output grows by one or two. One lookup a turn: a
			// turn that went on to a second while it found literals
			// was slower (40.9 against 42.5 us a page), its exits
			// harder to predict than the one branch taken each turn.
			n := uint(e & entBits)
			bits >>= n
			nbits -= n
			store16(buf, o, uint16(e>>entValSh))
			o += int(e >> entCountSh & 3)
			e = litT[bits&(1<<litRoot-1)]
			continue
		}
		if e&entBase == 0 {
			if e&entLink != 0 {
				bits >>= litRoot
				nbits -= litRoot
				e = lit[int(e>>entValSh)+int(bits&(1<<(e>>entCodeSh&0xf)-1))]
			}
			if e&entBase == 0 {
				n := uint(e & entBits)
				switch {
				case e&entLiteral != 0:
					bits >>= n
					nbits -= n
					buf[o] = byte(e >> entValSh)
					o++
					e = litT[bits&(1<<litRoot-1)]
					continue
				case e&entEnd != 0:
					bits >>= n
					nbits -= n
					f.pos, f.bits, f.nbits = pos, bits, nbits
					return buf[:o], true, nil
				}
				f.pos, f.bits, f.nbits = pos, bits, nbits
				out, err := f.invalid(buf[:o], o)
				return out, true, err
			}
		}
		saved := bits
		n := uint(e & entBits)
		bits >>= n
		nbits -= n
		length := int(e>>entValSh) + int(saved&(1<<n-1)>>(e>>entCodeSh&0xf))
		e = distT[bits&(1<<distRoot-1)]
		if e&entLink != 0 {
			bits >>= distRoot
			nbits -= distRoot
			e = dist[int(e>>entValSh)+int(bits&(1<<(e>>entCodeSh&0xf)-1))]
		}
		saved = bits
		n = uint(e & entBits)
		bits >>= n
		nbits -= n
		d := int(e>>entValSh) + int(saved&(1<<n-1)>>(e>>entCodeSh&0xf))
		if e&entBase == 0 || d > o {
			f.pos, f.bits, f.nbits = pos, bits, nbits
			out, err := f.invalid(buf[:o], o)
			return out, true, err
		}
		// The next code's entry, looked up while the match is copied.
		bits |= load64(src, pos) << (nbits & 63)
		pos += int(63-nbits) >> 3
		nbits |= 56
		e = litT[bits&(1<<litRoot-1)]
		start := o - d
		switch {
		case d >= 8:
			// The first word before the loop: most matches are short.
			store64(buf, o, load64(buf, start))
			for i := 8; i < length; i += 8 {
				store64(buf, o+i, load64(buf, start+i))
			}
		case d == 1:
			v := uint64(buf[start]) * 0x0101010101010101
			for i := 0; i < length; i += 8 {
				store64(buf, o+i, v)
			}
		default:
			for i := range length {
				buf[o+i] = buf[start+i]
			}
		}
		o += length
	}
	f.pos, f.bits, f.nbits = pos, bits, nbits
	return buf[:o], false, nil
}

// load64, store64 and store16 read and write b at i, little-endian,
// checking i against b's capacity once (slicing to an array pointer)
// rather than its length and then the bytes left, as
// binary.LittleEndian's functions on b[i:] do.
func load64(b []byte, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(b[i : i+8])[:])
}

func store64(b []byte, i int, v uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(b[i : i+8])[:], v)
}

func store16(b []byte, i int, v uint16) {
	binary.LittleEndian.PutUint16((*[2]byte)(b[i : i+2])[:], v)
}

// codes decodes a block's codes with tables lit and dist, to its end:
// in the fast loop (fastCodes) while it can, then one code at a time
// with checks for the input's end and the limit. The bit buffer lives in
// local variables (the compiler keeps them in registers, not the
// inflater's fields), stored back on return.
func (f *inflater) codes(out []byte, limit int, lit, dist []uint32) ([]byte, error) {
	out, done, err := f.fastCodes(out, limit, lit, dist)
	if done {
		return out, err
	}
	src, pos, bits, nbits := f.src, f.pos, f.bits, f.nbits
	defer func() { f.pos, f.bits, f.nbits = pos, bits, nbits }()

	safe := len(out) // the output decoded from bits of src alone
	for {
		if pos+8 <= len(src) {
			bits |= binary.LittleEndian.Uint64(src[pos:]) << nbits
			pos += int(63-nbits) >> 3
			nbits |= 56
		} else {
			for nbits <= 56 {
				if pos < len(src) {
					bits |= uint64(src[pos]) << nbits
				}
				pos++
				nbits += 8
			}
			if pos-int(nbits>>3) > len(src) {
				// The last codes took bits past the end: what they
				// made is not the stream's.
				return out[:safe], errShort
			}
		}
		safe = len(out)
		e := lit[bits&(1<<litRoot-1)]
		if e&entLink != 0 {
			bits >>= litRoot
			nbits -= litRoot
			e = lit[int(e>>entValSh)+int(bits&(1<<(e>>entCodeSh&0xf)-1))]
		}
		n := uint(e & entBits)
		if n == 0 {
			f.pos, f.nbits = pos, nbits
			return f.invalid(out, safe)
		}
		if e&entLiteral != 0 {
			n = uint(e >> entCodeSh & 0xf) // the first literal's code alone
		}
		saved := bits
		bits >>= n
		nbits -= n
		if e&entLiteral != 0 {
			if len(out) == limit {
				f.pos, f.nbits = pos, nbits
				return f.limited(out, safe)
			}
			out = append(out, byte(e>>entValSh))
			continue
		}
		if e&entEnd != 0 {
			return out, nil
		}
		length := int(e>>entValSh) + int(saved&(1<<n-1)>>(e>>entCodeSh&0xf))
		// The distance as fastCodes decodes it: a function for both,
		// inlined, made fastCodes 7% slower (38.9 against 41.5 us).
		e = dist[bits&(1<<distRoot-1)]
		if e&entLink != 0 {
			bits >>= distRoot
			nbits -= distRoot
			e = dist[int(e>>entValSh)+int(bits&(1<<(e>>entCodeSh&0xf)-1))]
		}
		saved = bits
		n = uint(e & entBits)
		bits >>= n
		nbits -= n
		d := int(e>>entValSh) + int(saved&(1<<n-1)>>(e>>entCodeSh&0xf))
		if n == 0 || d > len(out) {
			f.pos, f.nbits = pos, nbits
			return f.invalid(out, safe)
		}
		stop := false
		if len(out)+length > limit {
			length, stop = limit-len(out), true
		}
		start := len(out) - d
		if d >= length {
			out = append(out, out[start:start+length]...)
		} else {
			// Overlapping: the bytes from start repeat with period d,
			// so copying what is there doubles it each time.
			for k := length; k > 0; {
				c := min(k, len(out)-start)
				out = append(out, out[start:start+c]...)
				k -= c
			}
		}
		if stop {
			f.pos, f.nbits = pos, nbits
			return f.limited(out, safe)
		}
	}
}

// growOutput returns buf with its first o bytes, grown (as append would,
// but to no more than limit needs) to hold fastRoom more.
func growOutput(buf []byte, o, limit int) []byte {
	n := min(max(2*len(buf), o+fastRoom, 4<<10), limit+fastRoom)
	grown := make([]byte, n)
	copy(grown, buf[:o])
	return grown
}

// limited ends a block's decoding at the output limit: errLimit, or
// errShort with the output decoded before bits past the end were taken.
func (f *inflater) limited(out []byte, safe int) ([]byte, error) {
	if f.overrun() {
		return out[:safe], errShort
	}
	return out, errLimit
}

// invalid ends a block's decoding at an invalid code: errInflate, or
// errShort when it was read from bits past the end.
func (f *inflater) invalid(out []byte, safe int) ([]byte, error) {
	if f.overrun() {
		return out[:safe], errShort
	}
	return out, errInflate
}
