package dedup

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unicode/utf8"
)

// WordHash names the function that hashes a page's words before they are
// shingled. Every fingerprint depends on it, and fingerprints are stored
// (a crawl file's urls and fetches), compared with later pages' and with
// a recrawled page's new one: a crawl file keeps the function it was
// begun with, and records it (the engine keeps its name in the file's
// meta table). The functions are fixed: no seed per process or machine.
//
// The zero value is NewestWordHash. A WordHash is a value: safe for
// concurrent use.
type WordHash uint8

const (
	// WordHashFNV is FNV-1a 64 over the word's lower-cased UTF-8 bytes,
	// one multiplication a byte in a chain: the function of every crawl
	// file written before the word hash had a name.
	WordHashFNV WordHash = 1
	// WordHashMix is mixWord: a 64x64→128-bit multiplication folded to
	// 64 bits per eight bytes of the word (most words take one).
	WordHashMix WordHash = 2

	// NewestWordHash is the function a new crawl file is begun with.
	NewestWordHash = WordHashMix
)

// String returns the name a crawl file records.
func (w WordHash) String() string {
	switch w.or() {
	case WordHashFNV:
		return "fnv1a64"
	case WordHashMix:
		return "mix64"
	}
	return fmt.Sprintf("WordHash(%d)", uint8(w))
}

// ParseWordHash reads a name String returned; an unknown name is a crawl
// file written by a later lidi, whose fingerprints this one cannot make.
func ParseWordHash(s string) (WordHash, error) {
	for _, w := range [...]WordHash{WordHashFNV, WordHashMix} {
		if s == w.String() {
			return w, nil
		}
	}
	return 0, fmt.Errorf("dedup: unknown word hash %q (a crawl file of a later lidi?)", s)
}

func (w WordHash) or() WordHash {
	if w == 0 {
		return NewestWordHash
	}
	return w
}

// mix reports whether w is WordHashMix (the zero value included).
func (w WordHash) mix() bool { return w.or() == WordHashMix }

// Why another word hash: FNV-1a multiplies once a byte, each
// multiplication waiting for the one before, so a word of six letters is
// six multiplications in a chain (about 18 cycles) plus the loop's exit
// mispredicted at its end; it was half of Fingerprint's time. Reading
// eight bytes a step with FNV-1a kept the chain (session 36, no faster).
// mixWord multiplies once per eight bytes, in the way of wyhash and
// rapidhash (the 128-bit product of two 64-bit words, its halves XORed),
// and finds the word's end among eight bytes with word arithmetic: one
// multiplication and no branch on the word's length for most words. The
// shingle's hash (fmix64) spreads every bit of it, as it did FNV's.
//
// The definition: the word's lower-cased UTF-8 bytes (as FNV-1a hashed
// them) are cut into 8-byte chunks, little-endian, the last padded with
// zero bytes (a word holds no zero byte, so the padding is unambiguous);
// h starts at mixSeed, and each chunk c makes h = mum(c^mixChunk,
// h^mixState). mixChunk's low byte is 0 and a chunk's never is (its first
// byte is a letter), so c^mixChunk is never 0, which would zero the
// product whatever came before. The constants are wyhash's (Wang Yi,
// public domain).
const (
	mixSeed  = 0xa0761d6478bd642f
	mixChunk = 0xe7037ed1a0b42800 // wyhash's 0xe7037ed1a0b428db, low byte cleared
	mixState = 0x8ebc6af09c88c6e3
)

// mum multiplies a and b into 128 bits and folds the halves.
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// mixWord is WordHashMix of an already lower-case word, chunk by chunk:
// the definition, which wordAtMix computes as it reads.
func mixWord(w string) uint64 {
	h := uint64(mixSeed)
	for len(w) > 0 {
		var c [8]byte
		n := copy(c[:], w)
		w = w[n:]
		h = mum(binary.LittleEndian.Uint64(c[:])^mixChunk, h^mixState)
	}
	return h
}

