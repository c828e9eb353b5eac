package robots

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"
)

// MaxBodySize is the number of robots.txt octets lidi parses (RFC 9309
// section 2.5 asks for at least 500 KiB). Content after it is ignored, and
// so is the line the cut falls into. A fetcher may stop reading there.
const MaxBodySize = 500 << 10

// MaxRedirects is the number of consecutive redirects followed to reach a
// robots.txt (RFC 9309 section 2.3.1.2 asks for at least five, across
// authorities); a chain that needs more, or loops, reaches no file and is
// read as [KindUnavailable], as the RFC says.
const MaxRedirects = 5

// MaxCrawlDelay bounds what [Rules.CrawlDelay] reports, so that a hostile
// or mistyped value cannot overflow the engine's schedule arithmetic.
const MaxCrawlDelay = 24 * time.Hour

// Kind says how a [Rules] came about. The zero value is KindParsed.
// Its methods are safe for concurrent use.
type Kind uint8

const (
	// KindParsed rules come from a 2xx robots.txt body.
	KindParsed Kind = iota
	// KindUnavailable means there is no usable robots.txt (4xx, or a
	// redirect chain the fetcher gave up on): everything is allowed.
	KindUnavailable
	// KindServerError means the server failed (5xx or 429): everything is
	// disallowed until the file is fetched again.
	KindServerError
	// KindUnreachable means the fetch failed below HTTP (DNS, connect,
	// TLS, timeout) or returned no valid status: everything is disallowed
	// until the file is fetched again.
	KindUnreachable
)

// String returns the name used in logs and the TUI.
func (k Kind) String() string {
	switch k {
	case KindParsed:
		return "parsed"
	case KindUnavailable:
		return "unavailable"
	case KindServerError:
		return "server-error"
	case KindUnreachable:
		return "unreachable"
	}
	return "unknown"
}

// Temporary reports whether the outcome should be retried: the RFC treats
// server errors and unreachable hosts as "disallow for now", not as a
// property of the site.
func (k Kind) Temporary() bool { return k == KindServerError || k == KindUnreachable }

// Stats describes how a robots.txt body was read. It is a value snapshot;
// the zero value describes an empty body (or a status-based Rules).
type Stats struct {
	Bytes     int  // octets parsed: after the MaxBodySize cap, the cut line and any UTF-16 transcoding
	Truncated bool // the body was longer than MaxBodySize
	Lines     int  // lines read, blank and comment lines included
	Groups    int  // groups formed (before merging groups of one agent)
	Rules     int  // Allow and Disallow rules kept
	Ignored   int  // non-blank lines that had no effect: unknown fields, junk, rules outside a group, bad values
}

// Decision explains one answer of [Rules.Check]. It is a plain value; the
// zero value reads "disallowed, by no rule", as for a 5xx.
type Decision struct {
	Allowed bool
	// Pattern is the deciding rule's path pattern as written in robots.txt;
	// "" when no rule decided (no match, implicit /robots.txt, or a
	// status-based answer).
	Pattern string
	// Line is the 1-based line of the deciding rule, or 0.
	Line int
}

// Rules are the robots.txt rules of one host. Build them with
// [FromResponse]. They are immutable and safe for
// concurrent use. The zero value, like a nil *Rules, behaves as an empty
// robots.txt: everything is allowed.
type Rules struct {
	kind   Kind
	status int

	// agents maps a lower-cased product token to the groups naming it, in
	// file order; these are merged at query time (RFC 9309 2.2.1) instead
	// of copied, so a file listing many agents over many rules stays small.
	agents map[string][]*group
	global []*group // groups naming "*"

	// delays are the Crawl-delays by lower-cased product token, and
	// globalDelay that of "*"; see builder.delayRun for how they attach.
	delays      map[string]time.Duration
	globalDelay time.Duration

	sitemaps []string
	stats    Stats
}

