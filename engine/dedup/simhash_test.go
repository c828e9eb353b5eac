package dedup

import (
	"bytes"
	"flag"
	"fmt"
	"hash/fnv"
	"html"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var update = flag.Bool("update", false, "rewrite testdata/simhash.golden and testdata/fingerprint.golden")

// wordHashes are the word hashes a crawl file may hold, with the
// statement of each that refSimhash uses: hash/fnv's for FNV-1a, and
// mixWord, the chunk-by-chunk definition of WordHashMix.
var wordHashes = []struct {
	hash WordHash
	word func(string) uint64
}{
	{WordHashFNV, func(w string) uint64 { h := fnv.New64a(); h.Write([]byte(w)); return h.Sum64() }},
	{WordHashMix, mixWord},
}

// refSimhash is a slow, independent statement of the fingerprint: regular
// expressions strip the markup and find character references, html
// decodes them, the text is read as UTF-8 with Windows-1252 for bytes that
// are not, the newest word hash hashes the words (refSimhashWith names
// another), and bits are counted one by one.
func refSimhash(body []byte) uint64 { return refSimhashWith(body, mixWord) }

func refSimhashWith(body []byte, hashWord func(string) uint64) uint64 {
	s := string(body)
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?is)<script\b.*?</script\s*>`),
		regexp.MustCompile(`(?is)<style\b.*?</style\s*>`),
		regexp.MustCompile(`(?s)<!--.*?-->`),
		regexp.MustCompile(`<[a-zA-Z/!?][^>]*>`),
	} {
		s = re.ReplaceAllString(s, " ")
	}
	// References: numeric ones are characters; named ones only when they
	// name a letter of ISO-8859-1 (U+00C0 to U+00FF) or Windows-1252.
	s = regexp.MustCompile(`&#?[a-zA-Z0-9]+;`).ReplaceAllStringFunc(s, func(ref string) string {
		c := html.UnescapeString(ref)
		r, n := utf8.DecodeRuneInString(c)
		if c == ref || n != len(c) {
			return " "
		}
		if ref[1] != '#' && !(unicode.IsLetter(r) && (r >= 0xc0 && r <= 0xff || strings.ContainsRune("ŠŒŽšœžŸƒ", r))) {
			return " "
		}
		return c
	})
	var text []rune
	const cp1252 = "€\uFFFD‚ƒ„…†‡ˆ‰Š‹Œ\uFFFDŽ\uFFFD\uFFFD‘’“”•–—˜™š›œ\uFFFDžŸ"
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			if r = rune(s[i]); r < 0xa0 {
				r = []rune(cp1252)[r-0x80]
			}
		}
		text = append(text, r)
		i += n
	}
	words := strings.FieldsFunc(string(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r)
	})
	hashes := make([]uint64, len(words))
	dates := map[string]bool{}
	for _, w := range strings.Fields("january february march april may june july august september october november december jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thurs fri sat sun") {
		dates[w] = true
	}
	hashes = hashes[:0]
	prev := ""
	for _, w := range words {
		w = strings.Map(unicode.ToLower, w)
		if dates[w] || strings.IndexFunc(w, unicode.IsDigit) >= 0 {
			w = "#" // dates and numbers are one word
			if prev == "#" {
				continue // and so is a run of them
			}
		}
		prev = w
		h := hashWord(w)
		if w == "#" {
			h = dateToken
		}
		hashes = append(hashes, h)
	}
	var feats []uint64
	switch {
	case len(hashes) == 0:
		return 0
	case len(hashes) < 3:
		var a, b uint64
		if len(hashes) == 2 {
			a, b = hashes[0], hashes[1]
		} else {
			b = hashes[0]
		}
		feats = append(feats, fmix64(bits.RotateLeft64(a, 42)^bits.RotateLeft64(b, 21)))
	default:
		for i := 2; i < len(hashes); i++ {
			feats = append(feats, fmix64(bits.RotateLeft64(hashes[i-2], 42)^bits.RotateLeft64(hashes[i-1], 21)^hashes[i]))
		}
	}
	var out uint64
	for bit := range 64 {
		ones := 0
		for _, f := range feats {
			ones += int(f >> bit & 1)
		}
		if 2*ones > len(feats) {
			out |= 1 << bit
		}
	}
	return out
}

