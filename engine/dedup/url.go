package dedup

import "strings"

// A normalised URL is read in place, as two strings: head, the page's
// directory with its origin ("http://www.x.test:8080/a/b/"), and rest, the
// file name and query after it ("c.html?x=1", "" for a directory's index
// page). Stored pages keep head interned (one copy per directory) and rest
// in an arena, so splitting this way lets a stored page be read back
// without building its URL.
type urlParts struct {
	head, rest string
	originEnd  int // head[:originEnd] is "scheme://host[:port]"
	hostStart  int // head[hostStart:originEnd] is "host[:port]"
}

// splitURL splits a normalised URL. A URL without a path ("http://x.test")
// is read as its root directory; that costs an allocation, but normalised
// URLs always have a path.
func splitURL(u string) urlParts {
	var p urlParts
	hs := strings.Index(u, "://")
	if hs < 0 {
		hs = 0
	} else {
		hs += 3
	}
	oe := len(u)
	if k := strings.IndexAny(u[hs:], "/?"); k >= 0 {
		oe = hs + k
	}
	p.hostStart, p.originEnd = hs, oe
	if oe == len(u) || u[oe] == '?' {
		p.head = u[:oe] + "/"
		p.rest = u[oe:]
		return p
	}
	pe := len(u)
	if k := strings.IndexByte(u[oe:], '?'); k >= 0 {
		pe = oe + k
	}
	d := oe + strings.LastIndexByte(u[oe:pe], '/') + 1
	p.head, p.rest = u[:d], u[d:]
	return p
}

func (p *urlParts) origin() string { return p.head[:p.originEnd] }

// hostPort returns "host[:port]".
func (p *urlParts) hostPort() string { return p.head[p.hostStart:p.originEnd] }

// dirPath returns the directory's path, "/a/b/".
func (p *urlParts) dirPath() string { return p.head[p.originEnd:] }

// file returns the file name, "c.html", or "" for an index page.
func (p *urlParts) file() string {
	if k := strings.IndexByte(p.rest, '?'); k >= 0 {
		return p.rest[:k]
	}
	return p.rest
}

// query returns the query without its '?', and whether there is one.
func (p *urlParts) query() (string, bool) {
	if k := strings.IndexByte(p.rest, '?'); k >= 0 {
		return p.rest[k+1:], true
	}
	return "", false
}

func (p *urlParts) url() string { return p.head + p.rest }

// siteHost returns host[:port] without a leading "www.", so that
// www.x.test and x.test share keys.
func siteHost(hostPort string) string {
	if len(hostPort) > 4 && hostPort[:4] == "www." && strings.IndexByte(hostPort[4:], '.') > 0 {
		return hostPort[4:]
	}
	return hostPort
}

// Key kinds: each index hashes a different view of a page's URL.
const (
	keyDigest   = 1  // the content digest
	keySitePath = 2  // host without "www.", port and path, no scheme, no query
	keyTail     = 3  // last path segment and query
	keyShape    = 4  // origin, path and query with every run of digits as '#'
	keyTitle    = 5  // origin and title
	keyRule     = 6  // a rewrite (learn.go)
	keyBand     = 7  // site and 16 bits of the main text's simhash
	keyProbe    = 8  // the origin of a probe URL
	keyHost     = 9  // a host name without port and "www." (original.go)
	keyPrior    = 10 // a rule's rewrite without its origin (prior.go)
	keyDir      = 11 // a directory's head, scheme to last slash (index.go)
)

// hasher is FNV-1a 64 over a sequence of strings, finished with fmix64 so
// that every bit of the key hash is usable for table slots and tags.
type hasher uint64

func newHasher(kind byte) hasher {
	h := hasher(fnvOffset64)
	return h.byte(kind)
}

func (h hasher) byte(c byte) hasher { return (h ^ hasher(c)) * fnvPrime64 }

func (h hasher) str(s string) hasher {
	for i := 0; i < len(s); i++ {
		h = (h ^ hasher(s[i])) * fnvPrime64
	}
	return h
}

