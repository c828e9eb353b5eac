package dedup

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lidi/engine/cputime"
	"lidi/engine/simweb"
)

func TestFingerprintTextIsSimhash(t *testing.T) {
	bodies := append(testBodies(t), wordEdges()...)
	for _, w := range []WordHash{WordHashFNV, WordHashMix, 0} { // 0: the newest
		for i, b := range bodies {
			if got, want := w.Fingerprint(b, "http://x.test/a/b.html").Text, w.Simhash(b); got != want {
				t.Errorf("%v: body %d (%d bytes): Fingerprint().Text = %016x, Simhash = %016x", w, i, len(b), got, want)
			}
		}
	}
}

func TestFingerprintMainText(t *testing.T) {
	s := newSite("http://www.site2.test", 2)
	tests := []struct {
		name     string
		words    int
		a, b     pageOpt
		near     bool // main texts within DefaultMaxHamming
		textFar  bool // whole texts beyond it
		sameMain bool // Main equals Text (too little main text)
	}{
		{"printer-friendly copy of a short page", 120, pageOpt{}, pageOpt{noTemplate: true, extra: "Printed on 12 March 2024 from the web site"}, true, true, false},
		{"printer-friendly copy of a long page", 900, pageOpt{}, pageOpt{noTemplate: true}, true, false, false},
		{"copy with a banner line", 200, pageOpt{}, pageOpt{extra: "This is a mirror copy of the site, last synchronised on 2021-06-14."}, true, false, false},
		{"page with too little text", 30, pageOpt{}, pageOpt{noTemplate: true}, false, true, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, a := s.article("/x.html", uint64(100+i), tt.words, tt.a)
			_, b := s.article("/x.html", uint64(100+i), tt.words, tt.b)
			fa, fb := Fingerprint(a, ""), Fingerprint(b, "")
			if d := Hamming(fa.Main, fb.Main); (d <= DefaultMaxHamming) != tt.near {
				t.Errorf("main texts %d bits apart, want near=%v", d, tt.near)
			}
			if d := Hamming(fa.Text, fb.Text); (d > DefaultMaxHamming) != tt.textFar && tt.textFar {
				t.Errorf("whole texts %d bits apart, want beyond %d", d, DefaultMaxHamming)
			}
			if (fa.Main == fa.Text) != tt.sameMain {
				t.Errorf("Main == Text is %v, want %v", fa.Main == fa.Text, tt.sameMain)
			}
			if fa.Title == 0 || fa.Title != fb.Title {
				t.Errorf("titles %x and %x, want equal and set", fa.Title, fb.Title)
			}
		})
	}
	// Other pages of the site, with the same template, stay far apart.
	_, a := s.article("/y.html", 7, 300, pageOpt{})
	_, b := s.article("/z.html", 8, 300, pageOpt{})
	if d := Hamming(Fingerprint(a, "").Main, Fingerprint(b, "").Main); d <= 3*DefaultMaxHamming {
		t.Errorf("two different pages' main texts %d bits apart", d)
	}
}

func TestFingerprintFurniture(t *testing.T) {
	para := "<p>The quick brown fox jumps over the lazy dog near the river bank today and then it runs back home to its den under the old oak tree where the other foxes sleep all day long.</p>\n"
	base := Fingerprint([]byte(para+para+para), "")
	for _, wrap := range []string{
		`<nav><ul><li>Home</li><li>About us and our long history of making things</li></ul></nav>`,
		`<div class="site-navbar"><p>Menu words that are many enough to make a block of fifteen words or more here</p></div>`,
		`<div id='breadcrumbs'>Home &rsaquo; Section &rsaquo; Page</div>`,
		`<footer><p>Copyright notice long enough to count as a block of text if it were not in a footer element</p></footer>`,
		`<aside><div><p>A sidebar with nested blocks that would otherwise count as running text of this page</p></div><p>more</p></aside>`,
	} {
		got := Fingerprint([]byte(wrap+para+para+para), "")
		if got.Main != base.Main {
			t.Errorf("%s: Main %016x, want %016x as without it", wrap, got.Main, base.Main)
		}
	}
	got := Fingerprint([]byte(`<div class="unavailable">`+para+`</div>`+para+para), "")
	if got.Main != base.Main {
		t.Error("a class word that merely contains a furniture word removed text")
	}
}

