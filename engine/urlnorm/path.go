package urlnorm

import (
	"slices"
	"strings"
)

func appendAuthority(out []byte, scheme, userinfo, hostport string) ([]byte, error) {
	host, port := hostport, ""
	inBrackets := false
	for i := 0; i < len(hostport); i++ {
		c := hostport[i]
		if c == '[' {
			inBrackets = true
		} else if c == ']' {
			inBrackets = false
		} else if c == ':' && !inBrackets {
			host, port = hostport[:i], hostport[i+1:]
			break
		}
	}
	if host == "" {
		return out, ErrHost
	}
	if userinfo != "" {
		user, pass, hasPass := strings.Cut(userinfo, ":")
		if user != "" || (hasPass && pass != "") {
			out = appendEscaped(out, user, clsUserinfo)
			if hasPass && pass != "" {
				out = append(out, ':')
				out = appendEscaped(out, pass, clsUserinfo)
			}
			out = append(out, '@')
		}
	}
	var err error
	if out, err = appendHost(out, host); err != nil {
		return out, err
	}
	if port == "" {
		return out, nil
	}
	v := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if !isDigit(c) {
			return out, ErrPort
		}
		v = v*10 + int(c-'0')
		if v > 65535 {
			return out, ErrPort
		}
	}
	if (scheme == "http" && v == 80) || (scheme == "https" && v == 443) {
		return out, nil
	}
	out = append(out, ':')
	return appendUint(out, uint64(v)), nil
}

func appendUint(out []byte, v uint64) []byte {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(out, b[i:]...)
}

// appendPath appends the segments of p (separated by '/' or '\', without a
// leading separator) to the path that starts at out[pathStart], resolving
// "." and ".." as the URL Standard's path state does.
func appendPath(out []byte, pathStart int, p string, drop []string) []byte {
	for {
		seg, last := p, true
		for i := 0; i < len(p); i++ {
			if isSlash(p[i]) {
				seg, p, last = p[:i], p[i+1:], false
				break
			}
		}
		segStart := len(out)
		out = append(out, '/')
		out = appendEscaped(out, seg, clsPath)
		if len(drop) > 0 {
			out = dropPathParams(out, segStart+1, drop)
		}
		switch string(out[segStart+1:]) {
		case ".":
			out = out[:segStart]
			if last {
				out = append(out, '/')
			}
		case "..":
			out = out[:segStart]
			if j := lastSlash(out[pathStart:]); j >= 0 {
				out = out[:pathStart+j]
			}
			if last {
				out = append(out, '/')
			}
		}
		if last {
			return out
		}
	}
}

// dropPathParams removes ";name=value" parameters whose name matches drop
// from the segment that starts at out[segStart].
func dropPathParams(out []byte, segStart int, drop []string) []byte {
	seg := out[segStart:]
	first := slices.Index(seg, ';')
	if first < 0 {
		return out
	}
	w := segStart + first
	r := w
	for r < len(out) {
		// out[r] is ';'; the parameter runs to the next ';'.
		end := len(out)
		for k := r + 1; k < len(out); k++ {
			if out[k] == ';' {
				end = k
				break
			}
		}
		param := out[r+1 : end]
		eq := slices.Index(param, '=')
		if eq < 0 || !matchAny(drop, param[:eq]) {
			w += copy(out[w:], out[r:end])
		}
		r = end
	}
	return out[:w]
}