// testBodies returns pages of every length (with and without a template),
// the golden inputs and odd bodies, for tests that compare fingerprints.
func testBodies(t *testing.T) [][]byte {
	s := newSite("http://www.site1.test", 1)
	var bodies [][]byte
	for i := range 40 {
		_, b := s.article(fmt.Sprintf("/a/%d.html", i), uint64(i), []int{0, 1, 2, 3, 50, 400, 3000}[i%7], pageOpt{noTemplate: i%2 == 0})
		bodies = append(bodies, b)
	}
	files, _ := filepath.Glob("testdata/golden/*.html")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	return append(bodies, []byte(""), []byte("one"), []byte("Two words"), []byte("a < b &amp; c > d"),
		[]byte("<p>Caf\u00e9 na\u00efve \u65e5\u672c\u8a9e text</p>"), []byte("<SCRIPT type=x>var hidden = 1;</SCRIPT>shown here now"),
		[]byte(`<nav>one two</nav><p>three</p>`), []byte(`<div class="menu">a b c d e f</div>x y`),
		[]byte(`<div id="nav"><div>x</div>y</div><p>z w v u</p>`))
}

func TestSimhashMatchesReference(t *testing.T) {
	bodies := append(testBodies(t), wordEdges()...)
	for _, wh := range wordHashes {
		for i, b := range bodies {
			if got, want := wh.hash.Simhash(b), refSimhashWith(b, wh.word); got != want {
				t.Errorf("%v: body %d (%q...): Simhash = %016x, reference = %016x", wh.hash, i, b[:min(len(b), 40)], got, want)
			}
		}
	}
}

// wordEdges are bodies whose words end at every place an 8-byte chunk
// or a read of eight bytes can: words of 1 to 20 letters, at the end of
// the body or not, with characters of two, three and four bytes and
// references at every offset, and digits anywhere.
func wordEdges() [][]byte {
	var out [][]byte
	for n := 1; n <= 20; n++ {
		w := strings.Repeat("Ab", n)[:n]
		for _, c := range []string{"é", "Д", "日", "𝐀", "&eacute;", "&#x2019;", "7", "Ω", "\xe9" /* Windows-1252 é */, "\u00a0"} {
			for k := 0; k <= n; k++ {
				word := w[:k] + c + w[k:]
				out = append(out, []byte("one two "+word+" three "+word), []byte(word+" "+word+" x"+word))
			}
		}
		out = append(out, []byte(w), []byte("x "+w+" y"), []byte(w+"."+w+"-"+w+"\x00"+w))
		// Separators of every length after a word of every length, plain
		// or ending at markup or a character.
		for _, sep := range []string{" ", ".", "<b>", "&amp;", "&", "é", "\xa0", "< ", "<!-- c -->"} {
			for k := 0; k <= 17; k++ {
				gap := strings.Repeat(" ", k)
				out = append(out, []byte(w+gap+sep+gap+w+" "+w+gap), []byte(w+sep+gap))
			}
		}
	}
	return out
}

