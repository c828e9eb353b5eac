// Package urlnorm gives every http and https URL one canonical spelling, so
// that the crawler stores, deduplicates and fetches each resource once.
//
// Parsing follows the WHATWG URL Standard (what browsers do with an href),
// restricted to the http and https schemes; the result is then normalised by
// the rules below. The output is always a valid RFC 3986 URI that net/url
// parses back without change, so net/http sends exactly the normalised path
// (net/url would otherwise re-escape a path containing, say, '|', and decode
// any %2F in it on the way).
//
// Rules, in the order they apply:
//
//  1. Leading and trailing C0 control characters and spaces are trimmed, and
//     tabs, CR and LF anywhere are removed (as browsers do).
//  2. Only http and https are accepted; any other scheme gives ErrScheme
//     (javascript:, mailto:, data:, tel:, ftp:, ...). A reference without a
//     scheme needs a base URL (ErrRelative otherwise). A scheme followed by
//     any number of slashes or backslashes ("http:/x", "http:\\x") starts
//     the authority; "http:foo" against an http base is relative.
//  3. The scheme and host are lower-cased. Host names are percent-decoded,
//     mapped with UTS #46 (non-transitional, as the URL Standard) and
//     converted to punycode (golang.org/x/net/idna). Trailing dots are
//     removed ("example.com." is "example.com"). A host that is not usable
//     with DNS is rejected with ErrHost: each label must be 1 to 63 bytes of
//     a-z, 0-9, '-' or '_' and the name at most 253 bytes. Hosts that end in a
//     number are parsed as IPv4 (URL Standard rules: "0x7f.1" is
//     "127.0.0.1"); bracketed IPv6 addresses are written in their shortest
//     form. Userinfo ("user:pass@") is kept, percent-encoded; an empty one is
//     dropped.
//  4. The port must be decimal and at most 65535 (ErrPort); the default port
//     (80 for http, 443 for https) and an empty port are dropped, and leading
//     zeros are removed.
//  5. The fragment is dropped.
//  6. In the path, backslashes are slashes, and "." and ".." segments are
//     resolved (including their percent-encoded forms such as "%2e%2E"). An
//     empty path becomes "/". Repeated slashes are kept: "/a//b" and "/a/b"
//     can be different resources.
//  7. Percent-encoding is normalised without decoding reserved characters:
//     an escape of an unreserved character (ALPHA, DIGIT, '-', '.', '_', '~')
//     is decoded; every other escape is kept, with upper-case hex digits, so
//     %2F, %3F, %23, %26, %3D and the like are never decoded. A '%' not
//     followed by two hex digits becomes "%25". Bytes that RFC 3986 does not
//     allow in the component are encoded: in the path everything but
//     unreserved characters, sub-delims (!$&'()*+,;=), ':', '@' and '/'; in
//     the query the same plus '?'. So spaces, control characters, non-ASCII
//     bytes (as UTF-8 bytes) and " < > [ \ ] ^ ` { | } are encoded.
//  8. The query is split on '&' (not ';'). Empty parameters ("&&") are
//     removed, parameters whose name matches Normalizer.DropParams are
//     removed (session ids and tracking parameters by default), and path
//     parameters such as ";jsessionid=..." whose name matches are removed
//     from path segments. Parameter order is preserved unless
//     Normalizer.SortQuery is set. An empty query, "?" included, is dropped.
//  9. A result longer than Normalizer.MaxLength bytes gives ErrTooLong.
//
// Normalising a normalised URL returns it unchanged.
package urlnorm

import (
	"errors"
	"net/url"
	"strings"
)

