package dedup

import (
	"iter"
	"strings"
)

// mirrored is the directory of an origin whose pages say they are copies.
type mirrored struct {
	under string // the deepest directory holding all of them
	pages int
	key   uint64
}

// noteMirrored records a page in directory dir of origin whose note
// names another host.
func (d *Detector) noteMirrored(origin, dir string) {
	if d.mirrored == nil {
		d.mirrored = make(map[string]*mirrored)
	}
	m := d.mirrored[origin]
	if m == nil {
		m = &mirrored{key: newHasher(keyRule).str(origin).str(" mirrored").sum()}
		d.mirrored[origin] = m
	}
	m.under = commonDir(m.under, dir)
	m.pages++
}

// unprovenMirror is Unproven for a URL of a directory whose pages say
// they are copies, while no rule covers it.
func (d *Detector) unprovenMirror(url string) (uint64, bool) {
	oe := originEnd(url)
	m := d.mirrored[url[:oe]]
	if m == nil || m.pages > maxMirroredWait || m.under == "/" || !strings.HasPrefix(url[oe:], m.under) {
		return 0, false
	}
	return m.key, true
}

// ListingItems returns Page.Items for the page at url (normalised) that
// links to links (normalised, in any order): an order-free hash of the
// URLs it links to other than its own path under another query (its
// sort, view and page links), or 0 when they are fewer than
// minListingItems.
func ListingItems(url string, links iter.Seq[string]) uint64 {
	path := url
	if k := strings.IndexByte(path, '?'); k >= 0 {
		path = path[:k]
	}
	var sum uint64
	n := 0
	for l := range links {
		lp := l
		if k := strings.IndexByte(lp, '?'); k >= 0 {
			lp = lp[:k]
		}
		if lp == path {
			continue
		}
		sum += fmix64(ID(l))
		n++
	}
	if n < minListingItems {
		return 0
	}
	return sum | 1
}
