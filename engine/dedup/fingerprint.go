package dedup

import (
	"math/bits"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// Fingerprints are what the detector compares pages by, computed in one
// pass over the body by Fingerprint.
//
// Why a second simhash of the main text: a copy of a page often comes in
// another template. A printer-friendly copy drops the navigation, the
// sidebar and the footer; a mirror adds a banner. On a short page the
// template is a large share of the words, so the whole-text simhash of
// such a copy lies 5 to 15 bits from its original's, beyond any safe
// threshold. The main text leaves the template out and so matches.
//
// Why the main text is what it is: text inside the elements HTML names
// as page furniture (nav, header, footer, aside) or whose id or class
// says so (navigation, menu, breadcrumb, sidebar, banner) is left out;
// and so is every text block (the text between two block-level tags) of
// fewer than MainBlockWords words. The second test is the "shallow text
// features" result of Kohlschütter, Fankhauser and Nejdl (WSDM 2010): the
// number of words in a block separates boilerplate (menus, link lists,
// bylines, copyright lines, a "printed on" date) from running text
// better than any other single feature, it needs no model, and a page
// keeps it whatever template it is shown in. Boilerplate that a site
// repeats in long blocks on every page stays in; the detector compares
// pages of one site, where such a block weighs the same on both sides.
//
// A page with little main text (fewer than MainMinWords words, or less
// than half of its words) has Main equal to Text: there is too little to
// tell two such pages apart by it (soft 404s, empty calendar months,
// listings), and they are then compared as wholes.
//
// Why a simhash without the words of the URL: a soft-404 page usually
// echoes the URL asked for ("the page /x/y.html does not exist"), and on a
// page of a few dozen words those words move the simhash by 5 to 15 bits,
// so that a host's answers to different missing URLs look unrelated.
// Leaving out the page's own URL path where the text spells it (its words
// in order, split as words are) makes them one page again; a genuine page
// rarely spells its own path. It is computed for pages of up to
// NoURLMaxWords words, which soft-404 pages are; longer pages have NoURL
// equal to Text.
type Fingerprints struct {
	Text  uint64 // Simhash of all the visible text
	Main  uint64 // simhash of the main text; Text when there is too little
	NoURL uint64 // simhash of the text without its own URL path; Text for long pages
	Title uint64 // hash of the title's words (their word hashes combined FNV-1a's way); 0 for none
}

// NoURLMaxWords bounds the pages whose NoURL simhash is computed.
const NoURLMaxWords = 512

// Main text thresholds (see Fingerprints).
const (
	MainBlockWords = 15
	MainMinWords   = 50
)

// Fingerprint returns the fingerprints of an HTML (or plain text) body.
// Text is Simhash(body), bit for bit. It is a pure function, safe for
// concurrent use; it allocates only for pages with text blocks longer
// than 1,024 words.
//
// The cost stays close to Simhash's: a shingle inside one kept block is
// the same in the whole text and in the main text, so it is counted once
// in a shared accumulator; only the shingles that straddle a block
// boundary or lie outside the main text are counted apart.
//
// It hashes words with NewestWordHash; a crawl file begun with another
// calls that one's Fingerprint.
func Fingerprint(body []byte, url string) Fingerprints {
	return NewestWordHash.Fingerprint(body, url)
}

// Fingerprint is the package's Fingerprint with words hashed by w: Text
// is w.Simhash(body).
func (w WordHash) Fingerprint(body []byte, url string) Fingerprints {
	// The fingerprinter's buffers (20 KiB) come from a pool: on the
	// stack they would grow every new goroutine's stack.
	f := fingerprinters.Get().(*fingerprinter)
	defer fingerprinters.Put(f)
	f.reset()
	mix := w.mix()
	f.urlWords(url, mix)
	n := len(body)
	var dates dateRun
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
			if !dates.continues(h) {
				f.word(h)
			}
		case c == '<':
			i = f.markup(body, i)
		case fold[c] != foldChar:
			i++
		default:
			h, next, ok := charWord(body, i, mix)
			if ok && !dates.continues(h) {
				f.word(h)
			}
			i = next
		}
	}
	f.endBlock()
	return f.sum()
}

var fingerprinters = sync.Pool{New: func() any { return new(fingerprinter) }}

func (f *fingerprinter) reset() {
	*f = fingerprinter{}
}

