package fetch

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// AcceptEncoding is what every request asks for: gzip only (RFC 9110,
// 12.5.3), as net/http's transport asks when left to itself. Sending it
// ourselves turns the transport's transparent decoding off, so that the
// session sees the compressed bytes and can hand a page's deflate stream
// on (Response.Deflate) instead of it being compressed again for storage.
const AcceptEncoding = "gzip"

// gzipCoded reports whether a response's body is gzip-coded and is
// decoded here: exactly when net/http's transport would have decoded it
// for a request it had added gzip to (a body that may be non-empty, and a
// Content-Encoding of gzip alone, in any case), so that every other
// response is read as before.
func gzipCoded(resp *http.Response) bool {
	return resp.ContentLength != 0 && resp.Request.Method != http.MethodHead &&
		strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip")
}

// teeReader reads a response body and, while keep holds, keeps every
// byte it read from the start in raw (so that a member's compressed bytes
// can be handed on), up to keepMax bytes; past them it keeps none.
type teeReader struct {
	src     io.Reader
	raw     []byte
	n       int64 // bytes read from src
	keep    bool
	keepMax int64
}

func (t *teeReader) Read(p []byte) (int, error) {
	n, err := t.src.Read(p)
	t.n += int64(n)
	if t.keep {
		if need := len(t.raw) + n; int64(need) > t.keepMax {
			t.keep = false
		} else {
			if need > cap(t.raw) {
				// Grown as append would, but never past keepMax.
				r := make([]byte, len(t.raw), min(max(2*cap(t.raw), need), int(t.keepMax)))
				copy(r, t.raw)
				t.raw = r
			}
			t.raw = append(t.raw, p[:n]...)
		}
	}
	return n, err
}

// gunzip decodes a gzip-coded body as net/http's transport does: every
// member in turn (RFC 1952, 2.2), through a buffered reader, with gzip's
// errors (so every failure keeps its kind; klauspost/compress's reader,
// a third faster than the standard library's and allocating less, has
// the same), and notes where the first member's deflate stream lies in
// the compressed bytes. The zero value is ready for reset. Not safe for
// concurrent use.
type gunzip struct {
	tee     teeReader
	br      *bufio.Reader
	zr      gzip.Reader
	started bool
	err     error // sticky: the last error returned
	members int   // members read to their end
	// The first member's deflate stream is tee.raw[from:to].
	from, to int64

	pre []byte   // the compressed body as read whole (whole)
	inf inflater // decodes it
}

// gunzips are decoders for sessions to borrow: each holds tens of
// kilobytes (the inflater's window and tables, the buffers).
var gunzips = sync.Pool{New: func() any { return &gunzip{br: bufio.NewReaderSize(nil, 8<<10)} }}

// keepPooled bounds the compressed bytes' buffer a decoder keeps from one
// body to the next: a big page's buffer is let go rather than held in the
// pool for every session that borrows the decoder.
const keepPooled = 256 << 10

// reset starts decoding body, keeping its compressed bytes while they
// are at most keepMax long; keepMax 0 keeps none.
func (g *gunzip) reset(body io.Reader, keepMax int64) {
	raw := g.tee.raw[:0]
	if cap(raw) > keepPooled {
		raw = nil
	}
	if cap(g.pre) > keepPooled {
		g.pre = nil
	}
	g.tee = teeReader{src: body, raw: raw, keep: keepMax > 0, keepMax: keepMax}
	g.br.Reset(&g.tee)
	g.started, g.err, g.members, g.from, g.to = false, nil, 0, 0, 0
}

// pos is how many compressed bytes the decoder has consumed.
func (g *gunzip) pos() int64 { return g.tee.n - int64(g.br.Buffered()) }

func (g *gunzip) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if !g.started {
		g.started = true
		if err := g.zr.Reset(g.br); err != nil {
			g.err = err
			return 0, err
		}
		g.zr.Multistream(false)
		g.from = g.pos()
	}
	for {
		n, err := g.zr.Read(p)
		if err != io.EOF {
			if err != nil {
				g.err = err
			}
			return n, err
		}
		// A member ended, its checksum and size verified. Another may
		// follow: what the reader's multistream mode would read, with
		// the same errors.
		g.members++
		if g.members == 1 {
			g.to = g.pos() - 8 // the trailer: CRC-32 and size
		}
		if err := g.zr.Reset(g.br); err != nil {
			g.err = err
			return n, err
		}
		g.zr.Multistream(false)
		if n > 0 {
			return n, nil
		}
	}
}

