package urlnorm

import (
	"net/netip"
	"strings"

	"golang.org/x/net/idna"
)

// idnaProfile is UTS #46 ToASCII with the options of the URL Standard's
// "domain to ASCII" (beStrict false): non-transitional, no STD3 ASCII rules
// (so '_' passes), no hyphen checks ("r3---sn-x" is a real host), joiner
// and bidi checks on, and no DNS length check (lidi checks it afterwards).
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.Transitional(false),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
	idna.CheckJoiners(true),
	idna.VerifyDNSLength(false),
)

// appendHost appends the normalised form of host (no port, no userinfo).
func appendHost(out []byte, host string) ([]byte, error) {
	if host[0] == '[' {
		if len(host) < 2 || host[len(host)-1] != ']' {
			return out, ErrHost
		}
		return appendIPv6(out, host[1:len(host)-1])
	}
	// Fast path: a plain ASCII name needs no IDNA processing, only
	// lower-casing. "xn--" labels must be checked by IDNA.
	plain := true
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !(isAlpha(c) || isDigit(c) || c == '-' || c == '.' || c == '_') {
			plain = false
			break
		}
	}
	if plain && !hasACELabel(host) {
		start := len(out)
		for i := 0; i < len(host); i++ {
			out = append(out, lower(host[i]))
		}
		return finishDomain(out, start)
	}
	return appendIDNHost(out, host)
}

func appendIDNHost(out []byte, host string) ([]byte, error) {
	if !strings.ContainsRune(host, '%') && isASCII(host) {
		// An ASCII name with a byte other than letters, digits, '-', '.'
		// and '_' cannot pass the DNS check below; IDNA would only
		// lower-case it. Unless it has an "xn--" label, stop here.
		if !hasACELabel(host) {
			return out, ErrHost
		}
	}
	decoded := host
	if strings.IndexByte(host, '%') >= 0 {
		decoded = percentDecode(host)
	}
	// Invalid UTF-8 becomes U+FFFD, which IDNA rejects.
	decoded = strings.ToValidUTF8(decoded, "\uFFFD")
	ascii, err := idnaProfile.ToASCII(decoded)
	if err != nil || ascii == "" {
		return out, ErrHost
	}
	start := len(out)
	out = append(out, ascii...)
	return finishDomain(out, start)
}

func hasACELabel(host string) bool {
	for i := 0; i+4 <= len(host); i++ {
		if (i == 0 || host[i-1] == '.') && (host[i] == 'x' || host[i] == 'X') &&
			(host[i+1] == 'n' || host[i+1] == 'N') && host[i+2] == '-' && host[i+3] == '-' {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func percentDecode(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && class[s[i+1]]&clsHex != 0 && class[s[i+2]]&clsHex != 0 {
			c = unhex(s[i+1])<<4 | unhex(s[i+2])
			i += 2
		}
		b = append(b, c)
	}
	return string(b)
}

// finishDomain checks and rewrites the ASCII host in out[start:]: trailing
// dots are removed; a host that then ends in a number is an IPv4 address;
// any other name must be usable with DNS.
func finishDomain(out []byte, start int) ([]byte, error) {
	h := out[start:]
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(('a' <= c && c <= 'z') || isDigit(c) || c == '-' || c == '.' || c == '_') {
			return out, ErrHost
		}
	}
	// Trailing dots go first, so that the result is checked as what it
	// becomes: "foo.09.." must not turn into "foo.09", which the next
	// normalisation would reject as a bad IPv4 address.
	for len(h) > 0 && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	if endsInNumber(h) {
		ip, ok := parseIPv4(h)
		if !ok {
			return out, ErrHost
		}
		out = out[:start]
		for i := 3; i >= 0; i-- {
			out = appendUint(out, uint64(ip>>(8*i)&0xff))
			if i > 0 {
				out = append(out, '.')
			}
		}
		return out, nil
	}
	if len(h) == 0 || len(h) > 253 {
		return out, ErrHost
	}
	label := 0
	for i := 0; i <= len(h); i++ {
		if i == len(h) || h[i] == '.' {
			if label == 0 || label > 63 {
				return out, ErrHost
			}
			label = 0
			continue
		}
		label++
	}
	return out[:start+len(h)], nil
}

// endsInNumber is the URL Standard's "ends in a number" checker.
func endsInNumber(h []byte) bool {
	if len(h) > 0 && h[len(h)-1] == '.' {
		if len(h) == 1 {
			return false
		}
		h = h[:len(h)-1]
	}
	last := h
	for i := len(h) - 1; i >= 0; i-- {
		if h[i] == '.' {
			last = h[i+1:]
			break
		}
	}
	if len(last) == 0 {
		return false
	}
	digits := true
	for _, c := range last {
		if !isDigit(c) {
			digits = false
			break
		}
	}
	if digits {
		return true
	}
	// "0x" followed by hex digits also counts.
	if len(last) >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') {
		for _, c := range last[2:] {
			if class[c]&clsHex == 0 {
				return false
			}
		}
		return true
	}
	return false
}