// TestSimhashGolden pins the fingerprints of fixed inputs under each word
// hash: they are stored on disk by the crawler, so any change of
// tokenisation, hash function or shingling must fail here (go test
// -update rewrites the files after a deliberate change, which invalidates
// stored fingerprints). WordHashFNV's file is the one every crawl file
// before the word hash had a name was made with, unchanged.
func TestSimhashGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.html")
	if err != nil || len(files) < 4 {
		t.Fatalf("golden inputs: %v, %v", files, err)
	}
	for _, wh := range wordHashes {
		got := map[string]uint64{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got[filepath.Base(f)] = wh.hash.Simhash(b)
		}
		golden := goldenFile("simhash", wh.hash)
		if *update {
			var buf bytes.Buffer
			for _, n := range slices.Sorted(maps.Keys(got)) {
				fmt.Fprintf(&buf, "%s %016x\n", n, got[n])
			}
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		b, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			name, hex, ok := strings.Cut(line, " ")
			if !ok {
				t.Fatalf("%s: bad golden line %q", golden, line)
			}
			want, err := strconv.ParseUint(hex, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			g, ok := got[name]
			if !ok {
				t.Errorf("%s: golden input missing", name)
				continue
			}
			if g != want {
				t.Errorf("%v: %s: Simhash = %016x, golden %016x", wh.hash, name, g, want)
			}
			n++
		}
		if n != len(got) {
			t.Errorf("%s: %d golden values for %d inputs", golden, n, len(got))
		}
	}
}

// goldenFile is the golden file of name under word hash w: WordHashFNV's
// keeps the name it had before there was another.
func goldenFile(name string, w WordHash) string {
	if w == WordHashFNV {
		return "testdata/" + name + ".golden"
	}
	return "testdata/" + name + "-" + w.String() + ".golden"
}

func TestSimhashIgnoresMarkup(t *testing.T) {
	base := []byte(`<p>The quick brown fox jumps over the lazy dog near the river bank today.</p>`)
	tests := []struct {
		name string
		body string
	}{
		{"other attributes", `<p class="x" data-href="http://www.other.test/?sid=8f3a">The quick brown fox jumps over the lazy dog near the river bank today.</p>`},
		{"script", `<script>var other = "words that must not count";</script><p>The quick brown fox jumps over the lazy dog near the river bank today.</p>`},
		{"style and comment", `<style>p { color: red }</style><!-- a comment with words --><p>The quick brown fox jumps over the lazy dog near the river bank today.</p>`},
		{"case and punctuation", `<P>the QUICK brown fox, jumps over the lazy dog - near the river bank today!</P>`},
		{"entities", `<p>The&nbsp;quick brown fox jumps over the lazy dog near the river bank today&hellip;</p>`},
		{"inline markup", `<p>The <b>quick</b> brown <a href="/fox">fox</a> jumps over the lazy dog near the river bank today.</p>`},
	}
	want := Simhash(base)
	for _, tt := range tests {
		if got := Simhash([]byte(tt.body)); got != want {
			t.Errorf("%s: Simhash = %016x, want %016x", tt.name, got, want)
		}
	}
	if Simhash([]byte(`<p>The quick brown cat jumps over the lazy dog near the river bank today.</p>`)) == want {
		t.Error("a changed word did not change the fingerprint of a short text")
	}
	if Simhash([]byte("<html><body><img src=a.png></body></html>")) != 0 {
		t.Error("a page without words has a fingerprint")
	}
}

func TestSimilarityThreshold(t *testing.T) {
	s := newSite("http://www.site2.test:8080", 2)
	g := newTextGen(77)
	title, words := g.title(), g.text(2000)
	orig := Simhash(s.render("/a.html", title, words, pageOpt{}))
	changed := slices.Clone(words)
	changed[700] = "quorbly"
	other := newTextGen(78).text(2000)
	tests := []struct {
		name string
		body []byte
		dup  bool
	}{
		{"identical", s.render("/a.html", title, words, pageOpt{}), true},
		{"one word changed in 2000", s.render("/a.html", title, changed, pageOpt{}), true},
		{"same page under another host and session", (&site{origin: "http://site2.test:8080", name: s.name, nav: s.nav, sidebar: s.sidebar, tagline: s.tagline}).render("/a.html", title, words, pageOpt{linkQuery: "?sid=8f3a77"}), true},
		{"same template, other text", s.render("/b.html", title, other, pageOpt{}), false},
		{"same template and title, half the text", s.render("/a.html", title, append(slices.Clone(words[:1000]), other[:1000]...), pageOpt{}), false},
	}
	for _, tt := range tests {
		h := Simhash(tt.body)
		sim := Similarity(orig, h)
		if got := Hamming(orig, h) <= DefaultMaxHamming; got != tt.dup {
			t.Errorf("%s: distance %d (similarity %.3f), duplicate = %v, want %v", tt.name, Hamming(orig, h), sim, got, tt.dup)
		}
		if (sim > 0.95) != tt.dup {
			t.Errorf("%s: similarity %.3f on the wrong side of 0.95", tt.name, sim)
		}
	}
	if Similarity(0, 0) != 1 || Similarity(0, ^uint64(0)) != 0 || Similarity(0, 7) != 1-3.0/64 {
		t.Error("Similarity is not 1 - hamming/64")
	}
}

