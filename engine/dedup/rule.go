package dedup

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// RuleKind is the URL rewrite a Rule applies.
type RuleKind uint8

// The kinds of rules. Each is a rewrite of a normalised URL of one origin
// that leaves what the server answers unchanged; the rewritten URL is the
// canonical one, which the crawler fetches instead.
const (
	// DropParam removes every Name parameter from the query (session ids,
	// tracking parameters).
	DropParam RuleKind = iota + 1
	// DropParamValue removes Name=Value only (print=1, lang=en): other
	// values of the parameter may matter.
	DropParamValue
	// SortParams puts the query's parameters in order: their order does
	// not matter.
	SortParams
	// DropSegments removes the run of path segments From at segment Index
	// ("/article/12/print" → "/article/12", a link to "." named "current").
	DropSegments
	// ReplaceSegments replaces the run From at segment Index with To
	// ("/docs-old/x" → "/docs/x" under any parent).
	ReplaceSegments
	// SwapPrefix replaces the path prefix From with To: a directory mirror
	// ("/print/" → "/", "/docs-copy/" → "/docs/"), or a loop when To is an
	// ancestor of From ("/a/b/b/" → "/a/b/").
	SwapPrefix
	// SwapHost replaces the origin with To: the host mirrors another. With
	// a path prefix From ("/mirrors/gnu/"), only that directory of the
	// host mirrors another host's directory, To ("http://gnu.test/doc/"):
	// the rest of the host is its own.
	SwapHost
	// NumberPattern covers the URLs of the pattern From, with '#' for any
	// run of digits, that give the same page (an endless calendar). It has
	// no canonical URL: a covered URL is not fetched at all.
	NumberPattern
	// DropPathParam removes every ";Name=value" parameter from the last
	// segment of the path (a session id carried as a path parameter,
	// "/cart;jsessionid=…" → "/cart").
	DropPathParam
	// DropIndex removes the file name Name that the host serves as its
	// directories' index ("/docs/start.htm" → "/docs/"): learned from
	// pairs, whatever the name.
	DropIndex
	// FoldCase lower-cases the path: the host ignores the case of its
	// paths ("/Docs/Guide.html" → "/docs/guide.html"), as IIS does.
	FoldCase

	// NumRuleKinds is one more than the largest kind: arrays indexed by
	// RuleKind have this length.
	NumRuleKinds
)

var ruleKindNames = [...]string{"", "drop-param", "drop-param-value", "sort-params", "drop-segment", "replace-segment", "swap-prefix", "swap-host", "number-pattern", "drop-path-param", "drop-index", "fold-case"}

// String returns the kind's name as stored, such as "drop-param".
func (k RuleKind) String() string {
	if k > 0 && int(k) < len(ruleKindNames) {
		return ruleKindNames[k]
	}
	return "rule-kind(" + strconv.Itoa(int(k)) + ")"
}

// RuleKinds returns every kind, in order.
func RuleKinds() []RuleKind {
	out := make([]RuleKind, 0, NumRuleKinds-1)
	for k := DropParam; k < NumRuleKinds; k++ {
		out = append(out, k)
	}
	return out
}

// ErrRuleKind is returned by ParseRuleKind for an unknown name.
var ErrRuleKind = fmt.Errorf("dedup: unknown rule kind")

