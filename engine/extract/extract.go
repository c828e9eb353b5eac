// Package extract finds the links of an HTML page in the tokens of
// golang.org/x/net/html's tokenizer (not the tree builder, which is about
// 2.4 times slower here), read by a scanner of its own that returns the
// same tokens faster (scan.go), and returns them resolved and normalised
// by urlnorm.
//
// It reports a[href], area[href], frame[src], iframe[src],
// link[rel~=canonical] and the URL of a <meta http-equiv="refresh">,
// honours the first <base href>, and returns the raw content of
// <meta name="robots"> and the page title. rel="nofollow" on a and area is
// flagged per link. Pages that are not UTF-8 are decoded first (charset
// from a byte order mark, the Content-Type header, or a <meta> in the first
// 1024 bytes); UTF-8 pages and pure-ASCII pages are not copied.
//
// Links inside <noscript> and <noframes> are reported: a crawler does not
// run scripts, so it sees what a browser without scripts shows. Links in
// scripts, styles, comments and <textarea> are not links.
//
// As in browsers, the base URL set by <base href> applies to every link of
// the document, even one that comes before the <base> element.
//
// Malformed HTML never makes extraction fail: the tokenizer recovers as
// browsers do, and what it finds is returned.
package extract

import (
	"bytes"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"

	"lidi/engine/urlnorm"
)

// ErrBase is returned when the page URL given to Extract is nil or not an
// absolute http or https URL.
var ErrBase = errors.New("extract: page URL is not an absolute http or https URL")

// DefaultMaxLinks caps the links kept from one page when
// Extractor.MaxLinks is zero. Pages with more are nearly always generated
// traps; the crawler learns it from Result.Truncated.
const DefaultMaxLinks = 10000

// maxTitle caps the title kept, in bytes.
const maxTitle = 1024

// Kind says which element a link comes from.
type Kind uint8

// Link kinds.
const (
	KindA         Kind = iota // <a href>
	KindArea                  // <area href>
	KindFrame                 // <frame src>
	KindIFrame                // <iframe src>
	KindRefresh               // <meta http-equiv="refresh" content="N; url=...">
	KindCanonical             // <link rel="canonical" href>
)

