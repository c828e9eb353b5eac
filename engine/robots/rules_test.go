package robots

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const lidiUA = "lidi/0.1 (+https://example.org/lidi)"

func TestFromResponseStatus(t *testing.T) {
	body := []byte("User-agent: *\nDisallow: /private/\n")
	tests := []struct {
		status    int
		kind      Kind
		temporary bool
		private   bool // answer for /private/x
		public    bool // answer for /public
	}{
		{200, KindParsed, false, false, true},
		{204, KindParsed, false, false, true},
		{301, KindUnavailable, false, true, true},
		{401, KindUnavailable, false, true, true},
		{403, KindUnavailable, false, true, true},
		{404, KindUnavailable, false, true, true},
		{410, KindUnavailable, false, true, true},
		{429, KindServerError, true, false, false},
		{500, KindServerError, true, false, false},
		{503, KindServerError, true, false, false},
		{599, KindServerError, true, false, false},
		{0, KindUnreachable, true, false, false},
		{100, KindUnreachable, true, false, false},
		{600, KindUnreachable, true, false, false},
	}
	for _, tt := range tests {
		r := FromResponse(tt.status, body)
		if r.Kind() != tt.kind || r.Status() != tt.status || r.Kind().Temporary() != tt.temporary {
			t.Errorf("status %d: kind %v status %d temporary %v, want %v %d %v",
				tt.status, r.Kind(), r.Status(), r.Kind().Temporary(), tt.kind, tt.status, tt.temporary)
		}
		if got := r.Allowed(lidiUA, "/private/x"); got != tt.private {
			t.Errorf("status %d: /private/x allowed=%v, want %v", tt.status, got, tt.private)
		}
		if got := r.Allowed(lidiUA, "/public"); got != tt.public {
			t.Errorf("status %d: /public allowed=%v, want %v", tt.status, got, tt.public)
		}
		if !r.Allowed(lidiUA, "/robots.txt") {
			t.Errorf("status %d: /robots.txt must always be allowed", tt.status)
		}
		if tt.kind != KindParsed && r.CrawlDelay(lidiUA) != 0 {
			t.Errorf("status %d: crawl delay without a parsed file", tt.status)
		}
	}
}

