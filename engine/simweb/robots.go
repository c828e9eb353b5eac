package simweb

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// RobotsKind says what a site's /robots.txt looks like.
type RobotsKind uint8

// The kinds of robots.txt a site can have. Every generated file with rules
// has a group for "*", which is the group the Web's ground truth follows;
// other groups in the files name fictitious crawlers only.
const (
	// RobotsMissing: /robots.txt answers 404, so everything is allowed.
	RobotsMissing RobotsKind = iota
	// RobotsEmpty: a 200 file without effective rules (comments, an empty
	// Disallow); everything is allowed.
	RobotsEmpty
	// RobotsDisallow: Disallow rules for some directories of the site.
	RobotsDisallow
	// RobotsAllowOverride: a directory is disallowed but a more specific
	// Allow rule opens part of it again.
	RobotsAllowOverride
	// RobotsWildcard: rules using the * and $ patterns of RFC 9309.
	RobotsWildcard
	// RobotsCrawlDelay: a Crawl-delay line, sometimes with a Disallow rule.
	RobotsCrawlDelay
	// RobotsDisallowAll: "Disallow: /".
	RobotsDisallowAll
	// RobotsServerError: /robots.txt answers 500 or 503. RFC 9309 tells a
	// crawler to assume complete disallow then, and so does the ground truth.
	RobotsServerError

	numRobotsKinds
)

var robotsKindNames = [...]string{
	RobotsMissing:       "missing",
	RobotsEmpty:         "empty",
	RobotsDisallow:      "disallow",
	RobotsAllowOverride: "allow-override",
	RobotsWildcard:      "wildcard",
	RobotsCrawlDelay:    "crawl-delay",
	RobotsDisallowAll:   "disallow-all",
	RobotsServerError:   "server-error",
}

// String returns the kind's name as used in sites.csv, such as "wildcard".
func (k RobotsKind) String() string {
	if int(k) < len(robotsKindNames) {
		return robotsKindNames[k]
	}
	return fmt.Sprintf("RobotsKind(%d)", k)
}

// robotsKindWeights is the mix of kinds, in percent.
var robotsKindWeights = [numRobotsKinds]int{
	RobotsMissing:       30,
	RobotsEmpty:         6,
	RobotsDisallow:      24,
	RobotsAllowOverride: 12,
	RobotsWildcard:      10,
	RobotsCrawlDelay:    10,
	RobotsDisallowAll:   4,
	RobotsServerError:   4,
}

func drawRobotsKind(r *rng) RobotsKind {
	x := r.intn(100)
	for k, w := range robotsKindWeights {
		if x < w {
			return RobotsKind(k)
		}
		x -= w
	}
	return RobotsMissing
}

// open reports whether a crawler obeying robots.txt may fetch the home page.
func (k RobotsKind) open() bool { return k != RobotsDisallowAll && k != RobotsServerError }

// robotsRule is one Allow or Disallow line of the "*" group.
type robotsRule struct {
	allow   bool
	pattern string
}

// robots is a site's robots.txt: what the server sends and the rules that
// decide the ground truth.
type robots struct {
	kind       RobotsKind
	status     int
	body       []byte
	rules      []robotsRule
	crawlDelay time.Duration
}

// disallowed reports whether the "*" group forbids path (which may carry a
// query). /robots.txt itself is always allowed. Among matching rules the
// longest pattern wins and, on a tie, Allow wins (RFC 9309, section 2.2.2).
func (rb *robots) disallowed(path string) bool {
	if path == "/robots.txt" {
		return false
	}
	if rb.kind == RobotsServerError {
		return true
	}
	best, allow := -1, true
	for _, ru := range rb.rules {
		if len(ru.pattern) < best || (len(ru.pattern) == best && allow) {
			continue
		}
		if matchRobotsPattern(ru.pattern, path) {
			best, allow = len(ru.pattern), ru.allow
		}
	}
	return !allow
}

// matchRobotsPattern matches an RFC 9309 path pattern against a path: the
// pattern matches a prefix of the path, "*" matches any sequence of
// characters and a final "$" anchors the pattern at the end of the path.
func matchRobotsPattern(pat, path string) bool {
	anchored := strings.HasSuffix(pat, "$")
	if anchored {
		pat = pat[:len(pat)-1]
	}
	p, s := 0, 0
	starP, starS := -1, 0
	for s < len(path) {
		if p < len(pat) {
			if pat[p] == '*' {
				starP, starS = p, s
				p++
				continue
			}
			if pat[p] == path[s] {
				p++
				s++
				continue
			}
		} else if !anchored {
			return true
		}
		if starP < 0 {
			return false
		}
		// Let the last star swallow one more character and retry.
		starS++
		s, p = starS, starP+1
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat)
}

// robotsWriter renders a robots.txt with some of the formatting variety of
// real files: comments, directive case, CRLF line ends, groups for other
// crawlers.
type robotsWriter struct {
	b     strings.Builder
	lower bool
	crlf  bool
}