// BenchmarkFingerprintScripts fingerprints 20 KiB pages of text in other
// alphabets, whose letters take the character path (two and three UTF-8
// bytes a letter), under each word hash, and reports the thread's CPU
// time a page.
func BenchmarkFingerprintScripts(b *testing.B) {
	for _, tt := range []struct{ name, words string }{
		{"cyrillic", "Москва столица России крупнейший город страны политический экономический культурный научный центр находится на реке"},
		{"greek", "Η Αθήνα είναι η πρωτεύουσα και η μεγαλύτερη πόλη της Ελλάδας με μακρά ιστορία στον πολιτισμό"},
		{"chinese", "北京 是 中华人民共和国 的 首都 也是 全国 的 政治 文化 中心 和 国际 交往 中心 之一"},
	} {
		b.Run(tt.name, func(b *testing.B) {
			words := strings.Fields(tt.words)
			var sb strings.Builder
			sb.WriteString("<html><head><title>" + words[0] + "</title></head><body><p>")
			for i := 0; sb.Len() < 20<<10; i++ {
				if i%40 == 39 {
					sb.WriteString("</p>\n<p>")
				}
				sb.WriteString(words[(i*7)%len(words)] + " ")
			}
			body := []byte(sb.String() + "</p></body></html>")
			for _, w := range []WordHash{WordHashMix, WordHashFNV} {
				b.Run(w.String(), func(b *testing.B) {
					b.SetBytes(int64(len(body)))
					t := cputime.Start()
					for b.Loop() {
						w.Fingerprint(body, "http://x.test/a/b.html")
					}
					b.ReportMetric(float64(t.Elapsed().Nanoseconds())/float64(b.N), "cpu_ns_per_page")
				})
			}
		})
	}
}

func BenchmarkFingerprint(b *testing.B) {
	body := benchPage(b)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		Fingerprint(body, "http://www.site3.test:8080/news/2026/article-12.html")
	}
}

// BenchmarkFingerprintWeb fingerprints 358 pages of a simweb, the pages
// `lidi bench crawl` fetches, one after the other, and reports the
// thread's CPU time a page (cpu_ns_per_page), which a loaded machine moves
// far less than the wall time. BenchmarkFingerprint's one page, read again
// and again, is one the processor learns: its branches are predicted as
// no crawl's are, and it takes half the time a page.
func BenchmarkFingerprintWeb(b *testing.B) {
	w, err := simweb.Generate(simweb.Options{Seed: 1, Sites: 50})
	if err != nil {
		b.Fatal(err)
	}
	var bodies [][]byte
	var urls []string
	size := 0
	for p := 0; p < w.NumPages(); p += 7 {
		bodies = append(bodies, w.Render(p))
		urls = append(urls, w.URL(p))
		size += len(bodies[len(bodies)-1])
	}
	b.SetBytes(int64(size))
	t := cputime.Start()
	for b.Loop() {
		for k, body := range bodies {
			Fingerprint(body, urls[k])
		}
	}
	b.ReportMetric(float64(t.Elapsed().Nanoseconds())/float64(b.N)/float64(len(bodies)), "cpu_ns_per_page")
}

func TestBlockNames(t *testing.T) {
	for _, n := range []string{"p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
		"table", "tr", "td", "th", "br", "hr", "section", "article", "main", "header", "footer", "nav", "aside",
		"blockquote", "pre", "form", "option", "select", "title", "body", "head", "html", "figure", "figcaption", "address"} {
		if !isBlock(packName(n)) {
			t.Errorf("%s is not a block", n)
		}
	}
	for _, n := range []string{"a", "b", "span", "em", "strong", "code", "img", "i"} {
		if isBlock(packName(n)) {
			t.Errorf("%s is a block", n)
		}
	}
}

