package scope

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"lidi/engine/urlnorm"
)

type allowCase struct {
	url   string
	depth int
	want  Reason
}

func checkAllow(t *testing.T, s *Scope, cases []allowCase) {
	t.Helper()
	for _, c := range cases {
		ok, r := s.Allow(c.url, c.depth)
		if r != c.want || ok != (c.want == Allowed) {
			t.Errorf("Allow(%q, %d) = %v, %v; want %v", c.url, c.depth, ok, r, c.want)
		}
	}
}

func mustNew(t *testing.T, cfg Config) *Scope {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestUnrestricted(t *testing.T) {
	s := mustNew(t, Config{Seeds: []string{"http://example.com/"}})
	checkAllow(t, s, []allowCase{
		{"http://example.com/", 0, Allowed},
		{"https://anything.example.org/x", 5, Allowed},
		{"http://10.0.0.1/", 1000, Allowed},
		{"ftp://example.com/", 0, BadURL},
		{"example.com/x", 0, BadURL},
		{"http:///x", 0, BadURL},
	})
}

func TestHosts(t *testing.T) {
	s := mustNew(t, Config{
		Seeds:        []string{"http://www.example.com/start"},
		AllowedHosts: []string{"WWW.Example.COM", "bücher.de:8080", "https://static.example.net/", "127.0.0.1", "[::1]"},
	})
	checkAllow(t, s, []allowCase{
		{"http://www.example.com/a", 0, Allowed},
		{"https://www.example.com:8443/a", 0, Allowed}, // any port
		{"http://example.com/", 0, OutOfHost},
		{"http://blog.www.example.com/", 0, OutOfHost},
		{"http://xn--bcher-kva.de/", 0, Allowed},
		{"http://static.example.net/x.css", 0, Allowed},
		{"http://127.0.0.1:8080/", 0, Allowed},
		{"http://[::1]/", 0, Allowed},
		{"http://127.0.0.2/", 0, OutOfHost},
		{"http://evil.com/?www.example.com", 0, OutOfHost},
		{"http://www.example.com@evil.com/", 0, OutOfHost},
	})
}

func TestDomains(t *testing.T) {
	s := mustNew(t, Config{
		AllowedDomains: []string{"www.example.com", ".example.org", "amazonaws.com", "cl", "co.uk", "github.io"},
	})
	checkAllow(t, s, []allowCase{
		{"http://example.com/", 0, Allowed}, // "www.example.com" means its registrable domain
		{"http://www.example.com/", 0, Allowed},
		{"http://a.b.example.com/", 0, Allowed},
		{"http://notexample.com/", 0, OutOfHost},
		{"http://example.com.evil.net/", 0, OutOfHost},
		{"http://shop.example.org/", 0, Allowed},
		{"http://example.org.uk/", 0, OutOfHost},
		{"http://amazonaws.com/", 0, Allowed},
		{"http://ec2.amazonaws.com/", 0, Allowed},
		// s3.amazonaws.com is a public suffix: the bucket is its own site.
		{"http://bucket.s3.amazonaws.com/", 0, OutOfHost},
		// Public suffixes allow everything under them.
		{"http://www.uchile.cl/", 0, Allowed},
		{"http://a.b.c.cl/", 0, Allowed},
		{"http://www.bbc.co.uk/", 0, Allowed},
		{"http://www.bbc.uk/", 0, OutOfHost},
		{"http://someone.github.io/", 0, Allowed},
		{"http://cl.example.net/", 0, OutOfHost},
		{"http://1.2.3.4/", 0, OutOfHost},
	})
}

func TestSeedHostsAndDomains(t *testing.T) {
	seeds := []string{"http://WWW.Example.com/a", "https://10.1.2.3:8443/", "http://news.example.org/"}
	hosts := mustNew(t, Config{Seeds: seeds, SeedHosts: true})
	checkAllow(t, hosts, []allowCase{
		{"http://www.example.com/b", 0, Allowed},
		{"http://example.com/", 0, OutOfHost},
		{"http://10.1.2.3/", 0, Allowed},
		{"http://news.example.org/x", 0, Allowed},
		{"http://sport.example.org/x", 0, OutOfHost},
	})
	domains := mustNew(t, Config{Seeds: seeds, SeedDomains: true})
	checkAllow(t, domains, []allowCase{
		{"http://www.example.com/b", 0, Allowed},
		{"http://example.com/", 0, Allowed},
		{"http://10.1.2.3/", 0, Allowed},
		{"http://10.1.2.4/", 0, OutOfHost},
		{"http://sport.example.org/x", 0, Allowed},
		{"http://example.net/", 0, OutOfHost},
	})
	if got := hosts.Seeds(); strings.Join(got, " ") != "http://www.example.com/a https://10.1.2.3:8443/ http://news.example.org/" {
		t.Errorf("Seeds() = %q", got)
	}
}

func TestPatternsAndDepth(t *testing.T) {
	s := mustNew(t, Config{
		Include:  []string{`^https?://[^/]+/(news|sport)/`, `\.html$`},
		Exclude:  []string{`(?i)\.(jpe?g|png|gif|pdf)$`, `[?&]page=\d{3,}`, `/calendar/`},
		MaxDepth: 3,
	})
	checkAllow(t, s, []allowCase{
		{"http://a.example/news/today", 0, Allowed},
		{"http://a.example/sport/", 3, Allowed},
		{"http://a.example/about.html", 1, Allowed},
		{"http://a.example/about", 1, NotIncluded},
		{"http://a.example/news/photo.JPG", 1, Excluded},
		{"http://a.example/news/?page=120", 1, Excluded},
		{"http://a.example/news/?page=12", 1, Allowed},
		{"http://a.example/news/calendar/2024.html", 1, Excluded},
		{"http://a.example/news/today", 4, TooDeep},
		{"not a url", 4, TooDeep}, // depth is checked first
	})
	unlimited := mustNew(t, Config{})
	checkAllow(t, unlimited, []allowCase{{"http://a.example/", 1 << 20, Allowed}})
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string // substring of the error
	}{
		{Config{Include: []string{"ok", "(unclosed"}}, `bad include pattern "(unclosed"`},
		{Config{Exclude: []string{`a{2,1}`}}, `bad exclude pattern "a{2,1}"`},
		{Config{Seeds: []string{"mailto:x@example.com"}}, `seed "mailto:x@example.com"`},
		{Config{Seeds: []string{"http://a b/"}}, `seed "http://a b/"`},
		{Config{AllowedHosts: []string{"a b"}}, `allowed host "a b"`},
		{Config{AllowedHosts: []string{"example.com/path"}}, `allowed host "example.com/path"`},
		{Config{AllowedDomains: []string{"10.0.0.1"}}, `allowed domain "10.0.0.1"`},
		{Config{AllowedDomains: []string{""}}, `allowed domain ""`},
		{Config{MaxDepth: -1}, "max depth -1"},
		{Config{Seeds: []string{"http://other.com/"}, AllowedHosts: []string{"example.com"}}, `seed "http://other.com/" is outside`},
	} {
		_, err := New(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "scope: ") {
			t.Errorf("New(%+v) error = %v, want one containing %q", c.cfg, err, c.want)
		}
	}
}