// ParseRuleKind returns the kind named s (RuleKind.String).
func ParseRuleKind(s string) (RuleKind, error) {
	for k := DropParam; k < NumRuleKinds; k++ {
		if ruleKindNames[k] == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("%w %q", ErrRuleKind, s)
}

// Pair is a piece of evidence: the URL ids of a page and of the page it
// was compared with. For support, Copy duplicates Original; for a
// contradiction, they hold different content.
type Pair struct{ Copy, Original uint64 }

// Rule is a URL rewrite learned for one origin from duplicate pages. A
// Rule returned by the Detector is a copy: changing it changes nothing.
type Rule struct {
	Kind   RuleKind
	Origin string // "http://www.x.test:8080": the URLs it rewrites
	// Name and Value are the parameter of DropParam and DropParamValue.
	Name, Value string
	// Index is the first segment of the run of DropSegments and
	// ReplaceSegments (0 for the first segment of the path).
	Index int
	// From and To are, by kind: the runs of segments ("print", "a/b");
	// the path prefixes ("/docs-copy/", "/docs/"); the other origin (To of
	// SwapHost), or the directory From and the other origin's directory To
	// (a SwapHost of one directory); the pattern ("http://x.test/cal/#/#/", From of
	// NumberPattern).
	From, To string
	// Support lists the first pairs that showed the rewrite keeps the
	// content; Supports counts them all.
	Support  []Pair
	Supports int
	// Contradictions lists pairs whose content differed although the rule
	// relates their URLs; a rule with one is withdrawn.
	Contradictions []Pair
	Withdrawn      bool
	// Covered counts the URLs the crawler dropped under the rule (see
	// Detector.Covered).
	Covered int64
	// Prior, when not 0, is how many other origins had learned a rule of
	// the same rewrite, never contradicted, when this one was learned
	// from fewer pairs than Config.MirrorEvidence, or, before any had,
	// how many other origins showed it at once (see prior.go).
	Prior int
	// Choice is why a directory or host swap keeps its canonical side
	// rather than the other (see original.go); zero for other kinds and
	// for swaps where arrival decided with no evidence.
	Choice Choice
}

// Key returns a string that identifies the rule (its kind, origin and
// rewrite), for a store.
func (r *Rule) Key() string {
	return r.Kind.String() + " " + r.Origin + " " + r.Name + "=" + r.Value + " " + strconv.Itoa(r.Index) + " " + r.From + " " + r.To
}

// ID returns a 64-bit hash of Key: how a store names the rule on the URLs
// skipped under it. It is the hash of URL ids (ID), fixed because it is
// kept on disk.
func (r *Rule) ID() uint64 { return ID(r.Key()) }

// Loop reports whether the rule undoes a loop: a path prefix that copies
// its own ancestor, or a run of segments that repeats the one before it.
func (r *Rule) Loop() bool {
	switch r.Kind {
	case SwapPrefix:
		return strings.HasPrefix(r.From, r.To)
	case DropSegments:
		return true
	}
	return false
}

// String describes the rewrite for a person: "http://x.test: drop ?sid".
func (r *Rule) String() string {
	if r.Kind == NumberPattern {
		return r.What()
	}
	out := r.Origin + ": " + r.What()
	if r.Choice.ByEvidence || r.Choice.Reversed {
		out += " [original by " + r.Choice.String() + "]"
	}
	if r.Prior > 0 {
		out += " [prior: " + strconv.Itoa(r.Prior) + " hosts]"
	}
	return out
}

// What describes the rewrite alone, without its origin: "drop ?sid".
func (r *Rule) What() string {
	var what string
	switch r.Kind {
	case DropParam:
		what = "drop ?" + r.Name
	case DropParamValue:
		what = "drop ?" + r.Name + "=" + r.Value
	case SortParams:
		what = "sort the query"
	case DropSegments:
		what = "drop segment " + strconv.Itoa(r.Index) + " " + r.From + "/"
	case ReplaceSegments:
		what = "segment " + strconv.Itoa(r.Index) + " " + r.From + "/ → " + r.To + "/"
	case SwapPrefix:
		what = r.From + " → " + r.To
	case SwapHost:
		what = "host → " + r.To
		if r.From != "" {
			what = r.From + " → " + r.To
		}
	case NumberPattern:
		return r.From + " (numbers alike)"
	case DropPathParam:
		what = "drop ;" + r.Name
	case DropIndex:
		what = "drop index " + r.Name
	case FoldCase:
		what = "fold the path's case"
	}
	return what
}

// Rewrite applies the rule to a normalised URL. It reports false when the
// rule does not apply (another origin, no such parameter, segment or
// prefix). For NumberPattern it returns "" and true for a URL of the
// pattern.
func (r *Rule) Rewrite(url string) (string, bool) {
	oe := originEnd(url)
	if url[:oe] != r.Origin {
		return "", false
	}
	path, query := url[oe:], ""
	if k := strings.IndexByte(path, '?'); k >= 0 {
		path, query = path[:k], path[k+1:]
	}
	switch r.Kind {
	case DropParam, DropParamValue, SortParams:
		q, ok := rewriteQuery(query, func(name, value string) bool {
			return name == r.Name && (r.Kind == DropParam || value == r.Value)
		}, r.Kind == SortParams)
		if !ok {
			return "", false
		}
		return withQuery(url[:oe]+path, q), true
	case DropSegments, ReplaceSegments:
		start, ok := segmentStart(path, r.Index)
		if !ok {
			return "", false
		}
		rest := path[start:]
		switch {
		case strings.HasPrefix(rest, r.From+"/"):
			rest = rest[len(r.From)+1:]
		case rest == r.From && r.Kind == DropSegments:
			// The run ends the path: the page is its parent's file.
			p := path[:start]
			if len(p) > 1 {
				p = p[:len(p)-1]
			}
			return withQuery(url[:oe]+p, query), true
		default:
			return "", false
		}
		if r.Kind == ReplaceSegments {
			return withQuery(url[:oe]+path[:start]+r.To+"/"+rest, query), true
		}
		return withQuery(url[:oe]+path[:start]+rest, query), true
	case SwapPrefix:
		if !strings.HasPrefix(path, r.From) {
			return "", false
		}
		return withQuery(url[:oe]+r.To+path[len(r.From):], query), true
	case SwapHost:
		if r.From == "" {
			return r.To + url[oe:], true
		}
		if !strings.HasPrefix(path, r.From) {
			return "", false
		}
		return withQuery(r.To+path[len(r.From):], query), true
	case NumberPattern:
		if shapePattern(url) == r.From {
			return "", true
		}
	case DropIndex:
		dir, file := path[:strings.LastIndexByte(path, '/')+1], path[strings.LastIndexByte(path, '/')+1:]
		if file != r.Name {
			return "", false
		}
		return withQuery(url[:oe]+dir, query), true
	case FoldCase:
		lower, ok := lowerASCII(path)
		if !ok {
			return "", false
		}
		return withQuery(url[:oe]+lower, query), true
	case DropPathParam:
		dir, file := path[:strings.LastIndexByte(path, '/')+1], path[strings.LastIndexByte(path, '/')+1:]
		name, params, ok := strings.Cut(file, ";")
		if !ok {
			return "", false
		}
		kept, changed := name, false
		for params != "" {
			var p string
			p, params, _ = strings.Cut(params, ";")
			if n, _, _ := strings.Cut(p, "="); n == r.Name {
				changed = true
				continue
			}
			kept += ";" + p
		}
		if !changed {
			return "", false
		}
		return withQuery(url[:oe]+dir+kept, query), true
	}
	return "", false
}

// lowerASCII returns path with its ASCII letters lower-cased, and
// whether it had any upper-case one. A percent-escape's hex digits are
// left as they are: normalised URLs write them in upper case.
func lowerASCII(path string) (string, bool) {
	var b []byte
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '%' {
			if b != nil {
				b = append(b, path[i:min(i+3, len(path))]...)
			}
			i += 2
			continue
		}
		if 'A' <= c && c <= 'Z' {
			if b == nil {
				b = append(make([]byte, 0, len(path)), path[:i]...)
			}
			c += 'a' - 'A'
		}
		if b != nil {
			b = append(b, c)
		}
	}
	if b == nil {
		return path, false
	}
	return string(b), true
}

