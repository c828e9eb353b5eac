package dedup

import (
	"bytes"
	"math/bits"
	"strings"
)

// Why simhash and not shingle sets: a shingle set (or a min-hash sketch of
// one) costs hundreds of bytes per page and a set intersection per
// comparison; a 64-bit simhash costs 8 bytes per page, fits in one SQLite
// INTEGER column, and two pages compare with one XOR and one POPCNT. The
// detector keeps every page's fingerprint in memory, so 8 bytes matters.
//
// Why 3-word shingles: single words (bags of words) make any two texts of
// the same language look alike, because common words dominate every page;
// long shingles make one edited word change many features. With 3 words a
// one-word edit changes 3 features out of thousands, while two different
// texts share almost no 3-word sequences, only their template (navigation,
// footer), which is a small part of a real page.
//
// The fingerprint is a fixed function of the bytes: words are hashed by
// the crawl file's WordHash (FNV-1a 64, hash/fnv's New64a over the
// lower-cased word, for files begun before WordHashMix; WordHashMix for
// new ones), three consecutive word hashes a, b, c are combined as
// rotl(a,42) ^ rotl(b,21) ^ c and finished with the MurmurHash3 64-bit
// finaliser, and bit i of the fingerprint is 1 when more than half the
// shingles have bit i set.
//
// Why dates are masked: a word holding a digit, and a month or weekday name,
// counts as one and the same word. Calendars and archives answer endless
// URLs that differ only in their dates with pages whose text differs only
// in those dates ("No events are scheduled for March 2031"); read as they
// are, two such short pages share few shingles and look unrelated. Genuine
// pages differ in their words, not only in their dates, so they stay apart.
//
// Fingerprints stored on disk stay comparable across runs, machines and
// versions; the golden tests in testdata (one file per word hash) fail if
// any of this changes.

const (
	fnvOffset64 = 14695981039346656037
	fnvPrime64  = 1099511628211

	// ShingleWords is the number of consecutive words in one shingle.
	ShingleWords = 3
)

// spread[b] has byte j set to bit j of b: adding spread[x>>8k&0xff] to a
// uint64 counts 8 bits of x at once, one counter per byte lane.
var spread = func() (t [256]uint64) {
	for b := range 256 {
		for j := range 8 {
			if b>>j&1 == 1 {
				t[b] |= 1 << (8 * j)
			}
		}
	}
	return t
}()

// Simhash returns the 64-bit simhash of the visible text of an HTML (or
// plain text) body, over shingles of ShingleWords words. Markup is skipped
// ("<...>", comments, and the content of script and style elements); a
// word is a run of letters, marks and digits, compared without case, in
// whatever encoding or character reference they are spelled (see wordAt),
// and every other character separates words.
// Attribute values, link targets included, are not text, so the same page
// served under another host or with other session ids in its links keeps
// its fingerprint.
//
// Simhash returns 0 for a body without words; the Detector treats 0 as "no
// fingerprint" and never calls such pages near-duplicates. Text shorter
// than one shingle is hashed as one shingle.
//
// Simhash is a pure function, safe for concurrent use, and allocates
// nothing. It hashes words with NewestWordHash.
func Simhash(body []byte) uint64 { return NewestWordHash.Simhash(body) }

// Simhash is the package's Simhash with words hashed by w.
func (w WordHash) Simhash(body []byte) uint64 {
	var s shingler
	mix := w.mix()
	n := len(body)
	for i := 0; i < n; {
		c := body[i]
		switch {
		case isASCIIWord(c):
			var h uint64
			if mix {
				h, i = wordAtMix(body, i)
			} else {
				h, i = wordAt(body, i)
			}
			s.word(h)
		case c == '<':
			i = skipMarkup(body, i)
		case fold[c] != foldChar:
			i++
		default:
			h, next, ok := charWord(body, i, mix)
			if ok {
				s.word(h)
			}
			i = next
		}
	}
	return s.sum()
}

// dateRun makes a run of numbers and dates one word: read one by one, a
// page full of them (a revision history, an archive's dates) is mostly
// the shingle "# # #", which then outweighs all its words.
type dateRun struct{ in bool }

// continues reports whether word h continues a run of dateTokens, and is
// then left out.
func (r *dateRun) continues(h uint64) bool {
	d := h == dateToken
	if d && r.in {
		return true
	}
	r.in = d
	return false
}

// dateToken stands for every word with a digit and every month or weekday
// name, under either word hash: the FNV-1a hash of "#".
const dateToken = 0xaf639e4c86018332 // fnvWord("#"), checked by TestDateToken

// fnvWord is the FNV-1a hash of an already lower-case word, as
// WordHashFNV hashes words.
func fnvWord(w string) uint64 {
	h := uint64(fnvOffset64)
	for k := range len(w) {
		h ^= uint64(w[k])
		h *= fnvPrime64
	}
	return h
}

// dateWords are the month and weekday names, full and abbreviated, that
// Simhash reads as dateToken.
var dateWords = strings.Fields(`january february march april may june july august september october november december
	jan feb mar apr jun jul aug sep sept oct nov dec
	monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thurs fri sat sun`)

