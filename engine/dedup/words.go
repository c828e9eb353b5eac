package dedup

import (
	"html"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Why words are read as characters, not bytes: the same page is served in
// other encodings (a mirror made with HTTrack re-encodes ISO-8859-1 as
// UTF-8), with a letter spelled raw or as a character reference ("café",
// "caf&eacute;", "caf&#233;"), and with typographic characters (a no-break
// space, curly quotes, dashes) where a copy has ASCII. Read as bytes,
// every word next to such a character differs between the copies: of the
// Jargon File's 2,414 pages (www.catb.org, ISO-8859-1) and the HTTrack
// mirror of it on milosophical.me (UTF-8), only 143 pairs were within 3
// bits of each other, and their main texts 1,459. Read as characters, all
// 2,414 pairs are equal (testdata/realweb holds some of them).
//
// So a word is a run of letters, marks and digits (unicode.IsLetter,
// IsMark, IsDigit), lower-cased, hashed as its UTF-8 bytes; every other
// character (spaces, punctuation, symbols) separates words. A byte that
// does not start valid UTF-8 is read as Windows-1252 (the superset of
// ISO-8859-1 that browsers assume for it), so that a page needs no
// declared charset to be read the same in both encodings. Numeric
// character references are decoded, and so are the named ones of the
// letters of ISO-8859-1 and Windows-1252; any other reference ("&amp;",
// "&nbsp;", "&mdash;") separates words. ASCII text takes a fast path of
// one table load a byte.

// fold maps an ASCII byte to its lower-case form when it belongs to a
// word (letters and digits); a digit also has foldDigit set, so that
// OR-ing a word's entries tells whether it holds one without a branch per
// byte. A byte that starts a character to decode (charAt: every byte from
// 0x80, and '&') maps to foldChar, which is negative as an int16, and
// any other byte to 0: one signed test ends an ASCII run.
var fold = func() (t [256]uint16) {
	for c := 1; c < 256; c++ {
		switch {
		case '0' <= c && c <= '9':
			t[c] = uint16(c) | foldDigit
		case 'a' <= c && c <= 'z':
			t[c] = uint16(c)
		case 'A' <= c && c <= 'Z':
			t[c] = uint16(c) + 'a' - 'A'
		case c >= utf8.RuneSelf, c == '&':
			t[c] = foldChar
		}
	}
	return t
}()

const (
	foldDigit = 0x100
	foldChar  = 0x8000
)

// isASCIIWord reports whether byte c is an ASCII letter or digit.
func isASCIIWord(c byte) bool { return int16(fold[c]) > 0 }

// wordAt returns the hash of the word starting at b[i] under WordHashFNV
// and the index past it: FNV-1a 64 over its lower-cased UTF-8 bytes, or
// dateToken for a word with a digit or a month or weekday name. When b[i]
// starts no word (a character that separates words), it returns i.
func wordAt(b []byte, i int) (uint64, int) {
	h := uint64(fnvOffset64)
	var all uint16
	var cls *[0x10000]uint32 // bmpClasses, once needed
word:
	for {
		var v uint16
		rest := b[i:] // one bounds test a byte, not two
		k := 0
		for ; k < len(rest); k++ {
			if v = fold[rest[k]]; int16(v) <= 0 {
				break
			}
			all |= v
			h = (h ^ uint64(v&0xff)) * fnvPrime64
		}
		i += k
		if v != foldChar { // a separator, or the end (v is then the last letter's)
			break
		}
		// A run of two-byte characters (Latin with accents, Greek,
		// Cyrillic, Hebrew, Arabic…), decoded here.
		start := i
		for i+1 < len(b) {
			c := b[i]
			if c < 0xc2 || c >= 0xe0 || b[i+1]&0xc0 != 0x80 {
				break
			}
			if cls == nil {
				cls = bmpClasses() // only once a page has such a character
			}
			e := cls[rune(c&0x1f)<<6|rune(b[i+1]&0x3f)]
			if e&classWord == 0 {
				break word
			}
			if e&classDigit != 0 {
				all |= foldDigit
			}
			if lr := rune(e & classRune); lr >= utf8.RuneSelf && lr < 0x800 {
				h = (h ^ uint64(0xc0|lr>>6)) * fnvPrime64
				h = (h ^ uint64(0x80|lr&0x3f)) * fnvPrime64
			} else {
				h = hashRune(h, lr)
			}
			i += 2
		}
		if i != start {
			continue
		}
		// A three-byte character (CJK, kana, Hangul, Indic…), decoded
		// here unless it could be a surrogate or an overlong form.
		if c := b[i]; (0xe1 <= c && c <= 0xec || c == 0xee || c == 0xef) && i+2 < len(b) && b[i+1]&0xc0 == 0x80 && b[i+2]&0xc0 == 0x80 {
			r := rune(c&0x0f)<<12 | rune(b[i+1]&0x3f)<<6 | rune(b[i+2]&0x3f)
			if cls == nil {
				cls = bmpClasses()
			}
			e := cls[r]
			if e&classWord == 0 {
				break
			}
			if e&classDigit != 0 {
				all |= foldDigit
			}
			if lr := rune(e & classRune); lr == r {
				h = (h ^ uint64(c)) * fnvPrime64 // no case: its own bytes
				h = (h ^ uint64(b[i+1])) * fnvPrime64
				h = (h ^ uint64(b[i+2])) * fnvPrime64
			} else {
				h = hashRune(h, lr)
			}
			i += 3
			continue
		}
		r, n := charAt(b, i)
		e := classOf(r)
		if e&classWord == 0 {
			break
		}
		if e&classDigit != 0 {
			all |= foldDigit
		}
		h = hashRune(h, rune(e&classRune))
		i += n
	}
	if all&foldDigit != 0 || fnvDates.has(h) {
		h = dateToken
	}
	return h, i
}

// hashRune continues FNV-1a hash h over the UTF-8 bytes of r.
func hashRune(h uint64, r rune) uint64 {
	switch {
	case r < utf8.RuneSelf:
		return (h ^ uint64(r)) * fnvPrime64
	case r < 0x800:
		h = (h ^ uint64(0xc0|r>>6)) * fnvPrime64
		return (h ^ uint64(0x80|r&0x3f)) * fnvPrime64
	}
	var enc [utf8.UTFMax]byte
	for _, c := range utf8.AppendRune(enc[:0], r) {
		h = (h ^ uint64(c)) * fnvPrime64
	}
	return h
}

// charWord reads the character at b[i], a byte from 0x80 or '&': the word
// it starts (hashed by WordHashMix if mix, else WordHashFNV), or only past
// it when it separates words (ok false).
func charWord(b []byte, i int, mix bool) (h uint64, next int, ok bool) {
	if mix {
		h, next = wordAtMixLong(b, i)
	} else {
		h, next = wordAt(b, i)
	}
	if next > i {
		return h, next, true
	}
	_, n := charAt(b, i)
	return 0, i + n, false
}

// A character's class: classWord for a letter, mark or digit, classDigit
// for a digit, and in classRune its lower case.
const (
	classWord  = 1 << 30
	classDigit = 1 << 29
	classRune  = 1<<21 - 1
)

// classOf returns the class of r: for the Basic Multilingual Plane (every
// living script), from a table built on first use (256 KiB, a few
// milliseconds), since the unicode package's searches cost more than the
// rest of a character's reading.
func classOf(r rune) uint32 {
	if r < utf8.RuneSelf { // from a reference or a separator: no table built
		v := fold[r]
		if int16(v) <= 0 {
			return 0
		}
		c := classWord | uint32(v&0xff)
		if v&foldDigit != 0 {
			c |= classDigit
		}
		return c
	}
	if r < 0x10000 {
		return bmpClasses()[r]
	}
	return classify(r)
}

var bmpClasses = sync.OnceValue(func() *[0x10000]uint32 {
	t := new([0x10000]uint32)
	for r := range rune(len(t)) {
		t[r] = classify(r)
	}
	return t
})

func classify(r rune) uint32 {
	if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
		return 0
	}
	c := classWord | uint32(unicode.ToLower(r))
	if unicode.IsDigit(r) {
		c |= classDigit
	}
	return c
}

