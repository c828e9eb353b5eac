package robots

import "strings"

// ProductToken returns the part of a User-Agent string that robots.txt
// groups are matched against: the leading run of letters, '-' and '_'
// (RFC 9309 section 2.2.1), so "lidi" for "lidi/0.1 (+https://example.org)".
// The case is kept; comparisons ignore it. It returns "" when the agent does
// not start with such a character, and such an agent only obeys "*" groups.
func ProductToken(agent string) string {
	agent = strings.TrimLeft(agent, " \t")
	n := 0
	for n < len(agent) && isTokenChar(agent[n]) {
		n++
	}
	return agent[:n]
}

// groupToken returns the key a user-agent line's value is filed under: "*"
// for the global group (Google also reads "* anything" as global), else the
// lower-cased product token, which may be "" for a value that names no
// usable agent.
func groupToken(value string) string {
	if value != "" && value[0] == '*' && (len(value) == 1 || value[1] == ' ' || value[1] == '\t') {
		return "*"
	}
	return strings.ToLower(ProductToken(value))
}

func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_'
}
