package extract

import (
	"errors"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"lidi/engine/urlnorm"
)

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestFixtures(t *testing.T) {
	const page = "http://www.example.com/dir/page.html"
	for _, c := range []struct {
		file        string
		contentType string
		want        Result
	}{
		{
			file: "base.html", contentType: "text/html",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/dir/sub/dir/before-base.html"},
					{URL: "http://www.example.com/dir/sub/dir/page.html"},
					{URL: "http://www.example.com/dir/sub/up.html"},
					{URL: "http://www.example.com/root.html"},
					{URL: "http://www.example.com/dir/sub/dir/?q=1"},
				},
				Base:    "http://www.example.com/dir/sub/dir/",
				Title:   "Base test",
				Charset: "utf-8",
			},
		},
		{
			file: "relative.html", contentType: "text/html",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/dir/a.html"},
					{URL: "http://www.example.com/dir/unquoted.html"},
					{URL: "http://www.example.com/dir/single.html"},
					{URL: "http://www.example.com/dir/spaced.html"},
					{URL: "http://www.example.com/dir/search?a=1&b=2&c=%3C3%3E"},
					{URL: "http://www.example.com/dir/search?x=1&y=2"},
					{URL: "http://www.example.com/hex/dec.html"},
					{URL: "http://www.example.com/sibling/"},
					{URL: "http://cdn.example.net/lib.js"},
					{URL: "https://other.example.org/x"},
					{URL: "http://www.example.com/dir/page.html"},
					{URL: "http://www.example.com/dir/page.html"},
					{URL: "http://www.example.com/dir/caf%C3%A9%20menu.html?q=cr%C3%A8me%20br%C3%BBl%C3%A9e"},
					{URL: "http://www.example.com/dir/a%2Fb/c%2Fd"},
					{URL: "http://www.example.com/x?id=9"},
					{URL: "http://www.example.com/dir/page.html"},
					{URL: "http://www.example.com/dir/map.html", Kind: KindArea},
					{URL: "http://www.example.com/dir/in-noscript.html"},
				},
				Base:    page,
				Title:   "Relative links & entities",
				Charset: "utf-8",
			},
		},
		{
			file: "nofollow.html", contentType: "text/html; charset=utf-8",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/plain"},
					{URL: "http://www.example.com/nf", NoFollow: true},
					{URL: "http://www.example.com/nf2", NoFollow: true},
					{URL: "http://www.example.com/nf3", NoFollow: true},
					{URL: "http://www.example.com/not"},
					{URL: "http://www.example.com/ugc"},
					{URL: "http://www.example.com/area-nf", Kind: KindArea, NoFollow: true},
					{URL: "http://www.example.com/area", Kind: KindArea},
				},
				Base:    page,
				Charset: "utf-8",
			},
		},
		{
			file: "frames.html", contentType: "text/html",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/dir/menu.html", Kind: KindFrame},
					{URL: "http://www.example.com/content/main.html", Kind: KindFrame},
					{URL: "http://www.example.com/dir/noframes.html"},
					{URL: "https://ads.example.net/frame?id=1", Kind: KindIFrame},
				},
				Base:    page,
				Title:   "Frames",
				Charset: "utf-8",
			},
		},
		{
			file: "canonical.html", contentType: "text/html",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/article?id=7", Kind: KindCanonical},
					{URL: "http://www.example.com/second-canonical-is-ignored", Kind: KindCanonical},
					{URL: "http://www.example.com/next"},
				},
				Canonical:  "http://www.example.com/article?id=7",
				MetaRobots: "noindex, NOFOLLOW, noarchive",
				Base:       page,
				Charset:    "utf-8",
			},
		},
		{
			file: "refresh.html", contentType: "text/html",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/moved/here.html", Kind: KindRefresh},
					{URL: "http://www.example.com/second-is-ignored", Kind: KindRefresh},
				},
				Refresh: "http://www.example.com/moved/here.html",
				Base:    page,
				Title:   "Refresh",
				Charset: "utf-8",
			},
		},
		{
			file: "skip.html", contentType: "text/html",
			want: Result{
				Links:   []Link{{URL: "http://www.example.com/good"}},
				Base:    page,
				Charset: "utf-8",
				Skipped: 6,
				Invalid: 3,
			},
		},
		{
			// Charset from <meta http-equiv="Content-Type">.
			file: "latin1.html", contentType: "text/html",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/caf%C3%A9.html"},
					{URL: "http://www.example.com/na%C3%AFve?q=%C3%A0%20la%20carte"},
				},
				Base:    page,
				Title:   "Café – €uro",
				Charset: "windows-1252",
			},
		},
		{
			// No declaration, not UTF-8: windows-1252.
			file: "latin1-nometa.html", contentType: "text/html",
			want: Result{
				Links:   []Link{{URL: "http://www.example.com/stra%C3%9Fe"}},
				Base:    page,
				Title:   "Straße für Ärzte",
				Charset: "windows-1252",
			},
		},
		{
			// The header wins over the default; ISO-8859-1 means
			// windows-1252 in the Encoding Standard.
			file: "latin1-nometa.html", contentType: `text/html; charset="ISO-8859-1"`,
			want: Result{
				Links:   []Link{{URL: "http://www.example.com/stra%C3%9Fe"}},
				Base:    page,
				Title:   "Straße für Ärzte",
				Charset: "windows-1252",
			},
		},
		{
			file: "sjis.html", contentType: "text/html",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/%E6%97%A5%E6%9C%AC%E8%AA%9E/%E3%83%9A%E3%83%BC%E3%82%B8.html"},
					{URL: "http://www.example.com/ascii.html"},
				},
				Base:    page,
				Title:   "日本語のページ",
				Charset: "shift_jis",
			},
		},
		{
			// A wrong header charset loses to nothing but a BOM; here the
			// header is right and the meta agrees.
			file: "sjis.html", contentType: "text/html; charset=Shift_JIS",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/%E6%97%A5%E6%9C%AC%E8%AA%9E/%E3%83%9A%E3%83%BC%E3%82%B8.html"},
					{URL: "http://www.example.com/ascii.html"},
				},
				Base:    page,
				Title:   "日本語のページ",
				Charset: "shift_jis",
			},
		},
		{
			// The byte order mark beats a wrong header.
			file: "utf16le.html", contentType: "text/html; charset=iso-8859-2",
			want: Result{
				Links:   []Link{{URL: "http://www.example.com/%C3%BCber"}},
				Base:    page,
				Title:   "UTF-16 über",
				Charset: "utf-16le",
			},
		},
		{
			// Parsed as browsers do: "/two" is followed by a bogus attribute
			// named "<a" (and its href is a duplicate, dropped); "<div <a"
			// is a div; NUL becomes U+FFFD; the unterminated quote runs to
			// the end of the file, so the last tags are never emitted.
			file: "malformed.html", contentType: "text/html",
			want: Result{
				Links: []Link{
					{URL: "http://www.example.com/one"},
					{URL: "http://www.example.com/two"},
					{URL: "http://www.example.com/four"},
					{URL: "http://www.example.com/six"},
					{URL: "http://www.example.com/se%EF%BF%BDven"},
				},
				Base:    page,
				Title:   "Malformed",
				Charset: "windows-1252",
			},
		},
	} {
		t.Run(c.file, func(t *testing.T) {
			var got Result
			if err := Links(readFixture(t, c.file), c.contentType, mustURL(t, page), &got); err != nil {
				t.Fatal(err)
			}
			if got.Links == nil {
				got.Links = []Link{}
			}
			if c.want.Links == nil {
				c.want.Links = []Link{}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%+v\nwant\n%+v", got, c.want)
				for i := 0; i < max(len(got.Links), len(c.want.Links)); i++ {
					var g, w Link
					if i < len(got.Links) {
						g = got.Links[i]
					}
					if i < len(c.want.Links) {
						w = c.want.Links[i]
					}
					if g != w {
						t.Errorf("link %d: got %+v, want %+v", i, g, w)
					}
				}
			}
			for _, l := range got.Links {
				if n, err := urlnorm.Default.Normalize(l.URL); err != nil || n != l.URL {
					t.Errorf("link %q is not normalised (%q, %v)", l.URL, n, err)
				}
			}
		})
	}
}

