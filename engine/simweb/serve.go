package simweb

import (
	"io"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// canonicalHost lower-cases a Host header and strips its port.
func canonicalHost(h string) string {
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.Contains(h[i:], "]") {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	for i := 0; i < len(h); i++ {
		if c := h[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(h)
		}
	}
	return h
}

// ServeHTTP answers one request for a simulated host. It is what the
// server's listeners run; called directly (as an http.Handler elsewhere),
// each request counts as its own connection on its host's address.
func (s *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w := s.web
	hdr := rw.Header()
	hdr["Server"] = serverHeader

	host := canonicalHost(r.Host)
	id, known := w.hosts[host]
	cs, _ := r.Context().Value(connKey{}).(*connState)
	if cs == nil {
		// Not through the server's listeners (an http.Handler harness, say):
		// count the request on the host's own address, once per request.
		cs = &connState{}
		if known {
			cs.addr, _ = slices.BinarySearchFunc(s.addrs, w.sites[id].addr, netip.Addr.Compare)
		}
		s.wit.connOpened(cs)
		defer s.wit.release(cs)
	}
	site, slot := -1, -1
	if known && w.sites[id].addr == s.addrs[cs.addr] {
		site, slot = int(id), int(id)
		if w.traps != nil && host != w.sites[id].host {
			slot = int(w.traps.sites[id].aliasSlot) // the witness counts an alias host on its own
		}
	}
	path := r.URL.EscapedPath()
	target := path
	if r.URL.RawQuery != "" || r.URL.ForceQuery {
		target += "?" + r.URL.RawQuery
	}
	disallowed := site >= 0 && w.sites[site].robots.disallowed(target)
	var logURL []byte // the page log's key
	if s.wit.pages != nil && slot >= 0 && path != "/robots.txt" {
		logURL = append(s.web.appendHostOrigin(nil, host, s.port), target...)
		s.wit.pages.start(logURL)
	}
	n := s.wit.requestStart(cs, slot, target, disallowed)
	closing := r.Close || (s.cfg.MaxKeepAliveRequests > 0 && n >= int64(s.cfg.MaxKeepAliveRequests))
	if closing {
		hdr.Set("Connection", "close")
	}
	if cs.plain && site >= 0 {
		// A TLS web's plain HTTP: every URL has moved to HTTPS.
		loc := w.appendHostOrigin(nil, host, s.port)
		hdr.Set("Location", string(loc)+target)
		status := plain(rw, http.StatusMovedPermanently, "301 Moved Permanently\n")
		s.wit.requestEnd(cs, slot, status, 0, false, closing)
		return
	}
	if s.cfg.Hostile != HostileNone && site >= 0 {
		end := func(status int, size int64) {
			s.wit.requestEnd(cs, slot, status, size, path == "/robots.txt", closing)
			if logURL != nil {
				s.wit.pages.done(logURL, s.cfg.Now())
			}
		}
		if s.respondHostile(rw, r, host, path, end) {
			return
		}
	}
	status, size, robots := s.respond(rw, r, site, host, path)
	s.wit.requestEnd(cs, slot, status, size, robots, closing)
	if logURL != nil {
		s.wit.pages.done(logURL, s.cfg.Now())
	}
}

// respond writes the response and returns its status, body size and
// whether it was a robots.txt fetch.
func (s *Server) respond(rw http.ResponseWriter, r *http.Request, site int, host, path string) (status int, size int64, robots bool) {
	w := s.web
	hdr := rw.Header()
	if site < 0 {
		return plain(rw, http.StatusMisdirectedRequest, "421 Misdirected Request: no such host on this address\n"), 0, false
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		return plain(rw, http.StatusMethodNotAllowed, "405 Method Not Allowed\n"), 0, false
	}
	st := &w.sites[site]
	if st.latency > 0 {
		t := time.NewTimer(st.latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return 499, 0, false // client went away (nginx's code), nothing sent
		}
	}
	if path == "/robots.txt" {
		rb := &st.robots
		if rb.status == 200 {
			hdr.Set("Content-Type", "text/plain; charset=utf-8")
		} else {
			hdr.Set("Content-Type", "text/html; charset=utf-8")
		}
		return rb.status, s.write(rw, r, rb.status, rb.body, st.bandwidth), true
	}
	if rate := w.opt.ErrorRate; rate > 0 {
		seq := s.siteReqs[site].Add(1)
		er := newRNG(w.opt.Seed, tagErrors, uint64(site)<<32^seq)
		if er.chance(rate) {
			code := http.StatusServiceUnavailable
			if er.chance(0.5) {
				code = http.StatusInternalServerError
			} else {
				hdr.Set("Retry-After", "5")
			}
			return plain(rw, code, strconv.Itoa(code)+" "+http.StatusText(code)+"\n"), 0, false
		}
	}
	bp := bodyPool.Get().(*[]byte)
	defer bodyPool.Put(bp)
	if status, size, ok := s.serveArticle(rw, r, site, path, bp); ok {
		return status, size, false
	}
	if w.traps != nil {
		status, size := s.respondTrapped(rw, r, site, host, path, bp)
		return status, size, false
	}
	p, redirect, ok := w.lookupPath(site, path, bp)
	switch {
	case !ok:
		status, size := s.notFound(rw, r, bp, st.bandwidth)
		return status, size, false
	case redirect:
		loc := w.appendURL(nil, p, s.port)
		hdr.Set("Location", string(loc))
		return plain(rw, http.StatusMovedPermanently, "301 Moved Permanently\n"), 0, false
	}
	status, size = s.servePage(rw, r, site, p, viewPlain, bp)
	return status, size, false
}

// notFound answers 404.
func (s *Server) notFound(rw http.ResponseWriter, r *http.Request, bp *[]byte, bandwidth int64) (int, int64) {
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	body := append((*bp)[:0], "<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>\n"...)
	*bp = body
	return http.StatusNotFound, s.write(rw, r, http.StatusNotFound, body, bandwidth)
}

// respondTrapped answers for a web with traps: the path is resolved
// through the site's traps (the resolution Web.Truth reports).
func (s *Server) respondTrapped(rw http.ResponseWriter, r *http.Request, site int, host, path string, bp *[]byte) (int, int64) {
	w := s.web
	hdr := rw.Header()
	bandwidth := w.sites[site].bandwidth
	res := w.resolveQuery(site, path, r.URL.RawQuery)
	switch res.status {
	case http.StatusNotFound:
		return s.notFound(rw, r, bp, bandwidth)
	case http.StatusMovedPermanently:
		loc := w.appendHostOrigin(nil, host, s.port)
		hdr.Set("Location", string(append(loc, res.location...)))
		return plain(rw, http.StatusMovedPermanently, "301 Moved Permanently\n"), 0
	}
	var body []byte
	switch {
	case res.page >= 0:
		return s.servePage(rw, r, site, res.page, res.view, bp)
	case res.virt.kind == TrapBinaryAsHTML:
		hdr.Set("Content-Type", typeBinary)
		return http.StatusOK, s.writeBinary(rw, r, site, int(res.virt.local), bp, bandwidth)
	default:
		body = w.appendVirtual((*bp)[:0], site, res.virt, path)
	}
	*bp = body
	if ct := contentType(res); ct == typeHTML {
		hdr["Content-Type"] = htmlType
	} else {
		hdr.Set("Content-Type", ct)
	}
	return http.StatusOK, s.write(rw, r, http.StatusOK, body, bandwidth)
}

// writeBinary streams binary file idx of site in chunks generated on the
// fly, so that a large file costs no memory and a client that stops
// reading stops the generation.
func (s *Server) writeBinary(rw http.ResponseWriter, r *http.Request, site, idx int, bp *[]byte, bandwidth int64) int64 {
	w := s.web
	blob := w.traps.sites[site].binaries[idx]
	header := w.binaryHeader(site, idx, blob)
	buf := (*bp)[:cap(*bp)]
	if len(buf) < 16<<10 {
		buf = make([]byte, 64<<10)
		*bp = buf[:0]
	}
	return s.writeFrom(rw, r, http.StatusOK, blob.size, func(off, n int) []byte {
		chunk := buf[:min(n, len(buf))]
		w.fillBinary(chunk, site, idx, blob, header, off)
		return chunk
	}, bandwidth)
}

func plain(rw http.ResponseWriter, code int, msg string) int {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.WriteHeader(code)
	io.WriteString(rw, msg)
	return code
}

// write sends body, gzip-coded when the request accepts it (see encode),
// paced to bandwidth bytes per second if it is positive, and returns the
// number of bytes sent.
func (s *Server) write(rw http.ResponseWriter, r *http.Request, code int, body []byte, bandwidth int64) int64 {
	body, done := s.encode(rw, r, body)
	defer done()
	if bandwidth <= 0 {
		rw.Header().Set("Content-Length", strconv.Itoa(len(body)))
		rw.WriteHeader(code)
		if r.Method == http.MethodHead {
			return 0
		}
		n, _ := rw.Write(body)
		return int64(n)
	}
	return s.writeFrom(rw, r, code, len(body), func(off, n int) []byte { return body[off : off+n] }, bandwidth)
}

// writeFrom sends a body of size bytes that chunk(off, n) returns piece by
// piece (at most n bytes from offset off, at least one), paced to bandwidth
// bytes per second if it is positive, and returns the number of bytes sent.
func (s *Server) writeFrom(rw http.ResponseWriter, r *http.Request, code, size int, chunk func(off, n int) []byte, bandwidth int64) int64 {
	rw.Header().Set("Content-Length", strconv.Itoa(size))
	rw.WriteHeader(code)
	if r.Method == http.MethodHead {
		return 0
	}
	// Send chunks of about 20 ms each, sleeping to keep to the rate.
	step := 64 << 10
	if bandwidth > 0 {
		step = int(max(bandwidth/50, 512))
	}
	rc := http.NewResponseController(rw)
	start := time.Now()
	sent := 0
	for sent < size {
		n, err := rw.Write(chunk(sent, min(step, size-sent)))
		sent += n
		if err != nil {
			break
		}
		if bandwidth <= 0 {
			continue
		}
		rc.Flush()
		due := start.Add(time.Duration(float64(sent) / float64(bandwidth) * float64(time.Second)))
		if d := time.Until(due); d > 0 && sent < size {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return int64(sent)
			}
		}
	}
	return int64(sent)
}
