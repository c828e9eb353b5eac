package simweb

import (
	"bytes"
	"strings"
	"testing"

	"github.com/temoto/robotstxt"

	rfc9309 "lidi/engine/robots"
)

func TestMatchRobotsPattern(t *testing.T) {
	// The examples of RFC 9309 section 2.2.3 and Google's documentation.
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{"/fish", []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
			[]string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"}},
		{"/fish*", []string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads"}, []string{"/Fish.asp", "/catfish"}},
		{"/fish/", []string{"/fish/", "/fish/?id=anything", "/fish/salmon.htm"}, []string{"/fish", "/fish.html", "/Fish/Salmon.asp"}},
		{"/*.php", []string{"/index.php", "/filename.php", "/folder/filename.php", "/folder/filename.php?parameters", "/folder/any.php.file.html", "/filename.php/"},
			[]string{"/", "/windows.PHP"}},
		{"/*.php$", []string{"/filename.php", "/folder/filename.php"},
			[]string{"/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"}},
		{"/fish*.php", []string{"/fish.php", "/fishheads/catfish.php?parameters"}, []string{"/Fish.PHP"}},
		{"/", []string{"/", "/anything"}, nil},
		{"/$", []string{"/"}, []string{"/page.htm"}},
		{"/*", []string{"/", "/x"}, nil},
		{"/a*b*c$", []string{"/abc", "/a-b-c", "/aXbYbZc"}, []string{"/abcd", "/ac"}},
		{"/*/news-1f/", []string{"/x/news-1f/", "/x/y/news-1f/z.html"}, []string{"/news-1f/"}},
		{"/*?", []string{"/a?b", "/?"}, []string{"/a"}},
	}
	for _, tt := range tests {
		for _, p := range tt.match {
			if !matchRobotsPattern(tt.pattern, p) {
				t.Errorf("%q should match %q", tt.pattern, p)
			}
		}
		for _, p := range tt.noMatch {
			if matchRobotsPattern(tt.pattern, p) {
				t.Errorf("%q should not match %q", tt.pattern, p)
			}
		}
	}
}

func TestRobotsPrecedence(t *testing.T) {
	tests := []struct {
		rules      []robotsRule
		path       string
		disallowed bool
	}{
		{[]robotsRule{{true, "/p"}, {false, "/"}}, "/page", false},
		{[]robotsRule{{true, "/folder"}, {false, "/folder"}}, "/folder/page", false}, // tie: allow
		{[]robotsRule{{false, "/folder"}, {true, "/folder"}}, "/folder/page", false},
		{[]robotsRule{{true, "/page"}, {false, "/*.htm"}}, "/page.htm", true},
		{[]robotsRule{{true, "/$"}, {false, "/"}}, "/", false},
		{[]robotsRule{{true, "/$"}, {false, "/"}}, "/page.htm", true},
		{[]robotsRule{{false, "/d/"}, {true, "/d/e/"}}, "/d/e/f.html", false},
		{[]robotsRule{{false, "/d/"}, {true, "/d/e/"}}, "/d/x.html", true},
		{[]robotsRule{{false, "/d/"}, {true, "/d/$"}}, "/d/", false},
		{[]robotsRule{{false, "/"}}, "/robots.txt", false},
		{nil, "/anything", false},
	}
	for _, tt := range tests {
		rb := robots{kind: RobotsDisallow, rules: tt.rules}
		if got := rb.disallowed(tt.path); got != tt.disallowed {
			t.Errorf("rules %v, path %q: disallowed = %v", tt.rules, tt.path, got)
		}
	}
	rb := robots{kind: RobotsServerError}
	if !rb.disallowed("/") || rb.disallowed("/robots.txt") {
		t.Error("a robots.txt answering 5xx must disallow everything but itself")
	}
}

// TestRobotsVariety checks that a web has every kind of robots.txt, that
// each kind does what it says, and that an independent parser
// (github.com/temoto/robotstxt) and lidi's own RFC 9309 parser, which
// ends a group only at Allow or Disallow lines, read every generated file
// the same way as the ground truth.
func TestRobotsVariety(t *testing.T) {
	w := testWeb(t, midWeb)
	kinds := w.Stats().RobotsKinds
	for k := range numRobotsKinds {
		if kinds[k] == 0 {
			t.Errorf("no site with robots kind %v", k)
		}
	}
	t.Logf("robots kinds: %v", kinds)
	var sawOtherGroup, sawLower, sawCRLF, sawOverride, sawWildcardHit bool
	for s := range w.NumSites() {
		site := w.Site(s)
		status, body := w.RobotsTxt(s)
		parsed, err := robotstxt.FromStatusAndBytes(status, body)
		if err != nil {
			t.Fatalf("site %d: robotstxt: %v", s, err)
		}
		rfc := rfc9309.FromResponse(status, body)
		allowed, disallowed := 0, 0
		for p := site.HomePage; p < site.HomePage+site.Pages; p++ {
			pg := w.Page(p)
			if ours := rfc.Allowed("lidi", pg.Path); pg.Disallowed == ours {
				t.Fatalf("site %d (%v) page %q: ground truth disallowed=%v, RFC 9309 allows=%v\n%s",
					s, site.Robots, pg.Path, pg.Disallowed, ours, body)
			}
			if theirs := parsed.TestAgent(pg.Path, "lidi"); pg.Disallowed == theirs {
				t.Fatalf("site %d (%v) page %q: ground truth disallowed=%v, robotstxt allows=%v\n%s",
					s, site.Robots, pg.Path, pg.Disallowed, theirs, body)
			}
			if pg.Disallowed {
				disallowed++
				continue
			}
			allowed++
			if pg.Parent >= 0 && w.Page(pg.Parent).Disallowed {
				sawOverride = true
			}
			if site.Robots == RobotsWildcard && strings.HasSuffix(pg.Path, ".php") {
				t.Errorf("site %d: %q allowed despite /*.php$", s, pg.Path)
			}
		}
		if site.Robots == RobotsWildcard && disallowed > 0 {
			sawWildcardHit = true
		}
		text := string(body)
		sawOtherGroup = sawOtherGroup || strings.Count(strings.ToLower(text), "user-agent:") > 1
		sawLower = sawLower || strings.Contains(text, "user-agent: *")
		sawCRLF = sawCRLF || strings.Contains(text, "\r\n")
		switch site.Robots {
		case RobotsMissing:
			if status != 404 || disallowed != 0 {
				t.Errorf("site %d missing robots: status %d, %d disallowed", s, status, disallowed)
			}
		case RobotsEmpty:
			if status != 200 || disallowed != 0 {
				t.Errorf("site %d empty robots: status %d, %d disallowed", s, status, disallowed)
			}
		case RobotsServerError:
			if status < 500 || allowed != 0 {
				t.Errorf("site %d 5xx robots: status %d, %d allowed", s, status, allowed)
			}
			if site.Popularity < protectedSeeds {
				t.Errorf("seed site %d has a 5xx robots.txt", s)
			}
		case RobotsDisallowAll:
			if !bytes.Contains(bytes.ToLower(body), []byte("disallow: /\n")) && !bytes.Contains(bytes.ToLower(body), []byte("disallow: /\r\n")) || allowed != 0 {
				t.Errorf("site %d disallow-all: %d allowed\n%s", s, allowed, body)
			}
		case RobotsCrawlDelay:
			if site.CrawlDelay <= 0 || !bytes.Contains(bytes.ToLower(body), []byte("crawl-delay: ")) {
				t.Errorf("site %d crawl-delay kind without a delay\n%s", s, body)
			}
		case RobotsDisallow, RobotsAllowOverride:
			if !bytes.Contains(bytes.ToLower(body), []byte("disallow: /")) {
				t.Errorf("site %d %v without Disallow\n%s", s, site.Robots, body)
			}
		}
		if site.Robots != RobotsCrawlDelay && site.CrawlDelay != 0 {
			t.Errorf("site %d %v has crawl delay %v", s, site.Robots, site.CrawlDelay)
		}
	}
	for name, ok := range map[string]bool{
		"a group for another crawler": sawOtherGroup, "lower-case directives": sawLower,
		"CRLF line ends": sawCRLF, "an allowed page under a disallowed directory": sawOverride,
		"a wildcard rule matching pages": sawWildcardHit,
	} {
		if !ok {
			t.Errorf("no robots.txt with %s", name)
		}
	}
}

// TestLinksLeadIntoDisallowedPaths makes sure a crawler ignoring robots.txt
// would be caught: allowed pages link to disallowed ones.
func TestLinksLeadIntoDisallowedPaths(t *testing.T) {
	w := testWeb(t, midWeb)
	disallowed := make([]bool, w.NumPages())
	for p := range disallowed {
		disallowed[p] = w.Page(p).Disallowed
	}
	n := 0
	for from, to := range w.Graph().Edges() {
		if !disallowed[from] && disallowed[to] {
			n++
		}
	}
	t.Logf("%d links from allowed to disallowed pages", n)
	if n < 100 {
		t.Errorf("only %d links from allowed to disallowed pages", n)
	}
}
