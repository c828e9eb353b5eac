package extract

import (
	"os"
	"path/filepath"
	"testing"

	"lidi/engine/urlnorm"
)

func FuzzLinks(f *testing.F) {
	files, err := filepath.Glob("testdata/*.html")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "text/html")
	}
	f.Add([]byte(`<base href="x"><a href="&#0;">`), "text/html; charset=shift_jis")
	f.Add([]byte("\xFE\xFF\x00<\x00a"), "text/html; charset=utf-16")
	f.Add([]byte(`<meta http-equiv=refresh content="0;url='`), "")
	page := mustURL(f, "https://www.example.com/a/b.html")
	var r Result
	f.Fuzz(func(t *testing.T, body []byte, contentType string) {
		if err := Links(body, contentType, page, &r); err != nil {
			t.Fatal(err)
		}
		for _, l := range r.Links {
			if n, err := urlnorm.Default.Normalize(l.URL); err != nil || n != l.URL {
				t.Errorf("link %q is not normalised (%q, %v)", l.URL, n, err)
			}
		}
		if n, err := urlnorm.Default.Normalize(r.Base); err != nil || n != r.Base {
			t.Errorf("base %q is not normalised (%q, %v)", r.Base, n, err)
		}
		if len(r.Title) > maxTitle {
			t.Errorf("title of %d bytes", len(r.Title))
		}
	})
}