// Errors returned by Normalize and Resolve. They are returned unwrapped, so a
// caller that checks thousands of links pays for no allocation.
var (
	// ErrScheme means the URL's scheme is not http or https.
	ErrScheme = errors.New("urlnorm: scheme is not http or https")
	// ErrRelative means a relative reference was given without a base URL.
	ErrRelative = errors.New("urlnorm: relative reference without a base URL")
	// ErrBase means the base URL is not an absolute http or https URL.
	ErrBase = errors.New("urlnorm: base is not an absolute http or https URL")
	// ErrHost means the host is empty, invalid, or not usable with DNS.
	ErrHost = errors.New("urlnorm: invalid host")
	// ErrPort means the port is not a decimal number up to 65535.
	ErrPort = errors.New("urlnorm: invalid port")
	// ErrTooLong means the URL is longer than the normalizer's MaxLength.
	ErrTooLong = errors.New("urlnorm: URL too long")
)

// DefaultMaxLength is the length cap used when Normalizer.MaxLength is zero.
// It is the sitemaps.org limit; longer URLs are nearly always crawler traps.
const DefaultMaxLength = 2048

// DefaultDropParams are the query (and path) parameter names removed when
// Normalizer.DropParams is nil: session identifiers and click or campaign
// tracking parameters, which change the URL but not the resource.
var DefaultDropParams = []string{
	// Session identifiers.
	"jsessionid", "phpsessid", "sid", "sessionid", "session_id",
	"aspsessionid*", "cfid", "cftoken",
	// Campaign and click tracking.
	"utm_*", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "fbclid",
	"msclkid", "yclid", "twclid", "ttclid", "igshid", "mc_cid", "mc_eid",
	"_ga", "_gl", "_hsenc", "_hsmi", "mkt_tok",
}

// A Normalizer holds normalisation options. The zero value applies the
// defaults: DefaultDropParams, query order preserved, DefaultMaxLength.
// A Normalizer is safe for concurrent use as long as its fields are not
// changed while it is in use; a nil *Normalizer behaves as the zero value.
type Normalizer struct {
	// DropParams lists the names of query parameters (and of ";name=value"
	// path parameters) to remove. Names match ASCII case-insensitively and
	// '*' matches any run of bytes ("utm_*"). A name is compared in its
	// normalised encoded form. Nil means DefaultDropParams; an empty non-nil
	// slice removes nothing.
	DropParams []string `yaml:"drop_params"`

	// SortQuery sorts query parameters by name, keeping the order of
	// parameters that share a name. Off by default: order can matter to the
	// server, and most pages link one spelling consistently.
	SortQuery bool `yaml:"sort_query"`

	// MaxLength caps the length in bytes of a normalised URL; zero means
	// DefaultMaxLength.
	MaxLength int
}

// Default is a Normalizer with the default options, for callers that need
// no configuration.
var Default = &Normalizer{}

func (n *Normalizer) dropParams() []string {
	if n == nil || n.DropParams == nil {
		return DefaultDropParams
	}
	return n.DropParams
}

func (n *Normalizer) maxLength() int {
	if n == nil || n.MaxLength <= 0 {
		return DefaultMaxLength
	}
	return n.MaxLength
}

// Normalize returns the normalised form of the absolute URL raw.
func (n *Normalizer) Normalize(raw string) (string, error) {
	return n.build(nil, raw)
}

// Resolve resolves the reference ref (an href, for instance) against base
// and normalises the result. A nil base is allowed when ref is absolute.
// The base is normalised along the way, so it need not be normalised
// already; it must be an absolute http or https URL when ref is relative.
func (n *Normalizer) Resolve(base *url.URL, ref string) (string, error) {
	if base == nil {
		return n.build(nil, ref)
	}
	var bp baseParts
	bp.fromURL(base)
	return n.build(&bp, ref)
}

// ResolveString is Resolve with the base given as a string, which saves
// the conversion of a *url.URL when many references share one base (the
// links of a page).
func (n *Normalizer) ResolveString(base, ref string) (string, error) {
	var bp baseParts
	bp.fromString(base)
	return n.build(&bp, ref)
}

// Fingerprint returns the 64-bit FNV-1a hash of a normalised URL. The
// function is fixed: fingerprints are stored on disk and must not change
// between runs or versions.
func Fingerprint(normalized string) uint64 {
	const (
		offset64 = 14695981039346656037
		prime64  = 1099511628211
	)
	h := uint64(offset64)
	for i := 0; i < len(normalized); i++ {
		h ^= uint64(normalized[i])
		h *= prime64
	}
	return h
}