func TestRefreshURL(t *testing.T) {
	for _, c := range []struct {
		content string
		want    string
		ok      bool
	}{
		{"5; url=/next", "/next", true},
		{"5;URL=/next", "/next", true},
		{"0;url='http://x.example/y'", "http://x.example/y", true},
		{`3, url="a b"`, "a b", true},
		{`3; url="unterminated`, "unterminated", true},
		{"0; http://x.example/", "http://x.example/", true},
		{"0 http://x.example/", "http://x.example/", true},
		{"  1 ; Url = next.html", "next.html", true},
		{"1.5; url=frac.html", "frac.html", true},
		{".5; url=dot.html", "dot.html", true},
		{"0; urn:x", "urn:x", true},                 // "ur" then not "l": the whole rest is the URL
		{"0; url next.html", "url next.html", true}, // "url" without "=": likewise
		{"10", "", false},
		{"10;", "", false},
		{"", "", false},
		{"abc; url=x", "", false},
		{"5x; url=x", "", false},
		{"5; url=", "", false},
		{"5; url=''", "", false},
	} {
		got, ok := refreshURL([]byte(c.content))
		if got != c.want || ok != c.ok {
			t.Errorf("refreshURL(%q) = %q, %v; want %q, %v", c.content, got, ok, c.want, c.ok)
		}
	}
}