// u64 hashes x's eight bytes, low first.
func (h hasher) u64(x uint64) hasher {
	for range 8 {
		h = (h ^ hasher(x&0xff)) * fnvPrime64
		x >>= 8
	}
	return h
}

// shape hashes s with every run of ASCII digits replaced by one '#'.
func (h hasher) shape(s string) hasher {
	digits := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if '0' <= c && c <= '9' {
			if !digits {
				h = (h ^ '#') * fnvPrime64
			}
			digits = true
			continue
		}
		digits = false
		h = (h ^ hasher(c)) * fnvPrime64
	}
	return h
}

func (h hasher) sum() uint64 { return fmix64(uint64(h)) }

func digestKey(d uint64) uint64 { return fmix64(d ^ 0x9e3779b97f4a7c15) }

// sitePathKey: same path on another scheme or on the www/bare twin of the
// host, or another query of the same path.
func sitePathKey(p *urlParts) uint64 {
	return sitePathDir(p.hostPort(), p.dirPath()).str(p.file()).sum()
}

// sitePathDir is sitePathKey's hash of a directory, its file to come.
func sitePathDir(hostPort, dirPath string) hasher {
	return newHasher(keySitePath).str(siteHost(hostPort)).str(dirPath)
}

// fileOf returns the file name of rest (a page's file name and query).
func fileOf(rest string) string {
	if k := strings.IndexByte(rest, '?'); k >= 0 {
		return rest[:k]
	}
	return rest
}

// sitePathKeyOfPath is sitePathKey for a page of p's host at another path.
func sitePathKeyOfPath(p *urlParts, path string) uint64 {
	return newHasher(keySitePath).str(siteHost(p.hostPort())).str(path).sum()
}

// tailKey: the last segment with the query, so that /docs/a.html and
// /docs-copy/a.html, /a/b/ and /c/b/, /article/12 and /print/article/12
// meet. The root page has no segment and uses "/".
func tailKey(p *urlParts) uint64 {
	h := newHasher(keyTail)
	if p.rest == "" || p.rest[0] == '?' { // an index page: its directory's name
		h = h.str(lastSegment(p.dirPath()))
	}
	return h.str(p.rest).sum()
}

// tailKeyOf is tailKey of a page that is not its directory's index, by
// its file name and query alone.
func tailKeyOf(rest string) uint64 { return newHasher(keyTail).str(rest).sum() }

// lastSegment returns the last segment of a directory path with its
// slash: "b/" for "/a/b/", "/" for "/".
func lastSegment(dir string) string {
	if len(dir) <= 1 {
		return dir
	}
	return dir[strings.LastIndexByte(dir[:len(dir)-1], '/')+1:]
}

// hasDigit reports whether the path or query has a digit: only such URLs
// are indexed by shape.
func hasDigit(p *urlParts) bool {
	return strings.ContainsAny(p.dirPath(), "0123456789") || strings.ContainsAny(p.rest, "0123456789")
}

// shapeKey: URLs of one origin that differ only in their numbers, as the
// months of a calendar (/cal/2026/11/, /cal/2027/01/, /cal?m=2026-11).
func shapeKey(p *urlParts) uint64 {
	return shapeDir(p.origin(), p.dirPath()).shape(p.rest).sum()
}

// shapeDir is shapeKey's hash of a directory, its file name and query to
// come. A directory's path ends with '/', so no run of digits goes on
// into them.
func shapeDir(origin, dirPath string) hasher {
	return newHasher(keyShape).str(origin).shape(dirPath)
}

// shapePattern returns origin and path with each run of digits as '#': the
// Prefix of a sibling-trap label.
func shapePattern(u string) string {
	var b strings.Builder
	b.Grow(len(u))
	p := splitURL(u)
	b.WriteString(p.origin())
	digits := false
	for _, s := range [2]string{p.dirPath(), p.rest} {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if '0' <= c && c <= '9' {
				if !digits {
					b.WriteByte('#')
				}
				digits = true
				continue
			}
			digits = false
			b.WriteByte(c)
		}
	}
	return b.String()
}