// Host returns the host of a normalised URL, without userinfo, port or the
// brackets of an IPv6 address ("[::1]" gives "::1"), as url.URL.Hostname
// does. It returns "" if normalized has no authority. It does not allocate.
func Host(normalized string) string {
	hp := hostPort(normalized)
	if hp == "" {
		return ""
	}
	if hp[0] == '[' {
		if i := strings.IndexByte(hp, ']'); i > 0 {
			return hp[1:i]
		}
		return ""
	}
	if i := strings.IndexByte(hp, ':'); i >= 0 {
		return hp[:i]
	}
	return hp
}

// HostPort returns the authority of a normalised URL without userinfo:
// the host and, when it is not the default, ":port". IPv6 addresses keep
// their brackets. Two schemes on one authority are two sites: see Site for
// the key of one politeness queue.
func HostPort(normalized string) string {
	return hostPort(normalized)
}

func hostPort(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return ""
	}
	s = s[i+3:]
	if j := strings.IndexAny(s, "/?#"); j >= 0 {
		s = s[:j]
	}
	if j := strings.LastIndexByte(s, '@'); j >= 0 {
		s = s[j+1:]
	}
	return s
}

// baseParts holds the unnormalised components of a base URL. Components
// are written through the same normalisation as the reference's, so a base
// that is not normalised still gives a normalised result.
type baseParts struct {
	scheme   string // "http" or "https"; "" if the base is unusable
	userinfo string
	hostport string
	path     string
	query    string
}

func (b *baseParts) fromURL(u *url.URL) {
	switch {
	case strings.EqualFold(u.Scheme, "http"):
		b.scheme = "http"
	case strings.EqualFold(u.Scheme, "https"):
		b.scheme = "https"
	default:
		return
	}
	if u.Opaque != "" || u.Host == "" {
		b.scheme = ""
		return
	}
	if u.User != nil {
		b.userinfo = u.User.String()
	}
	b.hostport = u.Host
	b.path = u.EscapedPath()
	b.query = u.RawQuery
}

