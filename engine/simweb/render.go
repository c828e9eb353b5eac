package simweb

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
)

// Page HTML is a pure function of (seed, page id, port): nothing is stored.
// A page shows, in order, a breadcrumb header (its links to the home page and
// the parent directory), its title, the listing of its directory (index
// pages), paragraphs of Zipf-distributed words with the content links
// inline, and a footer. Its anchors are exactly its out-edges in the graph.

const (
	minPageSize = 1 << 10
	maxPageSize = 1 << 20
	// paragraphBytes is the typical size of a paragraph, used to spread the
	// content links over the text.
	paragraphBytes = 700
	// footerReserve is the room kept for the footer when sizing the text.
	footerReserve = 160
)

// renderer holds scratch buffers for one page render.
type renderer struct {
	w        *Web
	port     int
	site     int
	first    int32 // the site's home page
	end      int32 // one past the site's last page
	r        rng
	cur      []byte // the page's path
	base     []byte // the page's directory: cur up to its last '/'
	tmp      []byte
	capNext  bool
	sentLeft int
	page     int32 // the page being rendered; -1 for a page a trap adds
	view     view
	discard  []byte // anchors rendered only to draw their random numbers
	at       pageAt // the version rendered, and the time to print if any
}

var rendererPool = sync.Pool{New: func() any { return new(renderer) }}

// Render returns the HTML of a page as served on port 80 (absolute links
// carry no port). Server.Render gives the page as a running server serves it.
func (w *Web) Render(page int) []byte {
	return w.AppendHTML(nil, page, 0)
}

// AppendHTML appends the HTML of a page, with absolute links to port (0 or
// 80 for none), to dst and returns the extended slice. It is deterministic
// and safe for concurrent use.
func (w *Web) AppendHTML(dst []byte, page, port int) []byte {
	return w.appendPage(dst, int32(page), port, viewPlain)
}

// appendPage appends the HTML of page p as view v shows it.
func (w *Web) appendPage(dst []byte, p int32, port int, v view) []byte {
	return w.appendPageAt(dst, p, port, v, pageAt{})
}

// appendPageAt appends the HTML of page p as view v shows it at version
// and time at.
func (w *Web) appendPageAt(dst []byte, p int32, port int, v view, at pageAt) []byte {
	rd := rendererPool.Get().(*renderer)
	rd.at = at
	dst = rd.render(w, dst, p, port, v)
	rd.w = nil
	rendererPool.Put(rd)
	return dst
}

// pageSize returns the target HTML size of page p: lognormal, clamped.
func (w *Web) pageSize(p int32) int {
	r := newRNG(w.opt.Seed, tagSize, uint64(p))
	size := r.lognormal(float64(w.opt.PageSizeMedian), w.opt.PageSizeSigma)
	return int(min(max(size, minPageSize), maxPageSize))
}

// appendTitle appends the title of page p: the site's name for a home page,
// otherwise two to six capitalised words.
func (w *Web) appendTitle(dst []byte, p int32, s int) []byte {
	if w.parent[p] < 0 {
		return append(dst, w.sites[s].name...)
	}
	r := newRNG(w.opt.Seed, tagTitle, uint64(p))
	for i := range 2 + r.intn(5) {
		if i > 0 {
			dst = append(dst, ' ')
		}
		word := w.vocab.word(w.vocab.contentWord(&r))
		dst = append(dst, word[0]-'a'+'A')
		dst = append(dst, word[1:]...)
	}
	return dst
}