// accum counts, for each of the 64 bits, how many shingle hashes have it
// set. Counting bit by bit would cost 64 steps a shingle; instead the
// hashes are taken 16 at a time through a carry-save adder tree (the
// Harley-Seal method of Muła, Kurz and Lemire's "Faster population counts
// using AVX2 instructions", applied per bit position): four running words
// hold bit i of each count's 1s, 2s, 4s and 8s digits, and only the 16s
// that carry out of a block are spread into byte-lane counters (eight
// counters per uint64, one table lookup per 8 bits) and flushed to 32-bit
// counts before a lane can overflow. That is about 6 word operations a
// shingle instead of 32.
type accum struct {
	pend  [16]uint64 // hashes waiting for a full block
	npend int

	ones, twos, fours, eights uint64 // the low four binary digits of every count

	lanes    [8]uint64 // the 16s carried out of blocks, by byte lane
	inLanes  int
	counts   [64]uint32
	shingles uint32
}

func (a *accum) add(f uint64) {
	a.pend[a.npend&15] = f
	if a.npend++; a.npend == 16 {
		a.block()
	}
}

// csa is a carry-save adder on 64 bit positions at once: for each i, bit
// i of a, b and c summed is 2*hi + lo.
func csa(a, b, c uint64) (hi, lo uint64) {
	u := a ^ b
	return a&b | u&c, u ^ c
}

// block adds the 16 pending hashes to the digit words, and the 16s they
// carry out to the lanes.
func (a *accum) block() {
	eightsA := a.eight((*[8]uint64)(a.pend[:8]))
	eightsB := a.eight((*[8]uint64)(a.pend[8:]))
	var sixteens uint64
	sixteens, a.eights = csa(a.eights, eightsA, eightsB)
	a.npend = 0
	a.shingles += 16
	a.lanes[0] += spread[sixteens&0xff]
	a.lanes[1] += spread[sixteens>>8&0xff]
	a.lanes[2] += spread[sixteens>>16&0xff]
	a.lanes[3] += spread[sixteens>>24&0xff]
	a.lanes[4] += spread[sixteens>>32&0xff]
	a.lanes[5] += spread[sixteens>>40&0xff]
	a.lanes[6] += spread[sixteens>>48&0xff]
	a.lanes[7] += spread[sixteens>>56]
	if a.inLanes++; a.inLanes == 255 {
		a.flushLanes()
	}
}

// eight adds 8 hashes to the 1s, 2s and 4s digit words and returns the
// 8s they carry out.
func (a *accum) eight(d *[8]uint64) (eights uint64) {
	twosA, ones := csa(a.ones, d[0], d[1])
	twosB, ones := csa(ones, d[2], d[3])
	foursA, twos := csa(a.twos, twosA, twosB)
	twosA, ones = csa(ones, d[4], d[5])
	twosB, a.ones = csa(ones, d[6], d[7])
	var foursB uint64
	foursB, a.twos = csa(twos, twosA, twosB)
	eights, a.fours = csa(a.fours, foursA, foursB)
	return eights
}

func (a *accum) flushLanes() {
	for k, l := range a.lanes {
		for j := range 8 {
			a.counts[8*k+j] += 16 * uint32(l>>(8*j)&0xff)
		}
	}
	a.lanes = [8]uint64{}
	a.inLanes = 0
}

// flush moves everything counted into counts: the 16s in the lanes, and
// the low digits and pending hashes through lanes of their own (at most
// 15 + 15 a lane).
func (a *accum) flush() {
	a.flushLanes()
	var low [8]uint64
	spreadInto := func(x, w uint64) {
		for k := range low {
			low[k] += w * spread[x>>(8*k)&0xff]
		}
	}
	spreadInto(a.ones, 1)
	spreadInto(a.twos, 2)
	spreadInto(a.fours, 4)
	spreadInto(a.eights, 8)
	for _, f := range a.pend[:a.npend] {
		spreadInto(f, 1)
	}
	for k, l := range low {
		for j := range 8 {
			a.counts[8*k+j] += uint32(l >> (8 * j) & 0xff)
		}
	}
	a.shingles += uint32(a.npend)
	a.ones, a.twos, a.fours, a.eights, a.npend = 0, 0, 0, 0, 0
}

// sumOf returns the simhash of the shingles counted in a and b together.
func sumOf(a, b *accum) uint64 {
	a.flush()
	b.flush()
	total := a.shingles + b.shingles
	var h uint64
	for i := range 64 {
		if 2*(a.counts[i]+b.counts[i]) > total {
			h |= 1 << i
		}
	}
	return h
}

func shingle(a, b, c uint64) uint64 {
	return fmix64(bits.RotateLeft64(a, 42) ^ bits.RotateLeft64(b, 21) ^ c)
}

