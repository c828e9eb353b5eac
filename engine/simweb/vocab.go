package simweb

import (
	"math"
	"sync"
)

// The vocabulary is the same for every web (one language), so it is built
// once from a fixed seed. Word frequencies follow Zipf's law with exponent 1,
// as in natural language; frequent words are short.

const (
	vocabSize = 20000
	// functionWords are drawn like any other word but are never used for
	// names or titles.
	vocabSeed = 0x6c696469 // "lidi"
)

var functionWords = []string{
	"the", "of", "and", "to", "a", "in", "is", "that", "for", "it",
	"as", "was", "with", "be", "by", "on", "not", "he", "this", "are",
	"or", "his", "from", "at", "which", "but", "have", "an", "had", "they",
	"you", "were", "their", "one", "all", "we", "can", "her", "has", "there",
	"been", "if", "more", "when", "will", "would", "who", "so", "no", "she",
}

type vocabulary struct {
	text  []byte   // all words back to back
	off   []uint32 // word i is text[off[i]:off[i+1]]
	table aliasTable
	// content draws among the words after the function words, with a
	// flatter Zipf law (exponent 0.9), for names and titles.
	content aliasTable
	// fast is the text-drawing table used by Render (see textTable).
	fast textTable
}

const maxWordLen = 11

var (
	vocabOnce sync.Once
	vocab     *vocabulary
)

func getVocabulary() *vocabulary {
	vocabOnce.Do(func() { vocab = buildVocabulary() })
	return vocab
}

func buildVocabulary() *vocabulary {
	onsets := []string{"b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
		"b", "d", "l", "m", "n", "p", "r", "s", "t", "ch", "sh", "th", "st", "tr", "br", "pl", "gr", "cl", "", ""}
	vowels := []string{"a", "e", "i", "o", "u", "a", "e", "i", "o", "a", "e", "ai", "ea", "ou", "io", "y"}
	codas := []string{"", "", "", "", "", "", "", "", "n", "r", "s", "l", "t", "m", "nd", "st", "ck", "nt", "ng"}
	r := newRNG(vocabSeed, tagVocab, 0)
	v := &vocabulary{off: make([]uint32, 0, vocabSize+1)}
	seen := make(map[string]bool, vocabSize)
	add := func(w string) {
		seen[w] = true
		v.off = append(v.off, uint32(len(v.text)))
		v.text = append(v.text, w...)
	}
	for _, w := range functionWords {
		add(w)
	}
	var buf []byte
	for len(v.off) < vocabSize {
		rank := len(v.off)
		syllables := 1 + r.intn(2)
		if rank > 300 {
			syllables = 2 + r.intn(2)
		}
		buf = buf[:0]
		for range syllables {
			buf = append(buf, onsets[r.intn(len(onsets))]...)
			buf = append(buf, vowels[r.intn(len(vowels))]...)
			buf = append(buf, codas[r.intn(len(codas))]...)
		}
		if len(buf) < 2 || len(buf) > maxWordLen || seen[string(buf)] {
			continue
		}
		add(string(buf))
	}
	v.off = append(v.off, uint32(len(v.text)))
	weights := make([]float64, vocabSize)
	for i := range weights {
		weights[i] = 1 / float64(i+1)
	}
	v.table = newAliasTable(weights)
	cw := make([]float64, vocabSize-len(functionWords))
	for i := range cw {
		cw[i] = math.Pow(float64(i+1), -0.9)
	}
	v.content = newAliasTable(cw)
	v.fast = newTextTable(v, weights)
	return v
}

// word returns word i.
func (v *vocabulary) word(i int) []byte { return v.text[v.off[i]:v.off[i+1]] }

// draw returns a word index with Zipf frequency.
func (v *vocabulary) draw(r *rng) int { return v.table.draw(uint32(r.next())) }

// contentWord returns a word index suitable for names and titles: drawn with
// Zipf frequency among the words after the function words.
func (v *vocabulary) contentWord(r *rng) int {
	return len(functionWords) + v.content.draw(uint32(r.next()))
}

// textTable draws a word and finds its bytes with one load: it is an alias
// table whose columns also hold where the column's word and its alias's word
// sit in a text of words each followed by a space. Rendering copies 16 bytes
// from there with one move and keeps the word's length, which is much faster
// than a copy of variable length; the text is padded so the move never runs
// off its end.
type textTable struct {
	// cols[i]: bits 0-15 threshold, 16-35 offset and 36-39 length of word
	// i, 40-59 offset and 60-63 length of the alias's word.
	cols []uint64
	text []byte
}

func newTextTable(v *vocabulary, weights []float64) textTable {
	var t textTable
	where := make([]uint64, vocabSize) // offset | length<<20
	for i := range vocabSize {
		w := v.word(i)
		where[i] = uint64(len(t.text)) | uint64(len(w)+1)<<20
		t.text = append(t.text, w...)
		t.text = append(t.text, ' ')
	}
	if len(t.text) >= 1<<20 || maxWordLen+1 >= 16 {
		panic("simweb: vocabulary too large for the text table")
	}
	t.text = append(t.text, make([]byte, 16)...)
	base := newAliasTable(weights)
	t.cols = make([]uint64, vocabSize)
	for i, c := range base.cols {
		t.cols[i] = uint64(c&0xffff) | where[i]<<16 | where[c>>16]<<40
	}
	return t
}

// appendWord draws a word with 32 random bits and writes it, with a space
// after it, at dst[l:]; dst must have 16 bytes of room there. It returns
// the new length.
func (t *textTable) appendWord(dst []byte, l int, x uint32) int {
	c := t.cols[(x>>16)*uint32(len(t.cols))>>16]
	// Without a branch (it would be mispredicted often): keep is all ones
	// when the low bits fall under the threshold, selecting the column's
	// own word at bit 16 rather than the alias's at bit 40.
	keep := uint64(int64(uint64(uint16(x))-(c&0xffff)) >> 63)
	w := c >> (40 - 24&keep)
	off := int(w & 0xfffff)
	*(*[16]byte)(dst[l : l+16]) = *(*[16]byte)(t.text[off : off+16])
	return l + int(w>>20&0xf)
}
