package dedup

import (
	"slices"
	"strings"
)

// eachParam calls fn with each name=value of a query until fn returns
// false.
func eachParam(q string, fn func(name, value string) bool) {
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if p == "" {
			continue
		}
		name, value, _ := strings.Cut(p, "=")
		if !fn(name, value) {
			return
		}
	}
}

// maxParams bounds the parameters compared between two queries.
const maxParams = 32

type param struct{ name, value string }

func parseParams(dst []param, q string) ([]param, bool) {
	ok := true
	eachParam(q, func(name, value string) bool {
		if len(dst) == maxParams {
			ok = false
			return false
		}
		dst = append(dst, param{name, value})
		return true
	})
	return dst, ok
}

// absent is the value summary of a parameter a query lacks.
const absent = "\x00"

// eachDifference calls fn once with each parameter name whose values
// differ between two queries (present in one only, or with other values),
// with its values in each (see valuesOf; absent when missing).
func eachDifference(qa, qb string, fn func(name, va, vb string)) {
	var ba, bb [maxParams]param
	a, okA := parseParams(ba[:0], qa)
	b, okB := parseParams(bb[:0], qb)
	if !okA || !okB {
		return
	}
	var done [2 * maxParams]string
	nd := 0
	check := func(x, y []param, xIsA bool) {
		for _, p := range x {
			vx, vy := valuesOf(x, p.name), valuesOf(y, p.name)
			if vx == vy {
				continue
			}
			seen := false
			for _, n := range done[:nd] {
				seen = seen || n == p.name
			}
			if seen {
				continue
			}
			done[nd] = p.name
			nd++
			if xIsA {
				fn(p.name, vx, vy)
			} else {
				fn(p.name, vy, vx)
			}
		}
	}
	check(a, b, true)
	check(b, a, false)
}

// valuesOf returns a comparable summary of the values of name in ps: its
// values joined in order, or "\x00" when absent.
func valuesOf(ps []param, name string) string {
	out, n := "", 0
	for _, p := range ps {
		if p.name == name {
			if n == 0 {
				out = p.value
			} else {
				out += "&" + p.value
			}
			n++
		}
	}
	if n == 0 {
		return absent
	}
	return out
}

// samePermutation reports whether two queries hold the same name=value
// pairs in another order.
func samePermutation(qa, qb string) bool {
	if qa == qb || len(qa) != len(qb) {
		return false
	}
	var ba, bb [maxParams]string
	a, b := splitQuery(ba[:0], qa), splitQuery(bb[:0], qb)
	if a == nil || b == nil || len(a) != len(b) {
		return false
	}
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// splitQuery returns the name=value pairs of q, or nil if it has more
// than maxParams.
func splitQuery(dst []string, q string) []string {
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if p == "" {
			continue
		}
		if len(dst) == maxParams {
			return nil
		}
		dst = append(dst, p)
	}
	return dst
}
