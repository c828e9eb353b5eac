package robots

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

// googleCase is one IsUserAgentAllowed check from Google's robots_test.cc.
type googleCase struct {
	Source    string `json:"source"`
	Semantics string `json:"semantics"`
	Test      string `json:"test"`
	Line      int    `json:"line"`
	UserAgent string `json:"user_agent"`
	URL       string `json:"url"`
	Allowed   bool   `json:"allowed"`
	Robotstxt string `json:"robotstxt"`
}

// googleOnlyDeviations are the google-specific cases lidi answers
// differently on purpose, keyed by line in robots_test.cc.
var googleOnlyDeviations = map[int]string{
	247: `lidi takes the product token of a full User-Agent, so "Foo Bar" is "Foo" and obeys the Foo group; Google rejects the agent and uses "*"`,
	505: "Google treats Allow: /dir/index.html as also allowing /dir/; RFC 9309 has no such rule",
	539: "Google cuts lines at 16664 octets, turning a long Disallow into a shorter one; lidi keeps the whole line (the 500 KiB cap bounds the file)",
	565: "same line cut, applied to an Allow",
}

func loadGoogleCases(t testing.TB) []googleCase {
	t.Helper()
	data, err := os.ReadFile("testdata/google_robotstxt_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []googleCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

// requestTarget extracts path, params and query from a URL the way
// Google's GetPathParamsQuery does, since the cases give whole URLs and
// Allowed takes the request target.
func requestTarget(url string) string {
	start := 0
	if strings.HasPrefix(url, "//") {
		start = 2
	}
	rest := url[start:]
	early := strings.IndexAny(rest, "/?;")
	proto := strings.Index(rest, "://")
	if proto >= 0 && (early < 0 || proto < early) {
		rest = rest[proto+3:]
	}
	p := strings.IndexAny(rest, "/?;")
	if p < 0 {
		return "/"
	}
	if h := strings.IndexByte(rest, '#'); h >= 0 {
		if h < p {
			return "/"
		}
		rest = rest[:h]
	}
	rest = rest[p:]
	if rest[0] != '/' {
		return "/" + rest
	}
	return rest
}

func TestRequestTarget(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "/",
		"http://foo.bar":                "/",
		"http://foo.bar/":               "/",
		"http://foo.bar/x/y":            "/x/y",
		"http://foo.bar/x?a=http://b/c": "/x?a=http://b/c",
		"http://foo.bar?q":              "/?q",
		"http://foo.bar/a#frag":         "/a",
		"//foo.bar/a/b":                 "/a/b",
		"foo.bar/a":                     "/a",
	} {
		if got := requestTarget(in); got != want {
			t.Errorf("requestTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

func caseName(c googleCase) string {
	return fmt.Sprintf("%s/line%d", c.Test, c.Line)
}

// TestGoogleRFC9309Cases runs every case Google marks as RFC 9309 behaviour;
// all must pass.
func TestGoogleRFC9309Cases(t *testing.T) {
	cases := loadGoogleCases(t)
	n, pass := 0, 0
	for _, c := range cases {
		if c.Semantics != "rfc9309" {
			continue
		}
		n++
		t.Run(caseName(c), func(t *testing.T) {
			r := FromResponse(200, []byte(c.Robotstxt))
			if got := r.Allowed(c.UserAgent, requestTarget(c.URL)); got != c.Allowed {
				t.Errorf("agent %q url %q: allowed=%v, want %v\nrobots.txt:\n%s", c.UserAgent, c.URL, got, c.Allowed, c.Robotstxt)
				return
			}
			pass++
		})
	}
	if n != 72 {
		t.Errorf("found %d rfc9309 cases, want 72", n)
	}
	t.Logf("rfc9309: %d/%d pass", pass, n)
}

// TestGoogleSpecificCases pins the google-specific cases lidi agrees with,
// so they do not regress, and checks that the list of deliberate
// deviations is exact.
func TestGoogleSpecificCases(t *testing.T) {
	cases := loadGoogleCases(t)
	n, pass := 0, 0
	for _, c := range cases {
		if c.Semantics != "google-specific" {
			continue
		}
		n++
		t.Run(caseName(c), func(t *testing.T) {
			r := FromResponse(200, []byte(c.Robotstxt))
			got := r.Allowed(c.UserAgent, requestTarget(c.URL))
			why, deviates := googleOnlyDeviations[c.Line]
			switch {
			case got == c.Allowed && deviates:
				t.Errorf("now agrees with Google; drop line %d from googleOnlyDeviations", c.Line)
			case got != c.Allowed && !deviates:
				t.Errorf("agent %q url %q: allowed=%v, want %v\nrobots.txt:\n%.300s", c.UserAgent, c.URL, got, c.Allowed, c.Robotstxt)
			case got != c.Allowed:
				t.Logf("deviates as intended: %s", why)
			default:
				pass++
			}
		})
	}
	if n != 73 {
		t.Errorf("found %d google-specific cases, want 73", n)
	}
	t.Logf("google-specific: %d/%d pass, %d deliberate deviations", pass, n, len(googleOnlyDeviations))
}