func TestUnreachable(t *testing.T) {
	r := FromResponse(-1, nil) // no answer
	if r.Kind() != KindUnreachable || !r.Kind().Temporary() || r.Status() != -1 {
		t.Fatalf("unreachable: kind %v status %d", r.Kind(), r.Status())
	}
	for _, p := range []string{"/", "/index.html", "/a?b=c"} {
		if r.Allowed(lidiUA, p) {
			t.Errorf("unreachable robots.txt allows %q", p)
		}
	}
	if !r.Allowed(lidiUA, "/robots.txt") {
		t.Error("an unreachable robots.txt must still allow /robots.txt")
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{
		KindParsed: "parsed", KindUnavailable: "unavailable", KindServerError: "server-error",
		KindUnreachable: "unreachable", Kind(99): "unknown",
	} {
		if k.String() != want {
			t.Errorf("Kind(%d).String() = %q, want %q", k, k.String(), want)
		}
	}
}

func TestZeroAndNilRules(t *testing.T) {
	var zero Rules
	var nilRules *Rules
	for name, r := range map[string]*Rules{"zero": &zero, "nil": nilRules} {
		if !r.Allowed(lidiUA, "/anything") || r.CrawlDelay(lidiUA) != 0 || r.Sitemaps() != nil ||
			r.Kind() != KindParsed || r.Status() != 0 || r.Stats() != (Stats{}) {
			t.Errorf("%s Rules should behave as an empty robots.txt", name)
		}
	}
}

func TestAllowed(t *testing.T) {
	const file = `# comment line
User-agent: *
Disallow: /private/
Disallow: /*.pdf$
Allow: /private/open/

User-agent: lidi
User-agent: otherbot
Disallow: /lidi-only/
Allow: /lidi-only/public
Disallow: /tmp   # trailing comment
Disallow: /%e3%83%84/
Disallow: /ümlaut
Disallow: /has space

User-agent: lidibot
Disallow: /

User-agent: LIDI
Disallow: /merged/
Disallow: /*/print$
Allow: /tie
Disallow: /tie
`
	r := FromResponse(200, []byte(file))
	tests := []struct {
		agent, path string
		want        bool
	}{
		// lidi's merged groups replace "*" entirely.
		{lidiUA, "/private/x", true},
		{lidiUA, "/lidi-only/x", false},
		{lidiUA, "/lidi-only/public/page", true}, // longer Allow wins
		{lidiUA, "/tmp", false},
		{lidiUA, "/tmpfile", false},
		{lidiUA, "/merged/a", false}, // from the second group naming lidi
		{lidiUA, "/a/b/print", false},
		{lidiUA, "/a/b/print?x", true}, // '$' anchors the end
		{lidiUA, "/tie", true},         // same length: Allow wins
		{lidiUA, "/tie/deeper", true},
		{"LiDi", "/merged/a", false}, // case-insensitive token
		{"lidi", "/robots.txt", true},
		{"lidi", "/robots.txt?x=1", true},
		// Not prefix matching: lidibot's group is not lidi's, and vice versa.
		{lidiUA, "/", true},
		{"lidibot/2.0", "/", false},
		{"lid", "/private/x", false}, // "lid" falls back to "*"
		// Percent-encoding: hex case is normalised both ways, non-ASCII in
		// rules is encoded, %2F is never decoded.
		{lidiUA, "/%E3%83%84/x", false},
		{lidiUA, "/%e3%83%84/x", false},
		{lidiUA, "/%C3%BCmlaut", false},
		{lidiUA, "/%c3%bcmlaut", false},
		{lidiUA, "/has%20space", false},
		{"otherbot", "/tmp", false},
		// "*" group.
		{"somebot", "/private/x", false},
		{"somebot", "/private/open/x", true},
		{"somebot", "/doc.pdf", false},
		{"somebot", "/doc.pdf?download=1", true},
		{"somebot", "/doc.PDF", true}, // paths are case-sensitive
		{"", "/private/x", false},
		{"*", "/private/x", false},
		// Request-target forms.
		{"somebot", "", true},
		{"somebot", "?q=1", true},
		{"somebot", "/private/x#frag", false},
		{"somebot", "/ok#/private/", true},
	}
	for _, tt := range tests {
		if got := r.Allowed(tt.agent, tt.path); got != tt.want {
			d := r.Check(tt.agent, tt.path)
			t.Errorf("Allowed(%q, %q) = %v, want %v (decided by line %d %q)", tt.agent, tt.path, got, tt.want, d.Line, d.Pattern)
		}
	}
}

func TestCheckReportsRule(t *testing.T) {
	r := FromResponse(200, []byte("User-agent: *\nDisallow: /a\nAllow: /a/b*\n"))
	tests := []struct {
		path string
		want Decision
	}{
		{"/a/x", Decision{Allowed: false, Pattern: "/a", Line: 2}},
		{"/a/b/c", Decision{Allowed: true, Pattern: "/a/b*", Line: 3}},
		{"/z", Decision{Allowed: true}},
		{"/robots.txt", Decision{Allowed: true}},
	}
	for _, tt := range tests {
		if got := r.Check("x", tt.path); got != tt.want {
			t.Errorf("Check(%q) = %+v, want %+v", tt.path, got, tt.want)
		}
	}
}

func TestGroupRules(t *testing.T) {
	tests := []struct {
		name, file, agent, path string
		want                    bool
	}{
		{"rules before any user-agent belong to nobody", "Disallow: /\nUser-agent: x\nAllow: /a\n", "y", "/b", true},
		{"sitemap does not end a run of agents", "User-agent: a\nSitemap: /s.xml\nUser-agent: b\nDisallow: /\n", "a", "/x", false},
		{"crawl-delay does not end a run of agents", "User-agent: a\nCrawl-delay: 3\nUser-agent: b\nDisallow: /\n", "a", "/x", false},
		{"unknown line does not end a run of agents", "User-agent: a\nFoo: bar\nUser-agent: b\nDisallow: /\n", "a", "/x", false},
		{"empty disallow ends a run of agents", "User-agent: a\nDisallow:\nUser-agent: b\nDisallow: /\n", "a", "/x", true},
		{"blank lines do not end a run of agents", "User-agent: a\n\nUser-agent: *\nDisallow: /\n", "a", "/x", false},
		{"empty group for the agent beats a restrictive *", "User-agent: *\nDisallow: /\n\nUser-agent: a\n", "a", "/x", true},
		{"agent line after rules starts a new group", "User-agent: a\nDisallow: /x\nUser-agent: b\nDisallow: /y\n", "a", "/y", true},
		{"star followed by words is global", "User-agent: * everyone\nDisallow: /\n", "z", "/x", false},
		{"star glued to a name matches nothing", "User-agent: *bot\nDisallow: /\n", "zbot", "/x", true},
		{"agent value is read up to the first non-token octet", "User-agent: lidi/2.0 extra\nDisallow: /\n", "lidi", "/x", false},
		{"missing colon with two words", "user-agent lidi\ndisallow /x\n", "lidi", "/x/y", false},
		{"missing colon with three words is junk", "user-agent lidi\ndisallow /x y\n", "lidi", "/x/y", true},
		{"space before colon", "User-agent : lidi\nDisallow : /x\n", "lidi", "/x", false},
		{"typo disalow is a disallow", "User-agent: lidi\nDisalow: /x\n", "lidi", "/x", false},
		{"rule not starting with / or * is ignored", "User-agent: lidi\nDisallow: x\n", "lidi", "/x", true},
		{"leading * pattern", "User-agent: lidi\nDisallow: *.gif$\n", "lidi", "/a/b.gif", false},
		{"$ inside a pattern is literal", "User-agent: lidi\nDisallow: /a$b\n", "lidi", "/a$b/c", false},
		{"wildcard pattern is anchored at the start", "User-agent: lidi\nDisallow: /a*b\n", "lidi", "/x/a/b", true},
		{"longer wildcard beats shorter allow", "User-agent: lidi\nAllow: /page\nDisallow: /*.html\n", "lidi", "/page.html", false},
		{"longest match over merged groups", "User-agent: lidi\nDisallow: /a/\nUser-agent: x\nDisallow: /\nUser-agent: lidi\nAllow: /a/b\n", "lidi", "/a/b", true},
		{"tie across merged groups goes to allow", "User-agent: lidi\nDisallow: /a\nUser-agent: x\nDisallow: /\nUser-agent: lidi\nAllow: /a\n", "lidi", "/a", true},
		{"CR line endings", "User-agent: lidi\rDisallow: /x\r", "lidi", "/x", false},
		{"CRLF line endings", "User-agent: lidi\r\nDisallow: /x\r\n", "lidi", "/x", false},
		{"UTF-8 BOM", "\xef\xbb\xbfUser-agent: lidi\nDisallow: /x\n", "lidi", "/x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := FromResponse(200, []byte(tt.file))
			if got := r.Allowed(tt.agent, tt.path); got != tt.want {
				t.Errorf("Allowed(%q, %q) = %v, want %v", tt.agent, tt.path, got, tt.want)
			}
		})
	}
}

