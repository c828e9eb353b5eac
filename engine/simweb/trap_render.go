package simweb

import (
	"encoding/binary"
	"hash/crc32"
	"html"
	"strconv"
)

// Trap pages are rendered like the others, on request, from the seed: a
// page a trap adds is a pure function of (seed, site, content), a copy is
// its original rendered through a view.

// appendDate appends a date between 2015 and 2025 drawn from x, such as
// "2021-06-14".
func appendDate(dst []byte, x uint64) []byte {
	y, m, d := 2015+int(x%11), 1+int(x>>8%12), 1+int(x>>16%28)
	dst = strconv.AppendInt(dst, int64(y), 10)
	dst = append(dst, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10))
	return dst
}

// loopLink appends the listing entry of the loop: a relative link to the
// directory's own name (or another name) that the server treats as ".".
func (rd *renderer) loopLink(dst []byte, st *siteTraps) []byte {
	dst = append(dst, "<li><a href=\""...)
	if st.loopDot {
		dst = append(dst, "./"...)
	}
	dst = append(dst, st.loopSeg...)
	dst = append(dst, "/\">"...)
	dst = append(dst, st.loopSeg...)
	return append(dst, "</a></li>\n"...)
}

// trapLinks appends the links traps add to page p: entries into traps on
// the home page, broken links, the link to the printer-friendly copy.
func (rd *renderer) trapLinks(dst []byte, p int32, st *siteTraps) []byte {
	w := rd.w
	links := w.traps.extra[p]
	print := st != nil && st.set.Has(TrapPrintCopy)
	printParam := st != nil && st.printParam != ""
	indexAlias := st != nil && st.indexName != "" && len(rd.cur) > 0 && rd.cur[len(rd.cur)-1] == '/'
	caseLink := st != nil && st.caseFold && hasLower(rd.cur)
	if len(links) == 0 && !print && !printParam && !indexAlias && !caseLink {
		return dst
	}
	dst = append(dst, "<ul class=\"more\">\n"...)
	for _, l := range links {
		dst = append(dst, "<li><a href=\""...)
		if l.site >= 0 {
			host := w.sites[l.site].host
			if l.alias {
				host = w.traps.sites[l.site].alias
			}
			dst = w.appendHostOrigin(dst, host, rd.port)
		}
		dst = append(dst, l.path...)
		dst = append(dst, "\">"...)
		dst = append(dst, l.text...)
		dst = append(dst, "</a></li>\n"...)
	}
	if print {
		dst = append(dst, "<li><a href=\"/print"...)
		dst = append(dst, rd.cur...)
		dst = append(dst, "\">Printer-friendly version</a></li>\n"...)
	}
	if printParam {
		dst = append(dst, "<li><a href=\""...)
		dst = append(dst, rd.cur...)
		dst = append(dst, '?')
		dst = append(dst, st.printParam...)
		dst = append(dst, '=')
		dst = append(dst, st.printValue...)
		dst = append(dst, "\">Print this page</a></li>\n"...)
	}
	if indexAlias {
		dst = append(dst, "<li><a href=\""...)
		dst = append(dst, rd.cur...)
		dst = append(dst, st.indexName...)
		dst = append(dst, "\">Section home</a></li>\n"...)
	}
	if caseLink {
		dst = append(dst, "<li><a href=\""...)
		dst = appendTitleCase(dst, rd.cur)
		dst = append(dst, "\">Permalink</a></li>\n"...)
	}
	return append(dst, "</ul>\n"...)
}