const (
	lanes7f = 0x7f7f7f7f7f7f7f7f
	lanes80 = 0x8080808080808080
	lanes20 = 0x2020202020202020
	lanes01 = 0x0101010101010101
)

// load8 returns the eight bytes at b[i] little-endian, zero bytes past
// the end (a zero byte ends a word).
func load8(b []byte, i int) uint64 {
	if i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i:])
	}
	var x uint64
	for k := len(b) - 1; k >= i; k-- {
		x = x<<8 | uint64(b[k])
	}
	return x
}

// asciiWord reads eight bytes x (the first in the low byte): stop has
// the high bit set of each byte lane that is not an ASCII letter or
// digit, lower the bytes before the first such lane lower-cased (the rest
// zero), and digits the high bit of each of those that is a digit. Per
// lane, with no carry across lanes since the high bits are cleared
// first: a byte is a letter when ORed with 0x20 it lies in 'a'..'z', a
// digit when it lies in '0'..'9', and neither when its high bit is set.
func asciiWord(x uint64) (stop, lower, digits uint64) {
	a := x & lanes7f
	lo := a | lanes20
	letter := (lo + 0x1f1f1f1f1f1f1f1f) &^ (lo + 0x0505050505050505) // lo >= 'a' and not > 'z'
	digit := (a + 0x5050505050505050) &^ (a + 0x4646464646464646)    // a >= '0' and not > '9'
	stop = (x | ^(letter | digit)) & lanes80
	keep := (stop&-stop)>>7 - 1 // the lanes below the first stop; all of them when there is none
	return stop, lo & keep, digit & keep & lanes80
}

// wordAtMix is wordAt under WordHashMix: the hash of the word starting at
// b[i] (or dateToken) and the index past it; i itself when b[i] starts no
// word.
func wordAtMix(b []byte, i int) (uint64, int) {
	h, j, _, _, long := mixASCII(b, i)
	if long {
		return wordAtMixLong(b, i)
	}
	return h, j
}

// mixASCII reads the word at b[i] eight bytes at a time, each read
// finding where the word ends among its bytes, and hashing them with one
// multiplication: the hash of an ASCII word (or dateToken), the index j
// past it (i when b[i] starts no word), and the last eight bytes read, x,
// with their stop lanes (asciiWord): x was read at j minus the lanes
// below the first stop. long reports a word that goes on with a
// character to decode (a byte from 0x80, or '&'), which wordAtMixLong
// reads; nothing else is then set.
func mixASCII(b []byte, i int) (h uint64, j int, x, stop uint64, long bool) {
	h = mixSeed
	var digits uint64
	for k := i; ; k += 8 {
		x = load8(b, k)
		var lower, d uint64
		stop, lower, d = asciiWord(x)
		digits |= d
		if stop == 0 {
			h = mum(lower^mixChunk, h^mixState)
			continue
		}
		if stop&-stop&special(x) != 0 {
			return 0, 0, 0, 0, true
		}
		j = k + bits.TrailingZeros64(stop)>>3
		if j == i {
			return 0, i, x, stop, false
		}
		if j > k {
			h = mum(lower^mixChunk, h^mixState)
		}
		if digits != 0 || mixDates.has(h) {
			h = dateToken
		}
		return h, j, x, stop, false
	}
}

// special returns the high bit of each byte lane of x that starts a
// character to decode: a byte from 0x80, or '&' (a zero lane of x^'&';
// the test is exact up to the first such lane, past which it may also
// mark others).
func special(x uint64) uint64 {
	amp := x ^ 0x2626262626262626
	return (x | (amp-lanes01)&^amp) & lanes80
}

// markupOrSpecial is special with '<' too: the bytes a run of plain
// separators ends at.
func markupOrSpecial(x uint64) uint64 {
	lt := x ^ 0x3c3c3c3c3c3c3c3c
	return special(x) | (lt-lanes01)&^lt&lanes80
}

