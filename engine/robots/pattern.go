package robots

import "strings"

// rule is one compiled Allow or Disallow line.
type rule struct {
	// length is the octet count of the normalised pattern, '*' and '$'
	// included: RFC 9309's measure of how specific a rule is.
	length int
	allow  bool
	// segs are the literal runs between '*'s. segs[0] must be a prefix of
	// the path; the rest must follow in order. A trailing '*' (which adds
	// nothing to a prefix match) leaves no empty segment behind.
	segs []string
	// anchored is set when the pattern ended in '$': the last segment must
	// then end the path.
	anchored bool

	pattern string // as written, for Decision
	line    int
}

// compileRule turns a rule value into a rule. It reports false for a value
// that is not a path pattern (RFC 9309 wants a leading '/'; a leading '*' is
// accepted too because it is common and unambiguous).
func compileRule(value string, allow bool, line int) (rule, bool) {
	if value == "" || (value[0] != '/' && value[0] != '*') {
		return rule{}, false
	}
	norm := normalizePattern(value)
	r := rule{length: len(norm), allow: allow, pattern: value, line: line}
	body := norm
	// Only a final '$' is special; elsewhere it is an ordinary octet, as in
	// Google's matcher.
	if strings.HasSuffix(body, "$") {
		r.anchored = true
		body = body[:len(body)-1]
	}
	if !strings.Contains(body, "*") {
		r.segs = []string{body}
		return r, true
	}
	parts := strings.Split(body, "*")
	if len(parts) > 1 && parts[len(parts)-1] == "" && r.anchored {
		// "/a*$" is the same as "/a*": the '*' swallows any end.
		r.anchored = false
	}
	// Empty literals (from "**" or a trailing '*') match trivially, so only
	// the first segment, which pins the start, is kept when empty.
	r.segs = make([]string, 1, len(parts))
	r.segs[0] = parts[0]
	for _, s := range parts[1:] {
		if s != "" {
			r.segs = append(r.segs, s)
		}
	}
	return r, true
}

// match reports whether the normalised path matches the rule.
func (r *rule) match(path string) bool {
	first := r.segs[0]
	if len(path) < len(first) || path[:len(first)] != first {
		return false
	}
	last := len(r.segs) - 1
	if last == 0 {
		return !r.anchored || len(path) == len(first)
	}
	pos := len(first)
	// Leftmost matching of each middle literal is optimal for patterns
	// made of literals and '*' only, so no backtracking is needed.
	for _, s := range r.segs[1:last] {
		i := strings.Index(path[pos:], s)
		if i < 0 {
			return false
		}
		pos += i + len(s)
	}
	tail := r.segs[last]
	if r.anchored {
		return len(path)-pos >= len(tail) && path[len(path)-len(tail):] == tail
	}
	return strings.Contains(path[pos:], tail)
}

// normalizePattern percent-encodes octets that cannot appear raw in a
// request target (controls, space, DEL and everything outside US-ASCII) and
// upper-cases the hex digits of existing %XX escapes. It never decodes.
func normalizePattern(p string) string {
	clean := true
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c <= ' ' || c >= 0x7f || (c == '%' && hasLowerHexEscape(p, i)) {
			clean = false
			break
		}
	}
	if clean {
		return p
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(p) + 16)
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c <= ' ' || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		case c == '%' && i+2 < len(p) && isHex(p[i+1]) && isHex(p[i+2]):
			b.WriteByte('%')
			b.WriteByte(upperHex(p[i+1]))
			b.WriteByte(upperHex(p[i+2]))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// normalizePath brings a path and query into the form rules are compared
// in: fragment dropped, leading '/' ensured, %XX hex upper-cased. It
// allocates only when it has to change something.
func normalizePath(p string) string {
	if i := strings.IndexByte(p, '#'); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && hasLowerHexEscape(p, i) {
			return upperEscapes(p)
		}
	}
	return p
}

func upperEscapes(p string) string {
	b := []byte(p)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' && isHex(b[i+1]) && isHex(b[i+2]) {
			b[i+1] = upperHex(b[i+1])
			b[i+2] = upperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

// hasLowerHexEscape reports whether p[i] (a '%') starts an escape with a
// lower-case hex digit.
func hasLowerHexEscape(p string, i int) bool {
	if i+2 >= len(p) || !isHex(p[i+1]) || !isHex(p[i+2]) {
		return false
	}
	return isLowerHexLetter(p[i+1]) || isLowerHexLetter(p[i+2])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isLowerHexLetter(c byte) bool { return 'a' <= c && c <= 'f' }

func upperHex(c byte) byte {
	if isLowerHexLetter(c) {
		return c - ('a' - 'A')
	}
	return c
}
