package dedup

import (
	"fmt"
	"hash/crc64"
	"math/rand/v2"
	"strings"

	"lidi/engine/urlnorm"
)

// The tests build pages the way real sites do: a site template (style,
// script, header navigation, sidebar, footer) around body text drawn from
// a pseudo-English vocabulary with Zipf word frequencies.

var crcTable = crc64.MakeTable(crc64.ECMA)

// digest is a content digest as a crawl file's are (CRC-64 ECMA, record.DigestCRC64's): the detector compares them only for equality.
func digest(body []byte) uint64 { return crc64.Checksum(body, crcTable) }

// testVocab is 6,000 distinct pronounceable words; the first are the
// function words that dominate real text.
var testVocab = func() []string {
	words := strings.Fields("the of and to a in is that for it as was with be by on not he this are or his from at which but have an had they you were their one all we can her has there been if more when will would who so no she")
	seen := map[string]bool{}
	for _, w := range words {
		seen[w] = true
	}
	on := strings.Fields("b c d f g h j k l m n p r s t v w z ch sh th st tr br pl gr cl")
	vo := strings.Fields("a e i o u ai ea ou io y")
	co := []string{"", "", "", "n", "r", "s", "l", "t", "m", "nd", "st", "ck", "nt", "ng"}
	r := rand.New(rand.NewPCG(1, 2))
	for len(words) < 6000 {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteString(on[r.IntN(len(on))])
			b.WriteString(vo[r.IntN(len(vo))])
		}
		b.WriteString(co[r.IntN(len(co))])
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}()

// textGen draws words with Zipf frequencies (exponent 1.05), as in natural
// language.
type textGen struct {
	r *rand.Rand
	z *rand.Zipf
}

func newTextGen(seed uint64) *textGen {
	r := rand.New(rand.NewPCG(seed, 0x6c696469))
	return &textGen{r: r, z: rand.NewZipf(r, 1.05, 1, uint64(len(testVocab)-1))}
}

func (g *textGen) word() string { return testVocab[g.z.Uint64()] }

// text returns n words cut into capitalised sentences.
func (g *textGen) text(n int) []string {
	out := make([]string, n)
	left := 0
	for i := range out {
		w := g.word()
		if left == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
			left = 6 + g.r.IntN(15)
		}
		left--
		if left == 0 || i == n-1 {
			w += "."
		}
		out[i] = w
	}
	return out
}

// title returns a capitalised title of 2 to 6 words.
func (g *textGen) title() string {
	ws := make([]string, 2+g.r.IntN(5))
	for i := range ws {
		w := testVocab[50+g.r.IntN(3000)]
		ws[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(ws, " ")
}

// site is a site template: its name, navigation, sidebar and footer.
type site struct {
	origin  string // "http://www.site3.test:8080"
	name    string
	nav     []string
	sidebar []string // recent posts
	tagline string
}

func newSite(origin string, seed uint64) *site {
	g := newTextGen(seed)
	s := &site{origin: origin, name: g.title()}
	for range 7 {
		s.nav = append(s.nav, g.title())
	}
	for range 8 {
		s.sidebar = append(s.sidebar, g.title())
	}
	s.tagline = strings.Join(g.text(12), " ")
	return s
}

// pageOpt varies how a page is rendered.
type pageOpt struct {
	noTemplate bool   // printer-friendly: no navigation, sidebar or footer
	linkQuery  string // appended to every link (session ids)
	extra      string // text added at the top of the body
}

// render returns the HTML of a page of s with a title and paragraphs of
// words.
func (s *site) render(path, title string, words []string, opt pageOpt) []byte {
	var b strings.Builder
	link := func(href, text string) {
		fmt.Fprintf(&b, `<a href="%s%s%s">%s</a>`, s.origin, href, opt.linkQuery, text)
	}
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s - %s</title>\n", title, s.name)
	b.WriteString("<style>\nbody { font-family: Georgia, serif; margin: 0 auto; max-width: 60em }\n#nav a { padding: 0 1em; color: #336 }\n.sidebar li { list-style: none }\n</style>\n")
	fmt.Fprintf(&b, "<script>\nwindow.dataLayer = window.dataLayer || []; function track(page) { dataLayer.push({event: 'view', page: page, path: %q}); }\n</script>\n</head>\n<body>\n", path)
	if !opt.noTemplate {
		b.WriteString("<div id=\"nav\">")
		link("/", s.name)
		for i, n := range s.nav {
			b.WriteString(" &middot; ")
			link(fmt.Sprintf("/section-%d/", i), n)
		}
		b.WriteString("</div>\n")
	}
	fmt.Fprintf(&b, "<h1>%s</h1>\n", title)
	if opt.extra != "" {
		fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", opt.extra)
	}
	for len(words) > 0 {
		n := min(len(words), 60+len(words)%70)
		b.WriteString("<p>")
		b.WriteString(strings.Join(words[:n], " "))
		b.WriteString("</p>\n")
		words = words[n:]
	}
	if !opt.noTemplate {
		b.WriteString("<div class=\"sidebar\"><h3>Recent posts</h3><ul>\n")
		for i, t := range s.sidebar {
			b.WriteString("<li>")
			link(fmt.Sprintf("/posts/%d.html", 100+i), t)
			b.WriteString("</li>\n")
		}
		b.WriteString("</ul></div>\n<div id=\"footer\">")
		fmt.Fprintf(&b, "%s &copy; 2026 %s. ", s.tagline, s.name)
		link("/privacy.html", "Privacy policy")
		b.WriteString(" | ")
		link("/terms.html", "Terms of use")
		b.WriteString("</div>\n")
	}
	b.WriteString("<script>track(location.pathname);</script>\n</body>\n</html>\n")
	return []byte(b.String())
}

// article renders a page of s at path with n words of its own text (seeded
// by seed) and returns it as an observed Page.
func (s *site) article(path string, seed uint64, n int, opt pageOpt) (Page, []byte) {
	g := newTextGen(seed)
	body := s.render(path, g.title(), g.text(n), opt)
	return pageOf(s.origin+path, body), body
}

// pageOf returns the Page the crawler would give the detector for a body
// fetched at a normalised URL.
func pageOf(url string, body []byte) Page {
	f := Fingerprint(body, url)
	return Page{ID: urlnorm.Fingerprint(url), URL: url, Digest: digest(body), Simhash: f.Text, Main: f.Main, NoURL: f.NoURL, Title: f.Title, Status: 200}
}
