package dns

import (
	"net/netip"
	"strings"
)

// canonicalHost returns the cache key of host (lower case, no trailing
// dot), or its address if host is an IP literal. It allocates only when
// host has upper-case letters.
func canonicalHost(host string) (key string, lit netip.Addr, err error) {
	h := host
	bracketed := len(h) >= 2 && h[0] == '[' && h[len(h)-1] == ']'
	if bracketed {
		h = h[1 : len(h)-1]
	}
	// ParseAddr allocates its error, so only IP-looking hosts are given to
	// it: this keeps cached look-ups free of allocations.
	if looksLikeIP(h) {
		if a, err := netip.ParseAddr(h); err == nil {
			return "", a, nil
		}
	}
	if bracketed {
		return "", netip.Addr{}, ErrInvalidHost
	}
	h = strings.TrimSuffix(h, ".")
	if len(h) == 0 || len(h) > 253 {
		return "", netip.Addr{}, ErrInvalidHost
	}
	upper := false
	label := 0
	for i := 0; i < len(h); i++ {
		switch b := h[i]; {
		case b == '.':
			if label == 0 {
				return "", netip.Addr{}, ErrInvalidHost
			}
			label = 0
			continue
		case 'a' <= b && b <= 'z', '0' <= b && b <= '9', b == '-', b == '_':
		case 'A' <= b && b <= 'Z':
			upper = true
		default:
			return "", netip.Addr{}, ErrInvalidHost
		}
		if label++; label > 63 {
			return "", netip.Addr{}, ErrInvalidHost
		}
	}
	if label == 0 {
		return "", netip.Addr{}, ErrInvalidHost
	}
	if upper {
		h = strings.ToLower(h)
	}
	return h, netip.Addr{}, nil
}

// looksLikeIP reports whether h could be an IP literal: it contains a colon
// (IPv6) or only digits and dots (IPv4).
func looksLikeIP(h string) bool {
	if strings.IndexByte(h, ':') >= 0 {
		return true
	}
	for i := 0; i < len(h); i++ {
		if b := h[i]; b != '.' && (b < '0' || b > '9') {
			return false
		}
	}
	return len(h) > 0
}