// A page that echoes its URL has one NoURL simhash whatever the URL.
func TestFingerprintNoURL(t *testing.T) {
	page := func(path string) []byte {
		return []byte("<title>Not found</title><p>Sorry, the page " + path + " does not exist on this server. Go back to the home page or try the search.</p>")
	}
	a := Fingerprint(page("/old-archive/report-2019.html"), "http://x.test/old-archive/report-2019.html")
	b := Fingerprint(page("/misc/lost/draft.htm"), "http://x.test/misc/lost/draft.htm?ref=home")
	if a.NoURL != b.NoURL {
		t.Errorf("NoURL %016x and %016x differ", a.NoURL, b.NoURL)
	}
	if a.Text == b.Text {
		t.Error("the whole texts are equal")
	}
	if c := Fingerprint(page("/x.html"), ""); c.NoURL != c.Text {
		t.Error("without a URL, NoURL is not Text")
	}
}

// TestFingerprintGolden pins every field of Fingerprint, not only Text:
// Main, NoURL and Title are stored on disk too (urls.main_simhash,
// no_url_simhash, title_hash), so a faster Fingerprint must give them bit
// for bit. The inputs are the golden pages and generated articles of every
// length that spell their own URL path, each under its URL
// (go test -update rewrites the file after a deliberate change).
func TestFingerprintGolden(t *testing.T) {
	type input struct {
		name, url string
		body      []byte
	}
	var inputs []input
	files, err := filepath.Glob("testdata/golden/*.html")
	if err != nil || len(files) < 4 {
		t.Fatalf("golden inputs: %v, %v", files, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{filepath.Base(f), "http://www.site1.test/" + filepath.Base(f), b})
	}
	s := newSite("http://www.site1.test", 1)
	for i := range 28 {
		path := fmt.Sprintf("/news/%d/story-%d.html", 2020+i%5, i)
		opt := pageOpt{noTemplate: i%2 == 0}
		if i%3 == 0 {
			opt.extra = "The page " + path + " was printed on 12 March 2024"
		}
		pg, b := s.article(path, uint64(i), []int{0, 1, 2, 3, 50, 400, 3000}[i%7], opt)
		inputs = append(inputs, input{fmt.Sprintf("article-%d", i), pg.URL, b})
	}
	// Blocks longer than Fingerprint's buffer of 1,024 words, kept and
	// in furniture, with a title of 1,100 words.
	g := newTextGen(99)
	words := func(n int) string { return strings.Join(g.text(n), " ") }
	for i, body := range []string{
		"<p>" + words(2500) + "</p><p>" + words(40) + "</p>",
		"<nav>" + words(1500) + "</nav><p>" + words(1100) + "</p>" + words(10) + "<div>" + words(1024) + "</div>",
		"<title>" + words(1100) + "</title><p>" + words(3) + "</p><p>" + words(2049) + "</p>",
	} {
		inputs = append(inputs, input{fmt.Sprintf("long-block-%d", i), "http://www.site1.test/long", []byte(body)})
	}
	for _, wh := range wordHashes {
		var buf bytes.Buffer
		for _, in := range inputs {
			fp := wh.hash.Fingerprint(in.body, in.url)
			fmt.Fprintf(&buf, "%s %016x %016x %016x %016x\n", in.name, fp.Text, fp.Main, fp.NoURL, fp.Title)
		}
		golden := goldenFile("fingerprint", wh.hash)
		if *update {
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != string(want) {
			g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
			for i := range max(len(g), len(w)) {
				if i >= len(g) || i >= len(w) || g[i] != w[i] {
					t.Errorf("%s: line %d: got %q, golden %q", golden, i+1, g[min(i, len(g)-1)], w[min(i, len(w)-1)])
					break
				}
			}
		}
	}
}

// TestFingerprintRealMirror reads real pages: entries of the Jargon File as
// www.catb.org serves them (ISO-8859-1) and as the HTTrack mirror of them
// on milosophical.me does (UTF-8, HTTrack's comments, rewritten links).
// Every pair must be a near-duplicate on both the whole text and the main
// text; entries of one site must stay apart; under either word hash.
func TestFingerprintRealMirror(t *testing.T) {
	const dir = "testdata/realweb/jargon"
	var paths []string
	err := filepath.WalkDir(filepath.Join(dir, "catb"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".html" {
			rel, _ := filepath.Rel(filepath.Join(dir, "catb"), p)
			paths = append(paths, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil || len(paths) < 20 {
		t.Fatalf("%d pages: %v", len(paths), err)
	}
	for _, w := range []WordHash{WordHashFNV, WordHashMix} {
		var originals []Fingerprints
		for _, p := range paths {
			a, errA := os.ReadFile(filepath.Join(dir, "catb", p))
			b, errB := os.ReadFile(filepath.Join(dir, "milosophical", p))
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if bytes.Equal(a, b) {
				t.Fatalf("%s: the copies are byte-equal", p)
			}
			fa := w.Fingerprint(a, "http://www.catb.org/jargon/html/"+p)
			fb := w.Fingerprint(b, "http://milosophical.me/jargon/html/"+p)
			if d := Hamming(fa.Text, fb.Text); d > DefaultMaxHamming {
				t.Errorf("%v: %s: whole texts %d bits apart", w, p, d)
			}
			if d := Hamming(fa.Main, fb.Main); d > DefaultMaxHamming {
				t.Errorf("%v: %s: main texts %d bits apart", w, p, d)
			}
			originals = append(originals, fa)
		}
		for i := range originals {
			for j := range i {
				if d := Hamming(originals[i].Text, originals[j].Text); d <= 2*DefaultMaxHamming {
					t.Errorf("%v: %s and %s: different entries %d bits apart", w, paths[i], paths[j], d)
				}
			}
		}
	}
}

// One text spelled in other encodings, with character references and with
// typographic characters for ASCII ones, has one fingerprint; a letter
// changed changes it.
func TestSimhashEncodings(t *testing.T) {
	const text = "Le café de la gare ouvre à six heures, dit-il; «voilà» l’été et l’œuvre complète."
	latin1 := func(s string) []byte { // ISO-8859-1 / Windows-1252 bytes of s
		var b []byte
		for _, r := range s {
			switch r {
			case '’':
				b = append(b, 0x92)
			case 'œ':
				b = append(b, 0x9c)
			default:
				b = append(b, byte(r))
			}
		}
		return b
	}
	base := Simhash([]byte("<p>" + text + "</p>"))
	for _, tt := range []struct {
		name string
		body []byte
		same bool
	}{
		{"Windows-1252", append(append([]byte("<p>"), latin1(text)...), "</p>"...), true},
		{"named references", []byte("<p>Le caf&eacute; de la gare ouvre &agrave; six heures, dit-il; &laquo;voil&agrave;&raquo; l&rsquo;&eacute;t&eacute; et l&rsquo;&oelig;uvre compl&egrave;te.</p>"), true},
		{"numeric references", []byte("<p>Le caf&#233; de la gare ouvre &#xE0; six heures, dit-il; &#171;voil&#224;&#187; l&#8217;&#233;t&#233; et l&#146;&#339;uvre compl&#232;te.</p>"), true},
		{"ASCII punctuation and no-break spaces", []byte("<p>Le café de la gare ouvre à\u00a0six heures, dit-il ; \"voilà\" l'été et l'œuvre complète.</p>"), true},
		{"upper case", []byte("<p>" + strings.ToUpper(text) + "</p>"), true},
		{"a letter changed", []byte("<p>" + strings.Replace(text, "café", "cafè", 1) + "</p>"), false},
	} {
		if got := Simhash(tt.body); (got == base) != tt.same {
			t.Errorf("%s: Simhash %016x, %016x for UTF-8: want equal %v", tt.name, got, base, tt.same)
		}
		if got, want := Simhash(tt.body), refSimhash(tt.body); got != want {
			t.Errorf("%s: Simhash %016x, reference %016x", tt.name, got, want)
		}
	}
}

// A not-found page that echoes a long path (more words than a short
// buffer would hold) has one NoURL simhash whatever the path.
func TestFingerprintNoURLLongPath(t *testing.T) {
	page := func(path string) []byte {
		return []byte("<title>Not found</title><p>Sorry, the page " + path + " does not exist on this server. Go back to the home page or try the search.</p>")
	}
	long := func(w string) string {
		var b strings.Builder
		for i := range 20 {
			fmt.Fprintf(&b, "/%s-section-%c", w, 'a'+i%26)
		}
		return b.String() + ".html"
	}
	a, b := long("alpha"), long("omega")
	if fa, fb := Fingerprint(page(a), "http://x.test"+a), Fingerprint(page(b), "http://x.test"+b); fa.NoURL != fb.NoURL {
		t.Errorf("NoURL %016x and %016x differ for two paths of 60 words", fa.NoURL, fb.NoURL)
	}
}
