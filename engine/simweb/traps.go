package simweb

import (
	"fmt"
	"slices"
	"strings"
)

// TrapKind names a kind of crawler trap that Options.Traps adds to a web.
// Web.Truth says which trap, if any, a URL belongs to.
type TrapKind uint8

// The kinds of traps. Copies (mirrors, loops, session ids, tracking
// parameters, print copies) carry the content of a genuine page; junk (soft
// 404s, calendar months beyond the genuine range, binary files) carries no
// genuine content; DeepChain, HTMLAsOctet and the calendar's genuine months
// are genuine content that only a careful crawler gets.
const (
	TrapNone TrapKind = iota
	// TrapHostMirror: the site answers on both www.siteN.test and
	// siteN.test with identical pages; the other name is linked from the
	// home page of a popular site.
	TrapHostMirror
	// TrapDirMirror: a directory's subtree answers under a second name
	// ("/name-4-old/" for "/name-4/", byte for byte) or the whole site under
	// "/mirror/" (with a banner line: near-identical).
	TrapDirMirror
	// TrapLoop: a directory page links to "L/" (or "./L/"), and the server
	// answers D/L/L/.../rest as D/rest for any depth, like a symbolic link
	// to ".": the same bytes, so relative links recurse.
	TrapLoop
	// TrapCalendar: an events calendar whose months link to the previous
	// and next month, answered for every month of the years 0001 to 9999.
	// A range of months has events (genuine); the rest are near-identical
	// empty months (junk).
	TrapCalendar
	// TrapSessionID: internal links carry a session id (?sid=, ;jsessionid=,
	// ?PHPSESSID= or an unknown ?s=<hex>) that the server ignores.
	TrapSessionID
	// TrapTracking: links carry tracking parameters (utm_source, utm_medium,
	// utm_campaign from other sites, ref inside the site) that the server
	// ignores.
	TrapTracking
	// TrapSoft404: unknown paths answer 200 with a "page not found" page,
	// and broken links lead there.
	TrapSoft404
	// TrapPrintCopy: every page links to "/print/<path>", a printer-friendly
	// copy with the same text, a different header and a date line.
	TrapPrintCopy
	// TrapBinaryAsHTML: PNG or ZIP bytes, hundreds of KiB, served with
	// Content-Type text/html.
	TrapBinaryAsHTML
	// TrapHTMLAsOctet: genuine HTML pages served as
	// application/octet-stream; their links lead to genuine pages linked
	// from nowhere else (ordinary text/html pages, whose Truth.Trap is
	// TrapNone).
	TrapHTMLAsOctet
	// TrapDeepChain: a genuine directory chain /deep/1/2/.../15/ with unique
	// pages at every level and, at the bottom, an archive of as many pages
	// as the site has (16 to 2000), reached from the home page only, so
	// that its lower levels lie more than ten links from any seed.
	TrapDeepChain
	// TrapPrintParam: every page links to a printer-friendly copy behind a
	// query parameter the site names its own way (?print=1,
	// ?view=printable, ...), without the navigation, the footer or the
	// links traps add: the same text in another template.
	TrapPrintParam
	// TrapParamOrder: a catalogue of genuine listing pages addressed by two
	// query parameters that both matter (category and page, named the
	// site's own way), linked with the parameters in either order: each
	// page answers under two URLs.
	TrapParamOrder
	// TrapIndexAlias: every directory page links to itself under the file
	// name the server also answers it at (/dir/index.php, /dir/default.aspx:
	// one name per site).
	TrapIndexAlias
	// TrapCaseFold: the server ignores the case of paths, as IIS does, and
	// every page links to itself with the words of its path capitalised
	// (/Docs/Guide.html for /docs/guide.html).
	TrapCaseFold
	// TrapFacets: a shop's listings, one per category directory
	// (/store/<category>/, two pages each behind a page parameter that
	// matters), linked under parameters that only sort the items or
	// change their view (faceted navigation), named the site's own way
	// (?orderby=price, ?ansicht=raster): the same items under several
	// URLs.
	TrapFacets

	numTrapKinds
)

var trapKindNames = [...]string{
	TrapNone:         "none",
	TrapHostMirror:   "host-mirror",
	TrapDirMirror:    "dir-mirror",
	TrapLoop:         "loop",
	TrapCalendar:     "calendar",
	TrapSessionID:    "session-id",
	TrapTracking:     "tracking",
	TrapSoft404:      "soft-404",
	TrapPrintCopy:    "print-copy",
	TrapBinaryAsHTML: "binary-as-html",
	TrapHTMLAsOctet:  "html-as-octet",
	TrapDeepChain:    "deep-chain",
	TrapPrintParam:   "print-param",
	TrapParamOrder:   "param-order",
	TrapIndexAlias:   "index-alias",
	TrapCaseFold:     "case-fold",
	TrapFacets:       "facets",
}

// String returns the kind's name as used in traps.csv, such as "loop".
func (k TrapKind) String() string {
	if int(k) < len(trapKindNames) {
		return trapKindNames[k]
	}
	return fmt.Sprintf("TrapKind(%d)", k)
}

// TrapKinds returns every kind of trap except TrapNone, in order.
func TrapKinds() []TrapKind {
	kinds := make([]TrapKind, 0, numTrapKinds-1)
	for k := TrapHostMirror; k < numTrapKinds; k++ {
		kinds = append(kinds, k)
	}
	return kinds
}

// TrapSet is a set of trap kinds. The zero value is the empty set.
type TrapSet uint32