func TestUTF16(t *testing.T) {
	text := "User-agent: *\nDisallow: /ü/\nSitemap: https://example.org/s.xml\n"
	for _, le := range []bool{true, false} {
		body := []byte{0xfe, 0xff}
		if le {
			body = []byte{0xff, 0xfe}
		}
		for _, rn := range text {
			u := uint16(rn)
			if le {
				body = append(body, byte(u), byte(u>>8))
			} else {
				body = append(body, byte(u>>8), byte(u))
			}
		}
		r := FromResponse(200, body)
		if r.Allowed("x", "/%C3%BC/a") || !r.Allowed("x", "/u/a") {
			t.Errorf("little-endian=%v: rules not read", le)
		}
		if !slices.Equal(r.Sitemaps(), []string{"https://example.org/s.xml"}) {
			t.Errorf("little-endian=%v: sitemaps %q", le, r.Sitemaps())
		}
	}
}

func TestBodyCap(t *testing.T) {
	var b bytes.Buffer
	b.WriteString("User-agent: *\nDisallow: /early\n")
	for b.Len() < MaxBodySize-100 {
		b.WriteString("# padding padding padding padding padding padding padding\n")
	}
	// This line straddles the cap: its start is inside, its end is not.
	b.WriteString("Disallow: /straddle" + strings.Repeat("x", 200) + "\n")
	b.WriteString("Disallow: /late\n")
	r := FromResponse(200, b.Bytes())
	st := r.Stats()
	if !st.Truncated || st.Bytes > MaxBodySize || st.Bytes < MaxBodySize-200 {
		t.Errorf("stats %+v, want truncated near %d bytes", st, MaxBodySize)
	}
	if r.Allowed("x", "/early") {
		t.Error("rule before the cap not honoured")
	}
	if !r.Allowed("x", "/late") {
		t.Error("rule after 500 KiB honoured")
	}
	// A clipped "/straddlexxx..." would have become a shorter prefix.
	if !r.Allowed("x", "/straddle") {
		t.Error("the line cut by the cap was used")
	}

	// Exactly MaxBodySize octets are read in full.
	exact := []byte("User-agent: *\nDisallow: /last")
	pad := bytes.Repeat([]byte("#"), MaxBodySize-len(exact)-1)
	full := append(append(append([]byte{}, pad...), '\n'), exact...)
	if len(full) != MaxBodySize {
		t.Fatalf("setup: %d bytes", len(full))
	}
	r = FromResponse(200, full)
	if r.Stats().Truncated || r.Allowed("x", "/last") {
		t.Errorf("file of exactly MaxBodySize octets not read in full: %+v", r.Stats())
	}
}

