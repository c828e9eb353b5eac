package simweb

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// HostileKind names a way a server misbehaves. ServerConfig.Hostile makes
// every site of a Server answer that way under HostilePath (and, for
// HostileHugeRobots, at /robots.txt; for the DNS kinds, for
// HostileServFailHost and HostileSilentHost), while the rest of each site
// is served as usual. The witness counts hostile answers like any other, and
// a hostile answer is counted as ended before the server closes or resets
// its connection, so that a client that waits for the close is never seen
// with two requests in flight.
type HostileKind uint8

// The kinds of hostile servers.
const (
	HostileNone HostileKind = iota
	// HostileGzipBomb: a text/html body with Content-Encoding gzip, about
	// 2 KB per MiB, that inflates to HostileBombSize.
	HostileGzipBomb
	// HostileHugeHeaders: 1 MiB of response headers.
	HostileHugeHeaders
	// HostileResetBody: the connection is reset after a fifth of the
	// declared body.
	HostileResetBody
	// HostileShortLength: a Content-Length of 64 bytes before a 200-byte
	// body; the rest follows on the connection as garbage.
	HostileShortLength
	// HostileLongLength: a Content-Length of 100,000 bytes, 5,000 sent,
	// then the connection closes.
	HostileLongLength
	// HostileBadChunked: chunked encoding with a chunk size that is not
	// hexadecimal.
	HostileBadChunked
	// HostileDrip: the body one byte every HostileDripEvery.
	HostileDrip
	// HostileHugeRobots: a 10 MB robots.txt whose first lines disallow
	// HostilePath and whose lines past 600 KiB disallow everything.
	HostileHugeRobots
	// HostileBadRedirect: a 302 to an ftp: URL.
	HostileBadRedirect
	// HostileLongURL: a page linking to a 100 KB URL and to
	// HostilePath+"long-url/redirect", a 301 to a 100 KB URL.
	HostileLongURL
	// HostileManyLinks: a page with 1,000,000 links, to
	// "http://links.test/N" (a host that does not resolve).
	HostileManyLinks
	// HostileDNSServFail: the DNS server answers SERVFAIL for
	// HostileServFailHost.
	HostileDNSServFail
	// HostileDNSSilent: the DNS server never answers for
	// HostileSilentHost.
	HostileDNSSilent

	numHostileKinds
)

var hostileNames = [...]string{
	HostileNone:        "none",
	HostileGzipBomb:    "gzip-bomb",
	HostileHugeHeaders: "huge-headers",
	HostileResetBody:   "reset-body",
	HostileShortLength: "short-length",
	HostileLongLength:  "long-length",
	HostileBadChunked:  "bad-chunked",
	HostileDrip:        "drip",
	HostileHugeRobots:  "huge-robots",
	HostileBadRedirect: "bad-redirect",
	HostileLongURL:     "long-url",
	HostileManyLinks:   "many-links",
	HostileDNSServFail: "dns-servfail",
	HostileDNSSilent:   "dns-silent",
}

func (k HostileKind) String() string {
	if k < numHostileKinds {
		return hostileNames[k]
	}
	return "hostile-" + strconv.Itoa(int(k))
}

// HostileKinds returns every kind but HostileNone.
func HostileKinds() []HostileKind {
	out := make([]HostileKind, 0, numHostileKinds-1)
	for k := HostileNone + 1; k < numHostileKinds; k++ {
		out = append(out, k)
	}
	return out
}

// Sizes and names of the hostile answers.
const (
	// HostilePath is the path prefix of the hostile answers.
	HostilePath = "/hostile/"
	// HostileBombSize is what the gzip bomb inflates to.
	HostileBombSize = 4 << 30
	// HostileHeaderBytes is the size of HostileHugeHeaders' head.
	HostileHeaderBytes = 1 << 20
	// HostileRobotsSize is the size of HostileHugeRobots' robots.txt.
	HostileRobotsSize = 10_000_000
	// HostileRobotsTail is where its disallow-everything lines start.
	HostileRobotsTail = 600 << 10
	// HostileURLBytes is the length of HostileLongURL's URLs.
	HostileURLBytes = 100_000
	// HostileLinks is the number of links of HostileManyLinks' page.
	HostileLinks = 1_000_000
	// HostileDripEvery is the pace of HostileDrip.
	HostileDripEvery = time.Second
	// HostileServFailHost and HostileSilentHost are the names the DNS
	// kinds misanswer.
	HostileServFailHost = "servfail.test"
	HostileSilentHost   = "silent.test"
)

// HostileURL returns the URL of the hostile answer on site (for
// HostileHugeRobots, a page its robots.txt disallows; for the DNS kinds,
// the home page of the name that is misanswered).
func (s *Server) HostileURL(site int) string {
	origin := "http://" + s.web.sites[site].host + ":" + strconv.Itoa(s.port)
	switch s.cfg.Hostile {
	case HostileDNSServFail:
		return "http://" + HostileServFailHost + ":" + strconv.Itoa(s.port) + "/"
	case HostileDNSSilent:
		return "http://" + HostileSilentHost + ":" + strconv.Itoa(s.port) + "/"
	}
	return origin + HostilePath + s.cfg.Hostile.String()
}