func (b *baseParts) fromString(s string) {
	s = trimControlSpace(s)
	scheme, rest, ok := splitScheme(s)
	if !ok {
		return
	}
	switch {
	case strings.EqualFold(scheme, "http"):
		b.scheme = "http"
	case strings.EqualFold(scheme, "https"):
		b.scheme = "https"
	default:
		return
	}
	rest = strings.TrimLeft(rest, `/\`)
	b.userinfo, b.hostport, rest = splitAuthority(rest)
	b.path, b.query, _ = splitPathQuery(rest)
}

// build parses ref, resolving it against bp if it is relative, and returns
// the normalised URL. It follows the state machine of the URL Standard's
// basic URL parser for special schemes, flattened into the few shapes a
// reference can have.
func (n *Normalizer) build(bp *baseParts, ref string) (string, error) {
	maxLen := n.maxLength()
	// Escaping at most triples a byte, so a longer input cannot fit; the
	// check bounds the work done on garbage.
	if len(ref) > 3*maxLen+32 {
		return "", ErrTooLong
	}
	ref = trimControlSpace(ref)
	if strings.ContainsAny(ref, "\t\n\r") {
		ref = removeTabNewline(ref)
	}

	var (
		scheme   string
		userinfo string
		hostport string
		absPath  string // a path that replaces the base path
		relPath  string // a path relative to the base path's directory
		query    string
		hasQuery bool
		pathMode int // one of the path* constants
		fromBase bool
	)
	const (
		pathAbs  = iota // absPath is the whole path
		pathRel         // base path's directory + relPath
		pathBase        // the base path unchanged
	)

	s, rest, hasScheme := splitScheme(ref)
	if hasScheme {
		switch {
		case strings.EqualFold(s, "http"):
			scheme = "http"
		case strings.EqualFold(s, "https"):
			scheme = "https"
		default:
			return "", ErrScheme
		}
	} else {
		rest = ref
	}

	switch {
	case hasScheme && (bp == nil || bp.scheme != scheme || strings.HasPrefix(rest, "//")):
		// Absolute URL: "http:" then any slashes, then the authority.
		// "http://x" against an http base is absolute too.
		rest = strings.TrimLeft(rest, `/\`)
		userinfo, hostport, rest = splitAuthority(rest)
		absPath, query, hasQuery = splitPathQuery(rest)
		pathMode = pathAbs
	default:
		// A relative reference (or "http:foo" against an http base).
		if bp == nil {
			return "", ErrRelative
		}
		if bp.scheme == "" {
			return "", ErrBase
		}
		scheme = bp.scheme
		switch {
		case len(rest) >= 2 && isSlash(rest[0]) && isSlash(rest[1]):
			// Scheme-relative: "//host/path".
			rest = strings.TrimLeft(rest, `/\`)
			userinfo, hostport, rest = splitAuthority(rest)
			absPath, query, hasQuery = splitPathQuery(rest)
			pathMode = pathAbs
		case len(rest) >= 1 && isSlash(rest[0]):
			// Path-absolute: "/path".
			fromBase = true
			absPath, query, hasQuery = splitPathQuery(rest)
			pathMode = pathAbs
		case rest == "" || rest[0] == '#':
			// Same document: the base without its fragment.
			fromBase = true
			pathMode = pathBase
			query, hasQuery = bp.query, true
		case rest[0] == '?':
			fromBase = true
			pathMode = pathBase
			_, query, hasQuery = splitPathQuery(rest)
		default:
			fromBase = true
			pathMode = pathRel
			relPath, query, hasQuery = splitPathQuery(rest)
		}
		if fromBase {
			userinfo, hostport = bp.userinfo, bp.hostport
		}
	}

	var stack [256]byte
	out := stack[:0]
	out = append(out, scheme...)
	out = append(out, "://"...)
	var err error
	out, err = appendAuthority(out, scheme, userinfo, hostport)
	if err != nil {
		return "", err
	}

	drop := n.dropParams()
	pathStart := len(out)
	switch pathMode {
	case pathAbs:
		out = appendPath(out, pathStart, trimOneSlash(absPath), drop)
	case pathBase:
		out = appendPath(out, pathStart, trimOneSlash(bp.path), drop)
	case pathRel:
		out = appendPath(out, pathStart, trimOneSlash(bp.path), drop)
		// Shorten: drop the base path's last segment.
		if j := lastSlash(out[pathStart:]); j >= 0 {
			out = out[:pathStart+j]
		}
		out = appendPath(out, pathStart, relPath, drop)
	}
	if hasQuery && query != "" {
		out = n.appendQuery(out, query, drop)
	}
	if len(out) > maxLen {
		return "", ErrTooLong
	}
	return string(out), nil
}

func isSlash(c byte) bool { return c == '/' || c == '\\' }

func lastSlash(b []byte) int {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			return i
		}
	}
	return -1
}

func trimOneSlash(p string) string {
	if p != "" && isSlash(p[0]) {
		return p[1:]
	}
	return p
}

// trimControlSpace removes leading and trailing C0 controls and spaces.
func trimControlSpace(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

func removeTabNewline(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '\t' && c != '\n' && c != '\r' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// splitScheme splits "scheme:rest". ok is false when s has no scheme.
func splitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !isAlpha(s[0]) {
		return "", s, false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.':
		case c == ':':
			return s[:i], s[i+1:], true
		default:
			return "", s, false
		}
	}
	return "", s, false
}

// splitAuthority splits s (the text after the slashes) into userinfo, host
// with port, and what follows the authority.
func splitAuthority(s string) (userinfo, hostport, rest string) {
	end := len(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '/' || c == '\\' || c == '?' || c == '#' {
			end = i
			break
		}
	}
	auth := s[:end]
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		return auth[:i], auth[i+1:], s[end:]
	}
	return "", auth, s[end:]
}

// splitPathQuery splits s into path and query, dropping the fragment.
func splitPathQuery(s string) (path, query string, hasQuery bool) {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func isAlpha(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