func TestGarbageFile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	junk := func(lines int) {
		for range lines {
			n := 10 + rng.IntN(200)
			for range n {
				c := byte(rng.IntN(256))
				if c == '\n' || c == '\r' || c == '#' {
					c = 0
				}
				b.WriteByte(c)
			}
			b.WriteByte('\n')
		}
	}
	junk(50)
	b.WriteString("User-agent: lidi\n")
	junk(50)
	b.WriteString("Disallow: /secret\n")
	b.WriteString("Crawl-delay: soon\n") // temoto would reject the whole file for this
	junk(50)
	r := FromResponse(200, b.Bytes())
	if r.Kind() != KindParsed {
		t.Fatalf("kind %v", r.Kind())
	}
	if r.Allowed(lidiUA, "/secret/plans") {
		t.Error("the one valid rule was not honoured")
	}
	if !r.Allowed(lidiUA, "/public") {
		t.Error("junk produced a rule")
	}
	st := r.Stats()
	if st.Rules != 1 || st.Groups != 1 || st.Ignored < 100 {
		t.Errorf("stats %+v", st)
	}
}

func TestCrawlDelay(t *testing.T) {
	const file = `User-agent: *
Crawl-delay: 30

User-agent: slowbot
Crawl-delay: 2.5
Disallow: /x

User-agent: lidi
Crawl-delay: 4
Disallow: /a

User-agent: lidi
Crawl-delay: 7
Crawl-delay: 6

User-agent: nodelay
Disallow: /x

User-agent: badbot
Crawl-delay: -1
Crawl-delay: soon
Crawl-delay: NaN

User-agent: hugebot
Crawl-delay: 1e300

User-agent: dayoff
Crawl-delay: 172800
`
	r := FromResponse(200, []byte(file))
	tests := []struct {
		agent string
		want  time.Duration
	}{
		{"other", 30 * time.Second},
		{"slowbot", 2500 * time.Millisecond},
		{lidiUA, 7 * time.Second}, // merged groups: the largest
		{"nodelay", 0},            // its own group replaces "*"
		{"badbot", 0},
		{"hugebot", MaxCrawlDelay},
		{"dayoff", MaxCrawlDelay},
	}
	for _, tt := range tests {
		if got := r.CrawlDelay(tt.agent); got != tt.want {
			t.Errorf("CrawlDelay(%q) = %v, want %v", tt.agent, got, tt.want)
		}
	}
	if got := FromResponse(200, []byte("Crawl-delay: 5\n")).CrawlDelay("x"); got != 0 {
		t.Errorf("crawl-delay outside a group counted: %v", got)
	}

	runs := FromResponse(200, []byte("User-agent: a\nUser-agent: b\nDisallow: /x\nCrawl-delay: 5\n"+
		"User-agent: c\nCrawl-delay: 3\nUser-agent: d\nDisallow: /\n"))
	for agent, want := range map[string]time.Duration{"a": 5 * time.Second, "b": 5 * time.Second, "c": 3 * time.Second, "d": 0} {
		if got := runs.CrawlDelay(agent); got != want {
			t.Errorf("runs: CrawlDelay(%q) = %v, want %v", agent, got, want)
		}
	}
	if runs.Allowed("c", "/y") {
		t.Error("crawl-delay split the group of c and d")
	}
}

func TestSitemaps(t *testing.T) {
	const file = `Sitemap: https://example.org/a.xml
User-agent: *
Disallow: /x
sitemap: https://example.org/b.xml # comment
SITEMAP: https://example.org/a.xml
Sitemap:
Sitemap: /relative.xml
Site-map: https://example.org/c.xml
`
	r := FromResponse(200, []byte(file))
	want := []string{"https://example.org/a.xml", "https://example.org/b.xml", "/relative.xml", "https://example.org/c.xml"}
	got := r.Sitemaps()
	if !slices.Equal(got, want) {
		t.Fatalf("Sitemaps() = %q, want %q", got, want)
	}
	got[0] = "changed"
	if r.Sitemaps()[0] != want[0] {
		t.Error("Sitemaps returned the internal slice")
	}
	if r.Allowed("z", "/x") {
		t.Error("sitemap lines broke the * group")
	}
}

