package robots

import (
	"bytes"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/temoto/robotstxt"
)

// fieldKind is what a robots.txt line's key names.
type fieldKind uint8

const (
	fieldUnknown fieldKind = iota
	fieldUserAgent
	fieldAllow
	fieldDisallow
	fieldCrawlDelay
	fieldSitemap
)

// fieldNames maps lower-cased keys to fields. Besides the RFC names it
// accepts the misspellings Google's parser accepts; reading "disalow" as a
// Disallow can only make lidi more careful.
var fieldNames = map[string]fieldKind{
	"user-agent":  fieldUserAgent,
	"useragent":   fieldUserAgent,
	"user agent":  fieldUserAgent,
	"allow":       fieldAllow,
	"disallow":    fieldDisallow,
	"dissallow":   fieldDisallow,
	"dissalow":    fieldDisallow,
	"disalow":     fieldDisallow,
	"diasllow":    fieldDisallow,
	"disallaw":    fieldDisallow,
	"crawl-delay": fieldCrawlDelay,
	"crawldelay":  fieldCrawlDelay,
	"sitemap":     fieldSitemap,
	"site-map":    fieldSitemap,
}

// lookupField classifies a key, ignoring case, without allocating for
// the usual short keys.
func lookupField(key string) fieldKind {
	var buf [16]byte
	if len(key) > len(buf) {
		return fieldUnknown // longer than any known key
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return fieldNames[string(buf[:len(key)])]
}

// builder accumulates groups while lines are read.
type builder struct {
	r *Rules
	// groups are all groups in file order.
	groups []*group
	// cur is the group user-agent lines and rules currently go to; nil
	// before the first user-agent line, where rules belong to nobody.
	cur *group
	// inRules is set once cur has a rule: the next user-agent line then
	// starts a new group. Other records (Sitemap, Crawl-delay, unknown
	// ones) must not end a group (RFC 9309 section 2.2.4).
	inRules bool
	// delayRun are the agents a Crawl-delay line applies to: those named
	// by the user-agent lines directly above it. Unlike a group, the run
	// ends at a Crawl-delay, so "User-agent: *, Crawl-delay: 30,
	// User-agent: slowbot, Crawl-delay: 2" gives each its own delay while
	// both still share the group's rules.
	delayRun []string
	runOpen  bool            // the last user-agent line has not been followed by a Crawl-delay or rule yet
	seen     map[string]bool // sitemaps already listed
}

// parse reads a robots.txt body. It never fails: whatever cannot be
// understood is counted in Stats.Ignored and skipped.
func parse(body []byte) *Rules {
	r := &Rules{kind: KindParsed}
	if len(body) > MaxBodySize {
		r.stats.Truncated = true
		body = body[:MaxBodySize]
	}
	body = toUTF8(body)
	if r.stats.Truncated {
		// Drop the line the cut falls into: a clipped "Disallow: /private"
		// would become a different rule.
		if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
			body = body[:i+1]
		} else {
			body = nil
		}
	}
	r.stats.Bytes = len(body)

	b := builder{r: r}
	for n := 1; len(body) > 0; n++ {
		end := bytes.IndexAny(body, "\r\n")
		var line []byte
		if end < 0 {
			line, body = body, nil
		} else {
			line = body[:end]
			if body[end] == '\r' && end+1 < len(body) && body[end+1] == '\n' {
				end++
			}
			body = body[end+1:]
		}
		r.stats.Lines++
		b.line(line, n)
	}

	r.stats.Groups = len(b.groups)
	for _, g := range b.groups {
		g.finish()
		r.stats.Rules += len(g.rules)
	}
	return r
}

// toUTF8 strips a UTF-8 byte order mark and transcodes UTF-16 bodies that
// announce themselves with one. RFC 9309 wants UTF-8, but UTF-16 files exist.
func toUTF8(body []byte) []byte {
	switch {
	case bytes.HasPrefix(body, []byte("\xef\xbb\xbf")):
		return body[3:]
	case len(body) >= 2 && (body[0] == 0xff && body[1] == 0xfe || body[0] == 0xfe && body[1] == 0xff):
		little := body[0] == 0xff
		body = body[2:]
		units := make([]uint16, len(body)/2)
		for i := range units {
			lo, hi := body[2*i], body[2*i+1]
			if !little {
				lo, hi = hi, lo
			}
			units[i] = uint16(hi)<<8 | uint16(lo)
		}
		out := make([]byte, 0, len(units))
		for _, rn := range utf16.Decode(units) {
			out = utf8.AppendRune(out, rn)
		}
		return out
	}
	return body
}