func withQuery(u, q string) string {
	if q == "" {
		return u
	}
	return u + "?" + q
}

// originEnd returns the length of the origin at the start of url.
func originEnd(url string) int {
	hs := strings.Index(url, "://")
	if hs < 0 {
		hs = 0
	} else {
		hs += 3
	}
	if k := strings.IndexAny(url[hs:], "/?"); k >= 0 {
		return hs + k
	}
	return len(url)
}

// segmentStart returns where segment i of a path begins ("/a/b/c", 1 →
// 3).
func segmentStart(path string, i int) (int, bool) {
	if path == "" || path[0] != '/' {
		return 0, false
	}
	pos := 1
	for ; i > 0; i-- {
		k := strings.IndexByte(path[pos:], '/')
		if k < 0 {
			return 0, false
		}
		pos += k + 1
	}
	return pos, pos <= len(path)
}

// rewriteQuery removes the parameters drop names and, if sorted, sorts
// the rest; it reports false when it changes nothing.
func rewriteQuery(q string, drop func(name, value string) bool, sorted bool) (string, bool) {
	if q == "" {
		return "", false
	}
	var buf [maxParams]string
	ps := buf[:0]
	changed := false
	for rest := q; rest != ""; {
		var p string
		p, rest, _ = strings.Cut(rest, "&")
		name, value, _ := strings.Cut(p, "=")
		if p == "" || drop(name, value) {
			changed = true
			continue
		}
		if len(ps) == maxParams {
			return "", false
		}
		ps = append(ps, p)
	}
	if sorted && !slices.IsSorted(ps) {
		slices.Sort(ps)
		changed = true
	}
	if !changed {
		return "", false
	}
	return strings.Join(ps, "&"), true
}

// originRules are the active rules of one origin, so that Canonical
// rejects most URLs with one map lookup.
type originRules struct {
	host   *Rule
	paths  []*Rule // segment and prefix rules
	params []*Rule // parameter rules
	shapes map[uint64]*Rule
}

// maxRewrites bounds the rewrites of one URL (a host, then a loop's
// levels, then its query).
const maxRewrites = 16

// Canonical returns the URL that url (normalised) stands for under the
// rules learned so far, the first rule that rewrote it, and whether any
// did. When a page already observed has the same canonical URL (a copy
// fetched before the rule was learned), that page's URL is returned
// instead, so that the crawler, which knows it, fetches nothing more. A
// URL a NumberPattern rule covers has no canonical URL: canon is "". The
// crawler fetches canon instead of url, or nothing when canon is "" or
// already known. The *Rule is the detector's own: do not modify it.
// Canonical does not allocate for a URL no rule covers.
func (d *Detector) Canonical(url string) (canon string, by *Rule, covered bool) {
	canon, by, covered = d.rewrite(url)
	if covered && canon != "" && len(d.missing) > 0 {
		if _, ok := d.missing[ID(canon)]; ok {
			return url, nil, false // see NotFound
		}
	}
	if canon == "" || len(d.reps) == 0 {
		return canon, by, covered
	}
	if rep, ok := d.reps[ID(canon)]; ok {
		u := d.urlOf(rep.page)
		if u == url {
			return url, nil, false // the page that stands for the others
		}
		if by == nil {
			by = rep.rule
		}
		return u, by, true
	}
	return canon, by, covered
}