// fingerprinter holds one Fingerprint's state. Words are only buffered as
// they are read: a segment's shingles are made and counted when the
// segment ends (at a block boundary, or when the buffer is full), in one
// tight loop, because which accumulator a shingle goes to depends on the
// segment's length, known only then. The page furniture and title change
// only at block boundaries, so a segment is all main text or none of it.
type fingerprinter struct {
	shared, textOnly, mainOnly accum

	t1, t2 uint64 // the text's previous word hash and the one before it
	words  int    // words counted (segments ended)
	m1, m2 uint64 // the same for the main text
	main   int    // main-text words

	seg    [1024]uint64 // the current segment's words not yet counted
	nseg   int
	segRun int // words of the current segment already counted (a full buffer)

	all  [NoURLMaxWords]uint64 // the first words, for NoURL
	url  [64]uint64            // hashes of the words of the URL's path (a soft 404 echoes all of it)
	nurl int

	skip    bool   // in the title or in page furniture: words are not main text
	bpName  uint64 // packed name of the furniture element being skipped; 0 for none
	bpDepth int
	inTitle bool
	title   uint64
}

func (f *fingerprinter) word(h uint64) {
	if f.nseg == len(f.seg) {
		f.count(false)
	}
	f.seg[f.nseg] = h
	f.nseg++
}

// endBlock ends the current text block: kept as main text when long
// enough (and not furniture), else it counts for the whole text only.
func (f *fingerprinter) endBlock() {
	if f.nseg+f.segRun == 0 {
		return // an empty block (tags in a row): count would change nothing
	}
	f.count(true)
}

// count makes and counts the shingles ending at the buffered words of the
// current segment; last says the segment ends with them. In a kept
// segment, a shingle wholly inside it is the same in the whole text and
// in the main text and is counted once, in shared; the two that reach back
// before it (and every shingle of a segment not kept) count for the whole
// text only.
func (f *fingerprinter) count(last bool) {
	seg := f.seg[:f.nseg]
	if f.words < NoURLMaxWords {
		copy(f.all[f.words:], seg)
	}
	if f.inTitle {
		for _, h := range seg {
			f.title = (f.title ^ h) * fnvPrime64
			if f.title == 0 {
				f.title = 1
			}
		}
	}
	kept := !f.skip && f.segRun+len(seg) >= MainBlockWords
	t2, t1, g := f.t2, f.t1, f.words
	k := 0
	// The shingles that may reach back before the segment, or lie in
	// the first ShingleWords-1 words of the text.
	for ; k < len(seg) && (f.segRun+k < ShingleWords-1 || g < ShingleWords-1); k++ {
		if g >= ShingleWords-1 {
			f.textOnly.add(shingle(t2, t1, seg[k]))
		}
		t2, t1 = t1, seg[k]
		g++
	}
	to := &f.textOnly
	if kept {
		to = &f.shared
	}
	for _, h := range seg[k:] {
		to.add(shingle(t2, t1, h))
		t2, t1 = t1, h
	}
	if kept && f.segRun == 0 {
		// The main text's shingles that join this block to the previous
		// kept one.
		for k := range 2 {
			if f.main+k >= ShingleWords-1 {
				f.mainOnly.add(shingle(f.m2, f.m1, seg[k]))
			}
			f.m2, f.m1 = f.m1, seg[k]
		}
	}
	f.t2, f.t1, f.words = t2, t1, f.words+len(seg)
	f.segRun += len(seg)
	f.nseg = 0
	if last {
		if kept {
			f.m2, f.m1 = t2, t1
			f.main += f.segRun
		}
		f.segRun = 0
	}
}

func (f *fingerprinter) sum() Fingerprints {
	var fp Fingerprints
	fp.Title = f.title
	switch {
	case f.words == 0:
		return fp
	case f.words < ShingleWords:
		f.textOnly.add(shingle(f.t2, f.t1, 0))
	}
	fp.Text = sumOf(&f.shared, &f.textOnly)
	fp.Main = fp.Text
	fp.NoURL = fp.Text
	if f.nurl > 0 && f.words <= NoURLMaxWords {
		fp.NoURL = f.noURL()
	}
	if f.main >= MainMinWords && 2*f.main >= f.words {
		// The main text's shingles: those inside kept blocks (shared)
		// and those joining kept blocks (mainOnly).
		both := f.shared
		fp.Main = sumOf(&both, &f.mainOnly)
	}
	return fp
}

// Packed lower-case element names (up to 8 bytes, big-endian).
func packName(s string) uint64 {
	var v uint64
	for i := 0; i < len(s) && i < 8; i++ {
		v = v<<8 | uint64(s[i])
	}
	return v
}