func (rd *renderer) render(w *Web, dst []byte, p int32, port int, v view) []byte {
	s := w.siteOf(p)
	rd.w, rd.port, rd.site = w, port, s
	rd.page, rd.view = p, v
	st := w.traps.site(s)
	rd.first, rd.end = w.siteStart[s], w.siteStart[s+1]
	rd.r = w.textRNG(p, rd.at.version)
	rd.capNext, rd.sentLeft = true, 6+rd.r.intn(15)
	rd.cur = w.appendPathIn(rd.cur[:0], p, s)
	rd.base = rd.cur[:bytes.LastIndexByte(rd.cur, '/')+1]
	start := len(dst)
	target := w.pageSize(p)
	out := w.graph.Out(p)
	r := &rd.r

	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	dst = w.appendTitle(dst, p, s)
	if p != rd.first {
		dst = append(dst, " - "...)
		dst = append(dst, w.sites[s].name...)
	}
	dst = append(dst, "</title>\n<meta name=\"description\" content=\""...)
	for i := range 8 + r.intn(12) {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, w.vocab.word(w.vocab.draw(r))...)
	}
	dst = append(dst, "\">\n<meta name=\"generator\" content=\"lidi simweb\">\n</head>\n<body>\n<div id=\"header\">"...)

	// Navigation: the home page and the parent directory, as breadcrumbs.
	n := 0
	// shift is the number of bytes a view adds before the text; they are
	// left out of the page's size so that a copy's text is its original's.
	shift := 0
	if v == viewPrint || v == viewPrintBare {
		// A printer-friendly copy links back to its page instead (a bare
		// one has no header at all). The breadcrumbs are left out, but
		// their hrefs are drawn all the same so that the text is the
		// page's own.
		l := len(dst)
		if v == viewPrint {
			dst = append(dst, "Printer-friendly version of <a href=\""...)
			dst = append(dst, rd.cur...)
			dst = append(dst, "\">"...)
			dst = w.appendTitle(dst, p, s)
			dst = append(dst, "</a>"...)
		}
		shift = len(dst) - l
		rd.discard = rd.discard[:0]
		if p != rd.first {
			rd.discard = rd.anchor(rd.discard, out[n])
			n++
			if w.parent[p] != rd.first {
				rd.discard = append(rd.discard, " &rsaquo; "...)
				rd.discard = rd.anchor(rd.discard, out[n])
				n++
			}
		} else {
			rd.discard = append(rd.discard, "<b></b>"...)
			rd.discard = append(rd.discard, w.sites[s].name...)
		}
		shift -= len(rd.discard)
	} else if p != rd.first {
		dst = rd.anchor(dst, out[n])
		n++
		if par := w.parent[p]; par != rd.first {
			dst = append(dst, " &rsaquo; "...)
			dst = rd.anchor(dst, out[n])
			n++
		}
	} else {
		dst = append(dst, "<b>"...)
		dst = append(dst, w.sites[s].name...)
		dst = append(dst, "</b>"...)
	}
	dst = append(dst, "</div>\n"...)
	if v == viewBanner {
		l := len(dst)
		dst = append(dst, "<p class=\"mirror\">This is a mirror copy of "...)
		dst = append(dst, w.sites[s].name...)
		dst = append(dst, ", last synchronised on "...)
		dst = appendDate(dst, mix(w.opt.Seed, tagTrapText, uint64(s)))
		dst = append(dst, ".</p>\n"...)
		shift += len(dst) - l
	}
	dst = append(dst, "<h1>"...)
	dst = w.appendTitle(dst, p, s)
	dst = append(dst, "</h1>\n"...)
	if v == viewPrint || v == viewPrintBare {
		l := len(dst)
		dst = append(dst, "<p class=\"printed\">Printed on "...)
		dst = appendDate(dst, mix(w.opt.Seed, tagTrapText, uint64(p)))
		dst = append(dst, "</p>\n"...)
		shift += len(dst) - l
	}

	// The directory listing: the run of out-links whose parent is p.
	if w.kind(p) == KindIndex {
		dst = append(dst, "<ul class=\"index\">\n"...)
		for n < len(out) && w.parent[out[n]] == p {
			dst = append(dst, "<li>"...)
			dst = rd.anchor(dst, out[n])
			dst = append(dst, "</li>\n"...)
			n++
		}
		if st != nil && st.loopDir == p {
			dst = rd.loopLink(dst, st)
		}
		dst = append(dst, "</ul>\n"...)
	}

	// Text, with the content links spread over the paragraphs.
	start += shift
	links := out[n:]
	for {
		left := target - (len(dst) - start) - footerReserve
		if left <= 0 {
			break
		}
		paras := max(1, left/paragraphBytes)
		nl := (len(links) + paras - 1) / paras
		words := min(30+r.intn(90), max(8, left/7))
		dst = append(dst, "<p>"...)
		every := words / (nl + 1)
		for i := range nl {
			dst = rd.words(dst, every)
			dst = rd.anchor(dst, links[i])
			dst = append(dst, ' ')
		}
		dst = rd.words(dst, words-nl*every)
		dst = rd.endSentence(dst)
		dst = append(dst, "</p>\n"...)
		links = links[nl:]
	}
	if len(links) > 0 { // more links than the text had room for
		dst = append(dst, "<ul class=\"related\">\n"...)
		for _, t := range links {
			dst = append(dst, "<li>"...)
			dst = rd.anchor(dst, t)
			dst = append(dst, "</li>\n"...)
		}
		dst = append(dst, "</ul>\n"...)
	}

	if w.traps != nil && v != viewPrint && v != viewPrintBare {
		dst = rd.trapLinks(dst, p, st)
	}
	dst = rd.appendNewsList(dst)
	dst = rd.at.appendStamp(dst)
	if v == viewPrintBare {
		return append(dst, "</body>\n</html>\n"...)
	}
	return w.appendFooter(dst, s)
}