// TestSimhashDistances measures, over many pages, how often the threshold
// of 3 bits catches a one-word edit and how close different pages of one
// template come. The rates are properties of a 64-bit simhash, not exact
// guarantees, so the test asserts bounds and logs the distributions.
func TestSimhashDistances(t *testing.T) {
	s := newSite("http://www.site3.test:8080", 7)
	const n = 200
	matched, printed := 0, 0
	for k := range n {
		g := newTextGen(uint64(1000 + k))
		title, words := g.title(), g.text(2000)
		a := Simhash(s.render("/article/12", title, words, pageOpt{}))
		w2 := slices.Clone(words)
		w2[g.r.IntN(len(w2))] = "quorbly"
		if Hamming(a, Simhash(s.render("/article/12", title, w2, pageOpt{}))) <= DefaultMaxHamming {
			matched++
		}
		p := Simhash(s.render("/print/article/12", title, words, pageOpt{noTemplate: true, extra: "Printed from www.site3.test"}))
		if Hamming(a, p) <= DefaultMaxHamming {
			printed++
		}
	}
	closest := 64
	for k := range 2000 {
		_, a := s.article("/a.html", uint64(k), 100+k%400, pageOpt{})
		_, b := s.article("/b.html", uint64(k+100000), 100+k%400, pageOpt{})
		closest = min(closest, Hamming(Simhash(a), Simhash(b)))
	}
	t.Logf("one word changed in 2,000: %d/%d within %d bits", matched, n, DefaultMaxHamming)
	t.Logf("printer copy without navigation, sidebar and footer (~4%% of the words): %d/%d within %d bits", printed, n, DefaultMaxHamming)
	t.Logf("2,000 pairs of different short pages (100-500 words) sharing a template: closest %d bits", closest)
	if matched < n*9/10 {
		t.Errorf("one-word edits matched %d/%d, want at least 90%%", matched, n)
	}
	if closest <= 2*DefaultMaxHamming {
		t.Errorf("different pages came within %d bits", closest)
	}
}

func benchPage(b *testing.B) []byte {
	s := newSite("http://www.site3.test:8080", 3)
	n := 2600
	_, body := s.article("/news/2026/article-12.html", 5, n, pageOpt{})
	for len(body) < 20<<10 { // a page of about 20 KiB, as on the web
		n += n / 8
		_, body = s.article("/news/2026/article-12.html", 5, n, pageOpt{})
	}
	b.SetBytes(int64(len(body)))
	return body
}

func BenchmarkSimhash(b *testing.B) {
	body := benchPage(b)
	b.ReportAllocs()
	var sink uint64
	for b.Loop() {
		sink ^= Simhash(body)
	}
	_ = sink
}