// dateSet holds the hashes of dateWords under one word hash: bit h>>52
// of bits set for each, so that one load and a well-predicted branch
// clear nearly every other word (about 1 in 80 passes on), and table
// open-addressed by their top 8 bits. Both are small enough (2.5 KiB) to
// stay in the L1 cache.
type dateSet struct {
	bits  [1 << 12 / 64]uint64
	table [1<<8 + 64]uint64
}

func newDateSet(hash func(string) uint64) (d dateSet) {
	for _, w := range dateWords {
		h := hash(w)
		d.bits[h>>52/64] |= 1 << (h >> 52 % 64)
		i := h >> 56
		for d.table[i] != 0 {
			i++
		}
		d.table[i] = h
	}
	return d
}

// The date words under each word hash.
var fnvDates, mixDates = newDateSet(fnvWord), newDateSet(mixWord)

func (d *dateSet) has(h uint64) bool {
	if k := h >> 52; d.bits[k/64]>>(k%64)&1 == 0 {
		return false
	}
	for i := h >> 56; d.table[i] != 0; i++ {
		if d.table[i] == h {
			return true
		}
	}
	return false
}

// Hamming returns the number of bits in which two fingerprints differ.
func Hamming(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// Similarity returns the fraction of the 64 bits on which two simhashes
// agree: 1 - Hamming(a, b)/64. Pages are duplicates above 0.95, that is at
// a Hamming distance of at most 3 bits (3 bits give 0.953, 4 give 0.938).
//
// In terms of text, for pages of a few thousand words a distance of 3 bits
// means about 99% of the 3-word shingles shared: one changed word in 2,000
// gives about 1 bit on average, two unrelated pages about 30 bits, and two
// pages that share a template but not their text 25 to 32.
func Similarity(a, b uint64) float64 { return 1 - float64(Hamming(a, b))/64 }

// shingler turns a stream of word hashes into the simhash of their
// shingles, counting their bits in an accum.
type shingler struct {
	w1, w2 uint64 // the previous word hash and the one before it
	words  int
	dates  dateRun
	accum
}

func (s *shingler) word(h uint64) {
	if s.dates.continues(h) {
		return
	}
	s.words++
	if s.words >= ShingleWords {
		s.add(shingle(s.w2, s.w1, h))
	}
	s.w2, s.w1 = s.w1, h
}

func (s *shingler) sum() uint64 {
	switch {
	case s.words == 0:
		return 0
	case s.words < ShingleWords: // one short shingle: rotl(a,42)^rotl(b,21) with a = 0 when there is one word
		s.add(shingle(s.w2, s.w1, 0))
	}
	var none accum
	return sumOf(&s.accum, &none)
}

// fmix64 is the MurmurHash3 64-bit finaliser: every input bit affects every
// output bit, which simhash needs (each bit must be a fair coin).
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// skipMarkup returns the index just past the markup starting with the '<'
// at body[i]: a tag, a comment, a declaration, or a whole script or style
// element. A '<' that starts no markup ("a < b") is skipped alone.
func skipMarkup(body []byte, i int) int {
	n := len(body)
	if i+1 >= n {
		return n
	}
	c := body[i+1]
	switch {
	case c == '!':
		if bytes.HasPrefix(body[i:], []byte("<!--")) {
			if j := bytes.Index(body[i+4:], []byte("-->")); j >= 0 {
				return i + 4 + j + 3
			}
			return n
		}
	case c == '/' || c == '?':
	case 'a' <= c|0x20 && c|0x20 <= 'z':
		if name := rawTextElement(body[i+1:]); name != "" {
			return skipRawText(body, i, name)
		}
	default:
		return i + 1
	}
	if j := bytes.IndexByte(body[i+1:], '>'); j >= 0 {
		return i + 1 + j + 1
	}
	return n
}

// rawTextElement returns "script" or "style" if b starts with that element
// name (in any case) followed by the end of the name, and "" otherwise.
func rawTextElement(b []byte) string {
	for _, name := range [...]string{"script", "style"} {
		if len(b) > len(name) && hasPrefixFold(b, name) && !isNameByte(b[len(name)]) {
			return name
		}
	}
	return ""
}

// skipRawText returns the index past the end tag of the raw-text element
// name whose start tag begins at body[i], or len(body) if it has none.
func skipRawText(body []byte, i int, name string) int {
	j := i + 1
	for {
		k := bytes.Index(body[j:], []byte("</"))
		if k < 0 {
			return len(body)
		}
		j += k + 2
		if len(body)-j > len(name) && hasPrefixFold(body[j:], name) && !isNameByte(body[j+len(name)]) {
			if e := bytes.IndexByte(body[j:], '>'); e >= 0 {
				return j + e + 1
			}
			return len(body)
		}
	}
}

func hasPrefixFold(b []byte, lower string) bool {
	if len(b) < len(lower) {
		return false
	}
	for k := range len(lower) {
		if b[k]|0x20 != lower[k] {
			return false
		}
	}
	return true
}

func isNameByte(c byte) bool {
	return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == ':'
}