func (w *robotsWriter) line(directive, value string) {
	if w.lower {
		directive = strings.ToLower(directive)
	}
	w.b.WriteString(directive)
	w.b.WriteString(": ")
	w.b.WriteString(value)
	w.newline()
}

func (w *robotsWriter) comment(text string) {
	w.b.WriteString("# ")
	w.b.WriteString(text)
	w.newline()
}

func (w *robotsWriter) newline() {
	if w.crlf {
		w.b.WriteString("\r\n")
	} else {
		w.b.WriteString("\n")
	}
}

var otherCrawlers = []string{"BadBot", "EmailCollector", "WebZIP", "Teleport", "ExampleBot"}

// buildRobots draws a site's robots.txt. dirs lists the site's directory
// pages at depth 1 and 2 with their paths; children gives a directory's
// child pages.
func (w *Web) buildRobots(site int, kind RobotsKind, r *rng, dirs []int32, children func(int32) []int32) robots {
	rb := robots{kind: kind, status: 200}
	switch kind {
	case RobotsMissing:
		rb.status = 404
		rb.body = []byte("<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>\n")
		return rb
	case RobotsServerError:
		rb.status = 503
		if r.chance(0.5) {
			rb.status = 500
		}
		rb.body = []byte("<html><head><title>Service Unavailable</title></head><body><h1>Temporarily unavailable</h1></body></html>\n")
		return rb
	}
	pick := func() (int32, bool) {
		if len(dirs) == 0 {
			return 0, false
		}
		return dirs[r.intn(len(dirs))], true
	}
	path := func(p int32) string { return string(w.appendPath(nil, p)) }
	add := func(allow bool, pattern string) {
		rb.rules = append(rb.rules, robotsRule{allow, pattern})
	}

	switch kind {
	case RobotsDisallow:
		for range 1 + r.intn(3) {
			if d, ok := pick(); ok && !slices.ContainsFunc(rb.rules, func(ru robotsRule) bool { return ru.pattern == path(d) }) {
				add(false, path(d))
			}
		}
		if len(rb.rules) == 0 || r.chance(0.5) {
			add(false, "/cgi-bin/")
		}
	case RobotsAllowOverride:
		ok := false
		for range 8 {
			d, found := pick()
			if !found {
				break
			}
			kids := children(d)
			if len(kids) == 0 {
				continue
			}
			add(false, path(d))
			add(true, path(kids[r.intn(len(kids))]))
			if r.chance(0.5) {
				add(true, path(d)+"$") // the listing page itself stays open
			}
			ok = true
			break
		}
		if !ok {
			add(false, "/private/")
			add(true, "/private/about.html")
		}
	case RobotsWildcard:
		add(false, "/*.php$")
		if d, ok := pick(); ok {
			// "/*name-id/": the directory wherever it sits; ids are unique
			// within a site, so this matches exactly its subtree.
			p := path(d)
			add(false, "/*"+p[strings.LastIndexByte(p[:len(p)-1], '/')+1:])
		}
		if r.chance(0.5) {
			add(false, "/*?")
		}
	case RobotsCrawlDelay:
		delays := []int{1, 1, 2, 2, 3, 5}
		rb.crawlDelay = time.Duration(delays[r.intn(len(delays))]) * time.Second
		if d, ok := pick(); ok && r.chance(0.5) {
			add(false, path(d))
		}
	case RobotsDisallowAll:
		add(false, "/")
	}

	rw := robotsWriter{lower: r.chance(0.2), crlf: r.chance(0.1)}
	if r.chance(0.6) {
		rw.comment(fmt.Sprintf("robots.txt for %s", w.sites[site].host))
	}
	other := ""
	if r.chance(0.3) {
		other = otherCrawlers[r.intn(len(otherCrawlers))]
	}
	if other != "" && r.chance(0.5) {
		// A stricter group for another crawler first: a crawler must pick
		// the "*" group, not the first one.
		rw.line("User-agent", other)
		rw.line("Disallow", "/")
		rw.newline()
		other = ""
	}
	rw.line("User-agent", "*")
	ruled := len(rb.rules) > 0 // the "*" group has an Allow or Disallow line
	if kind == RobotsEmpty {
		if r.chance(0.5) {
			rw.line("Disallow", "")
			ruled = true
		} else {
			rw.comment("nothing to hide")
		}
	}
	for _, ru := range rb.rules {
		if ru.allow {
			rw.line("Allow", ru.pattern)
		} else {
			rw.line("Disallow", ru.pattern)
		}
	}
	if rb.crawlDelay > 0 {
		rw.line("Crawl-delay", fmt.Sprint(int(rb.crawlDelay/time.Second)))
	}
	if other != "" {
		if !ruled {
			// Under RFC 9309 only Allow and Disallow end a run of
			// user-agent lines (comments, blank lines and Crawl-delay do
			// not), so without a rule the "*" group would share the next
			// group's Disallow: /.
			rw.line("Disallow", "")
		}
		rw.newline()
		rw.line("User-agent", other)
		rw.line("Disallow", "/")
	}
	rb.body = []byte(rw.b.String())
	return rb
}