// appendTitleCase appends path with the first letter of each word (a run
// of letters) upper-cased: the spelling of a case-insensitive server's
// links (TrapCaseFold).
func appendTitleCase[S ~string | ~[]byte](dst []byte, path S) []byte {
	prev := byte('/')
	for i := 0; i < len(path); i++ {
		c := path[i]
		if 'a' <= c && c <= 'z' && !('a' <= prev && prev <= 'z' || 'A' <= prev && prev <= 'Z' || '0' <= prev && prev <= '9' || prev == '%') {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
		prev = path[i]
	}
	return dst
}

// hasLower reports whether path has a lower-case ASCII letter.
func hasLower(path []byte) bool {
	for _, c := range path {
		if 'a' <= c && c <= 'z' {
			return true
		}
	}
	return false
}

// lowerPath returns path with its ASCII letters lower-cased, and whether
// it had an upper-case one; a percent-escape's hex digits are kept.
func lowerPath(path string) (string, bool) {
	var b []byte
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '%' && i+2 < len(path) {
			if b != nil {
				b = append(b, path[i:i+3]...)
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

const hexDigits = "0123456789abcdef"

func appendHex(dst []byte, x uint64, n int, upper bool) []byte {
	digits := hexDigits
	if upper {
		digits = "0123456789ABCDEF"
	}
	for i := range n {
		if i == 16 {
			x = splitmix64(x)
		}
		dst = append(dst, digits[x>>(4*(i%16))&15])
	}
	return dst
}

var refValues = [...]string{"nav", "related", "footer", "sidebar"}

// appendLinkParams appends the session id and tracking parameters that the
// link from page from (of site fromSite) to page to (of site toSite) carries,
// if any: a session id on half of the internal links of a session site,
// utm_* parameters on half of the links from other sites into a tracking
// site and ref on 30% of its internal links. The choice is a hash of the
// link, so every rendering of a page agrees. escaped writes "&amp;" between
// parameters, as in HTML, else "&".
func (w *Web) appendLinkParams(dst []byte, from, to int32, fromSite, toSite int, escaped bool) []byte {
	st := w.traps.sites[toSite]
	if st == nil || from < 0 {
		return dst
	}
	h := mix(w.opt.Seed, tagTrapHref, uint64(from)<<32|uint64(to))
	sep := "?"
	amp := "&"
	if escaped {
		amp = "&amp;"
	}
	if st.session != sessionNone && fromSite == toSite && h&0xff < 128 {
		id := splitmix64(h)
		switch st.session {
		case sessionJSESSIONID:
			dst = append(dst, ";jsessionid="...)
			dst = appendHex(dst, id, 32, true)
		case sessionSID:
			dst = append(dst, "?sid="...)
			dst = appendHex(dst, id, 16, false)
			sep = amp
		case sessionPHPSESSID:
			dst = append(dst, "?PHPSESSID="...)
			dst = appendHex(dst, id, 26, false)
			sep = amp
		case sessionHex:
			dst = append(dst, "?s="...)
			dst = appendHex(dst, id, 32, false)
			sep = amp
		}
	}
	if st.tracking {
		x := h >> 8 & 0xff
		switch {
		case fromSite != toSite && x < 128:
			dst = append(dst, sep...)
			dst = append(dst, "utm_source="...)
			dst = append(dst, w.sites[fromSite].host...)
			dst = append(dst, amp...)
			dst = append(dst, "utm_medium=referral"...)
			dst = append(dst, amp...)
			dst = append(dst, "utm_campaign="...)
			dst = append(dst, w.vocab.word(len(functionWords)+int(h>>16%2000))...)
		case fromSite == toSite && x < 77:
			dst = append(dst, sep...)
			dst = append(dst, "ref="...)
			dst = append(dst, refValues[h>>16&3]...)
		}
	}
	return dst
}

// appendVirtual appends the HTML of content v that site s's traps add.
// reqPath is the path asked for, which a soft-404 page shows.
func (w *Web) appendVirtual(dst []byte, s int, v virtual, reqPath string) []byte {
	rd := rendererPool.Get().(*renderer)
	rd.w, rd.port, rd.site = w, 0, s
	rd.first, rd.end = w.siteStart[s], w.siteStart[s+1]
	rd.page, rd.view = -1, viewPlain
	rd.r = newRNG(w.opt.Seed, tagTrapText, v.content(s))
	rd.capNext, rd.sentLeft = true, 6+rd.r.intn(15)
	dst = rd.virtualPage(dst, s, v, reqPath)
	rd.w = nil
	rendererPool.Put(rd)
	return dst
}

// appendVirtualTitle appends the title of content v of site s.
func (w *Web) appendVirtualTitle(dst []byte, s int, v virtual) []byte {
	switch v.kind {
	case TrapCalendar:
		dst = append(dst, "Events in "...)
		dst = append(dst, monthNames[v.local%12]...)
		dst = append(dst, ' ')
		return strconv.AppendInt(dst, int64(v.local/12), 10)
	case TrapSoft404:
		return append(dst, "Page not found"...)
	case TrapParamOrder:
		dst = append(dst, "Catalogue "...)
		dst = strconv.AppendInt(dst, int64(v.local>>8), 10)
		dst = append(dst, ", page "...)
		return strconv.AppendInt(dst, int64(v.local&0xff), 10)
	case TrapHTMLAsOctet:
		if v.local&partMask == 0 {
			dst = append(dst, "Report "...)
			dst = strconv.AppendInt(dst, int64(v.local>>partBits), 10)
			dst = append(dst, ": "...)
		}
	}
	r := newRNG(w.opt.Seed, tagTitle, v.content(s))
	for i := range 2 + r.intn(4) {
		if i > 0 {
			dst = append(dst, ' ')
		}
		word := w.vocab.word(w.vocab.contentWord(&r))
		dst = append(dst, word[0]-'a'+'A')
		dst = append(dst, word[1:]...)
	}
	return dst
}

// paragraphs appends paragraphs of text until the page, which starts at
// dst[start], holds about target bytes.
func (rd *renderer) paragraphs(dst []byte, start, target int) []byte {
	for len(dst)-start < target {
		dst = append(dst, "<p>"...)
		dst = rd.words(dst, 30+rd.r.intn(90))
		dst = rd.endSentence(dst)
		dst = append(dst, "</p>\n"...)
	}
	return dst
}

// anchorTo appends <li><a href="href">title of v</a></li>.
func (rd *renderer) anchorTo(dst []byte, href string, v virtual) []byte {
	dst = append(dst, "<li><a href=\""...)
	dst = append(dst, href...)
	dst = append(dst, "\">"...)
	dst = rd.w.appendVirtualTitle(dst, rd.site, v)
	return append(dst, "</a></li>\n"...)
}

func (rd *renderer) virtualPage(dst []byte, s int, v virtual, reqPath string) []byte {
	w := rd.w
	st := w.traps.sites[s]
	start := len(dst)
	name := w.sites[s].name
	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	dst = w.appendVirtualTitle(dst, s, v)
	dst = append(dst, " - "...)
	dst = append(dst, name...)
	dst = append(dst, "</title>\n<meta name=\"generator\" content=\"lidi simweb\">\n</head>\n<body>\n<div id=\"header\"><a href=\"/\">"...)
	dst = append(dst, name...)
	dst = append(dst, "</a>"...)
	up := func(href string, v virtual) {
		dst = append(dst, " &rsaquo; <a href=\""...)
		dst = append(dst, href...)
		dst = append(dst, "\">"...)
		dst = w.appendVirtualTitle(dst, s, v)
		dst = append(dst, "</a>"...)
	}
	level, part := v.local>>partBits, v.local&partMask
	switch {
	case v.kind == TrapDeepChain && part == 0 && level > 0:
		up("../", virtual{TrapDeepChain, (level - 1) << partBits})
	case v.kind == TrapDeepChain && part > 0:
		up("./", virtual{TrapDeepChain, level << partBits})
	case v.kind == TrapHTMLAsOctet && part > 0:
		up("../report-"+strconv.Itoa(int(level))+".html", virtual{TrapHTMLAsOctet, level << partBits})
	}
	dst = append(dst, "</div>\n<h1>"...)
	dst = w.appendVirtualTitle(dst, s, v)
	dst = append(dst, "</h1>\n"...)
	target := 2500 + rd.r.intn(5000)

	switch v.kind {
	case TrapSoft404:
		dst = append(dst, "<p>Sorry, the page <code>"...)
		dst = append(dst, html.EscapeString(reqPath)...)
		dst = append(dst, "</code> does not exist on "...)
		dst = append(dst, name...)
		dst = append(dst, ". It may have been moved or deleted.</p>\n<p><a href=\"/\">Back to the home page</a></p>\n"...)
		// Suggestions, the site's own, relative to the missing URL: they
		// lead to more missing URLs (/a/x.html to /a/word/ to
		// /a/word/word/ ...), without end, for a crawler that follows the
		// links of a soft 404.
		sr := newRNG(w.opt.Seed, tagTrapText, uint64(s)<<8|uint64(TrapSoft404)|0x80)
		dst = append(dst, "<p>Were you looking for "...)
		for i := range 2 {
			word := w.vocab.word(w.vocab.contentWord(&sr))
			if i > 0 {
				dst = append(dst, " or "...)
			}
			dst = append(dst, "<a href=\""...)
			dst = append(dst, word...)
			if i == 0 {
				dst = append(dst, ".html"...)
			} else {
				dst = append(dst, '/')
			}
			dst = append(dst, "\">"...)
			dst = append(dst, word...)
			dst = append(dst, "</a>"...)
		}
		dst = append(dst, "?</p>\n"...)

	case TrapCalendar:
		m := int32(v.local)
		dst = append(dst, "<p class=\"months\">"...)
		if m > calFirstMonth {
			dst = append(dst, "<a href=\""...)
			dst = appendMonthHref(dst, st.calRoot, m, m-1)
			dst = append(dst, "\">&laquo; "...)
			dst = appendMonthTitle(dst, m-1)
			dst = append(dst, "</a>"...)
		}
		if m > calFirstMonth && m < calLastMonth {
			dst = append(dst, " | "...)
		}
		if m < calLastMonth {
			dst = append(dst, "<a href=\""...)
			dst = appendMonthHref(dst, st.calRoot, m, m+1)
			dst = append(dst, "\">"...)
			dst = appendMonthTitle(dst, m+1)
			dst = append(dst, " &raquo;</a>"...)
		}
		dst = append(dst, "</p>\n"...)
		if !w.genuine(s, v) {
			dst = append(dst, "<p>No events are scheduled for "...)
			dst = appendMonthTitle(dst, m)
			dst = append(dst, ".</p>\n"...)
			break
		}
		dst = append(dst, "<ul class=\"events\">\n"...)
		for range 3 + rd.r.intn(5) {
			dst = append(dst, "<li><b>"...)
			dst = strconv.AppendInt(dst, int64(1+rd.r.intn(28)), 10)
			dst = append(dst, ' ')
			dst = append(dst, monthNames[m%12]...)
			dst = append(dst, "</b>: "...)
			dst = rd.words(dst, 6+rd.r.intn(14))
			dst = rd.endSentence(dst)
			dst = append(dst, "</li>\n"...)
		}
		dst = append(dst, "</ul>\n"...)
		dst = rd.paragraphs(dst, start, target/2)

	case TrapDeepChain:
		if part == 0 {
			dst = append(dst, "<ul class=\"index\">\n"...)
			if level < deepLevels {
				dst = rd.anchorTo(dst, strconv.Itoa(int(level)+1)+"/", virtual{TrapDeepChain, (level + 1) << partBits})
			}
			for j := uint32(1); j <= uint32(st.deepPartsAt(int(level))); j++ {
				dst = rd.anchorTo(dst, "part-"+strconv.Itoa(int(j))+".html", virtual{TrapDeepChain, level<<partBits | j})
			}
			dst = append(dst, "</ul>\n"...)
		}
		dst = rd.paragraphs(dst, start, target)

	case TrapParamOrder:
		// Links to the next and previous pages and to the other
		// categories, with the parameters in an order drawn for each
		// link, so that every page is linked under both of its URLs.
		cat, page := int(v.local>>8), int(v.local&0xff)
		dst = append(dst, "<ul class=\"index\">\n"...)
		to := func(c, p int) {
			order := mix(w.opt.Seed, tagTrapHref, uint64(s)<<32|uint64(v.local)<<16|uint64(c)<<8|uint64(p))&1 == 0
			href := string(st.appendCatalogHref(nil, c, p, order))
			dst = rd.anchorTo(dst, html.EscapeString(href), virtual{TrapParamOrder, uint32(c)<<8 | uint32(p)})
		}
		if page > 1 {
			to(cat, page-1)
		}
		if page < int(st.catPages) {
			to(cat, page+1)
		}
		for c := 1; c <= int(st.catCount); c++ {
			if c != cat {
				to(c, 1)
			}
		}
		dst = append(dst, "</ul>\n"...)
		dst = rd.paragraphs(dst, start, target)

	case TrapFacets:
		dst = rd.facetListing(dst, st, v)

	case TrapHTMLAsOctet:
		if part == 0 {
			dst = append(dst, "<ul class=\"index\">\n"...)
			for j := uint32(1); j <= octetParts; j++ {
				dst = rd.anchorTo(dst, "report-"+strconv.Itoa(int(level))+"/part-"+strconv.Itoa(int(j))+".html", virtual{TrapHTMLAsOctet, level<<partBits | j})
			}
			dst = append(dst, "</ul>\n"...)
		}
		dst = rd.paragraphs(dst, start, target)
	}
	return w.appendFooter(dst, s)
}

// appendMonthTitle appends "November 2026".
func appendMonthTitle(dst []byte, m int32) []byte {
	dst = append(dst, monthNames[m%12]...)
	dst = append(dst, ' ')
	return strconv.AppendInt(dst, int64(m/12), 10)
}

// appendMonthHref appends a link from month from's page to month to's: a
// host-relative path for every third month, else a relative one.
func appendMonthHref(dst []byte, root string, from, to int32) []byte {
	switch {
	case to%3 == 0:
		return appendMonthPath(dst, root, to)
	case to/12 == from/12:
		mo := to%12 + 1
		return append(dst, '.', '.', '/', byte('0'+mo/10), byte('0'+mo%10), '/')
	}
	return appendMonthPath(append(dst, "../.."...), "/", to)
}

// Binary files served as HTML: a real header (PNG or ZIP) and then
// pseudo-random bytes, generated at any offset without state so that the
// server can stream them in chunks.

func (w *Web) binaryHeader(s, idx int, b binaryBlob) []byte {
	x := mix(w.opt.Seed, tagTrapBytes, uint64(s)<<8|uint64(idx)|0x80)
	if b.zip {
		h := []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00")
		h = binary.LittleEndian.AppendUint32(h, uint32(x))     // time and date
		h = binary.LittleEndian.AppendUint32(h, uint32(x>>32)) // CRC-32
		h = binary.LittleEndian.AppendUint32(h, uint32(b.size-30-len("data/archive.bin")))
		h = binary.LittleEndian.AppendUint32(h, uint32(b.size*3))
		h = binary.LittleEndian.AppendUint16(h, uint16(len("data/archive.bin")))
		h = binary.LittleEndian.AppendUint16(h, 0)
		return append(h, "data/archive.bin"...)
	}
	h := []byte("\x89PNG\r\n\x1a\n")
	ihdr := []byte("IHDR")
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(640+x%1280))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(480+x>>16%960))
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	h = binary.BigEndian.AppendUint32(h, 13)
	h = append(h, ihdr...)
	h = binary.BigEndian.AppendUint32(h, crc32.ChecksumIEEE(ihdr))
	h = binary.BigEndian.AppendUint32(h, uint32(b.size-len(h)-12))
	return append(h, "IDAT"...)
}

// fillBinary fills buf with the bytes of blob b of site s from offset off.
func (w *Web) fillBinary(buf []byte, s int, idx int, b binaryBlob, header []byte, off int) {
	base := mix(w.opt.Seed, tagTrapBytes, uint64(s)<<8|uint64(idx)+1)
	for i := 0; i < len(buf); {
		o := off + i
		if o < len(header) {
			buf[i] = header[o]
			i++
			continue
		}
		k := o - len(header)
		if k&7 == 0 && i+8 <= len(buf) {
			binary.LittleEndian.PutUint64(buf[i:], splitmix64(base+uint64(k>>3)))
			i += 8
			continue
		}
		buf[i] = byte(splitmix64(base+uint64(k>>3)) >> (8 * (k & 7)))
		i++
	}
}
