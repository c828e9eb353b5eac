package simweb

import (
	"bytes"
	"flag"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// GzipLevel is the compression level of the pages simweb sends
// gzip-coded: 1, nginx's default (gzip_comp_level 1), the most common
// server's, as a server with compression on and its defaults would send
// them. (Apache's mod_deflate defaults to zlib's 6.)
const GzipLevel = 1

// gzipMinLength is the shortest body sent gzip-coded (nginx's
// gzip_min_length default, 20 bytes).
const gzipMinLength = 20

// IdentityFlag registers --identity on fs, setting identity: whether
// simweb serves every body identity-coded (see ServerConfig.Identity).
// `lidi simweb` and the benchmarks that start it declare it here.
func IdentityFlag(fs *flag.FlagSet, identity *bool) {
	fs.BoolVar(identity, "identity", *identity, "serve every page identity-coded, as a server with compression off (default: HTML gzip-coded, level "+strconv.Itoa(GzipLevel)+" as nginx's default, to clients that accept gzip)")
}

// Coding names the content coding simweb serves pages in under cfg, for
// reports: "gzip" or "identity".
func (c *ServerConfig) Coding() string {
	if c.Identity {
		return "identity"
	}
	return "gzip"
}

// acceptsGzip reports whether a request's Accept-Encoding accepts gzip
// (RFC 9110, 12.5.3): gzip or x-gzip listed with a non-zero weight, or
// not listed and "*" with one. No Accept-Encoding means no preference;
// like nginx, a server then sends identity.
func acceptsGzip(h http.Header) bool {
	star := false
	for _, line := range h.Values("Accept-Encoding") {
		for item := range strings.SplitSeq(line, ",") {
			coding, params, _ := strings.Cut(item, ";")
			coding = strings.ToLower(strings.TrimSpace(coding))
			ok := weightNonZero(params)
			switch coding {
			case "gzip", "x-gzip":
				return ok
			case "*":
				star = ok
			}
		}
	}
	return star
}

// weightNonZero reports whether the parameters of an Accept-Encoding item
// leave its weight above zero (no "q=0", "q=0.0", ...).
func weightNonZero(params string) bool {
	for p := range strings.SplitSeq(params, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err != nil || q > 0
		}
	}
	return true
}

// gzipBuf is a gzip writer at GzipLevel with its output, reused.
type gzipBuf struct {
	w   *gzip.Writer
	out bytes.Buffer
}

var gzipPool = sync.Pool{New: func() any {
	g := &gzipBuf{}
	g.w, _ = gzip.NewWriterLevel(&g.out, GzipLevel)
	return g
}}

// encode returns the body to send for r and sets the header fields of
// its coding: an HTML body (the only type nginx compresses by default,
// gzip_types text/html) of at least gzipMinLength bytes is gzip-coded
// for a GET that accepts gzip, unless the server is set to identity.
// Every HTML response then says it varies with Accept-Encoding, so that
// caches keep the two representations apart. done returns the buffer
// the coded body lives in; call it once the body is written.
func (s *Server) encode(rw http.ResponseWriter, r *http.Request, body []byte) (coded []byte, done func()) {
	hdr := rw.Header()
	if s.cfg.Identity || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		return body, func() {}
	}
	hdr["Vary"] = varyAcceptEncoding
	if r.Method != http.MethodGet || len(body) < gzipMinLength || !acceptsGzip(r.Header) {
		return body, func() {}
	}
	g := gzipPool.Get().(*gzipBuf)
	g.out.Reset()
	g.w.Reset(&g.out)
	g.w.Write(body)
	g.w.Close()
	hdr["Content-Encoding"] = gzipCoding
	return g.out.Bytes(), func() { gzipPool.Put(g) }
}

var (
	varyAcceptEncoding = []string{"Accept-Encoding"}
	gzipCoding         = []string{"gzip"}
)
