package extract

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/html"
)

// tokenizerTokens lists the tokens html.Tokenizer reads from doc, calling
// NextIsNotRawText after <noscript> and <noframes> as Extract does: each
// token's type, raw bytes, text, and a tag's attributes as TagAttr
// returns them.
func tokenizerTokens(doc []byte) []string {
	var out []string
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return append(out, "end")
		}
		raw := string(z.Raw())
		out = append(out, describe(tt, raw, z.Text, z))
		if notRaw(tt, raw) {
			z.NextIsNotRawText()
		}
	}
}

// scannerTokens lists the scanner's tokens as tokenizerTokens does.
func scannerTokens(doc []byte) []string {
	var out []string
	s := newScanner(doc)
	for {
		tt := s.next()
		if tt == html.ErrorToken {
			return append(out, "end")
		}
		raw := string(s.raw())
		var z *html.Tokenizer
		if tt == html.StartTagToken || tt == html.SelfClosingTagToken {
			z = s.tokenizer()
		}
		out = append(out, describe(tt, raw, s.text, z))
		if notRaw(tt, raw) {
			s.nextIsNotRawText()
		}
	}
}

// notRaw reports whether Extract reads the text after this token as
// markup: after <noscript> and <noframes>.
func notRaw(tt html.TokenType, raw string) bool {
	if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
		return false
	}
	var buf [8]byte
	n := string(tagName([]byte(raw), &buf))
	return n == "noscript" || n == "noframes"
}

func describe(tt html.TokenType, raw string, text func() []byte, z *html.Tokenizer) string {
	d := fmt.Sprintf("%v %q", tt, raw)
	switch tt {
	case html.TextToken, html.CommentToken, html.DoctypeToken:
		d += fmt.Sprintf(" text %q", text())
	case html.StartTagToken, html.SelfClosingTagToken:
		for {
			k, v, more := z.TagAttr()
			if k == nil {
				break
			}
			d += fmt.Sprintf(" %q=%q", k, v)
			if !more {
				break
			}
		}
	}
	return d
}

// scannerCases are the tokenizer's corners: where a tag, a comment or a
// raw text ends, what is self-closing, what the end of the document
// leaves.
var scannerCases = []string{
	"", "plain text", "a < b", "a <", "<", "</", "</>", "<>", "< a>", "<1>", "a<b", "a<b>c",
	"<a href=x/>", "<br/>", "<br />", "<p a=/>", `<img src="a" src="b"/>`, `<img src="a/" />`,
	"<a x y=/>", "<a x=1 X=/>", "<a =x/>", "<a x= />", "<a x=>", `<a x="y`, "<a x='y'z>", "<a\tX\n=\f'1'>",
	"<a/b/c>", "<a href=\"&amp;x=1&copy=2\">", "<A HREF=U>", "<div", "<div ", "<div x", "<div x=", "<div x=y",
	"</div", "</div x='>", "</ div>", "</1>", "</a b=c>", "<!---->", "<!-->", "<!--->", "<!-- a -- b -->", "<!--x--!>",
	"<!--x", "<!doctype html>", "<!DOCTYPE", "<?xml version=1?>", "<![CDATA[x]]>", "<!x>",
	"<script>a<b</script>c", "<script><!--<script></script>--></script><a href=x>", "<SCRIPT>x</Script >",
	"<script/>x</script>", "<style>a{}</style>", "<title>a&amp;b</title>", "<title></title>", "<title><title></title>",
	"<textarea><a href=x></textarea>", "<plaintext><a href=x>", "<xmp></xmp>", "<iframe src=x><a></iframe>",
	"<noembed><a href=x></noembed>", "<noscript><a href=x></noscript>", "<noframes><a href=x>", "<noscript>",
	"<script>", "<title>x", "<a href=x>\x00<b>", "x\r\ny<p>", "<p>caf\xc3\xa9</p>", "<a\x00b=c>", "<k\u212a=1 K=/>",
	"<!--!", "<!---", "<!--x-", "<!--x--", "<!--x--!", "<!", "<!>", "<!-", "<!doc", "<!DOCTYPE ", "<!doctype\thtml x>",
	"<!--a\x00b\r\nc-->", "<?a\x00?>", "</ a\x00>", "<title>a\x00&lt;\rb</title>", "<style>\x00&lt;</style>",
	"<script><!--</script>", "<script><!--<script>x</script>y</script>z", "<script><!--<script>--></script>",
	"<script><!--<scriptx></script>", "<script><!--<SCRIPT/>--!></script>", "<script><!--a-->b</script>",
	"<script><!-x</script>", "<script></scrip></script >", "<script></script", "<script>x</SCRIPT/", "<script><!--<",
	"<script><!--<script></", "<script><!--<script></script", "<textarea></textarea", "<title>a</titlex></title>",
}

func TestScannerMatchesTokenizer(t *testing.T) {
	docs := map[string][]byte{}
	for i, c := range scannerCases {
		docs[fmt.Sprintf("case %d", i)] = []byte(c)
	}
	files, _ := filepath.Glob("testdata/*.html")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = b
	}
	if len(files) < 3 {
		t.Fatalf("%d test pages", len(files))
	}
	for name, doc := range docs {
		want, got := tokenizerTokens(doc), scannerTokens(doc)
		for i := range max(len(want), len(got)) {
			var w, g string
			if i < len(want) {
				w = want[i]
			}
			if i < len(got) {
				g = got[i]
			}
			if w != g {
				t.Errorf("%s (%q): token %d:\n got %s\nwant %s", name, truncate(doc), i, g, w)
				break
			}
		}
	}
}

func truncate(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "…"
	}
	return string(b)
}

func FuzzScanner(f *testing.F) {
	for _, c := range scannerCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		want, got := tokenizerTokens(doc), scannerTokens(doc)
		if len(want) != len(got) {
			t.Fatalf("%d tokens, want %d:\n got %q\nwant %q", len(got), len(want), got, want)
		}
		for i := range want {
			if want[i] != got[i] {
				t.Fatalf("token %d:\n got %s\nwant %s", i, got[i], want[i])
			}
		}
	})
}