const (
	nameTitle  = 't'<<32 | 'i'<<24 | 't'<<16 | 'l'<<8 | 'e'
	nameNav    = 'n'<<16 | 'a'<<8 | 'v'
	nameHeader = 'h'<<40 | 'e'<<32 | 'a'<<24 | 'd'<<16 | 'e'<<8 | 'r'
	nameFooter = 'f'<<40 | 'o'<<32 | 'o'<<24 | 't'<<16 | 'e'<<8 | 'r'
	nameAside  = 'a'<<32 | 's'<<24 | 'i'<<16 | 'd'<<8 | 'e'
)

// isBlock reports whether the element (packed name) ends a text block.
func isBlock(name uint64) bool {
	switch name {
	case 'p', 'l'<<8 | 'i', 'u'<<8 | 'l', 'o'<<8 | 'l', 'd'<<8 | 'l', 'd'<<8 | 't', 'd'<<8 | 'd', 'b'<<8 | 'r', 'h'<<8 | 'r',
		't'<<8 | 'r', 't'<<8 | 'd', 't'<<8 | 'h', 'h'<<8 | '1', 'h'<<8 | '2', 'h'<<8 | '3', 'h'<<8 | '4', 'h'<<8 | '5', 'h'<<8 | '6',
		'd'<<16 | 'i'<<8 | 'v', 'n'<<16 | 'a'<<8 | 'v', 'p'<<16 | 'r'<<8 | 'e',
		nameTitle, nameHeader, nameFooter, nameAside, nameTable, nameSection, nameArticle, nameMain, nameBlockquo,
		nameForm, nameOption, nameSelect, nameBody, nameHead, nameHTML, nameFigure, nameFigcapti, nameAddress:
		return true
	}
	return false
}

// Packed names of the longer block elements (packName: the first 8 bytes).
const (
	nameTable    = 't'<<32 | 'a'<<24 | 'b'<<16 | 'l'<<8 | 'e'
	nameSection  = 's'<<48 | 'e'<<40 | 'c'<<32 | 't'<<24 | 'i'<<16 | 'o'<<8 | 'n'
	nameArticle  = 'a'<<48 | 'r'<<40 | 't'<<32 | 'i'<<24 | 'c'<<16 | 'l'<<8 | 'e'
	nameMain     = 'm'<<24 | 'a'<<16 | 'i'<<8 | 'n'
	nameBlockquo = 'b'<<56 | 'l'<<48 | 'o'<<40 | 'c'<<32 | 'k'<<24 | 'q'<<16 | 'u'<<8 | 'o'
	nameForm     = 'f'<<24 | 'o'<<16 | 'r'<<8 | 'm'
	nameOption   = 'o'<<40 | 'p'<<32 | 't'<<24 | 'i'<<16 | 'o'<<8 | 'n'
	nameSelect   = 's'<<40 | 'e'<<32 | 'l'<<24 | 'e'<<16 | 'c'<<8 | 't'
	nameBody     = 'b'<<24 | 'o'<<16 | 'd'<<8 | 'y'
	nameHead     = 'h'<<24 | 'e'<<16 | 'a'<<8 | 'd'
	nameHTML     = 'h'<<24 | 't'<<16 | 'm'<<8 | 'l'
	nameFigure   = 'f'<<40 | 'i'<<32 | 'g'<<24 | 'u'<<16 | 'r'<<8 | 'e'
	nameFigcapti = 'f'<<56 | 'i'<<48 | 'g'<<40 | 'c'<<32 | 'a'<<24 | 'p'<<16 | 't'<<8 | 'i'
	nameAddress  = 'a'<<48 | 'd'<<40 | 'd'<<32 | 'r'<<24 | 'e'<<16 | 's'<<8 | 's'
)

// furnitureWords are the id and class words that name page furniture;
// a word matches when it starts with one of them ("navbar", "menu-top",
// "breadcrumbs").
var furnitureWords = []string{"nav", "menu", "breadcrumb", "sidebar", "banner", "header", "footer", "masthead", "toolbar"}