// deflate returns the deflate stream of a body that was one complete
// gzip member read to its end and kept whole, nil otherwise. It is valid
// until the next reset.
func (g *gunzip) deflate() []byte {
	if g.err != io.EOF || g.members != 1 || !g.tee.keep || g.to < g.from {
		return nil
	}
	return g.tee.raw[g.from:g.to:g.to]
}

// wholeBody is a gzip-coded body decoded whole (see gunzip.whole).
type wholeBody struct {
	body      []byte
	truncated bool // declared HTML, binary: only its first bytes are decoded
	check     TypeCheck
	deflate   []byte // the member's deflate stream; nil when truncated
}

// checkAfter is how much of a compressed body whole reads before it
// decodes what it has read, and again each time that has doubled, when the
// body has not ended by then: a body that inflates past the limit (a
// decompression bomb) costs that much of a download at most before the
// streaming reader takes it, and a binary declared HTML (and gzip-coded)
// too; a page under it (nearly every page) is decoded once, whole.
const checkAfter = 32 << 10

// wholeMost is the most compressed bytes whole reads before it leaves a
// body to the streaming reader: a page's are a few tens of KiB, and the
// streaming reader stops at the limit of decoded bytes, where whole would
// read the whole body first (a decompression bomb of a few hundred KiB
// inflates to gigabytes; up to the limit of a large one).
const wholeMost = 256 << 10

// whole reads a gzip-coded body to its end and decodes it in one go with
// inflate, into dst's storage: 28% less CPU than the streaming
// reader (BenchmarkInflate). It does so only for one member (RFC 1952)
// whose compressed bytes are within wholeMost and limit, whose decoded
// length is within limit, whose
// deflate stream inflate decodes and whose CRC-32 and size check out,
// and it decides the body's type as readChecked would with checkType.
// Otherwise (a read error too) it returns ok false, having reset g to
// stream the same bytes, those read and then the rest of body (or the
// read's error), so that the streaming reader decodes it with its usual
// results and errors.
func (g *gunzip) whole(dst []byte, body io.Reader, limit int64, contentType string, checkType bool) (w wholeBody, ok bool) {
	declared := declaredType(contentType)
	sniff := checkType && declared == TypeHTML
	pre := g.pre[:0]
	var rest io.Reader = body // what the streaming reader reads after pre
	nextCheck := checkAfter
	most := min(limit, wholeMost)
	for {
		if len(pre) == cap(pre) {
			// Grown as append would, but never past most+1 (len(pre)
			// is at most most here).
			grown := make([]byte, len(pre), min(max(2*cap(pre), 16<<10), int(most+1)))
			copy(grown, pre)
			pre = grown
		}
		n, err := body.Read(pre[len(pre):cap(pre)])
		pre = pre[:len(pre)+n]
		g.pre = pre
		if int64(len(pre)) > most {
			return w, g.stream(rest, limit)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return w, g.stream(errReader{err}, limit)
		}
		if len(pre) >= nextCheck {
			// What is read so far is decoded, from the start each time
			// (the compressed bytes read are at least twice those of
			// the last try): past the limit, the streaming reader takes
			// the body, which it stops reading there; and a body
			// declared HTML is typed on its first bytes.
			nextCheck = 2 * len(pre)
			head, err := g.decodeHead(dst, pre, int(limit)+1)
			if cap(head) > cap(dst) {
				dst = head[:0] // grown: for the next try, or the whole body
			}
			if err != nil && err != errShort || int64(len(head)) > limit {
				return w, g.stream(rest, limit)
			}
			if n := min(sniffLen, int(limit)+1); sniff && len(head) >= n {
				if check := sniffedType(head[:n], declared); check == TypeBinaryAsHTML {
					return wholeBody{body: head[:n], truncated: true, check: check}, true
				}
				sniff = false
			}
		}
	}
	hdr, ok := gzipHeader(pre)
	if !ok {
		return w, g.stream(rest, limit)
	}
	// The trailer's size, if the body is one member: room for the output
	// at once, when it is a page's (HTML inflates 3 to 10 times; a
	// trailer that says more may lie, and the output then grows as it
	// comes), with the room inflate's fast loop writes past the output.
	if size := int64(binary.LittleEndian.Uint32(pre[len(pre)-4:])); size+fastRoom > int64(cap(dst)) && size <= min(limit, trustedRatio*int64(len(pre))) {
		dst = make([]byte, 0, size+fastRoom)
	}
	out, n, err := g.inf.inflate(dst, pre[hdr:], int(limit))
	end := hdr + n
	if err != nil || end+8 != len(pre) || crc32.ChecksumIEEE(out) != binary.LittleEndian.Uint32(pre[end:]) ||
		uint32(len(out)) != binary.LittleEndian.Uint32(pre[end+4:]) {
		return w, g.stream(rest, limit)
	}
	w = wholeBody{body: out, check: declared, deflate: pre[hdr:end:end]}
	if checkType {
		w.check = sniffedType(out[:min(len(out), sniffLen)], declared)
		if w.check == TypeBinaryAsHTML {
			w.body, w.truncated, w.deflate = out[:min(len(out), sniffLen, int(limit)+1)], true, nil
		}
	}
	return w, true
}

