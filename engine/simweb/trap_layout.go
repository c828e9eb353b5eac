package simweb

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// layOutTraps puts Options.Traps sites' worth of each kind of trap on the
// web. Only sites whose robots.txt forbids nothing (missing, empty, or
// rules for paths that do not exist) get traps, so that every trap can be
// crawled politely and the ground truth does not hinge on how a crawler
// normalises a URL before checking robots.txt; sites with a Crawl-delay are
// left out so that a crawl of the traps stays quick.
func (w *Web) layOutTraps(children func(int32) []int32) {
	n := w.opt.Traps
	if n <= 0 {
		return
	}
	ti := &trapIndex{sites: make([]*siteTraps, len(w.sites)), extra: make(map[int32][]trapLink)}
	w.traps = ti
	eligible := w.trapEligible()
	key := make([]float64, len(w.sites))
	for k := TrapHostMirror; k < numTrapKinds; k++ {
		// A weighted sample without replacement (Efraimidis and Spirakis):
		// bigger sites are likelier to get traps, in proportion to the
		// square root of their size, so that traps weigh in a crawl as they
		// do on the web, where big sites run the software that makes them.
		r := newRNG(w.opt.Seed, tagTraps, uint64(k))
		order := slices.Clone(eligible)
		for _, s := range order {
			key[s] = -math.Log(1-r.float()) / math.Sqrt(float64(w.sitePages(int(s))))
		}
		slices.SortFunc(order, func(a, b int32) int {
			if c := cmp.Compare(key[a], key[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		got := 0
		for _, s := range order {
			if got == n {
				break
			}
			if w.addTrap(k, int(s), &r, children) {
				got++
			}
		}
	}
	slices.SortStableFunc(ti.instances, func(a, b TrapInstance) int {
		if a.Site != b.Site {
			return a.Site - b.Site
		}
		return int(a.Kind) - int(b.Kind)
	})
	w.stats.Traps = make(map[TrapKind]int)
	for _, in := range ti.instances {
		w.stats.Traps[in.Kind]++
	}
	for _, st := range ti.sites {
		if st != nil {
			w.stats.TrapSites++
		}
	}
}

// trapEligible lists the sites that may carry traps, in id order.
func (w *Web) trapEligible() []int32 {
	var out []int32
	var buf []byte
	for s := range w.sites {
		rb := &w.sites[s].robots
		switch rb.kind {
		case RobotsMissing, RobotsEmpty, RobotsDisallow:
		default:
			continue
		}
		if rb.disallowed("/?q=1") || rb.disallowed(printPrefix) || rb.disallowed(mirrorPrefix) {
			continue
		}
		ok := true
		for p := w.siteStart[s]; p < w.siteStart[s+1] && ok; p++ {
			buf = w.appendPath(buf[:0], p)
			ok = !rb.disallowed(string(buf))
		}
		if ok {
			out = append(out, int32(s))
		}
	}
	return out
}

// addTrap gives site s a trap of kind k, if the site can carry it.
func (w *Web) addTrap(k TrapKind, s int, r *rng, children func(int32) []int32) bool {
	ti := w.traps
	if st := ti.sites[s]; st != nil && st.set.Has(k) {
		return false
	}
	home := w.siteStart[s]
	npages := w.sitePages(s)
	host := w.sites[s].host
	st := ti.sites[s]
	if st == nil {
		st = &siteTraps{loopDir: -1}
	}
	add := func(url, original, detail string) {
		ti.instances = append(ti.instances, TrapInstance{Kind: k, Site: s, URL: url, Original: original, Detail: detail})
	}
	link := func(from int32, path, text string) {
		ti.extra[from] = append(ti.extra[from], trapLink{site: -1, path: path, text: text})
	}
	path := func(p int32) string { return string(w.appendPath(nil, p)) }

	switch k {
	case TrapHostMirror:
		alias, ok := strings.CutPrefix(host, "www.")
		if !ok {
			alias = "www." + host
		}
		var from []int32
		for _, ps := range w.popular[:min(trapHomeHops, len(w.popular))] {
			if int(ps) != s && w.sites[ps].robots.kind.open() {
				from = append(from, ps)
			}
		}
		src := int32(s)
		if len(from) > 0 {
			src = from[r.intn(len(from))]
		}
		st.alias = alias
		st.aliasSlot = int32(len(w.sites) + len(ti.aliasSites))
		ti.aliasSites = append(ti.aliasSites, int32(s))
		w.hosts[alias] = int32(s)
		fromHome := w.siteStart[src]
		ti.extra[fromHome] = append(ti.extra[fromHome], trapLink{site: int32(s), alias: true, path: "/", text: w.sites[s].name})
		add(w.scheme()+"://"+alias+"/", w.siteURL(s, "/"), fmt.Sprintf("%s answers as %s with identical pages; linked from %s", host, alias, w.siteURL(int(src), "/")))

	case TrapDirMirror:
		// The depth-1 directory with the largest subtree, renamed; or the
		// whole site under /mirror/.
		var best int32 = -1
		bestSize := 0
		for _, c := range children(home) {
			if w.kind(c) != KindIndex {
				continue
			}
			if size := subtreeSize(c, children); size > bestSize {
				best, bestSize = c, size
			}
		}
		if best >= 0 && r.chance(0.5) {
			to := path(best)
			suffix := []string{"-old", "-copy", "-bak", "-v1"}[r.intn(4)]
			st.mirrorFrom, st.mirrorTo = to[:len(to)-1]+suffix+"/", to
			add(w.siteURL(s, st.mirrorFrom), w.siteURL(s, to), fmt.Sprintf("identical copy of the %d pages under %s", bestSize, to))
		} else {
			st.mirrorFrom, st.mirrorTo, st.mirrorBanner = mirrorPrefix, "/", true
			add(w.siteURL(s, mirrorPrefix), w.siteURL(s, "/"), fmt.Sprintf("copy of the whole site (%d pages) with a mirror banner line", npages))
		}
		link(home, st.mirrorFrom, "Archive")

	case TrapLoop:
		var cands []int32
		for p := home + 1; p < w.siteStart[s+1]; p++ {
			if w.kind(p) == KindIndex && w.depth[p] <= 3 && len(children(p)) > 0 {
				cands = append(cands, p)
			}
		}
		if len(cands) == 0 {
			return false
		}
		// The largest subtree of three candidates: a symbolic link loop
		// copies the whole subtree at every level.
		d, size := int32(-1), 0
		for range 3 {
			c := cands[r.intn(len(cands))]
			if n := subtreeSize(c, children); n > size || (n == size && c < d) {
				d, size = c, n
			}
		}
		st.loopDir, st.loopPath = d, path(d)
		if r.chance(0.5) {
			seg := st.loopPath[:len(st.loopPath)-1]
			st.loopSeg = seg[strings.LastIndexByte(seg, '/')+1:] // /a/b/ links to b/
		} else {
			st.loopSeg = []string{"current", "latest", "self", "here"}[r.intn(4)]
		}
		st.loopDot = r.chance(0.5)
		add(w.siteURL(s, st.loopPath+st.loopSeg+"/"), w.siteURL(s, st.loopPath),
			fmt.Sprintf("%s links to %s/; %s(%s/)^k<rest> answers as %s<rest> for every k", st.loopPath, st.loopSeg, st.loopPath, st.loopSeg, st.loopPath))

	case TrapCalendar:
		st.calRoot = []string{"/calendar/", "/events/"}[r.intn(2)]
		st.calFirst = int32((2020+r.intn(6))*12 + r.intn(12))
		st.calLast = st.calFirst + int32(11+r.intn(25))
		st.calEntry = st.calFirst + int32(r.intn(int(st.calLast-st.calFirst+1)))
		entry := string(appendMonthPath(nil, st.calRoot, st.calEntry))
		link(home, entry, "Events calendar")
		add(w.siteURL(s, entry), "", fmt.Sprintf("months %s to %s have events (genuine); every other month of the years 0001 to 9999 answers as an empty month",
			monthName(st.calFirst), monthName(st.calLast)))

	case TrapSessionID:
		if npages < 3 {
			return false
		}
		st.session = sessionKind(1 + r.intn(4))
		name := sessionNames[st.session]
		ex := "?" + name + "=…"
		if st.session == sessionJSESSIONID {
			ex = ";jsessionid=…"
		}
		add(w.siteURL(s, "/"+ex), w.siteURL(s, "/"), "half of the internal links carry the session parameter "+name+"; the server ignores it")

	case TrapTracking:
		if npages < 2 {
			return false
		}
		st.tracking = true
		add(w.siteURL(s, "/?utm_source=…"), w.siteURL(s, "/"), "links from other sites carry utm_source, utm_medium and utm_campaign, internal links ref; the server ignores them")

	case TrapSoft404:
		st.set = st.set.With(k) // broken links must resolve as soft 404s below
		ti.sites[s] = st
		nr := newRNG(w.opt.Seed, tagTrapText, uint64(s)<<8|uint64(k))
		var first string
		for i := 0; i < brokenLinks; i++ {
			word := string(w.vocab.word(w.vocab.contentWord(&nr)))
			p := "/" + word + "-" + []string{"old", "archive", "2019", "draft"}[nr.intn(4)] + ".html"
			if i == 1 && npages > 1 {
				p = w.dirOf(home+1+int32(nr.intn(npages-1))) + word + ".htm"
			}
			if res := w.resolve(s, p); res.status != 200 || res.page >= 0 {
				continue
			}
			from := home
			if i == 2 && npages > 1 {
				from = home + 1 + int32(nr.intn(npages-1))
			}
			link(from, p, "Broken link")
			if first == "" {
				first = p
			}
		}
		if first == "" {
			first = "/no-such-page.html"
		}
		add(w.siteURL(s, first), "", "unknown paths answer 200 with a page-not-found page; broken links lead there")

	case TrapPrintCopy:
		add(w.siteURL(s, printPrefix), w.siteURL(s, "/"), "every page links to its printer-friendly copy /print/<path>: same text, another header, a date line")

	case TrapBinaryAsHTML:
		br := newRNG(w.opt.Seed, tagTrapText, uint64(s)<<8|uint64(k))
		for i, zip := range []bool{false, true} {
			size := int(br.lognormal(binaryMedian, 0.5))
			size = min(max(size, binaryMin), binaryMax)
			word := string(w.vocab.word(w.vocab.contentWord(&br)))
			p := "/gallery/" + word + "-" + strconv.Itoa(i+1) + ".html"
			format := "PNG"
			if zip {
				p = "/download/" + word + "-" + strconv.Itoa(i+1) + ".php"
				format = "ZIP"
			}
			st.binaries = append(st.binaries, binaryBlob{path: p, zip: zip, size: size})
			link(home, p, "Download")
			add(w.siteURL(s, p), "", fmt.Sprintf("%d bytes of %s data served as text/html", size, format))
		}

	case TrapHTMLAsOctet:
		st.octet = true
		for i := 1; i <= octetReports; i++ {
			p := "/export/report-" + strconv.Itoa(i) + ".html"
			link(home, p, "Report "+strconv.Itoa(i))
			add(w.siteURL(s, p), "", fmt.Sprintf("genuine HTML served as application/octet-stream; it alone links to %d genuine pages /export/report-%d/part-N.html", octetParts, i))
		}

	case TrapPrintParam:
		pp := [...][2]string{{"print", "1"}, {"view", "printable"}, {"format", "print"}, {"output", "pf"}, {"mode", "print"}}[r.intn(5)]
		st.printParam, st.printValue = pp[0], pp[1]
		add(w.siteURL(s, "/?"+pp[0]+"="+pp[1]), w.siteURL(s, "/"), "every page links to a printer-friendly copy ?"+pp[0]+"="+pp[1]+": the same text without navigation or footer")

	case TrapIndexAlias:
		st.indexName = [...]string{"index.php", "default.aspx", "index.html", "index.htm", "home.html", "welcome.jsp"}[r.intn(6)]
		add(w.siteURL(s, "/"+st.indexName), w.siteURL(s, "/"), "every directory page links to itself as <dir>/"+st.indexName+", which the server answers as <dir>/")

	case TrapCaseFold:
		if npages < 2 {
			return false
		}
		st.caseFold = true
		p := path(home + 1)
		add(w.siteURL(s, string(appendTitleCase(nil, p))), w.siteURL(s, p), "the server ignores the case of paths; every page links to itself with the words of its path capitalised")

	case TrapFacets:
		if npages < 2 {
			return false
		}
		st.facets = newFacetShop(r, func() string { return string(w.vocab.word(w.vocab.contentWord(r))) })
		f := &st.facets
		link(home, f.root+f.cats[0]+"/", "Shop")
		add(w.siteURL(s, f.root+f.cats[0]+"/?"+f.sort+"="+f.sortValues[1]), w.siteURL(s, f.root+f.cats[0]+"/"),
			fmt.Sprintf("%d category listings of %d pages (?%s=N), each also under ?%s=%s and ?%s=%s: the same items sorted or viewed another way",
				len(f.cats), facetPages, f.page, f.sort, strings.Join(f.sortValues, "|"), f.view, strings.Join(f.viewValues, "|")))

	case TrapParamOrder:
		st.catPath = []string{"/catalog", "/browse.php", "/shop/list", "/index.php"}[r.intn(4)]
		names := [...][2]string{{"cat", "page"}, {"c", "p"}, {"category", "pg"}, {"dept", "start"}}[r.intn(4)]
		st.catName, st.pageName = names[0], names[1]
		st.catCount, st.catPages = int32(3+r.intn(3)), int32(2+r.intn(3))
		link(home, st.catPath+"?"+st.catName+"=1&"+st.pageName+"=1", "Catalogue")
		add(w.siteURL(s, st.catPath+"?"+st.catName+"=1&"+st.pageName+"=1"), "",
			fmt.Sprintf("%d categories of %d genuine pages, ?%s=N&%s=M linked with the parameters in either order", st.catCount, st.catPages, st.catName, st.pageName))

	case TrapDeepChain:
		st.deepRoot = []string{"/deep/", "/nested/", "/levels/"}[r.intn(3)]
		st.deepBottom = min(max(npages, deepBottomMin), deepBottomMax)
		link(home, st.deepRoot, "Deep archive")
		bottom := st.deepRoot
		for l := 1; l <= deepLevels; l++ {
			bottom += strconv.Itoa(l) + "/"
		}
		add(w.siteURL(s, st.deepRoot), "", fmt.Sprintf("%d genuine levels below the root with %d more pages at each level and %d at the bottom %s, linked from the home page only",
			deepLevels, deepParts, st.deepBottom, bottom))
	}
	st.set = st.set.With(k)
	ti.sites[s] = st
	return true
}

// subtreeSize returns the number of pages in p's subtree, p included.
func subtreeSize(p int32, children func(int32) []int32) int {
	size := 0
	stack := []int32{p}
	for len(stack) > 0 {
		q := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		size++
		stack = append(stack, children(q)...)
	}
	return size
}
