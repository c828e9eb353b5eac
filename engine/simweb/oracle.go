package simweb

import "strings"

// Oracle answers for the true PageRank of the web's pages by URL, as a
// crawler's oracle (engine.Oracle, the "optimal" strategy and oracle
// coverage in Castillo's chapter 6). Its zero value knows nothing; get one
// from Web.Oracle. It is safe for concurrent use.
type Oracle struct{ w *Web }

// Oracle returns the web's PageRank oracle.
func (w *Web) Oracle() Oracle { return Oracle{w} }

// PageRank returns the PageRank of the page at rawURL (any port), and
// false for a URL that is not one of the web's pages as its site links it:
// a 404, a redirect, a URL with a query, or a trap's copy of a page (a
// mirror, a session id), which would count the page's rank twice.
func (o Oracle) PageRank(rawURL string) (float64, bool) {
	if o.w == nil || strings.ContainsRune(rawURL, '?') {
		return 0, false
	}
	t := o.w.Truth(rawURL)
	if t.Status != 200 || t.Trap != TrapNone || t.Page < 0 {
		return 0, false
	}
	return o.w.pagerank[t.Page], true
}