// charAt decodes the character at b[i], a byte from 0x80 or '&': its rune
// and length in bytes. A byte that starts no valid UTF-8 is a Windows-1252
// character; an '&' that starts no character reference is itself.
func charAt(b []byte, i int) (rune, int) {
	if b[i] == '&' {
		return referenceAt(b, i)
	}
	r, n := utf8.DecodeRune(b[i:])
	if r == utf8.RuneError && n <= 1 {
		c := b[i]
		if c < 0xa0 {
			return windows1252[c-0x80], 1
		}
		return rune(c), 1
	}
	return r, n
}

// windows1252 holds the characters of bytes 0x80 to 0x9F in Windows-1252
// (ISO-8859-1 has control characters there; the five bytes it leaves
// undefined read as U+FFFD, a separator).
var windows1252 = [32]rune{
	'€', '\uFFFD', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\uFFFD', 'Ž', '\uFFFD',
	'\uFFFD', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\uFFFD', 'ž', 'Ÿ',
}

// referenceAt decodes the character reference starting with the '&' at
// b[i] ("&#233;", "&#xE9;", "&eacute;"): its rune and length. A named
// reference other than a Latin letter's reads as a space, its whole
// length; an '&' that starts no reference is read alone.
func referenceAt(b []byte, i int) (rune, int) {
	end := min(len(b), i+33)
	for j := i + 1; j < end; j++ {
		c := b[j]
		switch {
		case c == ';':
			if j == i+1 || j == i+2 && b[i+1] == '#' {
				return '&', 1
			}
			if b[i+1] == '#' {
				return numericReference(b[i+2 : j]), j + 1 - i
			}
			if r, ok := letterEntities[string(b[i+1:j])]; ok {
				return r, j + 1 - i
			}
			return ' ', j + 1 - i
		case c == '#' && j == i+1 || 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9':
		default:
			return '&', 1
		}
	}
	return '&', 1
}

