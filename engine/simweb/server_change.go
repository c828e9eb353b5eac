package simweb

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Clock returns the server's virtual clock: a changing web's pages are
// served at their version at Clock().Offset().
func (s *Server) Clock() Clock { return s.clock }

// RenderAt returns page as the server serves it at virtual time d.
func (s *Server) RenderAt(page int, d time.Duration) []byte {
	return s.web.AppendHTMLAt(nil, page, s.port, s.clock, d)
}

// servePage answers view v of page p of site. On a changing web it sends
// the virtual Date, the validators the site sends (an ETag that changes
// exactly when the page does, the Last-Modified of its last change), 304
// Not Modified to a conditional request they satisfy, and otherwise the
// page at its current version.
func (s *Server) servePage(rw http.ResponseWriter, r *http.Request, site int, p int32, v view, bp *[]byte) (int, int64) {
	w := s.web
	hdr := rw.Header()
	var at pageAt
	if c := w.changes; c.Enabled() {
		d := s.clock.Offset()
		version, last := c.State(int(p), d)
		at.version = version
		hdr["Date"] = []string{s.clock.Time(d).UTC().Format(http.TimeFormat)}
		val := c.Validators(site)
		var etag string
		if val.ETag() {
			etag = c.ETag(int(p), version)
			if v != viewPlain { // a copy is another representation
				etag = etag[:len(etag)-1] + "-" + strconv.Itoa(int(v)) + `"`
			}
			hdr["Etag"] = []string{etag}
		}
		var modified time.Time
		if val.LastModified() {
			modified = s.clock.Time(last).UTC().Truncate(time.Second)
			hdr["Last-Modified"] = []string{modified.Format(http.TimeFormat)}
		}
		if notModified(r, etag, modified) {
			rw.WriteHeader(http.StatusNotModified)
			return http.StatusNotModified, 0
		}
		if c.Stamped(site) {
			at.stamp = s.clock.Time(d)
		}
	}
	body := w.appendPageAt((*bp)[:0], p, s.port, v, at)
	*bp = body
	hdr["Content-Type"] = htmlType
	return http.StatusOK, s.write(rw, r, http.StatusOK, body, w.sites[site].bandwidth)
}

// notModified reports whether a GET or HEAD with these preconditions gets
// 304 (RFC 9110, 13.1.2 and 13.1.3): If-None-Match, when present, decides
// alone, by weak comparison with etag ("*" matches any page); otherwise
// If-Modified-Since holds when the page was last modified no later than
// it. An empty etag or zero modified time is a validator the site does
// not send, which no condition matches.
func notModified(r *http.Request, etag string, modified time.Time) bool {
	if inm := r.Header.Values("If-None-Match"); len(inm) > 0 {
		for _, line := range inm {
			for tag := range strings.SplitSeq(line, ",") {
				tag = strings.TrimSpace(tag)
				if tag == "*" || (etag != "" && strings.TrimPrefix(tag, "W/") == strings.TrimPrefix(etag, "W/")) {
					return true
				}
			}
		}
		return false
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" || modified.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims)
	return err == nil && !modified.After(t)
}

// VirtualTime is the server's virtual clock as a clock: Now is the
// virtual wall time (what lidi demo gives the recrawl manager).
type VirtualTime struct{ clock Clock }

// Now returns the virtual wall time now.
func (v VirtualTime) Now() time.Time { return v.clock.VirtualNow() }

// At returns the virtual wall time at real time t: a crawl that stored
// its fetch times in real time dates them on the web's clock with it.
func (v VirtualTime) At(t time.Time) time.Time { return v.clock.Time(v.clock.OffsetAt(t)) }

// VirtualTime returns the server's virtual clock as a clock.
func (s *Server) VirtualTime() VirtualTime { return VirtualTime{s.clock} }

// Fresh reports whether a copy of the page at rawURL fetched at virtual
// wall time fetched is still its current version at virtual wall time at;
// ok is false for a URL that is not one of the web's pages. It is the
// ground truth of freshness (engine.FreshnessOracle) for lidi demo.
func (s *Server) Fresh(rawURL string, fetched, at time.Time) (fresh, ok bool) {
	t := s.web.Truth(rawURL)
	if t.Status != http.StatusOK || t.Page < 0 {
		return false, false
	}
	return s.web.changes.Fresh(t.Page, fetched.Sub(s.clock.Epoch), at.Sub(s.clock.Epoch)), true
}