// segments splits a path ("/a/b/c.html") into its segments ("a", "b",
// "c.html"); a final slash gives no empty last segment.
func segments(dst []string, path string) []string {
	path = strings.TrimPrefix(path, "/")
	for path != "" {
		k := strings.IndexByte(path, '/')
		if k < 0 {
			return append(dst, path)
		}
		dst = append(dst, path[:k])
		path = path[k+1:]
	}
	return dst
}

// maxRepeatSegments bounds the paths examined for repeated segments; longer
// paths are deep in a loop that is already labelled, or garbage.
const maxRepeatSegments = 64

// collapseOnce removes the second copy of the first (shortest) run of
// segments that repeats at once: a/b/a/b/x → a/b/x, a/x/x/ → a/x/. It
// reports false if the path repeats nothing.
func collapseOnce(segs []string) ([]string, bool) {
	n := len(segs)
	if n > maxRepeatSegments {
		n = maxRepeatSegments
	}
	for l := 1; 2*l <= n; l++ {
		for i := 0; i+2*l <= n; i++ {
			if equalRuns(segs[i:i+l], segs[i+l:i+2*l]) {
				out := append(segs[:i+l:i+l], segs[i+2*l:]...)
				return out, true
			}
		}
	}
	return segs, false
}

func equalRuns(a, b []string) bool {
	for k := range a {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// collapseAll removes repeated runs until none is left.
func collapseAll(segs []string) []string {
	for range maxRepeatSegments {
		var ok bool
		if segs, ok = collapseOnce(segs); !ok {
			break
		}
	}
	return segs
}

// joinPath builds "/a/b/" (dir true) or "/a/b" from segments.
func joinPath(segs []string, dir bool) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(s)
	}
	if dir || len(segs) == 0 {
		b.WriteByte('/')
	}
	return b.String()
}

// indexNames are file names that serve a directory's index: /docs/ and
// /docs/index.html are the same place when relating two URLs.
var indexNames = map[string]bool{
	"index.html": true, "index.htm": true, "index.php": true, "index.shtml": true,
	"default.htm": true, "default.html": true, "default.asp": true, "default.aspx": true,
}

func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	return (a == "" || indexNames[a]) && (b == "" || indexNames[b])
}

// titleKey: pages of one origin (its originHash) with one title (soft
// 404s).
func titleKey(origin uint32, title uint64) uint64 {
	return fmix64(uint64(keyTitle)<<56|uint64(origin)) ^ fmix64(title)
}

// originHash is the hash of an origin that titleKey is made of.
func originHash(origin string) uint32 { return uint32(newHasher(keyTitle).str(origin).sum()) }

// siteHash is the hash of a host without "www." that bandKey is made of.
func siteHash(hostPort string) uint32 {
	return uint32(newHasher(keyBand).str(siteHost(hostPort)).sum())
}

// simBands is the number of 16-bit bands of a simhash indexed.
const simBands = 4

// bandKey: pages of one site (host without "www.", its siteHash) whose
// main-text simhash has the same band k. Two sites whose 32-bit hashes
// agree share keys: their pages are then suspects of each other's, which
// the simhash test still decides.
func bandKey(site uint32, k int, main uint64) uint64 {
	return fmix64(uint64(keyBand)<<56|uint64(k)<<32|uint64(site)) ^ fmix64(main>>(16*k)&0xffff)
}

// pathParams returns the path parameters of a file name, "a=1;b" of
// "cart;a=1;b", or "".
func pathParams(file string) string {
	_, p, _ := strings.Cut(file, ";")
	return p
}

// withoutPathParams returns a file name without its path parameters.
func withoutPathParams(file string) string {
	f, _, _ := strings.Cut(file, ";")
	return f
}