// respondHostile answers r the hostile way if the server is hostile and
// the path asks for it, and reports whether it did. end records the end
// of the request; it is called exactly once, before the connection is
// closed or reset, when respondHostile returns true.
func (s *Server) respondHostile(rw http.ResponseWriter, r *http.Request, host, path string, end func(status int, size int64)) bool {
	kind := s.cfg.Hostile
	if kind == HostileHugeRobots && path == "/robots.txt" {
		end(http.StatusOK, s.hugeRobots(rw, r))
		return true
	}
	if !strings.HasPrefix(path, HostilePath) {
		return false
	}
	hdr := rw.Header()
	html := func() { hdr["Content-Type"] = htmlType }
	switch {
	case kind == HostileGzipBomb && path == HostilePath+kind.String():
		html()
		hdr.Set("Content-Encoding", "gzip")
		rw.WriteHeader(http.StatusOK)
		end(http.StatusOK, writeBomb(rw, r))
	case kind == HostileHugeHeaders && path == HostilePath+kind.String():
		filler := strings.Repeat("x", 1000)
		for i := range HostileHeaderBytes / 1024 {
			hdr.Set("X-Filler-"+strconv.Itoa(i), filler)
		}
		html()
		rw.WriteHeader(http.StatusOK)
		n, _ := io.WriteString(rw, "<p>after the headers</p>")
		end(http.StatusOK, int64(n))
	case kind == HostileResetBody && path == HostilePath+kind.String():
		hijacked(rw, end, "Content-Length: 100000", fillHTML(20_000), reset)
	case kind == HostileShortLength && path == HostilePath+kind.String():
		hijacked(rw, end, "Content-Length: 64", fillHTML(200), closeAfterClient)
	case kind == HostileLongLength && path == HostilePath+kind.String():
		html()
		hdr.Set("Content-Length", "100000")
		rw.WriteHeader(http.StatusOK)
		n, _ := rw.Write(fillHTML(5000))
		end(http.StatusOK, int64(n)) // net/http closes the connection: the body is short
	case kind == HostileBadChunked && path == HostilePath+kind.String():
		hijacked(rw, end, "Transfer-Encoding: chunked", []byte("10\r\n<html><p>ok</p>\r\nzz\r\nnot a chunk size\r\n0\r\n\r\n"), closeAfterClient)
	case kind == HostileDrip && path == HostilePath+kind.String():
		html()
		hdr.Set("Content-Length", "100000")
		rw.WriteHeader(http.StatusOK)
		end(http.StatusOK, drip(rw, r))
	case kind == HostileBadRedirect && path == HostilePath+kind.String():
		hdr.Set("Location", "ftp://"+host+"/pub/file.html")
		end(http.StatusFound, int64(plain(rw, http.StatusFound, "302 Found\n")))
	case kind == HostileLongURL && path == HostilePath+kind.String():
		html()
		page := "<html><body><a href=\"" + longPath() + "\">long</a> <a href=\"" + HostilePath + "long-url/redirect\">redirect</a> <a href=\"/\">home</a></body></html>"
		rw.WriteHeader(http.StatusOK)
		n, _ := io.WriteString(rw, page)
		end(http.StatusOK, int64(n))
	case kind == HostileLongURL && path == HostilePath+"long-url/redirect":
		hdr.Set("Location", longPath())
		end(http.StatusMovedPermanently, int64(plain(rw, http.StatusMovedPermanently, "301 Moved Permanently\n")))
	case kind == HostileManyLinks && path == HostilePath+kind.String():
		html()
		rw.WriteHeader(http.StatusOK)
		end(http.StatusOK, writeLinks(rw, r))
	default:
		return false
	}
	return true
}

// hijacked takes the connection over and writes a raw 200 response of
// type text/html with the framing header given (which net/http would not
// let a handler lie in) and body as it is, then records the end of the
// request and closes the connection with closer.
func hijacked(rw http.ResponseWriter, end func(int, int64), framing string, body []byte, closer func(net.Conn)) {
	c, bw, err := http.NewResponseController(rw).Hijack()
	if err != nil {
		end(http.StatusInternalServerError, 0)
		return
	}
	bw.WriteString("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" + framing + "\r\n\r\n")
	bw.Write(body)
	bw.Flush()
	end(http.StatusOK, int64(len(body)))
	closer(c)
}

// reset closes c with a TCP reset.
func reset(c net.Conn) {
	if tc, ok := c.(*trackedConn); ok {
		c = tc.Conn
	}
	if l, ok := c.(interface{ SetLinger(int) error }); ok {
		l.SetLinger(0)
	}
	c.Close()
}

