package extract

import (
	"bytes"
	"strings"
	"unsafe"
)

// The tokenizer's TagAttr copies every attribute's key and value (two
// allocations each) before returning them, and the attributes of a link tag
// must all be visited to find href and rel. Most attribute values need no
// decoding, so the wanted values are first read straight from the tag's raw
// bytes with the tokenizer's own attribute rules (mirrored from readTag in
// x/net/html/token.go, and checked against TagAttr by
// TestScanAttrsMatchesTokenizer and FuzzScanAttrs). A value that holds '&',
// CR or NUL needs the tokenizer's decoding (character references in
// attribute mode, newline and NUL conversion); then TagAttr is used.

// forEachRawAttr calls fn with the key and raw value of each attribute of
// the start tag whose raw bytes (from '<' to '>') are raw, in order,
// including repeated keys and in the key's original case. It stops when fn
// returns false.
func forEachRawAttr(raw []byte, fn func(key, val []byte) bool) {
	n := len(raw)
	i := 1
	// Tag name: up to white space (consumed) or '/' or '>' (not consumed).
	for i < n {
		c := raw[i]
		i++
		if isSpace(c) {
			break
		}
		if c == '/' || c == '>' {
			i--
			break
		}
	}
	skip := func() {
		for i < n && isSpace(raw[i]) {
			i++
		}
	}
	skip()
	for i < n {
		if raw[i] == '>' {
			return
		}
		// Key: up to white space, '/', '>' or an '=' that is not its first
		// byte; none of those is consumed.
		ks := i
		for i < n {
			c := raw[i]
			if c == '=' && i == ks {
				i++
				continue
			}
			if c == '=' || c == '/' || c == '>' || isSpace(c) {
				break
			}
			i++
		}
		key := raw[ks:i]
		// Value.
		vs, ve := i, i
		skip()
		if i < n {
			switch c := raw[i]; {
			case c == '/':
				i++
			case c == '=':
				i++
				skip()
				if i < n {
					switch q := raw[i]; q {
					case '>':
						// Empty value; '>' ends the tag.
					case '\'', '"':
						i++
						vs = i
						for i < n && raw[i] != q {
							i++
						}
						ve = i
						if i < n {
							i++
						}
					default:
						vs = i
						for i < n && !isSpace(raw[i]) && raw[i] != '>' {
							i++
						}
						ve = i
						if i < n && isSpace(raw[i]) {
							i++
						}
					}
				}
			}
		}
		if len(key) > 0 && !fn(key, raw[vs:ve]) {
			return
		}
		skip()
	}
}

// equalLower reports whether key, lower-cased in ASCII, is name (which is
// lower-case).
func equalLower(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i := range key {
		c := key[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// plainValue reports whether an attribute's raw value is also its decoded
// value.
func plainValue(v []byte) bool {
	for _, c := range v {
		if c == '&' || c == '\r' || c == 0 {
			return false
		}
	}
	return true
}

// decodeValue returns an attribute's decoded value when that takes no
// more than TagAttr's decoding of "&amp;" (the reference of nearly every
// '&' in a URL's query); ok is false when it needs the tokenizer. A value
// without a reference is v itself, not copied (see tagAttrs).
func decodeValue(v []byte) (s string, ok bool) {
	amps := 0
	for i, c := range v {
		switch c {
		case '\r', 0:
			return "", false
		case '&':
			if !bytes.HasPrefix(v[i:], []byte("&amp;")) {
				return "", false
			}
			amps++
		}
	}
	if amps == 0 {
		return unsafe.String(unsafe.SliceData(v), len(v)), true
	}
	return strings.ReplaceAll(string(v), "&amp;", "&"), true
}

// tagAttrs returns the values of the attributes named a and b (b may be
// "") of the scanner's current start tag; ok reports whether a is present.
// As in browsers, the first of repeated attributes wins.
//
// The values share the page's bytes (a copy each was a third of
// Extract's allocations): they are valid only while those bytes are, that
// is within Extract, which never modifies them and resolves every value
// it keeps into a new string (urlnorm builds one) before it returns.
func tagAttrs(s *scanner, a, b string) (va, vb string, ok bool) {
	var rawA, rawB []byte
	hasA, hasB := false, false
	forEachRawAttr(s.raw(), func(key, val []byte) bool {
		switch {
		case !hasA && equalLower(key, a):
			rawA, hasA = val, true
		case b != "" && !hasB && equalLower(key, b):
			rawB, hasB = val, true
		}
		return !(hasA && (hasB || b == ""))
	})
	okA, okB := true, true
	if hasA {
		va, okA = decodeValue(rawA)
	}
	if hasB {
		vb, okB = decodeValue(rawB)
	}
	if !okA || !okB {
		return attrs2(s.tokenizer(), a, b)
	}
	return va, vb, hasA
}
