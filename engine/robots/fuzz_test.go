package robots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzFromResponse feeds arbitrary bodies and queries through the whole
// package. In a normal `go test` only the seeds run; `go test -fuzz
// FuzzFromResponse` explores further.
func FuzzFromResponse(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join("testdata", "files", "*.txt"))
	for i, name := range names {
		if i%4 != 0 { // a sample keeps the seed run quick
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(200, data, "lidi/0.1", "/a/b?c=d")
	}
	f.Add(200, []byte("User-agent: *\nDisallow: /*a*b$\nAllow: /%e3\nCrawl-delay: 1e300\nSitemap: x y\n"), "x", "/zab")
	f.Add(200, []byte("user-agent lidi\ndisallow /\n\xff\xfe\x00junk:::\n"), "LIDI", "%2f")
	f.Add(200, []byte("\xff\xfeU\x00:\x00"), "", "")
	f.Add(503, []byte("User-agent: *\nAllow: /\n"), "lidi", "/x")
	f.Add(404, []byte(nil), "lidi", "/x")
	f.Add(0, []byte("Crawl-delay: 5\nUser-agent: a b c\nAllow: *$\nDisallow: $\n"), "a", "/")

	f.Fuzz(func(t *testing.T, status int, body []byte, agent, path string) {
		r := FromResponse(status, body)
		again := FromResponse(status, body)

		allowed := r.Allowed(agent, path)
		if again.Allowed(agent, path) != allowed {
			t.Fatal("two parses of one body disagree")
		}
		if d := r.Check(agent, path); d.Allowed != allowed || (d.Line == 0) != (d.Pattern == "") {
			t.Fatalf("Check %+v disagrees with Allowed %v", d, allowed)
		}
		if !r.Allowed(agent, "/robots.txt") {
			t.Fatal("/robots.txt disallowed")
		}
		switch {
		case status >= 200 && status <= 299:
			if r.Kind() != KindParsed {
				t.Fatalf("status %d gave %v", status, r.Kind())
			}
		case r.Kind() == KindParsed:
			t.Fatalf("status %d parsed", status)
		case r.Kind() == KindUnavailable:
			if !allowed {
				t.Fatal("unavailable robots.txt disallowed something")
			}
		default:
			if allowed && normalizePath(path) != "/robots.txt" && !strings.HasPrefix(normalizePath(path), "/robots.txt?") {
				t.Fatalf("%v allowed %q", r.Kind(), path)
			}
		}
		if d := r.CrawlDelay(agent); d < 0 || d > MaxCrawlDelay {
			t.Fatalf("crawl delay %v", d)
		}
		st := r.Stats()
		if st.Bytes > MaxBodySize*2 || st.Rules < 0 || st.Ignored > st.Lines {
			t.Fatalf("stats %+v", st)
		}
		// Hex case in escapes does not change answers.
		if r.Allowed(agent, strings.ToLower(path)) != r.Allowed(agent, upperEscapes(strings.ToLower(path))) {
			t.Fatal("escape hex case changed the answer")
		}
		for _, s := range r.Sitemaps() {
			if s == "" {
				t.Fatal("empty sitemap")
			}
		}
	})
}

// FuzzRuleMatch checks the compiled matcher against a direct reading of
// the pattern language: a set of reachable path positions advanced octet by
// octet, '*' reaching every later position, a final '$' demanding the end.
func FuzzRuleMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"/a*b$", "/aab"}, {"/a*b", "/x/a/b"}, {"*.php$", "/x.php"}, {"/a$b", "/a$b"},
		{"/**", "/"}, {"/a*$", "/abc"}, {"*$", ""}, {"/a*b*c$", "/abcbc"}, {"/%e3", "/%E3"},
		{"/ab*ab*ab$", "/abababab"}, {"/$", "/"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		ru, ok := compileRule(pattern, false, 1)
		if !ok {
			return
		}
		p := normalizePath(path)
		want := referenceMatch(normalizePattern(pattern), p)
		if got := ru.match(p); got != want {
			t.Fatalf("pattern %q path %q: match=%v, reference=%v", pattern, p, got, want)
		}
	})
}

func referenceMatch(pattern, path string) bool {
	pos := []int{0}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i == len(pattern)-1 {
			for _, p := range pos {
				if p == len(path) {
					return true
				}
			}
			return false
		}
		var next []int
		if c == '*' {
			for p := pos[0]; p <= len(path); p++ {
				next = append(next, p)
			}
		} else {
			for _, p := range pos {
				if p < len(path) && path[p] == c {
					next = append(next, p+1)
				}
			}
		}
		if len(next) == 0 {
			return false
		}
		pos = next
	}
	return true
}

func TestReferenceMatchAgreesOnExamples(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"/fish", "/fish.html", true},
		{"/fish", "/Fish", false},
		{"/*.php$", "/a/b.php", true},
		{"/*.php$", "/a/b.php?x", false},
		{"/fish*.php", "/fishheads/catfish.php?parameters", true},
		{"/a$b", "/a$bc", true},
		{"/", "/", true},
		{"/$", "/a", false},
		{"/a*b*c$", "/abcbc", true},
		{"/a*b*c$", "/abcbd", false},
	}
	for _, tt := range tests {
		ru, ok := compileRule(tt.pattern, false, 1)
		if !ok {
			t.Fatalf("%q did not compile", tt.pattern)
		}
		if got := ru.match(tt.path); got != tt.want {
			t.Errorf("match(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
		if got := referenceMatch(tt.pattern, tt.path); got != tt.want {
			t.Errorf("referenceMatch(%q, %q) = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
}