// closeAfterClient waits (at most 10 s) for the client to close, reading
// and discarding what it sends, then closes c.
func closeAfterClient(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var buf [4096]byte
	for {
		if _, err := c.Read(buf[:]); err != nil {
			break
		}
	}
	c.Close()
}

// fillHTML returns n bytes of HTML text.
func fillHTML(n int) []byte {
	b := make([]byte, 0, n)
	b = append(b, "<html><body>"...)
	for len(b) < n {
		b = append(b, "<p>filler text of a hostile page</p>\n"...)
	}
	return b[:n]
}

// longPath is a path of HostileURLBytes bytes.
func longPath() string { return "/long/" + strings.Repeat("a", HostileURLBytes-len("/long/")) }

// bombUnit is the text the gzip bomb repeats; bombBlock deflates one unit
// given that the window already holds units, so that the stream is
// bombHead followed by bombBlock as often as needed.
var bombParts = sync.OnceValues(func() (head, block []byte) {
	unit := bytes.Repeat([]byte("<p>bomb</p>\n"), 87381) // 1 MiB, less 4 bytes
	var buf bytes.Buffer
	buf.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}) // gzip header
	zw, _ := flate.NewWriter(&buf, flate.BestCompression)
	var marks [4]int
	for i := range marks {
		zw.Write(unit)
		zw.Flush()
		marks[i] = buf.Len()
	}
	b := buf.Bytes()
	if !bytes.Equal(b[marks[1]:marks[2]], b[marks[2]:marks[3]]) {
		panic("simweb: the gzip bomb's deflate blocks do not repeat")
	}
	return b[:marks[1]], b[marks[1]:marks[2]]
})

// writeBomb streams the gzip bomb until it is complete or the client goes
// away, and returns the compressed bytes sent.
func writeBomb(rw http.ResponseWriter, r *http.Request) int64 {
	head, block := bombParts()
	const unitSize = 87381 * 12
	units := HostileBombSize / unitSize
	n, err := rw.Write(head)
	sent := int64(n)
	for i := 2; i < units && err == nil && r.Context().Err() == nil; i++ {
		n, err = rw.Write(block)
		sent += int64(n)
	}
	if err != nil || r.Context().Err() != nil {
		return sent
	}
	// A final empty block and the trailer: CRC-32 and size of the text.
	crc := uint32(0)
	unit := bytes.Repeat([]byte("<p>bomb</p>\n"), 87381)
	for range units {
		crc = crc32.Update(crc, crc32.IEEETable, unit)
	}
	var tail [10]byte
	tail[0], tail[1] = 0x03, 0x00
	binary.LittleEndian.PutUint32(tail[2:], crc)
	binary.LittleEndian.PutUint32(tail[6:], uint32(units*unitSize))
	n, _ = rw.Write(tail[:])
	return sent + int64(n)
}

// drip writes one byte every HostileDripEvery until the client goes away
// or the declared 100,000 bytes are sent.
func drip(rw http.ResponseWriter, r *http.Request) int64 {
	rc := http.NewResponseController(rw)
	t := time.NewTicker(HostileDripEvery)
	defer t.Stop()
	var sent int64
	for sent < 100_000 {
		if _, err := rw.Write([]byte{"<p>drip</p>"[sent%11]}); err != nil {
			return sent
		}
		sent++
		if rc.Flush() != nil {
			return sent
		}
		select {
		case <-t.C:
		case <-r.Context().Done():
			return sent
		}
	}
	return sent
}

// hugeRobots writes the HostileHugeRobots file.
func (s *Server) hugeRobots(rw http.ResponseWriter, r *http.Request) int64 {
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	rw.Header().Set("Content-Length", strconv.Itoa(HostileRobotsSize))
	rw.WriteHeader(http.StatusOK)
	var b []byte
	b = append(b, "User-agent: *\nDisallow: "+HostilePath+"\n"...)
	for i := 0; len(b) < HostileRobotsTail; i++ {
		b = append(b, "Disallow: /filler/"...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, '\n')
	}
	var sent int64
	for {
		n, err := rw.Write(b)
		sent += int64(n)
		if err != nil || r.Context().Err() != nil || sent == HostileRobotsSize {
			return sent
		}
		b = b[:0]
		for len(b) < 64<<10 {
			b = append(b, "Disallow: /\n"...)
		}
		b = b[:min(len(b), HostileRobotsSize-int(sent))]
	}
}

// writeLinks streams a page of HostileLinks links.
func writeLinks(rw http.ResponseWriter, r *http.Request) int64 {
	b := []byte("<html><body>\n")
	var sent int64
	for i := 0; i < HostileLinks; i++ {
		b = append(b, `<a href="http://links.test/`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, "\">l</a>\n"...)
		if len(b) >= 32<<10 || i == HostileLinks-1 {
			n, err := rw.Write(b)
			sent += int64(n)
			if err != nil || r.Context().Err() != nil {
				return sent
			}
			b = b[:0]
		}
	}
	n, _ := rw.Write([]byte("</body></html>\n"))
	return sent + int64(n)
}