// parseIPv4 is the URL Standard's IPv4 parser: one to four parts, each
// decimal, octal (leading 0) or hex (0x), the last one filling the
// remaining bytes.
func parseIPv4(h []byte) (uint32, bool) {
	if len(h) > 0 && h[len(h)-1] == '.' {
		h = h[:len(h)-1]
	}
	var parts [4]uint64
	n := 0
	start := 0
	for i := 0; i <= len(h); i++ {
		if i < len(h) && h[i] != '.' {
			continue
		}
		if n == 4 {
			return 0, false
		}
		v, ok := parseIPv4Number(h[start:i])
		if !ok {
			return 0, false
		}
		parts[n] = v
		n++
		start = i + 1
	}
	for i := 0; i < n-1; i++ {
		if parts[i] > 255 {
			return 0, false
		}
	}
	if parts[n-1] >= 1<<(8*(5-n)) {
		return 0, false
	}
	ip := parts[n-1]
	for i := 0; i < n-1; i++ {
		ip += parts[i] << (8 * (3 - i))
	}
	return uint32(ip), true
}

func parseIPv4Number(s []byte) (uint64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	radix := uint64(10)
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s, radix = s[2:], 16
	} else if len(s) >= 2 && s[0] == '0' {
		s, radix = s[1:], 8
	}
	var v uint64
	for _, c := range s {
		var d uint64
		switch {
		case isDigit(c):
			d = uint64(c - '0')
		case radix == 16 && class[c]&clsHex != 0:
			d = uint64(unhex(c))
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		// Saturate: anything past 2^32 fails later anyway.
		if v < 1<<33 {
			v = v*radix + d
		}
	}
	return v, true
}

// appendIPv6 appends "[addr]" in the URL Standard's serialisation: lower-case
// hex, the first longest run of two or more zero pieces compressed to "::".
func appendIPv6(out []byte, s string) ([]byte, error) {
	if strings.IndexByte(s, '%') >= 0 { // zones are not part of URLs
		return out, ErrHost
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is6() {
		return out, ErrHost
	}
	b := a.As16()
	var pieces [8]uint16
	for i := range pieces {
		pieces[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	runStart, runLen := -1, 1
	for i := 0; i < 8; {
		if pieces[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && pieces[j] == 0 {
			j++
		}
		if j-i > runLen {
			runStart, runLen = i, j-i
		}
		i = j
	}
	const hex = "0123456789abcdef"
	out = append(out, '[')
	for i := 0; i < 8; i++ {
		if i == runStart {
			out = append(out, "::"...)
			i += runLen - 1
			continue
		}
		if i > 0 && i != runStart+runLen {
			out = append(out, ':')
		}
		p := pieces[i]
		started := false
		for shift := 12; shift >= 0; shift -= 4 {
			d := p >> shift & 0xf
			if d != 0 || started || shift == 0 {
				out = append(out, hex[d])
				started = true
			}
		}
	}
	return append(out, ']'), nil
}
