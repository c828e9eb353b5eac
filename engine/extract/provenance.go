package extract

import (
	"bytes"
	"net/url"
	"strings"

	"lidi/engine/urlnorm"
)

// What a page says about where it comes from: the URL it names as its
// canonical copy (RFC 6596, as a <link> element or an HTTP Link header),
// the URL of its Open Graph object (og:url), and the note a mirroring tool
// left in it ("<!-- Mirrored from www.x.org/a.html by HTTrack Website
// Copier -->", Internet Explorer's "<!-- saved from url=(0023)http://x/ -->").
// These are claims, not facts: duplicate detection weighs them against
// what it fetched (see dedup.Page), and never obeys them alone.

// ogURL returns the content of a <meta property="og:url"> tag, or "".
// It reads the raw tag (metaAttrs reads name, not property).
func ogURL(raw []byte) string {
	var prop, content []byte
	hasProp, hasContent := false, false
	forEachRawAttr(raw, func(key, val []byte) bool {
		switch {
		case !hasProp && equalLower(key, "property"):
			prop, hasProp = val, true
		case !hasContent && equalLower(key, "content"):
			content, hasContent = val, true
		}
		return !(hasProp && hasContent)
	})
	// Copied only for og:url: every meta tag passes here.
	if !hasContent || !bytes.EqualFold(bytes.TrimSpace(prop), []byte("og:url")) {
		return ""
	}
	return string(bytes.TrimSpace(content))
}

// mirrorNotes are the notes mirroring tools leave in a page's comments,
// each followed by the address the page was copied from.
var mirrorNotes = [...]string{
	"mirrored from ",  // HTTrack: "Mirrored from host/path by HTTrack Website Copier/3.x"
	"saved from url=", // Internet Explorer and wget-style saves: "saved from url=(0023)http://x/"
}

// mirroredFrom returns the address a mirroring tool's comment names, as
// written ("www.catb.org/~esr/jargon/html/A/ABEND.html",
// "http://x.org/"), or "" when the comment is no such note.
func mirroredFrom(comment []byte) string {
	if len(comment) < 12 {
		return ""
	}
	low := bytes.ToLower(comment[:min(len(comment), 256)])
	for _, note := range mirrorNotes {
		k := bytes.Index(low, []byte(note))
		if k < 0 {
			continue
		}
		rest := bytes.TrimSpace(comment[k+len(note):])
		if len(rest) > 0 && rest[0] == '(' { // IE's length prefix, "(0023)"
			if e := bytes.IndexByte(rest, ')'); e > 0 {
				rest = rest[e+1:]
			}
		}
		if e := bytes.IndexAny(rest, " \t\r\n"); e >= 0 {
			rest = rest[:e]
		}
		return string(rest)
	}
	return ""
}

// resolveClaim resolves a claimed address against the page's base URL and
// normalises it. A mirroring tool's note names a host and path without a
// scheme ("www.x.org/a.html"): it is read as http://, the scheme the
// note does not record.
func resolveClaim(norm *urlnorm.Normalizer, base, raw string, schemeless bool) string {
	if raw == "" {
		return ""
	}
	if schemeless && !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := norm.ResolveString(base, raw)
	if err != nil {
		return ""
	}
	return u
}

// LinkCanonical returns the target of the first rel="canonical" link of
// HTTP Link header values (RFC 8288, RFC 6596: `<https://x/a>;
// rel="canonical"`), resolved against page and normalised, or "". A
// canonical link is how a server names the canonical URL of a response
// that is not HTML (a PDF), or of every page without editing them.
func LinkCanonical(values []string, page *url.URL, norm *urlnorm.Normalizer) string {
	if norm == nil {
		norm = urlnorm.Default
	}
	for _, v := range values {
		for v != "" {
			v = strings.TrimLeft(v, " \t,")
			if !strings.HasPrefix(v, "<") {
				break
			}
			end := strings.IndexByte(v, '>')
			if end < 0 {
				break
			}
			target := v[1:end]
			v = v[end+1:]
			// The parameters run to the next link: a ',' outside quotes.
			params, rest := splitLinkParams(v)
			v = rest
			if linkRel(params, "canonical") {
				if u, err := norm.Resolve(page, target); err == nil {
					return u
				}
			}
		}
	}
	return ""
}

// splitLinkParams splits s, the text after one link's "<target>", at the
// ',' that starts the next link, outside quoted strings.
func splitLinkParams(s string) (params, rest string) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			quoted = !quoted
		case c == '\\' && quoted:
			i++
		case c == ',' && !quoted:
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

// linkRel reports whether a link's parameters (`; rel="canonical
// alternate"`) hold relation rel.
func linkRel(params, rel string) bool {
	for _, p := range strings.Split(params, ";") {
		name, val, ok := strings.Cut(strings.TrimSpace(p), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "rel") {
			continue
		}
		val = strings.Trim(strings.TrimSpace(val), `"`)
		if hasToken(val, rel) {
			return true
		}
	}
	return false
}
