package simweb

import (
	"strconv"
	"strings"
)

// parseCatalog parses the catalogue's query: both parameters, in either
// order, with others ignored.
func (st *siteTraps) parseCatalog(query string) (virtual, bool) {
	var cat, page int
	for query != "" {
		var kv string
		kv, query, _ = strings.Cut(query, "&")
		n, v, _ := strings.Cut(kv, "=")
		x, err := strconv.Atoi(v)
		if err != nil || v[0] == '0' || v[0] == '+' || v[0] == '-' {
			continue
		}
		switch n {
		case st.catName:
			cat = x
		case st.pageName:
			page = x
		}
	}
	if cat < 1 || cat > int(st.catCount) || page < 1 || page > int(st.catPages) {
		return virtual{}, false
	}
	return virtual{kind: TrapParamOrder, local: uint32(cat)<<8 | uint32(page)}, true
}

// lookupVirtual finds a page the site's traps add: the deep chain, the
// calendar, binary files, pages served as octet-stream.
func (st *siteTraps) lookupVirtual(path string) (v virtual, redirect, ok bool) {
	if st.deepRoot != "" {
		if rest, found := strings.CutPrefix(path, st.deepRoot); found {
			return st.parseDeep(rest)
		}
		if path+"/" == st.deepRoot {
			return virtual{}, true, true
		}
	}
	if st.calRoot != "" {
		if rest, found := strings.CutPrefix(path, st.calRoot); found {
			return parseMonth(rest)
		}
	}
	for i, b := range st.binaries {
		if path == b.path {
			return virtual{kind: TrapBinaryAsHTML, local: uint32(i)}, false, true
		}
	}
	if st.octet {
		if rest, found := strings.CutPrefix(path, "/export/report-"); found {
			return parseReport(rest)
		}
	}
	return virtual{}, false, false
}

// parseDeep parses what follows the deep chain's root: "" (level 0),
// "1/2/3/" (level 3), "1/2/part-1.html" (a page of level 2).
func (st *siteTraps) parseDeep(rest string) (v virtual, redirect, ok bool) {
	level := 0
	for {
		if rest == "" {
			return virtual{kind: TrapDeepChain, local: uint32(level) << partBits}, false, true
		}
		next := strconv.Itoa(level + 1)
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			if rest == next && level < deepLevels {
				return virtual{}, true, true
			}
			if num, found := strings.CutPrefix(rest, "part-"); found {
				if num, found = strings.CutSuffix(num, ".html"); found && num != "" && num[0] != '0' && len(num) <= 5 {
					if part, err := strconv.Atoi(num); err == nil && part <= st.deepPartsAt(level) {
						return virtual{kind: TrapDeepChain, local: uint32(level)<<partBits | uint32(part)}, false, true
					}
				}
			}
			return virtual{}, false, false
		}
		if rest[:i] != next || level >= deepLevels {
			return virtual{}, false, false
		}
		level++
		rest = rest[i+1:]
	}
}

// deepPartsAt returns the number of part pages at a level of the deep
// chain: deepParts, and the archive at the bottom.
func (st *siteTraps) deepPartsAt(level int) int {
	if level == deepLevels {
		return st.deepBottom
	}
	return deepParts
}

// parseMonth parses "2026/11/" (or "2026/11", a redirect).
func parseMonth(rest string) (v virtual, redirect, ok bool) {
	if len(rest) == 7 {
		redirect = true
		rest += "/"
	}
	if len(rest) != 8 || rest[4] != '/' || rest[7] != '/' {
		return virtual{}, false, false
	}
	n := 0
	for i, c := range []byte(rest) {
		if i == 4 || i == 7 {
			continue
		}
		if c < '0' || c > '9' {
			return virtual{}, false, false
		}
		n = n*10 + int(c-'0')
	}
	year, month := n/100, n%100
	if year < 1 || month < 1 || month > 12 {
		return virtual{}, false, false
	}
	if redirect {
		return virtual{}, true, true
	}
	return virtual{kind: TrapCalendar, local: uint32(year*12 + month - 1)}, false, true
}

// parseReport parses what follows "/export/report-": "1.html" (served as
// octet-stream) or "1/part-2.html".
func parseReport(rest string) (v virtual, redirect, ok bool) {
	if len(rest) < 2 || rest[0] < '1' || rest[0] > '0'+octetReports {
		return virtual{}, false, false
	}
	n := uint32(rest[0] - '0')
	switch rest = rest[1:]; {
	case rest == ".html":
		return virtual{kind: TrapHTMLAsOctet, local: n << partBits}, false, true
	case len(rest) == len("/part-1.html") && strings.HasPrefix(rest, "/part-") && strings.HasSuffix(rest, ".html"):
		if j := rest[6]; j >= '1' && j <= '0'+octetParts {
			return virtual{kind: TrapHTMLAsOctet, local: n<<partBits | uint32(j-'0')}, false, true
		}
	}
	return virtual{}, false, false
}
