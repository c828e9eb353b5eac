package robots

import "strings"

// Directives are the page-level instructions lidi obeys, from
// <meta name="robots"> and the X-Robots-Tag header. The zero value means
// no restriction: index the page and follow its links. It is a plain value,
// and the functions of this file are pure and safe for concurrent use.
type Directives struct {
	NoIndex  bool // do not index (store or rank) the page
	NoFollow bool // do not follow the page's links
}

// Merge returns the combination of d and o. Restrictions add up: when
// sources disagree the more restrictive one applies, as search engines do.
func (d Directives) Merge(o Directives) Directives {
	return Directives{NoIndex: d.NoIndex || o.NoIndex, NoFollow: d.NoFollow || o.NoFollow}
}

// ParseMeta reads the content attribute of a robots meta tag, such as
// "noindex, nofollow". Tokens are separated by commas (spaces and
// semicolons are tolerated too) and compared case-insensitively. "none"
// means noindex and nofollow; "all", "index", "follow" and unknown tokens
// restrict nothing.
func ParseMeta(content string) Directives {
	var d Directives
	for _, tok := range strings.FieldsFunc(content, isDirectiveSeparator) {
		d = d.apply(tok)
	}
	return d
}

// MetaNames returns the name attributes of the meta tags that speak to the
// crawler identified by agent, for an HTML reader to collect their
// content (extract.Extractor.RobotsNames): "robots", which speaks to every
// crawler, and the agent's product token, which speaks to it alone, as
// Googlebot honours <meta name="googlebot">. Both apply, the more
// restrictive winning (ParseMeta of their contents joined). Names compare
// case-insensitively.
func MetaNames(agent string) []string {
	if tok := ProductToken(agent); tok != "" && !strings.EqualFold(tok, "robots") {
		return []string{"robots", tok}
	}
	return []string{"robots"}
}

// ParseXRobotsTag reads the X-Robots-Tag header values of a response (all of
// them, as http.Header.Values returns them) for the crawler identified by
// agent. As in Google's reading, a value may start with "name:" to address
// one crawler ("otherbot: noindex, nofollow"); that scope lasts until the
// next "name:" prefix, and values without one apply to every crawler. Only a
// product token counts as a name, and the directives that themselves carry a
// colon (unavailable_after:, max-snippet:, ...) are not mistaken for one.
func ParseXRobotsTag(values []string, agent string) Directives {
	tok := ProductToken(agent)
	var d Directives
	for _, v := range values {
		applies := true // a header line starts unscoped
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if i := strings.IndexByte(part, ':'); i >= 0 {
				name := strings.TrimSpace(part[:i])
				if isAgentName(name) {
					applies = tok != "" && strings.EqualFold(name, tok)
					part = strings.TrimSpace(part[i+1:])
				}
			}
			if applies {
				for _, t := range strings.FieldsFunc(part, isDirectiveSeparator) {
					d = d.apply(t)
				}
			}
		}
	}
	return d
}

// apply adds the effect of one directive token.
func (d Directives) apply(tok string) Directives {
	switch strings.ToLower(tok) {
	case "noindex":
		d.NoIndex = true
	case "nofollow":
		d.NoFollow = true
	case "none":
		d.NoIndex, d.NoFollow = true, true
	}
	return d
}

// isAgentName reports whether the text before a colon names a crawler: a
// product token that is not one of the directives written "name: value".
// The token test also keeps the colon of a time ("15:00") from being read
// as a scope.
func isAgentName(name string) bool {
	if name == "" || ProductToken(name) != name {
		return false
	}
	switch strings.ToLower(name) {
	case "unavailable_after", "max-snippet", "max-image-preview", "max-video-preview":
		return false
	}
	return true
}

func isDirectiveSeparator(r rune) bool {
	return r == ',' || r == ';' || r == ' ' || r == '\t' || r == '\n' || r == '\r'
}