// NotFound records that the URL with id answered that it does not exist
// (404 or 410). A rule that rewrites a URL to it would lose that URL's
// page, if it has one: a mirror often holds pages its original no longer
// has (another version of a manual, a page since removed). So from then
// on Canonical covers no URL whose canonical URL is this one, and a
// crawler that skipped such a URL before should fetch it after all.
// Restore calls it for the pages it is given with these statuses.
func (d *Detector) NotFound(id uint64) {
	if d.missing == nil {
		d.missing = make(map[uint64]struct{})
	}
	d.missing[id] = struct{}{}
}

// Observed reports whether a page with URL id was observed (answered 2xx
// and was given to Observe or Restore).
func (d *Detector) Observed(id uint64) bool {
	_, ok := d.pageByID(id)
	return ok
}

// rep is the first page observed whose URL a rule rewrites to a canonical
// URL.
type rep struct {
	page uint32
	rule *Rule
}

// noteRep records stored page i as the representative of its canonical
// URL, if a rule rewrites its URL and none is recorded yet.
func (d *Detector) noteRep(i uint32, url string) {
	canon, by, covered := d.rewrite(url)
	if !covered || canon == "" || by.Choice.claimed() {
		// A copy stands for its original only when no page claimed
		// which was which: a claim asks for the original itself.
		return
	}
	id := ID(canon)
	if _, ok := d.reps[id]; !ok {
		d.reps[id] = rep{page: i, rule: by}
	}
}

// noteReps records the representatives of the pages of an origin, after
// its rules changed, and of the pages of the origins a host swap rewrites
// to it: their URLs go on through its rules (a copy fetched on the www
// twin as /a?sid=1 stands for /a on its origin once the session id is
// dropped there too).
//
// It looks at the pages of those origins only (swappedTo), not at every
// origin with rules: a crawl learns rules on thousands of origins.
func (d *Detector) noteReps(origin string) {
	for _, i := range d.byOrigin[origin] {
		d.noteRep(i, d.urlOf(i))
	}
	for _, o := range d.swappedTo[origin] {
		if o == origin {
			continue
		}
		for _, i := range d.byOrigin[o] {
			d.noteRep(i, d.urlOf(i))
		}
	}
}

// rewrite applies the rules to url (see Canonical), without looking for
// pages observed.
func (d *Detector) rewrite(url string) (canon string, by *Rule, covered bool) {
	if len(d.origins) == 0 {
		return url, nil, false
	}
	cur := url
	for range maxRewrites {
		or := d.origins[cur[:originEnd(cur)]]
		if or == nil {
			break
		}
		if len(or.shapes) > 0 {
			u := splitURL(cur)
			if hasDigit(&u) {
				if r := or.shapes[shapeKey(&u)]; r != nil {
					return "", r, true
				}
			}
		}
		next, r := or.rewrite(cur)
		if r == nil {
			break
		}
		if by == nil {
			by = r
		}
		cur = next
	}
	if by == nil || cur == url {
		return url, nil, false
	}
	return cur, by, true
}

// rewrite applies the origin's first applicable rule: the host, then a
// path rule, then its parameter rules together.
func (or *originRules) rewrite(url string) (string, *Rule) {
	if or.host != nil {
		if next, ok := or.host.Rewrite(url); ok {
			return next, or.host
		}
	}
	for _, r := range or.paths {
		if next, ok := r.Rewrite(url); ok && next != url {
			return next, r
		}
	}
	if len(or.params) == 0 {
		return url, nil
	}
	q := strings.IndexByte(url, '?')
	if q < 0 {
		return url, nil
	}
	var first *Rule
	sorted := false
	for _, r := range or.params {
		sorted = sorted || r.Kind == SortParams
	}
	next, ok := rewriteQuery(url[q+1:], func(name, value string) bool {
		for _, r := range or.params {
			if (r.Kind == DropParam && r.Name == name) || (r.Kind == DropParamValue && r.Name == name && r.Value == value) {
				if first == nil {
					first = r
				}
				return true
			}
		}
		return false
	}, sorted)
	if !ok {
		return url, nil
	}
	if first == nil {
		for _, r := range or.params {
			if r.Kind == SortParams {
				first = r
			}
		}
	}
	return withQuery(url[:q], next), first
}
