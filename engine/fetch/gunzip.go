package fetch

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
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

// rawSource is the gzip decoder's source: the response body read through
// a buffer that, while keep holds, holds every byte read from the start
// (so that a member's compressed bytes can be handed on). It implements
// io.ByteReader, so compress/flate reads exactly the bytes of the
// deflate stream and no further, and pos marks where the decoder is.
type rawSource struct {
	src     io.Reader
	buf     []byte // bytes read from src; buf[:pos] are consumed
	pos     int
	keep    bool  // buf starts at the body's first byte
	keepMax int64 // past this many bytes buf is no longer kept whole
	err     error // src's error, once buf is drained
}

// fill reads more of src into buf; it returns src's error when nothing
// was read.
func (r *rawSource) fill() error {
	if r.err != nil {
		return r.err
	}
	if !r.keep && r.pos == len(r.buf) {
		r.buf, r.pos = r.buf[:0], 0
	}
	if cap(r.buf)-len(r.buf) < minRead {
		grown := make([]byte, len(r.buf), 2*cap(r.buf)+2*minRead)
		copy(grown, r.buf)
		r.buf = grown
	}
	for {
		n, err := r.src.Read(r.buf[len(r.buf):cap(r.buf)])
		r.buf = r.buf[:len(r.buf)+n]
		if r.keep && int64(len(r.buf)) > r.keepMax {
			r.keep = false
		}
		if n > 0 {
			if err != nil {
				r.err = err
			}
			return nil
		}
		if err != nil {
			r.err = err
			return err
		}
	}
}

// minRead is the room a read into rawSource's buffer has at least.
const minRead = 16 << 10

func (r *rawSource) ReadByte() (byte, error) {
	if r.pos == len(r.buf) {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	b := r.buf[r.pos]
	r.pos++
	return b, nil
}

func (r *rawSource) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if r.pos == len(r.buf) {
		if err := r.fill(); err != nil {
			return 0, err
		}
	}
	n := copy(p, r.buf[r.pos:])
	r.pos += n
	return n, nil
}

// gunzip decodes a gzip-coded body as net/http's transport does: every
// member in turn, with compress/gzip's errors (so every failure keeps its
// kind), and notes where the first member's deflate stream lies in the
// compressed bytes. The zero value is not usable; reset it. Not safe for
// concurrent use.
type gunzip struct {
	raw     rawSource
	zr      gzip.Reader
	started bool
	err     error // sticky: the last error returned
	members int   // members read to their end
	// The first member's deflate stream is raw.buf[from:to].
	from, to int
}

// reset starts decoding body, keeping its compressed bytes (in buf, whose
// storage is reused) while they are at most keepMax long; keepMax 0 keeps
// none.
func (g *gunzip) reset(body io.Reader, buf []byte, keepMax int64) {
	g.raw = rawSource{src: body, buf: buf[:0], keep: keepMax > 0, keepMax: keepMax}
	g.started, g.err, g.members, g.from, g.to = false, nil, 0, 0, 0
}

func (g *gunzip) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if !g.started {
		g.started = true
		if err := g.zr.Reset(&g.raw); err != nil {
			g.err = err
			return 0, err
		}
		g.zr.Multistream(false)
		g.from = g.raw.pos
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
		// follow (RFC 1952, 2.2): what gzip.Reader's multistream mode
		// would read, with the same errors.
		g.members++
		if g.members == 1 {
			g.to = g.raw.pos - 8 // the trailer: CRC-32 and size
		}
		if err := g.zr.Reset(&g.raw); err != nil {
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
// until the buffer is reused.
func (g *gunzip) deflate() []byte {
	if g.err != io.EOF || g.members != 1 || !g.raw.keep || g.to < g.from {
		return nil
	}
	return g.raw.buf[g.from:g.to:g.to]
}