// numericReference decodes the digits of "&#233;" or "&#xE9;" (after the
// '#'); what is not a valid character reads as U+FFFD, a separator.
func numericReference(d []byte) rune {
	base := rune(10)
	if len(d) > 0 && d[0]|0x20 == 'x' {
		base, d = 16, d[1:]
	}
	if len(d) == 0 {
		return utf8.RuneError
	}
	var r rune
	for _, c := range d {
		var v rune
		switch {
		case '0' <= c && c <= '9':
			v = rune(c - '0')
		case base == 16 && 'a' <= c|0x20 && c|0x20 <= 'f':
			v = rune(c|0x20-'a') + 10
		default:
			return utf8.RuneError
		}
		r = min(r*base+v, utf8.MaxRune+1) // past it, it stays invalid
	}
	if r >= 0x80 && r < 0xa0 {
		return windows1252[r-0x80] // as browsers read them
	}
	if !utf8.ValidRune(r) {
		return utf8.RuneError
	}
	return r
}

// letterEntities maps the names of HTML's Latin letter references to
// their letters, taken from the html package's table.
var letterEntities = func() map[string]rune {
	m := map[string]rune{}
	for _, base := range []string{"A", "E", "I", "O", "U", "Y", "a", "e", "i", "o", "u", "y"} {
		for _, accent := range []string{"grave", "acute", "circ", "tilde", "uml", "ring"} {
			addEntity(m, base+accent)
		}
	}
	for _, name := range []string{"AElig", "aelig", "Ccedil", "ccedil", "ETH", "eth", "Ntilde", "ntilde", "Oslash", "oslash",
		"THORN", "thorn", "szlig", "OElig", "oelig", "Scaron", "scaron", "Yuml", "fnof"} {
		addEntity(m, name)
	}
	return m
}()

// addEntity adds name to m if it names a letter of ISO-8859-1 or
// Windows-1252: the letters a page in those encodings can hold raw.
func addEntity(m map[string]rune, name string) {
	s := html.UnescapeString("&" + name + ";")
	r, n := utf8.DecodeRuneInString(s)
	if n != len(s) || !unicode.IsLetter(r) {
		return
	}
	if r >= 0xc0 && r <= 0xff || slices.Contains(windows1252[:], r) {
		m[name] = r
	}
}