func TestSeedsUseNormalizer(t *testing.T) {
	s := mustNew(t, Config{
		Seeds:      []string{"http://example.com/?b=1&a=2&utm_source=x"},
		Normalizer: &urlnorm.Normalizer{SortQuery: true, DropParams: []string{}},
	})
	if got := s.Seeds()[0]; got != "http://example.com/?a=2&b=1&utm_source=x" {
		t.Errorf("seed = %q", got)
	}
}

func TestStatsAndConcurrency(t *testing.T) {
	s := mustNew(t, Config{AllowedDomains: []string{"example.com"}, Exclude: []string{`\.pdf$`}, MaxDepth: 2})
	urls := []allowCase{
		{"http://www.example.com/", 1, Allowed},
		{"http://other.org/", 1, OutOfHost},
		{"http://www.example.com/a.pdf", 1, Excluded},
		{"http://www.example.com/", 3, TooDeep},
		{"junk", 0, BadURL},
	}
	const workers, rounds = 4, 200
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < rounds; i++ {
				for _, c := range urls {
					if _, r := s.Allow(c.url, c.depth); r != c.want {
						panic(fmt.Sprintf("Allow(%q) = %v, want %v", c.url, r, c.want))
					}
				}
			}
		}()
	}
	wg.Wait()
	want := Stats{Allowed: workers * rounds, OutOfHost: workers * rounds, Excluded: workers * rounds,
		TooDeep: workers * rounds, BadURL: workers * rounds}
	if got := s.Stats(); got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
}

func TestReasonString(t *testing.T) {
	for r, want := range map[Reason]string{Allowed: "allowed", OutOfHost: "out-of-host", Excluded: "excluded",
		NotIncluded: "not-included", TooDeep: "too-deep", BadURL: "bad-url", Reason(99): "Reason(99)"} {
		if got := r.String(); got != want {
			t.Errorf("Reason(%d).String() = %q, want %q", r, got, want)
		}
	}
}

func BenchmarkAllowDomain(b *testing.B) {
	s, err := New(Config{AllowedDomains: []string{"example.com", "example.org"}, Exclude: []string{`\.(jpg|png|pdf)$`}})
	if err != nil {
		b.Fatal(err)
	}
	urls := []string{"https://www.example.com/news/story.html", "https://cdn.other.net/app.js", "http://blog.example.org/2024/05/"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Allow(urls[i%len(urls)], 1)
	}
}