// asciiRun reads the ASCII words from b[i] (an ASCII letter or digit) and
// the plain separators between them (ASCII bytes other than '<' and
// '&'), words hashed by WordHashMix, and returns the index of the first
// byte it leaves: '<', a byte that starts a character to decode, or the
// end. It saves Fingerprint's loop a turn a separator: the bytes that
// ended a word tell where the next one starts.
func (f *fingerprinter) asciiRun(b []byte, i int, dates *dateRun) int {
	for {
		h, j, x, stop, long := mixASCII(b, i)
		if long {
			h, j = wordAtMixLong(b, i)
			if !dates.continues(h) {
				f.word(h)
			}
			return j
		}
		if !dates.continues(h) {
			f.word(h)
		}
		// The lanes of x after the word's end, then further reads: the
		// next word starts at the first lane that is not a plain
		// separator, if it is a word's.
		first := stop & -stop
		k := j - bits.TrailingZeros64(stop)>>3
		end := (^stop | markupOrSpecial(x)) & lanes80 &^ (first - 1)
		for end == 0 {
			if k += 8; k >= len(b) {
				return len(b)
			}
			x = load8(b, k)
			stop, _, _ = asciiWord(x)
			end = (^stop | markupOrSpecial(x)) & lanes80
		}
		// (The zero bytes load8 reads past the end are plain separators.)
		p := k + bits.TrailingZeros64(end)>>3
		if end&-end&stop != 0 { // not a word's: '<' or a character
			return p
		}
		i = p
	}
}

// wordAtMixLong is wordAtMix for any word: the word's bytes are gathered
// into pend (np of them) and hashed a full chunk at a time.
func wordAtMixLong(b []byte, i int) (uint64, int) {
	h, pend, np := uint64(mixSeed), uint64(0), uint(0)
	var digits uint64
	var cls *[0x10000]uint32 // bmpClasses, once needed
	// add appends the n (1 to 8) bytes of x, hashing each chunk filled.
	add := func(x uint64, n uint) {
		pend |= x << (8 * np & 63)
		if np += n; np >= 8 {
			h = mum(pend^mixChunk, h^mixState)
			np -= 8
			pend = x >> (8*(n-np) - 1) >> 1 // the bytes past the chunk (n-np is 1 to 8)
		}
	}
	for {
		stop, lower, d := asciiWord(load8(b, i))
		digits |= d
		n := uint(bits.TrailingZeros64(stop)) >> 3
		if n > 0 {
			add(lower, n)
			i += int(n)
		}
		if n == 8 {
			continue
		}
		if i >= len(b) || fold[b[i]] != foldChar {
			break
		}
		if cls == nil {
			cls = bmpClasses()
		}
		e, size := uint32(0), 2
		if r, ok := twoByte(b, i); ok {
			e = cls[r]
		} else {
			e, size = wordChar(b, i, cls)
		}
		if e&classWord == 0 {
			break
		}
		digits |= uint64(e & classDigit)
		if lr := e & classRune; lr >= utf8.RuneSelf && lr < 0x800 {
			add(uint64(0xc0|lr>>6)|uint64(0x80|lr&0x3f)<<8, 2)
		} else {
			add(utf8Bytes(rune(lr)))
		}
		i += size
	}
	if np > 0 {
		h = mum(pend^mixChunk, h^mixState)
	}
	if digits != 0 || mixDates.has(h) {
		h = dateToken
	}
	return h, i
}

// utf8Bytes returns the UTF-8 bytes of r packed little-endian, and how
// many there are.
func utf8Bytes(r rune) (uint64, uint) {
	switch {
	case r < utf8.RuneSelf:
		return uint64(r), 1
	case r < 0x800:
		return uint64(0xc0|r>>6) | uint64(0x80|r&0x3f)<<8, 2
	case r < 0x10000:
		return uint64(0xe0|r>>12) | uint64(0x80|r>>6&0x3f)<<8 | uint64(0x80|r&0x3f)<<16, 3
	}
	return uint64(0xf0|r>>18) | uint64(0x80|r>>12&0x3f)<<8 | uint64(0x80|r>>6&0x3f)<<16 | uint64(0x80|r&0x3f)<<24, 4
}
