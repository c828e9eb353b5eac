package fetch

import (
	"bufio"
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