// markup reads the markup at body[i] ('<') and returns the index past it.
func (f *fingerprinter) markup(body []byte, i int) int {
	end := skipMarkup(body, i)
	j := i + 1
	closing := false
	if j < len(body) && body[j] == '/' {
		closing = true
		j++
	}
	if j >= len(body) || !('a' <= body[j]|0x20 && body[j]|0x20 <= 'z') {
		return end
	}
	var name uint64
	k := j
	for ; k < end && isNameByte(body[k]); k++ {
		if k-j < 8 {
			c := body[k]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			name = name<<8 | uint64(c)
		}
	}
	if isBlock(name) {
		f.endBlock()
	}
	if name == nameTitle {
		f.inTitle = !closing
		f.skip = f.inTitle || f.bpName != 0
	}
	switch {
	case f.bpName != 0:
		if name == f.bpName {
			if closing {
				f.bpDepth--
			} else if body[end-2] != '/' {
				f.bpDepth++
			}
			if f.bpDepth == 0 {
				f.endBlock()
				f.bpName = 0
				f.skip = f.inTitle
			}
		}
	case !closing && body[end-2] != '/' &&
		(name == nameNav || name == nameHeader || name == nameFooter || name == nameAside || container(name) && furnitureAttr(body[k:end])):
		f.endBlock()
		f.bpName, f.bpDepth = name, 1
		f.skip = true
	}
	return end
}

// container reports whether an element (packed name) is one whose id or
// class may name page furniture: only these have their attributes read,
// not every link and image.
func container(name uint64) bool {
	switch name {
	case 'd'<<16 | 'i'<<8 | 'v', 'u'<<8 | 'l', 'o'<<8 | 'l', 'd'<<8 | 'l', 't'<<8 | 'd', 's'<<24 | 'p'<<16 | 'a'<<8 | 'n',
		nameSection, nameTable, nameForm:
		return true
	}
	return false
}

// furnitureAttr reports whether a tag's attributes (the bytes after its
// name) have an id or class with a furniture word.
func furnitureAttr(attrs []byte) bool {
	for i := 0; i+3 < len(attrs); i++ {
		var vs int
		switch {
		case attrs[i]|0x20 == 'i' && attrs[i+1]|0x20 == 'd' && (attrs[i+2] == '=' || attrs[i+2] == ' '):
			vs = i + 2
		case i+6 < len(attrs) && hasPrefixFold(attrs[i:], "class") && (attrs[i+5] == '=' || attrs[i+5] == ' '):
			vs = i + 5
		default:
			continue
		}
		if i > 0 && isNameByte(attrs[i-1]) {
			continue
		}
		for vs < len(attrs) && (attrs[vs] == ' ' || attrs[vs] == '=') {
			vs++
		}
		if vs >= len(attrs) {
			return false
		}
		q := attrs[vs]
		stop := func(c byte) bool { return c == ' ' || c == '>' }
		if q == '"' || q == '\'' {
			vs++
			stop = func(c byte) bool { return c == q }
		}
		// Each word of the value (split at anything but a letter).
		for w := vs; w < len(attrs) && !stop(attrs[w]); {
			if !('a' <= attrs[w]|0x20 && attrs[w]|0x20 <= 'z') {
				w++
				continue
			}
			for _, fw := range furnitureWords {
				if hasPrefixFold(attrs[w:], fw) {
					return true
				}
			}
			for w < len(attrs) && 'a' <= attrs[w]|0x20 && attrs[w]|0x20 <= 'z' {
				w++
			}
		}
		i = vs
	}
	return false
}

// urlWords hashes the words of a URL's path as Fingerprint hashes the
// words of the text (by WordHashMix if mix).
func (f *fingerprinter) urlWords(url string, mix bool) {
	if k := strings.Index(url, "://"); k >= 0 {
		url = url[k+3:]
		if k = strings.IndexAny(url, "/?"); k >= 0 {
			url = url[k:]
		} else {
			url = ""
		}
	}
	if k := strings.IndexByte(url, '?'); k >= 0 {
		url = url[:k]
	}
	b := []byte(url) // does not escape: no copy
	var dates dateRun
	for i := 0; i < len(b) && f.nurl < len(f.url); {
		if c := b[i]; !isASCIIWord(c) && c < utf8.RuneSelf {
			i++ // no reference in a URL: '&' separates parameters
			continue
		}
		h, next, ok := charWord(b, i, mix)
		if ok && !dates.continues(h) {
			f.url[f.nurl] = h
			f.nurl++
		}
		i = next
	}
}

// noURL returns the simhash of the words without the runs that spell the
// URL's path.
func (f *fingerprinter) noURL() uint64 {
	var s shingler
	words, path := f.all[:f.words], f.url[:f.nurl]
	for i := 0; i < len(words); {
		if words[i] == path[0] && i+len(path) <= len(words) && slices.Equal(words[i:i+len(path)], path) {
			i += len(path)
			continue
		}
		s.word(words[i])
		i++
	}
	return s.sum()
}
