package urlnorm

import (
	"strconv"
	"strings"
)

// Site splits a normalised URL into its site key, "scheme://host[:port]"
// with the default port dropped (the key of one web server as a crawler
// sees it: one politeness queue, one robots.txt), and its host name. ok
// is false when the URL names no host. It does not allocate.
func Site(u string) (key, host string, ok bool) {
	i := strings.Index(u, "://")
	if i < 0 {
		return "", "", false
	}
	rest := u[i+3:]
	j := strings.IndexAny(rest, "/?#")
	if j < 0 {
		j = len(rest)
	}
	key = u[:i+3+j]
	hostport := rest[:j]
	host = hostport
	if strings.HasPrefix(hostport, "[") {
		if k := strings.Index(hostport, "]"); k > 0 {
			host = hostport[1:k]
		}
	} else if k := strings.LastIndexByte(hostport, ':'); k >= 0 {
		host = hostport[:k]
	}
	return key, host, host != ""
}

// Port returns the port of a site key (see Site): the one it names, or
// the scheme's default.
func Port(key string) int {
	i := strings.Index(key, "://")
	hostport := key[i+3:]
	if k := strings.LastIndexByte(hostport, ':'); k >= 0 && !strings.HasSuffix(hostport, "]") {
		if p, err := strconv.Atoi(hostport[k+1:]); err == nil {
			return p
		}
	}
	if strings.HasPrefix(key, "https:") {
		return 443
	}
	return 80
}

// PathQuery returns the path and query of a normalised URL, without its
// fragment: what robots.txt rules match.
func PathQuery(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	rest := u[i+3:]
	j := strings.IndexAny(rest, "/?")
	if j < 0 {
		return "/"
	}
	p := rest[j:]
	if k := strings.IndexByte(p, '#'); k >= 0 {
		p = p[:k]
	}
	if p[0] == '?' {
		p = "/" + p
	}
	return p
}