func TestHeaderCharset(t *testing.T) {
	for ct, want := range map[string]string{
		"text/html":                            "",
		"text/html; charset=utf-8":             "utf-8",
		"text/html;charset=Shift_JIS":          "Shift_JIS",
		`text/html; charset="windows-1252"`:    "windows-1252",
		"text/html; foo=bar; charset = koi8-r": "koi8-r",
		"text/html; charsetx=utf-8":            "",
		"text/html; charset=utf-8; q=1":        "utf-8",
	} {
		if got := headerCharset(ct); got != want {
			t.Errorf("headerCharset(%q) = %q, want %q", ct, got, want)
		}
	}
}

func TestExtractorOptions(t *testing.T) {
	page := mustURL(t, "https://example.com/")
	body := []byte(`<meta name="lidi" content="noindex"><meta name="robots" content="nofollow">` +
		`<a href="/1?b=2&a=1">1</a><a href="/2?utm_source=x">2</a><a href="/3">3</a>`)
	e := &Extractor{
		Normalizer:  &urlnorm.Normalizer{SortQuery: true, DropParams: []string{}},
		MaxLinks:    2,
		RobotsNames: []string{"robots", "LIDI"},
	}
	var r Result
	if err := e.Extract(body, "", page, &r); err != nil {
		t.Fatal(err)
	}
	want := []Link{{URL: "https://example.com/1?a=1&b=2"}, {URL: "https://example.com/2?utm_source=x"}}
	if !reflect.DeepEqual(r.Links, want) || !r.Truncated {
		t.Errorf("links %+v truncated %v; want %+v, true", r.Links, r.Truncated, want)
	}
	if r.MetaRobots != "noindex, nofollow" {
		t.Errorf("MetaRobots = %q", r.MetaRobots)
	}
	unlimited := &Extractor{MaxLinks: -1}
	if err := unlimited.Extract([]byte(strings.Repeat(`<a href="x">`, DefaultMaxLinks+5)), "", page, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Links) != DefaultMaxLinks+5 || r.Truncated {
		t.Errorf("unlimited: %d links, truncated %v", len(r.Links), r.Truncated)
	}
	if err := Links([]byte(strings.Repeat(`<a href="x">`, DefaultMaxLinks+5)), "", page, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Links) != DefaultMaxLinks || !r.Truncated {
		t.Errorf("default cap: %d links, truncated %v", len(r.Links), r.Truncated)
	}
}

func TestBadPageURL(t *testing.T) {
	var r Result
	for _, page := range []*url.URL{nil, mustURL(t, "ftp://example.com/"), mustURL(t, "/relative")} {
		if err := Links([]byte(`<a href="http://a.example/">`), "", page, &r); !errors.Is(err, ErrBase) {
			t.Errorf("page %v: error %v, want ErrBase", page, err)
		}
		if len(r.Links) != 0 {
			t.Errorf("page %v: links %v", page, r.Links)
		}
	}
}

func TestBaseEdgeCases(t *testing.T) {
	page := mustURL(t, "https://example.com/a/b.html")
	for _, c := range []struct {
		html, base, link string
	}{
		{`<base href="javascript:x"><a href="c">`, "https://example.com/a/b.html", "https://example.com/a/c"},
		{`<base href="http://[bad"><a href="c">`, "https://example.com/a/b.html", "https://example.com/a/c"},
		{`<base><base href="/x/"><a href="c">`, "https://example.com/x/", "https://example.com/x/c"},
		{`<base href="//cdn.example.net/"><a href="c">`, "https://cdn.example.net/", "https://cdn.example.net/c"},
		{`<BASE HREF="../z/"><a href="c">`, "https://example.com/z/", "https://example.com/z/c"},
	} {
		var r Result
		if err := Links([]byte(c.html), "", page, &r); err != nil {
			t.Fatal(err)
		}
		if r.Base != c.base || len(r.Links) != 1 || r.Links[0].URL != c.link {
			t.Errorf("%s: base %q links %+v; want base %q link %q", c.html, r.Base, r.Links, c.base, c.link)
		}
	}
}

func TestHugeAttribute(t *testing.T) {
	page := mustURL(t, "https://example.com/")
	huge := strings.Repeat("x", 4<<20)
	body := []byte(`<a href="/before">b</a><div data-x="` + huge + `"></div><a href="/` + huge + `">h</a><a href="/after">a</a>`)
	var r Result
	if err := Links(body, "text/html", page, &r); err != nil {
		t.Fatal(err)
	}
	want := []Link{{URL: "https://example.com/before"}, {URL: "https://example.com/after"}}
	if !reflect.DeepEqual(r.Links, want) || r.Invalid != 1 {
		t.Errorf("links %+v invalid %d; want %+v and 1 invalid (too long)", r.Links, r.Invalid, want)
	}
}

