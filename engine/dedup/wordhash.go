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

// MetaWordHash is the key under which a crawl file's meta table names
// its WordHash (String).
const MetaWordHash = "dedup.word_hash"

// String returns the name a crawl file records.
func (w WordHash) String() string {
	switch w.Or() {
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

// MarshalText writes the name String returns, for a configuration key.
func (w WordHash) MarshalText() ([]byte, error) { return []byte(w.Or().String()), nil }

// UnmarshalText reads a name String returns.
func (w *WordHash) UnmarshalText(b []byte) error {
	v, err := ParseWordHash(string(b))
	if err != nil {
		return err
	}
	*w = v
	return nil
}

// Or returns w, or NewestWordHash for the zero value.
func (w WordHash) Or() WordHash {
	if w == 0 {
		return NewestWordHash
	}
	return w
}

// mix reports whether w is WordHashMix (the zero value included).
func (w WordHash) mix() bool { return w.Or() == WordHashMix }

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
// word. An ASCII word is read eight bytes at a time, each read finding
// where the word ends among its bytes and hashing them with one
// multiplication; a word with a character to decode (or a reference)
// takes wordAtMixLong.
func wordAtMix(b []byte, i int) (uint64, int) {
	h := uint64(mixSeed)
	var digits uint64
	for k := i; ; k += 8 {
		x := load8(b, k)
		stop, lower, d := asciiWord(x)
		digits |= d
		if stop == 0 {
			h = mum(lower^mixChunk, h^mixState)
			continue
		}
		// Whether the byte that ends the word starts a character to
		// decode (a byte from 0x80, or '&'): the lanes of x that do,
		// '&' found as a zero lane of x^'&' (exact at the first stop,
		// whose lower lanes are letters).
		amp := x ^ 0x2626262626262626
		if stop&-stop&(x|(amp-0x0101010101010101)&^amp) != 0 {
			return wordAtMixLong(b, i)
		}
		j := k + bits.TrailingZeros64(stop)>>3
		if j == i {
			return 0, i
		}
		if j > k {
			h = mum(lower^mixChunk, h^mixState)
		}
		if digits != 0 || mixDates.has(h) {
			h = dateToken
		}
		return h, j
	}
}

// mixer gathers a word's bytes into 8-byte chunks (pend, np of them) and
// hashes each chunk filled into h. It is a value, passed and returned,
// so that its fields stay in registers (a closure over them, or a
// pointer to it, kept them in memory, each byte's update waiting for the
// store of the one before).
type mixer struct {
	h, pend uint64
	np      uint
}

// add appends the n (1 to 8) bytes of x, the first in the low byte.
func (m mixer) add(x uint64, n uint) mixer {
	m.pend |= x << (8 * m.np & 63)
	if m.np += n; m.np >= 8 {
		m.h = mum(m.pend^mixChunk, m.h^mixState)
		m.np -= 8
		m.pend = x >> (8*(n-m.np) - 1) >> 1 // the bytes past the chunk (n-np is 1 to 8)
	}
	return m
}

// sum returns the hash of the bytes added.
func (m mixer) sum() uint64 {
	if m.np > 0 {
		return mum(m.pend^mixChunk, m.h^mixState)
	}
	return m.h
}

// wordAtMixLong is wordAtMix for any word, as wordAt reads it: ASCII
// bytes eight at a time, a run of two-byte characters (Latin with
// accents, Greek, Cyrillic, Hebrew, Arabic…) and a three-byte one (CJK,
// kana, Hangul, Indic…) looked up at once, any other decoded by charAt.
// The character paths repeat wordAt's on purpose: read through one
// shared function (a call a character), both hashes took 13 to 69% more
// time on such text (BenchmarkFingerprintScripts).
func wordAtMixLong(b []byte, i int) (uint64, int) {
	m := mixer{h: mixSeed}
	var digits uint64
	var cls *[0x10000]uint32 // bmpClasses, once needed
word:
	for i < len(b) {
		// One load tells an ASCII letter or digit (then up to eight of
		// them are read at once), a character to decode, or the end.
		switch v := fold[b[i]]; {
		case int16(v) > 0:
			stop, lower, d := asciiWord(load8(b, i))
			digits |= d
			n := uint(bits.TrailingZeros64(stop)) >> 3 // 1 to 8
			m = m.add(lower, n)
			i += int(n)
			continue
		case v != foldChar:
			break word
		}
		start := i
		for i+1 < len(b) {
			c := b[i]
			if c < 0xc2 || c >= 0xe0 || b[i+1]&0xc0 != 0x80 {
				break
			}
			if cls == nil {
				cls = bmpClasses()
			}
			e := cls[rune(c&0x1f)<<6|rune(b[i+1]&0x3f)]
			if e&classWord == 0 {
				break word
			}
			digits |= uint64(e & classDigit)
			if lr := e & classRune; lr >= utf8.RuneSelf && lr < 0x800 {
				m = m.add(uint64(0xc0|lr>>6)|uint64(0x80|lr&0x3f)<<8, 2)
			} else {
				m = m.add(utf8Bytes(rune(lr)))
			}
			i += 2
		}
		if i != start {
			continue
		}
		if c := b[i]; (0xe1 <= c && c <= 0xec || c == 0xee || c == 0xef) && i+2 < len(b) && b[i+1]&0xc0 == 0x80 && b[i+2]&0xc0 == 0x80 {
			r := rune(c&0x0f)<<12 | rune(b[i+1]&0x3f)<<6 | rune(b[i+2]&0x3f)
			if cls == nil {
				cls = bmpClasses()
			}
			e := cls[r]
			if e&classWord == 0 {
				break
			}
			digits |= uint64(e & classDigit)
			if lr := rune(e & classRune); lr == r { // no case: its own bytes
				m = m.add(uint64(c)|uint64(b[i+1])<<8|uint64(b[i+2])<<16, 3)
			} else {
				m = m.add(utf8Bytes(lr))
			}
			i += 3
			continue
		}
		r, size := charAt(b, i)
		e := classOf(r)
		if e&classWord == 0 {
			break
		}
		digits |= uint64(e & classDigit)
		m = m.add(utf8Bytes(rune(e & classRune)))
		i += size
	}
	h := m.sum()
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