func TestStats(t *testing.T) {
	const file = "junk line\nAllow: /orphan\nUser-agent: a\nUser-agent: b\nDisallow: /x\nAllow: /y\nFoo: bar\n\n# c\nUser-agent: *\nDisallow: /z\n"
	got := FromResponse(200, []byte(file)).Stats()
	want := Stats{Bytes: len(file), Lines: 11, Groups: 2, Rules: 3, Ignored: 3}
	if got != want {
		t.Errorf("Stats() = %+v, want %+v", got, want)
	}
}

// TestManyAgentsManyRules guards the merge-by-reference design: a file
// naming thousands of agents over thousands of rules must not be copied
// per agent.
func TestManyAgentsManyRules(t *testing.T) {
	var b strings.Builder
	for i := range 4000 {
		b.WriteString("User-agent: bot" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676)) + "\n")
	}
	for i := range 4000 {
		b.WriteString("Disallow: /p" + strings.Repeat("y", i%5) + "/" + string(rune('a'+i%26)) + "\n")
	}
	b.WriteString("User-agent: *\nAllow: /\n")
	r := FromResponse(200, []byte(b.String()))
	if r.Allowed("botaaa", "/pyy/c/x") || !r.Allowed("otherbot", "/pyy/c/x") {
		t.Error("wrong answers on a many-agent file")
	}
	if r.Stats().Rules != 4001 {
		t.Errorf("rules %d, want 4001", r.Stats().Rules)
	}
}

func TestConcurrentQueries(t *testing.T) {
	r := FromResponse(200, readTestFile(t, "warc_http_ajax.googleapis.com.txt"))
	paths := []string{"/search?q=x", "/news/directory", "/news/x", "/maps/api/js", "/", "/%7Euser"}
	want := make([]bool, len(paths))
	for i, p := range paths {
		want[i] = r.Allowed(lidiUA, p)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 2000 {
				k := (i + g) % len(paths)
				if r.Allowed(lidiUA, paths[k]) != want[k] {
					t.Errorf("concurrent answer for %q changed", paths[k])
					return
				}
				_ = r.CrawlDelay(lidiUA)
			}
		})
	}
	wg.Wait()
}

func TestAllowedDoesNotAllocate(t *testing.T) {
	r := FromResponse(200, readTestFile(t, "warc_http_ajax.googleapis.com.txt"))
	allocs := testing.AllocsPerRun(100, func() {
		r.Allowed(lidiUA, "/maps/api/js?sensor=false")
		r.Allowed("Googlebot-Image/1.0", "/search?q=robots")
	})
	if allocs != 0 {
		t.Errorf("Allowed allocates %.1f times per call pair", allocs)
	}
}

// TestIndexAgreesWithScan builds random files large enough to be indexed
// and checks every answer against a scan of all rules of the matching
// groups that applies RFC 9309 precedence directly.
func TestIndexAgreesWithScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	const alphabet = "/ab*$%e"
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for file := range 200 {
		var b strings.Builder
		agents := []string{"lidi", "other", "*"}
		for range 1 + rng.IntN(4) {
			b.WriteString("User-agent: " + agents[rng.IntN(len(agents))] + "\n")
			for range rng.IntN(3 * indexMin) {
				kind := "Disallow"
				if rng.IntN(2) == 0 {
					kind = "Allow"
				}
				start := "/"
				if rng.IntN(8) == 0 {
					start = "*"
				}
				b.WriteString(kind + ": " + start + word(rng.IntN(6)) + "\n")
			}
		}
		r := FromResponse(200, []byte(b.String()))
		for range 50 {
			path := "/" + strings.ReplaceAll(strings.ReplaceAll(word(rng.IntN(8)), "*", "b"), "$", "a")
			for _, agent := range []string{"lidi", "nobody"} {
				got := r.Allowed(agent, path)
				want := scanAnswer(r.groupsFor(agent), normalizePath(path))
				if got != want {
					t.Fatalf("file %d agent %s path %q: indexed %v, scan %v\n%s", file, agent, path, got, want, b.String())
				}
			}
		}
	}
}

func scanAnswer(groups []*group, path string) bool {
	bestLen, allowed := -1, true
	for _, g := range groups {
		for i := range g.rules {
			ru := &g.rules[i]
			if !ru.match(path) {
				continue
			}
			if ru.length > bestLen || ru.length == bestLen && ru.allow {
				bestLen, allowed = ru.length, ru.allow
			}
		}
	}
	return allowed
}