// Pages that differ only in their dates (a calendar's empty months) have
// one fingerprint; pages that differ in their words do not.
func TestSimhashMasksDates(t *testing.T) {
	month := func(name string, year int, text string) []byte {
		return fmt.Appendf(nil, `<html><head><title>Events in %[1]s %[2]d - Griond</title></head><body>
<div id="header"><a href="/">Griond</a></div><h1>Events in %[1]s %[2]d</h1>
<p class="months"><a href="../">&laquo; Earlier</a> | <a href="../02/">Later &raquo;</a></p>
<p>%[3]s %[1]s %[2]d.</p><div id="footer">Sed ut perspiciatis. &copy; 2004 Griond</div></body></html>`, name, year, text)
	}
	empty := "No events are scheduled for"
	a, b, c := Simhash(month("January", 2030, empty)), Simhash(month("Sept", 1999, empty)), Simhash(month("Tuesday", 7, empty))
	if a != b || a != c {
		t.Errorf("months differing only in dates: simhashes %016x %016x %016x, want one", a, b, c)
	}
	if d := Simhash(month("January", 2030, "Concert of the choir and a lecture on bees, in")); Hamming(a, d) <= DefaultMaxHamming {
		t.Errorf("a month with events is %d bits from an empty one: near-duplicates", Hamming(a, d))
	}
}

// A page full of dates and version numbers is not its run of numbers: a
// revision history and a blog's list of dates, unrelated texts, stay far
// apart (read word by word, the shingle "# # #" outweighed all others in
// both, and a real pair of such pages fell within 3 bits).
func TestSimhashNumberRuns(t *testing.T) {
	g := newTextGen(31)
	var history, archive strings.Builder
	history.WriteString("<title>New and Changed Entries</title><h1>Changes Since 4.0.0</h1>")
	for i := range 300 {
		fmt.Fprintf(&history, "<p>%s: 4.%d.%d, 2%d Dec 200%d, %s</p>\n", strings.Join(g.text(2), " "), i%5, i%9, i%10, i%4, strings.Join(g.text(3), " "))
	}
	archive.WriteString("<title>Archive</title><h1>Archive</h1><ul>")
	for i := range 60 {
		fmt.Fprintf(&archive, "<li>20%02d-%02d-%02d %s</li>", 10+i%8, 1+i%12, 1+i%28, strings.Join(g.text(1), " "))
	}
	archive.WriteString("</ul>")
	a, b := Simhash([]byte(history.String())), Simhash([]byte(archive.String()))
	if d := Hamming(a, b); d <= 3*DefaultMaxHamming {
		t.Errorf("a revision history and a list of dates %d bits apart", d)
	}
	for _, body := range []string{history.String(), archive.String()} {
		if got, want := Simhash([]byte(body)), refSimhash([]byte(body)); got != want {
			t.Errorf("Simhash %016x, reference %016x", got, want)
		}
	}
}

func TestDateToken(t *testing.T) {
	if dateToken != fnvWord("#") {
		t.Errorf("dateToken %x, FNV-1a of \"#\" %x", uint64(dateToken), fnvWord("#"))
	}
	// No date word hashes to another's value, nor to dateToken, under
	// either word hash (a collision would make it a date, or a date not).
	for _, wh := range wordHashes {
		seen := map[uint64]string{dateToken: "#"}
		for _, w := range dateWords {
			h := wh.word(w)
			if o, ok := seen[h]; ok {
				t.Errorf("%v: %q and %q hash alike", wh.hash, w, o)
			}
			seen[h] = w
		}
	}
}

// A word hash's name, as a crawl file records it, reads back as itself;
// a name this lidi does not know is refused, not read as another.
func TestWordHashNames(t *testing.T) {
	for _, w := range []WordHash{WordHashFNV, WordHashMix} {
		if got, err := ParseWordHash(w.String()); err != nil || got != w {
			t.Errorf("ParseWordHash(%q) = %v, %v", w.String(), got, err)
		}
	}
	if WordHash(0).String() != NewestWordHash.String() {
		t.Errorf("the zero value is %v, want %v", WordHash(0), NewestWordHash)
	}
	for _, s := range []string{"", "fnv", "mix128", "WordHash(3)"} {
		if w, err := ParseWordHash(s); err == nil {
			t.Errorf("ParseWordHash(%q) = %v, want an error", s, w)
		}
	}
}