// line handles one line (without its line break); n is its 1-based number.
func (b *builder) line(raw []byte, n int) {
	key, value, ok := splitLine(raw)
	if !ok {
		if len(bytes.TrimSpace(cutComment(raw))) > 0 {
			b.r.stats.Ignored++
		}
		return
	}
	field := lookupField(key)
	switch field {
	case fieldUserAgent:
		if b.cur == nil || b.inRules {
			b.cur = &group{}
			b.groups = append(b.groups, b.cur)
			b.inRules = false
		}
		if !b.runOpen {
			b.delayRun = b.delayRun[:0]
			b.runOpen = true
		}
		tok := groupToken(value)
		b.addAgent(tok)
		if tok != "" {
			b.delayRun = append(b.delayRun, tok)
		}
	case fieldAllow, fieldDisallow:
		if b.cur == nil {
			b.r.stats.Ignored++
			return
		}
		b.inRules = true
		b.runOpen = false
		if value == "" {
			// An empty rule matches nothing (RFC 9309 section 2.2.2) but
			// still closes the run of user-agent lines.
			return
		}
		ru, ok := compileRule(value, field == fieldAllow, n)
		if !ok {
			b.r.stats.Ignored++
			return
		}
		b.cur.rules = append(b.cur.rules, ru)
	case fieldCrawlDelay:
		if b.cur == nil {
			b.r.stats.Ignored++
			return
		}
		b.runOpen = false
		d, ok := crawlDelay(value)
		if !ok {
			b.r.stats.Ignored++
			return
		}
		for _, tok := range b.delayRun {
			if tok == "*" {
				b.r.globalDelay = max(b.r.globalDelay, d)
				continue
			}
			if b.r.delays == nil {
				b.r.delays = make(map[string]time.Duration)
			}
			b.r.delays[tok] = max(b.r.delays[tok], d)
		}
	case fieldSitemap:
		u, ok := sitemap(value)
		if !ok {
			b.r.stats.Ignored++
			return
		}
		if b.seen == nil {
			b.seen = make(map[string]bool)
		}
		if !b.seen[u] {
			b.seen[u] = true
			b.r.sitemaps = append(b.r.sitemaps, u)
		}
	default:
		b.r.stats.Ignored++
	}
}

// addAgent files the current group under a user-agent line's token.
func (b *builder) addAgent(tok string) {
	switch tok {
	case "":
		// Names no agent lidi could be; the line still shapes the group.
	case "*":
		if len(b.r.global) == 0 || b.r.global[len(b.r.global)-1] != b.cur {
			b.r.global = append(b.r.global, b.cur)
		}
	default:
		if b.r.agents == nil {
			b.r.agents = make(map[string][]*group)
		}
		gs := b.r.agents[tok]
		if len(gs) == 0 || gs[len(gs)-1] != b.cur {
			b.r.agents[tok] = append(gs, b.cur)
		}
	}
}

// splitLine splits a line into key and value (RFC 9309 section 2.2):
// comment removed, "key: value" with optional spaces. Like Google's parser
// it also accepts a missing colon when the line is exactly two words
// ("user-agent FooBot"). It reports false for blank and unusable lines.
func splitLine(raw []byte) (key, value string, ok bool) {
	line := bytes.TrimSpace(cutComment(raw))
	if len(line) == 0 {
		return "", "", false
	}
	var k, v []byte
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		k, v = bytes.TrimSpace(line[:i]), bytes.TrimSpace(line[i+1:])
	} else {
		f := bytes.Fields(line)
		if len(f) != 2 {
			return "", "", false
		}
		k, v = f[0], f[1]
	}
	if len(k) == 0 {
		return "", "", false
	}
	return string(k), string(v), true
}

func cutComment(line []byte) []byte {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		return line[:i]
	}
	return line
}

// firstWord returns value up to its first space or tab, so that the
// one-record documents handed to temoto hold exactly one key and one value
// for its whitespace-splitting tokenizer.
func firstWord(value string) string {
	if i := strings.IndexAny(value, " \t"); i >= 0 {
		return value[:i]
	}
	return value
}

// crawlDelay parses a Crawl-delay value (seconds, possibly fractional) with
// temoto. temoto rejects negative, NaN and infinite values but converts
// float seconds to time.Duration without a range check, so an overflowed
// (negative on amd64, saturated on arm64) result is clamped here.
func crawlDelay(value string) (time.Duration, bool) {
	v := firstWord(value)
	if v == "" {
		return 0, false
	}
	data, err := robotstxt.FromString("User-agent: *\nCrawl-delay: " + v + "\n")
	if err != nil {
		return 0, false
	}
	d := data.FindGroup("*").CrawlDelay
	if d < 0 || d > MaxCrawlDelay {
		d = MaxCrawlDelay
	}
	return d, true
}

// sitemap reads a Sitemap value with temoto.
func sitemap(value string) (string, bool) {
	v := firstWord(value)
	if v == "" {
		return "", false
	}
	data, err := robotstxt.FromString("Sitemap: " + v + "\n")
	if err != nil || len(data.Sitemaps) != 1 {
		return "", false
	}
	return data.Sitemaps[0], true
}