func TestResultReuse(t *testing.T) {
	page := mustURL(t, "https://example.com/")
	var r Result
	if err := Links([]byte(`<title>One</title><a href="/1"><a href="/2"><link rel=canonical href="/c">`), "", page, &r); err != nil {
		t.Fatal(err)
	}
	first := &r.Links[0]
	if err := Links([]byte(`<a href="/3">`), "", page, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Links) != 1 || r.Links[0].URL != "https://example.com/3" || r.Title != "" || r.Canonical != "" {
		t.Errorf("reused result: %+v", r)
	}
	if &r.Links[0] != first {
		t.Error("Links slice was not reused")
	}
	if full := r.Links[:cap(r.Links)]; full[1] != (Link{}) || full[2] != (Link{}) {
		t.Error("stale links left in the reused slice")
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindA: "a", KindArea: "area", KindFrame: "frame", KindIFrame: "iframe",
		KindRefresh: "refresh", KindCanonical: "canonical", Kind(42): "Kind(42)"} {
		if got := k.String(); got != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

func TestDecodeFastPath(t *testing.T) {
	for _, c := range []struct {
		body, contentType, name string
		copied                  bool
	}{
		{"<p>h\xc3\xa9</p>", "text/html; charset=utf-8", "utf-8", false},
		{"<p>h\xc3\xa9</p>", "text/html", "utf-8", false},                          // valid UTF-8, undeclared
		{"<p>h\xe9</p>", "text/html; charset=UTF-8", "utf-8", false},               // declared: read as UTF-8 even when not
		{"<p>plain</p>", "text/html; charset=windows-1252", "windows-1252", false}, // ASCII: nothing to decode
		{"<p>plain</p>", "text/html; charset=shift_jis", "shift_jis", false},
		{"<p>h\xe9</p>", "text/html; charset=windows-1252", "windows-1252", true},
		{"<p>h\xe9</p>", "text/html", "windows-1252", true},
		{"<p>\x1b$B$\"\x1b(B</p>", "text/html; charset=iso-2022-jp", "iso-2022-jp", true}, // not ASCII-compatible
		{"<p>x</p>", "text/html; charset=nonsense", "utf-8", false},                       // unknown label ignored
		{"<meta charset=utf-16><p>x</p>", "", "utf-8", false},                             // a meta cannot mean UTF-16
	} {
		in := []byte(c.body)
		out, name := decode(in, c.contentType)
		if name != c.name {
			t.Errorf("decode(%q, %q): encoding %q, want %q", c.body, c.contentType, name, c.name)
		}
		if copied := &out[0] != &in[0]; copied != c.copied {
			t.Errorf("decode(%q, %q): copied = %v, want %v", c.body, c.contentType, copied, c.copied)
		}
	}
}

// TestResultOwnsItsStrings checks that nothing Extract returns shares the
// page's bytes, which the values it reads while extracting do (tagAttrs):
// a body overwritten afterwards leaves the result as it was.
func TestResultOwnsItsStrings(t *testing.T) {
	page := mustURL(t, "https://www.example.com/a/b.html")
	for _, name := range []string{"bench.html", "base.html", "canonical.html", "frames.html", "refresh.html", "nofollow.html", "realweb-stanford.html", "latin1.html"} {
		body := readFixture(t, name)
		var r Result
		if err := Links(body, "text/html", page, &r); err != nil {
			t.Fatal(err)
		}
		want := r
		want.Links = slices.Clone(r.Links)
		for i := range want.Links {
			want.Links[i].URL = strings.Clone(want.Links[i].URL)
		}
		for _, f := range []*string{&want.Canonical, &want.OGURL, &want.MirroredFrom, &want.MetaRobots, &want.Refresh, &want.Base, &want.Title, &want.Charset} {
			*f = strings.Clone(*f)
		}
		for i := range body {
			body[i] = 'x'
		}
		if !reflect.DeepEqual(r, want) {
			t.Errorf("%s: the result changed with the body:\n%+v\nwant\n%+v", name, r, want)
		}
	}
}

// TestExtractAllocs bounds Extract's allocations on the benchmark page
// (51 links): one string for each link resolved, and a few for the page.
// Copying every attribute value read, every tag name and the charset
// label took 186.
func TestExtractAllocs(t *testing.T) {
	body := readFixture(t, "bench.html")
	page := mustURL(t, "https://www.example.com/news/2024/05/a-day-on-the-web.html")
	var r Result
	allocs := testing.AllocsPerRun(20, func() {
		if err := Links(body, "text/html; charset=utf-8", page, &r); err != nil {
			t.Fatal(err)
		}
	})
	if limit := float64(len(r.Links)) + 40; allocs > limit {
		t.Errorf("%.0f allocations for %d links, want at most %.0f", allocs, len(r.Links), limit)
	}
}
