package dedup

import (
	"bytes"
	"testing"
)

// FuzzSimhash checks the fingerprint on arbitrary bodies: it never panics,
// is a pure function of the bytes, is Fingerprint's Text under either word
// hash, is 0 for a body with no byte that can
// belong to a word, and no markup or reference can make two copies of a text differ.
// The seeds are in testdata/fuzz/FuzzSimhash; `go test -fuzz FuzzSimhash`
// explores further.
func FuzzSimhash(f *testing.F) {
	f.Add([]byte("<p>plain words in a paragraph</p>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		h := Simhash(body)
		if again := Simhash(bytes.Clone(body)); again != h {
			t.Fatalf("Simhash(%q) = %016x, then %016x", body, h, again)
		}
		for _, w := range []WordHash{WordHashFNV, WordHashMix} {
			if fp, s := w.Fingerprint(body, "http://x.test/a/b"), w.Simhash(body); fp.Text != s {
				t.Fatalf("%v: Fingerprint(%q).Text = %016x, Simhash %016x", w, body, fp.Text, s)
			}
		}
		// Only an ASCII letter or digit, a non-ASCII byte or a character
		// reference can be part of a word.
		words := false
		for _, c := range body {
			words = words || fold[c] != 0
		}
		if !words && h != 0 {
			t.Fatalf("Simhash(%q) = %016x for a body without word bytes, want 0", body, h)
		}
		if Hamming(h, h) != 0 || Similarity(h, h) != 1 {
			t.Fatalf("a fingerprint differs from itself")
		}
		// Prefixing a complete comment or tag changes no word.
		for _, prefix := range []string{"<!-- x -->", "<br>", "&amp;"} {
			if g := Simhash(append([]byte(prefix), body...)); g != h {
				t.Fatalf("Simhash(%q + %q) = %016x, want %016x", prefix, body, g, h)
			}
		}
	})
}

// FuzzSimhashMatchesReference checks the word reading against refSimhash's
// independent statement of it on text without markup: any bytes (UTF-8 or
// not, overlong forms, surrogates) and character references of up to 30
// bytes.
func FuzzSimhashMatchesReference(f *testing.F) {
	f.Add([]byte("caf\xe9 \xd0\x9c\xd0\xbe\xd1\x81\xd0\xba\xd0\xb2\xd0\xb0 \xe5\x8c\x97\xe4\xba\xac &eacute;&#233;&#x2019; x\xc2\xa0y"))
	f.Fuzz(func(t *testing.T, body []byte) {
		if bytes.IndexByte(body, '<') >= 0 || len(body) > 30 {
			return
		}
		for _, wh := range wordHashes {
			if got, want := wh.hash.Simhash(body), refSimhashWith(body, wh.word); got != want {
				t.Fatalf("%v: Simhash(%q) = %016x, reference %016x", wh.hash, body, got, want)
			}
		}
	})
}