var kindNames = [...]string{"a", "area", "frame", "iframe", "refresh", "canonical"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// A Link is one outgoing link of a page.
type Link struct {
	// URL is the link target, resolved against the page's base URL and
	// normalised by urlnorm.
	URL string
	// Kind is the element the link comes from.
	Kind Kind
	// NoFollow is set when an a or area element has rel="nofollow".
	NoFollow bool
}

// A Result holds what Extract found in one page. Its zero value is ready
// to use; Extract resets it and reuses the Links slice, so a crawler can
// keep Results in a pool.
type Result struct {
	// Links are the page's links in document order, including the
	// canonical and refresh links. Invalid and skipped links are left out.
	Links []Link
	// Canonical is the first <link rel="canonical"> target, resolved and
	// normalised, or "".
	Canonical string
	// OGURL is the first <meta property="og:url"> content, resolved and
	// normalised, or "" (see provenance.go).
	OGURL string
	// MirroredFrom is the address the first mirroring tool's comment
	// names ("Mirrored from www.x.org/a.html by HTTrack"), read as an
	// http URL and normalised, or "" (see provenance.go).
	MirroredFrom string
	// MetaRobots is the raw content of <meta name="robots"> and the other
	// Extractor.RobotsNames (several such elements are joined with ", "),
	// for the robots package to parse.
	MetaRobots string
	// Refresh is the first meta refresh target, resolved and normalised,
	// or "" when there is none or it names no URL.
	Refresh string
	// Base is the URL links were resolved against: the first <base href>
	// resolved against the page URL, or the page URL, normalised.
	Base string
	// Title is the first <title>, with white space collapsed.
	Title string
	// Charset is the encoding the page was decoded from ("utf-8",
	// "windows-1252", "shift_jis", ...).
	Charset string
	// Invalid counts links whose URL could not be parsed (bad host, bad
	// port, too long, ...).
	Invalid int
	// Skipped counts links with a scheme other than http and https
	// (javascript:, mailto:, tel:, data:, ftp:, ...).
	Skipped int
	// Truncated is set when the page had more links than MaxLinks.
	Truncated bool
}

// Reset empties r, keeping the capacity of r.Links.
func (r *Result) Reset() {
	clear(r.Links)
	*r = Result{Links: r.Links[:0]}
}

// An Extractor extracts links. The zero value uses urlnorm.Default and
// DefaultMaxLinks. An Extractor is safe for concurrent use if its fields
// are not changed while in use.
type Extractor struct {
	// Normalizer resolves and normalises the links; nil means
	// urlnorm.Default.
	Normalizer *urlnorm.Normalizer
	// MaxLinks caps the links taken from one page; zero means
	// DefaultMaxLinks and a negative value means no cap.
	MaxLinks int
	// RobotsNames are the <meta name> values whose content goes to
	// Result.MetaRobots, compared case-insensitively; nil means
	// {"robots"}. robots.MetaNames gives a crawler's, its own name
	// included, to honour <meta name="lidi" content="noindex">.
	RobotsNames []string
}

var defaultExtractor Extractor

// Links extracts the links of body with the default Extractor. See
// Extractor.Extract.
func Links(body []byte, contentType string, page *url.URL, dst *Result) error {
	return defaultExtractor.Extract(body, contentType, page, dst)
}

// Extract resets dst and fills it with what body contains. contentType is
// the Content-Type header of the response (its charset parameter is used)
// and page the URL the body was fetched from. body is not modified and not
// retained. The error is ErrBase when page is unusable; HTML errors are not
// errors.
func (e *Extractor) Extract(body []byte, contentType string, page *url.URL, dst *Result) error {
	dst.Reset()
	norm := e.Normalizer
	if norm == nil {
		norm = urlnorm.Default
	}
	if page == nil {
		return ErrBase
	}
	pageURL, err := norm.Resolve(page, "")
	if err != nil {
		return ErrBase
	}
	maxLinks := e.MaxLinks
	if maxLinks == 0 {
		maxLinks = DefaultMaxLinks
	}
	robotsNames := e.RobotsNames
	if robotsNames == nil {
		robotsNames = []string{"robots"}
	}

	text, cs := decode(body, contentType)
	dst.Charset = cs

	// First pass: collect the raw link targets in document order; they are
	// resolved once the whole document, and so its base, is known.
	var (
		baseHref  string
		baseSeen  bool
		inTitle   bool
		titleSeen bool
		canonical = -1 // index in dst.Links of the first canonical link
		refresh   = -1
		robots    []string
		ogRaw     string // og:url and a mirroring tool's note, as written
		mirrorRaw string
	)
	addLink := func(raw string, kind Kind, nofollow bool) int {
		if maxLinks > 0 && len(dst.Links) >= maxLinks {
			dst.Truncated = true
			return -1
		}
		dst.Links = append(dst.Links, Link{URL: raw, Kind: kind, NoFollow: nofollow})
		return len(dst.Links) - 1
	}

	z := newScanner(text)
	for {
		tt := z.next()
		if tt == html.ErrorToken {
			break // io.EOF: the reader is in memory and cannot fail otherwise
		}
		if inTitle {
			inTitle = false
			if tt == html.TextToken && !titleSeen {
				dst.Title = collapseSpace(z.text())
				titleSeen = true
			}
		}
		if tt == html.CommentToken && mirrorRaw == "" {
			mirrorRaw = mirroredFrom(z.text())
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		// The tag name comes from the raw bytes: most tags are of no
		// interest.
		var nameBuf [8]byte
		raw := z.raw()
		name := tagName(raw, &nameBuf)
		switch string(name) { // no copy: only compared
		case "a", "area":
			href, rel, ok := tagAttrs(z, "href", "rel")
			if ok {
				kind := KindA
				if string(name) == "area" {
					kind = KindArea
				}
				addLink(href, kind, hasToken(rel, "nofollow"))
			}
		case "frame", "iframe":
			if src, _, ok := tagAttrs(z, "src", ""); ok {
				kind := KindFrame
				if string(name) == "iframe" {
					kind = KindIFrame
				}
				addLink(src, kind, false)
			}
		case "link":
			href, rel, ok := tagAttrs(z, "href", "rel")
			if ok && hasToken(rel, "canonical") {
				if i := addLink(href, KindCanonical, false); canonical < 0 {
					canonical = i
				}
			}
		case "meta":
			if ogRaw == "" {
				ogRaw = ogURL(raw)
			}
			metaName, equiv, content := metaAttrs(z)
			if content == nil {
				break
			}
			if equalFoldAny(metaName, robotsNames) {
				robots = append(robots, strings.TrimSpace(string(content)))
			}
			if strings.EqualFold(string(equiv), "refresh") {
				if target, ok := refreshURL(content); ok {
					if i := addLink(target, KindRefresh, false); refresh < 0 {
						refresh = i
					}
				}
			}
		case "base":
			// Only the first <base> with an href counts.
			if !baseSeen {
				if href, _, ok := tagAttrs(z, "href", ""); ok {
					baseHref, baseSeen = href, true
				}
			}
		case "title":
			inTitle = !titleSeen
		case "noscript", "noframes":
			// Their content is markup for a browser without scripts or
			// frames, which a crawler is.
			z.nextIsNotRawText()
		}
	}
	dst.MetaRobots = strings.Join(robots, ", ")

	base := pageURL
	if baseSeen {
		if b, err := norm.ResolveString(pageURL, baseHref); err == nil {
			base = b
		}
	}
	dst.Base = base
	dst.OGURL = resolveClaim(norm, base, ogRaw, false)
	dst.MirroredFrom = resolveClaim(norm, base, mirrorRaw, true)

	// Second pass: resolve in place, dropping what does not resolve.
	w := 0
	for i := range dst.Links {
		l := dst.Links[i]
		u, err := norm.ResolveString(base, l.URL)
		if err != nil {
			if errors.Is(err, urlnorm.ErrScheme) {
				dst.Skipped++
			} else {
				dst.Invalid++
			}
			continue
		}
		l.URL = u
		if i == canonical && dst.Canonical == "" {
			dst.Canonical = u
		}
		if i == refresh && dst.Refresh == "" {
			dst.Refresh = u
		}
		dst.Links[w] = l
		w++
	}
	clear(dst.Links[w:])
	dst.Links = dst.Links[:w]
	return nil
}

// tagName returns the lower-cased name of the tag whose raw bytes start
// with '<', in buf, or nil if it is longer than 8 bytes (no tag of interest
// is). It returns bytes, not a string: a string returned escapes, and was
// an allocation for every tag name of two bytes or more.
func tagName(raw []byte, buf *[8]byte) []byte {
	n := 0
	for i := 1; i < len(raw); i++ {
		c := raw[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>' {
			break
		}
		if n == len(buf) {
			return nil
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[n] = c
		n++
	}
	return buf[:n]
}

// attrs2 returns the values of the attributes named a and b of the current
// tag (b may be ""). ok reports whether a is present. The values are
// copies: the tokenizer's slices change on the next call to Next.
func attrs2(z *html.Tokenizer, a, b string) (va, vb string, ok bool) {
	for {
		key, val, more := z.TagAttr()
		if key == nil {
			return va, vb, ok
		}
		// The tokenizer lower-cases keys and drops repeated attributes, so
		// the first occurrence wins, as in browsers.
		switch string(key) {
		case a:
			va, ok = string(val), true
		case b:
			if b != "" {
				vb = string(val)
			}
		}
		if !more {
			return va, vb, ok
		}
	}
}

// metaAttrs returns the name, http-equiv and content attributes of the
// current meta tag, read from its raw bytes unless a value needs decoding;
// content is nil when absent. The slices are only valid until the end of
// Extract.
func metaAttrs(s *scanner) (name, equiv, content []byte) {
	hasName, hasEquiv, hasContent, plain := false, false, false, true
	forEachRawAttr(s.raw(), func(key, val []byte) bool {
		switch {
		case !hasName && equalLower(key, "name"):
			name, hasName = val, true
		case !hasEquiv && equalLower(key, "http-equiv"):
			equiv, hasEquiv = val, true
		case !hasContent && equalLower(key, "content"):
			content, hasContent = val, true
		default:
			return true
		}
		plain = plain && plainValue(val)
		return !(hasName && hasEquiv && hasContent)
	})
	if !plain {
		return decodedMetaAttrs(s.tokenizer())
	}
	if hasContent && content == nil {
		content = []byte{}
	}
	return name, equiv, content
}

// decodedMetaAttrs is metaAttrs through the tokenizer's TagAttr, which
// decodes the values.
func decodedMetaAttrs(z *html.Tokenizer) (name, equiv, content []byte) {
	for {
		key, val, more := z.TagAttr()
		if key == nil {
			return
		}
		switch string(key) {
		case "name":
			name = bytes.Clone(val)
		case "http-equiv":
			equiv = bytes.Clone(val)
		case "content":
			content = bytes.Clone(val)
			if content == nil {
				content = []byte{}
			}
		}
		if !more {
			return
		}
	}
}

func equalFoldAny(b []byte, names []string) bool {
	if b == nil {
		return false
	}
	s := strings.TrimSpace(string(b))
	for _, n := range names {
		if strings.EqualFold(s, n) {
			return true
		}
	}
	return false
}

// hasToken reports whether the space-separated list s contains token,
// ignoring ASCII case.
func hasToken(s, token string) bool {
	for len(s) > 0 {
		i := 0
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		if j > i && strings.EqualFold(s[i:j], token) {
			return true
		}
		s = s[j:]
	}
	return false
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// collapseSpace trims s, turns runs of white space into one space and caps
// the length at maxTitle bytes, on a rune boundary.
func collapseSpace(s []byte) string {
	var b strings.Builder
	b.Grow(min(len(s), maxTitle+1)) // at once: grown a byte at a time, it took three allocations a page
	space := false
	for _, c := range s {
		if isSpace(c) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteByte(c)
		if b.Len() >= maxTitle {
			break
		}
	}
	t := b.String()
	if len(t) > maxTitle {
		t = t[:maxTitle]
	}
	for len(t) > 0 && !utf8.ValidString(t) {
		t = t[:len(t)-1]
	}
	return t
}

// refreshURL extracts the URL from the content of a meta refresh, following
// the HTML Standard's "shared declarative refresh steps": a time, then an
// optional separator, then "url=" (optional) and the URL, possibly quoted.
// ok is false when the content is malformed or names no URL.
func refreshURL(content []byte) (string, bool) {
	s := string(content)
	i := 0
	skipSpace := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	skipSpace()
	start := i
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	if i == start && (i == len(s) || s[i] != '.') {
		return "", false
	}
	for i < len(s) && (('0' <= s[i] && s[i] <= '9') || s[i] == '.') {
		i++
	}
	if i < len(s) {
		if c := s[i]; c != ';' && c != ',' && !isSpace(c) {
			return "", false
		}
		skipSpace()
		if i < len(s) && (s[i] == ';' || s[i] == ',') {
			i++
		}
		skipSpace()
	}
	if i == len(s) {
		return "", false // refreshes the page itself
	}
	urlStart := i
	if s[i] == 'U' || s[i] == 'u' {
		i++
		if i < len(s) && (s[i] == 'R' || s[i] == 'r') {
			i++
			if i < len(s) && (s[i] == 'L' || s[i] == 'l') {
				i++
				skipSpace()
				if i < len(s) && s[i] == '=' {
					i++
					skipSpace()
					urlStart = i
				} else {
					i = urlStart
				}
			} else {
				i = urlStart
			}
		} else {
			i = urlStart
		}
	}
	u := s[urlStart:]
	if u != "" && (u[0] == '\'' || u[0] == '"') {
		q := u[0]
		u = u[1:]
		if j := strings.IndexByte(u, q); j >= 0 {
			u = u[:j]
		}
	}
	if strings.TrimSpace(u) == "" {
		return "", false
	}
	return u, true
}