// Has reports whether k is in the set.
func (s TrapSet) Has(k TrapKind) bool { return s&(1<<k) != 0 }

// With returns the set with k added.
func (s TrapSet) With(k TrapKind) TrapSet { return s | 1<<k }

// String returns the kinds joined by "+", or "none".
func (s TrapSet) String() string {
	var names []string
	for k := TrapHostMirror; k < numTrapKinds; k++ {
		if s.Has(k) {
			names = append(names, k.String())
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "+")
}

// TrapInstance describes one trap of a web (one row of traps.csv).
type TrapInstance struct {
	Kind TrapKind
	Site int
	// URL is a URL of the trap without a port: its entry point or an
	// example.
	URL string
	// Original is the URL whose content the trap copies, if it copies one.
	Original string
	// Detail says how the trap behaves, for a person.
	Detail string
}

// Shapes of the traps; constants rather than options, like the other
// generation constants.
const (
	deepLevels    = 15   // levels of the deep chain below its root
	deepParts     = 2    // pages at each level of the deep chain but the last
	deepBottomMin = 16   // pages in the archive at the bottom of the chain:
	deepBottomMax = 2000 // as many as the site has, within these bounds
	octetReports  = 2    // pages served as application/octet-stream per site
	octetParts    = 3    // pages each of them links to
	brokenLinks   = 3    // broken links on a soft-404 site
	binaryMedian  = 768 << 10
	binaryMin     = 256 << 10
	binaryMax     = 4 << 20
	calFirstMonth = 1*12 + 0     // January 0001, as year*12 + month-1
	calLastMonth  = 9999*12 + 11 // December 9999
	printPrefix   = "/print/"
	mirrorPrefix  = "/mirror/"
	// trapHomeHops: the popular sites whose home pages may carry the link
	// to another site's alias host.
	trapHomeHops = 10
)

type sessionKind uint8

const (
	sessionNone sessionKind = iota
	sessionSID
	sessionJSESSIONID // a path parameter: /page.html;jsessionid=...
	sessionPHPSESSID
	sessionHex // ?s=<32 hex>: a name no normaliser knows
)

var sessionNames = [...]string{"", "sid", "jsessionid", "PHPSESSID", "s"}

// binaryBlob is a binary file served as text/html.
type binaryBlob struct {
	path string
	zip  bool // ZIP bytes, else PNG
	size int
}

// trapLink is a link that a trap adds to a page.
type trapLink struct {
	site  int32 // site of an absolute link; -1 for a host-relative one
	alias bool  // the absolute link names the site's alias host
	path  string
	text  string
}

// siteTraps is what a trapped site carries; fields of kinds not in set are
// zero.
type siteTraps struct {
	set TrapSet

	alias     string // TrapHostMirror: the other host name
	aliasSlot int32  // its witness slot

	mirrorFrom, mirrorTo string // TrapDirMirror: prefix served, prefix copied
	mirrorBanner         bool

	loopDir  int32 // TrapLoop: the directory page that links to itself
	loopPath string
	loopSeg  string
	loopDot  bool // the link is "./seg/", else "seg/"

	calRoot                     string // TrapCalendar: "/calendar/"
	calFirst, calLast, calEntry int32  // months as year*12 + month-1

	session  sessionKind // TrapSessionID
	tracking bool        // TrapTracking

	binaries   []binaryBlob // TrapBinaryAsHTML
	deepRoot   string       // TrapDeepChain: "/deep/"
	deepBottom int          // pages at the bottom of the chain
	octet      bool         // TrapHTMLAsOctet: /export/report-N.html

	printParam, printValue string // TrapPrintParam: the query parameter of the copy
	indexName              string // TrapIndexAlias: the file name a directory is also served as
	caseFold               bool   // TrapCaseFold

	facets facetShop // TrapFacets

	catPath            string // TrapParamOrder: the catalogue's path ("/catalog")
	catName, pageName  string // its parameters
	catCount, catPages int32  // categories, pages per category
}

// trapIndex holds a web's traps. Its size is proportional to the number of
// trapped sites, not pages: trap pages are rendered on request like the
// others.
type trapIndex struct {
	sites      []*siteTraps         // by site; nil for a site without traps
	extra      map[int32][]trapLink // links traps add to base pages
	aliasSites []int32              // witness slot NumSites()+i is the alias of aliasSites[i]
	instances  []TrapInstance
}

func (ti *trapIndex) site(s int) *siteTraps {
	if ti == nil {
		return nil
	}
	return ti.sites[s]
}

// Traps returns the traps of the web, by site and kind; none without
// Options.Traps.
func (w *Web) Traps() []TrapInstance {
	if w.traps == nil {
		return nil
	}
	return slices.Clone(w.traps.instances)
}

func (w *Web) siteURL(s int, path string) string { return w.scheme() + "://" + w.sites[s].host + path }

// dirOf returns the directory part of page p's path, ending in '/'.
func (w *Web) dirOf(p int32) string {
	path := string(w.appendPath(nil, p))
	return path[:strings.LastIndexByte(path, '/')+1]
}

var monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}

// monthName returns "2026-11" for a month index.
func monthName(m int32) string { return fmt.Sprintf("%04d-%02d", m/12, m%12+1) }

// appendMonthPath appends root + "2026/11/".
func appendMonthPath(dst []byte, root string, m int32) []byte {
	dst = append(dst, root...)
	y := m / 12
	dst = append(dst, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '/')
	mo := m%12 + 1
	return append(dst, byte('0'+mo/10), byte('0'+mo%10), '/')
}