// appendFooter appends the site's footer and the end of the page.
func (w *Web) appendFooter(dst []byte, s int) []byte {
	dst = append(dst, "<div id=\"footer\">"...)
	tr := newRNG(w.opt.Seed, tagTagline, uint64(s))
	for i := range 4 + tr.intn(6) {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, w.vocab.word(w.vocab.draw(&tr))...)
	}
	dst = append(dst, ". &copy; "...)
	dst = strconv.AppendInt(dst, int64(1996+tr.intn(29)), 10)
	dst = append(dst, ' ')
	dst = append(dst, w.sites[s].name...)
	dst = append(dst, "</div>\n</body>\n</html>\n"...)
	return dst
}

// words appends n words of running text, drawn with Zipf frequencies and cut
// into sentences.
func (rd *renderer) words(dst []byte, n int) []byte {
	table := &rd.w.vocab.fast
	r := &rd.r
	l := len(dst)
	dst = slices.Grow(dst, n*16+2)
	dst = dst[:cap(dst)]
	var bits uint64
	for k := range n {
		if k&1 == 0 {
			bits = r.next()
		} else {
			bits >>= 32
		}
		start := l
		l = table.appendWord(dst, l, uint32(bits))
		if rd.capNext {
			dst[start] -= 'a' - 'A'
			rd.capNext = false
		}
		rd.sentLeft--
		if rd.sentLeft > 0 {
			continue
		}
		// "word " becomes "word. ".
		dst[l-1], dst[l] = '.', ' '
		l++
		rd.capNext = true
		rd.sentLeft = 6 + r.intn(15)
	}
	return dst[:l]
}

// endSentence ends the running sentence with a full stop, as at the end of
// a paragraph.
func (rd *renderer) endSentence(dst []byte) []byte {
	dst = bytes.TrimRight(dst, " ")
	if !rd.capNext {
		dst = append(dst, '.')
		rd.capNext = true
		rd.sentLeft = 6 + rd.r.intn(15)
	}
	return dst
}

// anchor appends a link to page t with the target's title as anchor text.
func (rd *renderer) anchor(dst []byte, t int32) []byte {
	w := rd.w
	ts := rd.site
	if t < rd.first || t >= rd.end {
		ts = w.siteOf(t)
	}
	dst = append(dst, "<a href=\""...)
	dst = rd.href(dst, t, ts)
	dst = append(dst, "\">"...)
	dst = w.appendTitle(dst, t, ts)
	return append(dst, "</a>"...)
}

// href appends a URL for page t of site ts in one of the forms real pages
// use: relative ("../a-3/"), host-relative ("/a-3/") or absolute, and for
// other sites absolute or, rarely, scheme-relative ("//host/..."). Traps
// add session ids and tracking parameters to some.
func (rd *renderer) href(dst []byte, t int32, ts int) []byte {
	dst = rd.hrefPath(dst, t, ts)
	if rd.w.traps != nil {
		dst = rd.w.appendLinkParams(dst, rd.page, t, rd.site, ts, true)
	}
	return dst
}

func (rd *renderer) hrefPath(dst []byte, t int32, ts int) []byte {
	w := rd.w
	form := rd.r.intn(100)
	if ts != rd.site {
		if form < 95 {
			return w.appendPathIn(w.appendOrigin(dst, ts, rd.port), t, ts)
		}
		origin := w.appendOrigin(dst, ts, rd.port)
		// Drop "http:" to make "//host:port".
		n := len(w.scheme()) + 1
		copy(origin[len(dst):], origin[len(dst)+n:])
		return w.appendPathIn(origin[:len(origin)-n], t, ts)
	}
	switch {
	case form < 40:
		rd.tmp = w.appendPathIn(rd.tmp[:0], t, ts)
		return appendRelative(dst, rd.base, rd.tmp)
	case form < 80:
		return w.appendPathIn(dst, t, ts)
	default:
		return w.appendPathIn(w.appendOrigin(dst, ts, rd.port), t, ts)
	}
}

// appendRelative appends the relative reference that resolves to target
// against a document in directory base (both absolute paths, base ending
// in '/').
func appendRelative(dst, base, target []byte) []byte {
	n := 0
	for n < len(base) && n < len(target) && base[n] == target[n] {
		n++
	}
	c := bytes.LastIndexByte(base[:n], '/') + 1
	ups := bytes.Count(base[c:], []byte{'/'})
	for range ups {
		dst = append(dst, "../"...)
	}
	rest := target[c:]
	if ups == 0 && len(rest) == 0 {
		return append(dst, "./"...)
	}
	return append(dst, rest...)
}
