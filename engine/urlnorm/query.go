package urlnorm

import (
	"slices"
	"strings"
)

// appendQuery appends "?" and the normalised query q, or nothing if no
// parameter is left.
func (n *Normalizer) appendQuery(out []byte, q string, drop []string) []byte {
	qStart := len(out)
	out = append(out, '?')
	out = appendEscaped(out, q, clsQuery)
	// Compact the parameters in place, dropping empty and unwanted ones.
	w, r, end := qStart+1, qStart+1, len(out)
	count := 0
	for r <= end {
		pe := end
		for k := r; k < end; k++ {
			if out[k] == '&' {
				pe = k
				break
			}
		}
		if pe > r {
			name := out[r:pe]
			if eq := slices.Index(name, '='); eq >= 0 {
				name = name[:eq]
			}
			if len(drop) == 0 || !matchAny(drop, name) {
				if count > 0 {
					out[w] = '&'
					w++
				}
				w += copy(out[w:], out[r:pe])
				count++
			}
		}
		r = pe + 1
	}
	out = out[:w]
	if count == 0 {
		return out[:qStart]
	}
	if n != nil && n.SortQuery && count > 1 {
		sortParams(out[qStart+1:], count)
	}
	return out
}

// sortParams sorts the '&'-separated parameters of q in place by name,
// keeping the order of parameters with equal names.
func sortParams(q []byte, count int) {
	type span struct{ start, end, nameEnd int }
	spans := make([]span, 0, count)
	start := 0
	for i := 0; i <= len(q); i++ {
		if i == len(q) || q[i] == '&' {
			nameEnd := i
			if eq := slices.Index(q[start:i], '='); eq >= 0 {
				nameEnd = start + eq
			}
			spans = append(spans, span{start, i, nameEnd})
			start = i + 1
		}
	}
	src := slices.Clone(q)
	slices.SortStableFunc(spans, func(a, b span) int {
		return strings.Compare(string(src[a.start:a.nameEnd]), string(src[b.start:b.nameEnd]))
	})
	w := 0
	for i, sp := range spans {
		if i > 0 {
			q[w] = '&'
			w++
		}
		w += copy(q[w:], src[sp.start:sp.end])
	}
}

// matchAny reports whether name matches one of the glob patterns,
// ignoring ASCII case.
func matchAny(patterns []string, name []byte) bool {
	if len(name) == 0 {
		return false
	}
	first := lower(name[0])
	for _, p := range patterns {
		if p == "" || (p[0] != '*' && lower(p[0]) != first) {
			continue
		}
		if globFold(p, name) {
			return true
		}
	}
	return false
}

// globFold matches name against pattern, where '*' matches any run of
// bytes, ignoring ASCII case. It backtracks only to the last star, which
// is enough for globs and keeps it linear in practice.
func globFold(pattern string, name []byte) bool {
	p, s := 0, 0
	starP, starS := -1, 0
	for s < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			starP, starS = p, s
			p++
		case p < len(pattern) && lower(pattern[p]) == lower(name[s]):
			p++
			s++
		case starP >= 0:
			starS++
			p, s = starP+1, starS
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
