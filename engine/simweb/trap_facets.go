package simweb

import (
	"html"
	"strconv"
	"strings"
)

// facetShop is a site's faceted listings (TrapFacets): a listing per
// category directory, root+category+"/", of facetPages pages behind the
// page parameter, each also under a parameter that sorts its items and
// one that changes their view. The zero value is no shop.
type facetShop struct {
	root       string   // "/store/"
	cats       []string // category directory names
	page       string   // the page parameter: it matters
	sort, view string   // parameters that only reorder or restyle the items
	sortValues []string // the first is the order without the parameter
	viewValues []string // the first is the view without the parameter
}

// Shapes of the faceted listings.
const (
	facetPages = 2 // pages of a category's listing
	facetItems = 8 // items a page lists
	// facetContentMask keeps the category and page of a listing's
	// virtual local id: the content; the order and view above it are not.
	facetContentMask = 0xffff
)

// newFacetShop draws a shop's names: parameter names that no crawler's
// code names, category names from the vocabulary (word).
func newFacetShop(r *rng, word func() string) facetShop {
	f := facetShop{
		root:       []string{"/store/", "/shop/", "/products/", "/catalogue/"}[r.intn(4)],
		page:       []string{"pageno", "seite", "pagina", "blatt"}[r.intn(4)],
		sort:       []string{"orderby", "sort_by", "sortierung", "tri"}[r.intn(4)],
		view:       []string{"display", "layout", "ansicht", "affichage"}[r.intn(4)],
		sortValues: []string{"relevance", "price", "newest"},
		viewValues: []string{"list", "grid"},
	}
	for n := 3 + r.intn(3); len(f.cats) < n; {
		if c := word(); !strings.Contains(strings.Join(f.cats, "/"), c) {
			f.cats = append(f.cats, c)
		}
	}
	return f
}

// parse finds the listing a path under root and its query address: a
// category's directory, a page within range, any order and view (an
// unknown value is the default, as servers ignore what they do not know).
func (f *facetShop) parse(path, query string) (virtual, bool) {
	rest, _ := strings.CutPrefix(path, f.root)
	cat := -1
	for i, c := range f.cats {
		if rest == c+"/" {
			cat = i
		}
	}
	if cat < 0 {
		return virtual{}, false
	}
	page, sort, view := 1, 0, 0
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		n, v, _ := strings.Cut(kv, "=")
		switch n {
		case f.page:
			x, err := strconv.Atoi(v)
			if err != nil || v[0] == '0' || v[0] == '+' || v[0] == '-' || x > facetPages {
				return virtual{}, false
			}
			page = x
		case f.sort:
			sort = max(indexOf(f.sortValues, v), 0)
		case f.view:
			view = max(indexOf(f.viewValues, v), 0)
		}
	}
	return virtual{kind: TrapFacets, local: uint32(cat) | uint32(page)<<8 | uint32(sort)<<16 | uint32(view)<<20}, true
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// appendHref appends the path and query of listing v; canonical leaves
// out its order and view.
func (f *facetShop) appendHref(dst []byte, v virtual, canonical bool) []byte {
	cat, page, sort, view := f.unpack(v)
	if canonical {
		sort, view = 0, 0
	}
	dst = append(dst, f.root...)
	dst = append(dst, f.cats[cat]...)
	dst = append(dst, '/')
	return f.appendQuery(dst, page, sort, view)
}

func (f *facetShop) unpack(v virtual) (cat, page, sort, view int) {
	return int(v.local & 0xff), int(v.local >> 8 & 0xff), int(v.local >> 16 & 0xf), int(v.local >> 20 & 0xf)
}

// appendQuery appends "?page=2&sort=price&view=grid", leaving out what is
// the default.
func (f *facetShop) appendQuery(dst []byte, page, sort, view int) []byte {
	sep := byte('?')
	param := func(name, value string) {
		dst = append(dst, sep)
		dst = append(dst, name...)
		dst = append(dst, '=')
		dst = append(dst, value...)
		sep = '&'
	}
	if page > 1 {
		param(f.page, strconv.Itoa(page))
	}
	if sort > 0 {
		param(f.sort, f.sortValues[sort])
	}
	if view > 0 {
		param(f.view, f.viewValues[view])
	}
	return dst
}

// facetListing appends the body of listing v: links to its orders and
// views and to its other page (keeping its order and view), its items in
// its order and view, and the other categories. The items and their
// descriptions are drawn in one order for every variant.
func (rd *renderer) facetListing(dst []byte, st *siteTraps, v virtual) []byte {
	f := &st.facets
	cat, page, sort, view := f.unpack(v)
	href := func(text string, page, sort, view int) {
		dst = append(dst, "<a href=\"./"...)
		dst = append(dst, html.EscapeString(string(f.appendQuery(nil, page, sort, view)))...)
		dst = append(dst, "\">"...)
		dst = append(dst, text...)
		dst = append(dst, "</a> "...)
	}
	dst = append(dst, "<p class=\"facets\">Sort by: "...)
	for i, s := range f.sortValues {
		href(s, page, i, view)
	}
	dst = append(dst, "View: "...)
	for i, s := range f.viewValues {
		href(s, page, sort, i)
	}
	dst = append(dst, "Pages: "...)
	for p := 1; p <= facetPages; p++ {
		href(strconv.Itoa(p), p, sort, view)
	}
	dst = append(dst, "</p>\n"...)

	// The items: base pages of the site, drawn for this category and page.
	n := int(rd.end - rd.first)
	type item struct{ a, b int }
	var items [facetItems]item
	var text []byte
	for i := range items {
		p := rd.first + int32(rd.r.intn(n))
		start := len(text)
		text = append(text, "<a href=\""...)
		text = rd.w.appendPath(text, p)
		text = append(text, "\">"...)
		text = rd.w.appendTitle(text, p, rd.site)
		text = append(text, "</a>: "...)
		text = rd.endSentence(rd.words(text, 10+rd.r.intn(6)))
		items[i] = item{start, len(text)}
	}
	open, shut, each, end := "<ul class=\"items\">\n", "</ul>\n", "<li>", "</li>\n"
	if view == 1 {
		open, shut, each, end = "<div class=\"grid\">\n", "</div>\n", "<div class=\"cell\">", "</div>\n"
	}
	dst = append(dst, open...)
	for i := range items {
		k := i
		switch sort {
		case 1:
			k = len(items) - 1 - i
		case 2:
			k = (i + len(items)/2) % len(items)
		}
		dst = append(dst, each...)
		dst = append(dst, text[items[k].a:items[k].b]...)
		dst = append(dst, end...)
	}
	dst = append(dst, shut...)

	dst = append(dst, "<ul class=\"index\">\n"...)
	for c := range f.cats {
		if c != cat {
			dst = append(dst, "<li><a href=\""...)
			dst = append(dst, f.root...)
			dst = append(dst, f.cats[c]...)
			dst = append(dst, "/\">"...)
			dst = append(dst, f.cats[c]...)
			dst = append(dst, "</a></li>\n"...)
		}
	}
	return append(dst, "</ul>\n"...)
}