// trustedRatio is how many times its compressed size the decoded size a
// gzip trailer gives may be for whole to make room for it at once.
const trustedRatio = 32

// decodeHead decodes the first n bytes of the body whose first
// compressed bytes are pre; errShort when pre does not hold them yet, or
// when the first member ends before them (its trailer and what follows it
// are whole's to check, once the body has ended).
func (g *gunzip) decodeHead(dst, pre []byte, n int) ([]byte, error) {
	hdr, ok := gzipHeader(pre)
	if !ok {
		if len(pre) < 64<<10 {
			return nil, errShort // a header may be long (a file name, a comment)
		}
		return nil, errInflate
	}
	out, _, err := g.inf.inflate(dst, pre[hdr:], n)
	switch {
	case err == errLimit:
		err = nil
	case err == nil && len(out) < n:
		err = errShort
	}
	return out, err
}

// stream resets g to decode, with the streaming reader, the bytes whole
// read (g.pre) and then rest; it returns false.
func (g *gunzip) stream(rest io.Reader, limit int64) bool {
	g.reset(io.MultiReader(bytes.NewReader(g.pre), rest), limit)
	return false
}

// errReader fails every read with err: a body's read error, given again
// to the streaming reader after the bytes read before it.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// gzipStringMax bounds a gzip header's file name and comment, as the
// streaming reader's 512-byte buffer does (the terminating zero
// included).
const gzipStringMax = 512

// gzipHeader returns the length of the gzip member header (RFC 1952,
// 2.3) at the start of b; false when b does not start with a whole
// header that the streaming reader would take (reserved flags set, a
// header CRC that does not match).
func gzipHeader(b []byte) (int, bool) {
	const (
		fhcrc    = 1 << 1
		fextra   = 1 << 2
		fname    = 1 << 3
		fcomment = 1 << 4
	)
	if len(b) < 10 || b[0] != 0x1f || b[1] != 0x8b || b[2] != 8 || b[3]&0xe0 != 0 {
		return 0, false
	}
	flags, n := b[3], 10
	if flags&fextra != 0 {
		if n+2 > len(b) {
			return 0, false
		}
		n += 2 + int(binary.LittleEndian.Uint16(b[n:]))
	}
	for _, f := range []byte{fname, fcomment} {
		if flags&f == 0 || n > len(b) {
			continue
		}
		// The streaming reader (as compress/gzip's) refuses a name or
		// a comment of gzipStringMax bytes or more.
		k := bytes.IndexByte(b[n:], 0)
		if k < 0 || k >= gzipStringMax {
			return 0, false
		}
		n += k + 1
	}
	if flags&fhcrc != 0 {
		if n+2 > len(b) || binary.LittleEndian.Uint16(b[n:]) != uint16(crc32.ChecksumIEEE(b[:n])) {
			return 0, false
		}
		n += 2
	}
	if n > len(b) {
		return 0, false
	}
	return n, true
}