// group is one group of the file: the rules that follow a run of
// user-agent lines.
type group struct {
	rules []rule // sorted: longest first, Allow before Disallow on ties

	// Groups with many rules are indexed by the first two octets a rule
	// pins (nearly always "/" and one more), so a query looks at a few
	// rules instead of all of them. Every rule is in exactly one of
	// byStart and loose, in the order of rules.
	byStart map[uint16][]*rule
	loose   []*rule // rules whose literal start is shorter than two octets
}

// indexMin is the rule count from which a group is indexed; below it a
// map lookup costs more than scanning.
const indexMin = 12

// finish sorts the rules and builds the index. The order makes the first
// match in a list that list's answer (see firstMatch).
func (g *group) finish() {
	slices.SortFunc(g.rules, func(x, y rule) int {
		if c := cmp.Compare(y.length, x.length); c != 0 {
			return c
		}
		if x.allow != y.allow {
			if x.allow {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.line, y.line)
	})
	if len(g.rules) < indexMin {
		return
	}
	g.byStart = make(map[uint16][]*rule)
	for i := range g.rules {
		ru := &g.rules[i]
		if s := ru.segs[0]; len(s) >= 2 {
			k := startKey(s)
			g.byStart[k] = append(g.byStart[k], ru)
		} else {
			g.loose = append(g.loose, ru)
		}
	}
}

func startKey(s string) uint16 { return uint16(s[0])<<8 | uint16(s[1]) }

// bestMatch returns the more specific of best and this group's best rule
// for path.
func (g *group) bestMatch(path string, best *rule) *rule {
	if g.byStart == nil {
		for i := range g.rules {
			ru := &g.rules[i]
			if !beats(ru, best) {
				break
			}
			if ru.match(path) {
				return ru
			}
		}
		return best
	}
	best = firstMatch(g.loose, path, best)
	if len(path) >= 2 {
		best = firstMatch(g.byStart[startKey(path)], path, best)
	}
	return best
}

// firstMatch returns the first rule of the sorted list that matches path
// and beats best, or best.
func firstMatch(list []*rule, path string, best *rule) *rule {
	for _, ru := range list {
		if !beats(ru, best) {
			// Sorted: nothing later in the list can win.
			break
		}
		if ru.match(path) {
			return ru
		}
	}
	return best
}

// beats reports whether ru would be more specific than best: longer, or as
// long and an Allow against a Disallow (RFC 9309 2.2.2).
func beats(ru, best *rule) bool {
	return best == nil || ru.length > best.length || ru.length == best.length && ru.allow && !best.allow
}

// FromResponse builds the rules for a robots.txt fetch that got an HTTP
// response with the given status and body (RFC 9309 section 2.3.1):
//
//   - 2xx: the body is parsed; at most MaxBodySize octets are read, lines
//     that make no sense are skipped, and the file is never rejected;
//   - 3xx and 4xx other than 429: there is no robots.txt, everything is
//     allowed. A fetcher follows up to MaxRedirects redirects (301, 302,
//     303, 307, 308) and passes the last answer; a 3xx reaches
//     FromResponse only for a chain longer than that, a loop, a redirect
//     to no fetchable URL, or a 3xx that names no target;
//   - 5xx and 429: everything is disallowed, [Kind.Temporary] is true;
//   - any other status: treated like an unreachable host; a fetch that
//     got no answer passes -1 (everything is disallowed, [Kind.Temporary]
//     is true).
//
// It does not keep a reference to body.
func FromResponse(status int, body []byte) *Rules {
	switch {
	case status >= 200 && status <= 299:
		r := parse(body)
		r.status = status
		return r
	case status == http.StatusTooManyRequests:
		return &Rules{kind: KindServerError, status: status}
	case status >= 300 && status <= 499:
		return &Rules{kind: KindUnavailable, status: status}
	case status >= 500 && status <= 599:
		return &Rules{kind: KindServerError, status: status}
	}
	return &Rules{kind: KindUnreachable, status: status}
}

// Kind says which case of [FromResponse] built r.
func (r *Rules) Kind() Kind {
	if r == nil {
		return KindParsed
	}
	return r.kind
}

// Status is the HTTP status r was built from (-1 for a file that could not
// be fetched, as [FromResponse] is told).
func (r *Rules) Status() int {
	if r == nil {
		return 0
	}
	return r.status
}

// Stats returns how the body was read. It is zero unless Kind is KindParsed.
func (r *Rules) Stats() Stats {
	if r == nil {
		return Stats{}
	}
	return r.stats
}

// Allowed reports whether the crawler identified by agent (a product token
// or a whole User-Agent header) may fetch pathAndQuery, the escaped path and
// query of the URL as url.URL.RequestURI returns it; a fragment is ignored.
func (r *Rules) Allowed(agent, pathAndQuery string) bool {
	return r.Check(agent, pathAndQuery).Allowed
}

// Check is [Rules.Allowed] with the reason: the rule that decided, if any.
func (r *Rules) Check(agent, pathAndQuery string) Decision {
	if r == nil {
		return Decision{Allowed: true}
	}
	path := normalizePath(pathAndQuery)
	if isRobotsTxt(path) {
		return Decision{Allowed: true}
	}
	switch r.kind {
	case KindUnavailable:
		return Decision{Allowed: true}
	case KindServerError, KindUnreachable:
		return Decision{Allowed: false}
	}
	best := decide(r.groupsFor(agent), path)
	if best == nil {
		return Decision{Allowed: true}
	}
	return Decision{Allowed: best.allow, Pattern: best.pattern, Line: best.line}
}

// CrawlDelay returns the Crawl-delay the file sets for agent, or 0 if there
// is none. Crawl-delay is not part of RFC 9309; lidi reads it as applying
// to the user-agent lines directly above it. As with rules, a file that
// names the agent replaces what "*" says entirely. Several delays for one
// agent yield the largest, and values above MaxCrawlDelay are reported as
// MaxCrawlDelay.
func (r *Rules) CrawlDelay(agent string) time.Duration {
	if r == nil || r.kind != KindParsed {
		return 0
	}
	if tok := strings.ToLower(ProductToken(agent)); tok != "" {
		if _, named := r.agents[tok]; named {
			return r.delays[tok]
		}
	}
	return r.globalDelay
}

// Sitemaps returns the Sitemap URLs of the file, in order, without
// duplicates, as written: relative ones are left for the caller to resolve
// against the robots.txt URL. The slice is the caller's to keep.
func (r *Rules) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return slices.Clone(r.sitemaps)
}

// groupsFor returns the groups that apply to agent: those naming its
// product token, else those naming "*".
func (r *Rules) groupsFor(agent string) []*group {
	tok := ProductToken(agent)
	if tok == "" || len(r.agents) == 0 {
		return r.global
	}
	var buf [64]byte
	if len(tok) <= len(buf) {
		for i := 0; i < len(tok); i++ {
			c := tok[i]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			buf[i] = c
		}
		// The compiler does not allocate for a map index by string(bytes).
		if gs, ok := r.agents[string(buf[:len(tok)])]; ok {
			return gs
		}
		return r.global
	}
	if gs, ok := r.agents[strings.ToLower(tok)]; ok {
		return gs
	}
	return r.global
}

// decide returns the most specific rule of the groups matching path, or nil.
func decide(groups []*group, path string) *rule {
	var best *rule
	for _, g := range groups {
		best = g.bestMatch(path, best)
	}
	return best
}

// isRobotsTxt reports whether path (before any query) is /robots.txt,
// which RFC 9309 section 2.2.2 allows implicitly.
func isRobotsTxt(path string) bool {
	const p = "/robots.txt"
	return strings.HasPrefix(path, p) && (len(path) == len(p) || path[len(p)] == '?')
}
