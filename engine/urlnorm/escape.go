package urlnorm

// Character classes for percent-encoding, as bit flags per byte.
const (
	clsUnreserved = 1 << iota // ALPHA DIGIT - . _ ~ (RFC 3986 §2.3)
	clsUserinfo               // allowed raw in user and password
	clsPath                   // allowed raw in a path segment
	clsQuery                  // allowed raw in the query
	clsHex                    // hex digit
)

var class [256]uint8

func init() {
	for c := 0; c < 256; c++ {
		b := byte(c)
		var f uint8
		if isAlpha(b) || isDigit(b) || b == '-' || b == '.' || b == '_' || b == '~' {
			f |= clsUnreserved | clsUserinfo | clsPath | clsQuery
		}
		switch b {
		case '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=': // sub-delims
			f |= clsUserinfo | clsPath | clsQuery
		case ':', '@':
			f |= clsPath | clsQuery
		case '/', '?':
			f |= clsQuery
		}
		if isDigit(b) || ('a' <= b && b <= 'f') || ('A' <= b && b <= 'F') {
			f |= clsHex
		}
		class[c] = f
	}
}

const upperHex = "0123456789ABCDEF"

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// appendEscaped appends s with its percent-encoding normalised: escapes of
// unreserved bytes are decoded, other escapes get upper-case hex digits, a
// stray '%' becomes "%25", and bytes outside allowed are escaped.
func appendEscaped(out []byte, s string, allowed uint8) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if class[c]&allowed != 0 {
			out = append(out, c)
			continue
		}
		if c == '%' {
			if i+2 < len(s) && class[s[i+1]]&clsHex != 0 && class[s[i+2]]&clsHex != 0 {
				v := unhex(s[i+1])<<4 | unhex(s[i+2])
				if class[v]&clsUnreserved != 0 {
					out = append(out, v)
				} else {
					out = append(out, '%', upperHex[v>>4], upperHex[v&15])
				}
				i += 2
				continue
			}
		}
		out = append(out, '%', upperHex[c>>4], upperHex[c&15])
	}
	return out
}
