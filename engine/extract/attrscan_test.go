package extract

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// compareAttrScan checks, for every start tag of doc, that forEachRawAttr
// finds the attributes TagAttr returns: same keys in the same order (the
// first of repeated keys), and the same values where the raw value needs
// no decoding or decodeValue decodes. It returns a description of the
// first difference.
func compareAttrScan(doc []byte) string {
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return ""
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		raw := bytes.Clone(z.Raw())
		type kv struct{ key, val string }
		var mine []kv
		seen := map[string]bool{}
		forEachRawAttr(raw, func(key, val []byte) bool {
			k := string(lowerASCII([]byte(string(key))))
			if seen[k] {
				return true
			}
			seen[k] = true
			v, ok := decodeValue(val)
			if !ok {
				v = "<decoded>"
			}
			mine = append(mine, kv{strings.ReplaceAll(k, "\x00", "\ufffd"), v})
			return true
		})
		var theirs []kv
		for {
			key, val, more := z.TagAttr()
			if key == nil {
				break
			}
			theirs = append(theirs, kv{string(key), string(val)})
			if !more {
				break
			}
		}
		if len(mine) != len(theirs) {
			return fmt.Sprintf("tag %q: scanner found %q, tokenizer %q", raw, mine, theirs)
		}
		for i := range mine {
			if mine[i].key != theirs[i].key || (mine[i].val != "<decoded>" && mine[i].val != theirs[i].val) {
				return fmt.Sprintf("tag %q: attribute %d: scanner %q, tokenizer %q", raw, i, mine[i], theirs[i])
			}
		}
	}
}

func lowerASCII(b []byte) []byte {
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

var attrScanCases = []string{
	`<a href="x" rel=nofollow class='c d'>`,
	`<A HREF=x REL="a b"/>`,
	`<a href = "x" rel = 'y' >`,
	`<a href="/two"<a href="/three">`,
	`<a =x href=y>`,
	`<a ==x href=y>`,
	`<a / href=x / >`,
	`<a href=/x/>`,
	`<a href=>`,
	`<a href= >`,
	`<a href>`,
	`<a href rel>`,
	`<a href="x" href="y" HREF=z>`,
	`<a href="a&amp;b" rel="x&#10;y">`,
	`<a href="?a=1&amp;b=2&amp;&amp" rel="&amp;amp;">`,
	`<a href="?a=1&amp=2&ampx;&AMP;">`,
	"<a href=\"a\rb\" rel='c\r\nd'>",
	"<a\thref=x\nrel=y\fid=z\r>",
	"<a hr\x00ef=x href=y>",
	"<a href=\"x\x00y\">",
	`<a href='unterminated>`,
	`<a "quoted"=x href=y>`,
	`<a x='a>b' href=c>`,
	`<a href=a"b'c>`,
	`<a/href=x>`,
	`<a/ /href=x>`,
	`<img src=x alt="a > b">`,
	`<meta http-equiv=refresh content="0; url=x">`,
	`<div <a href=x>`,
}

func TestScanAttrsMatchesTokenizer(t *testing.T) {
	for _, c := range attrScanCases {
		if diff := compareAttrScan([]byte(c)); diff != "" {
			t.Error(diff)
		}
	}
	files, _ := filepath.Glob("testdata/*.html")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if diff := compareAttrScan(b); diff != "" {
			t.Errorf("%s: %s", name, diff)
		}
	}
}

func FuzzScanAttrs(f *testing.F) {
	for _, c := range attrScanCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if diff := compareAttrScan(doc); diff != "" {
			t.Error(diff)
		}
	})
}
