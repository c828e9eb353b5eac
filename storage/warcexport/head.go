package warcexport

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// inflater undoes the zlib compression of stored bodies and wires,
// reusing its decompressor (its state is tens of kilobytes, and an
// export inflates a few things a page). The zero value is ready; it is
// not safe for concurrent use.
type inflater struct {
	zr io.ReadCloser
}

// inflate returns b decompressed, in a slice of its own; nil for nil.
func (f *inflater) inflate(b []byte) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	var err error
	if f.zr == nil {
		f.zr, err = zlib.NewReader(bytes.NewReader(b))
	} else {
		err = f.zr.(zlib.Resetter).Reset(bytes.NewReader(b), nil)
	}
	if err != nil {
		f.zr = nil
		return nil, err
	}
	return io.ReadAll(f.zr)
}

// splitWire parses engine.PageRecord.Wire once inflated: the request head
// then the response head, each through its blank line.
func splitWire(w []byte) (req, head []byte, err error) {
	i := bytes.Index(w, []byte("\r\n\r\n"))
	if i < 0 || !bytes.HasPrefix(w[i+4:], []byte("HTTP/")) || !bytes.HasSuffix(w, []byte("\r\n\r\n")) {
		return nil, nil, fmt.Errorf("not a request head followed by a response head")
	}
	return w[:i+4], w[i+4:], nil
}

// field returns the first value of a header field of head (a message head
// through its blank line), "" when absent.
func field(head []byte, name string) string {
	for _, line := range strings.Split(string(head), "\r\n")[1:] {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// status returns the status code of a response head's status line.
func status(head []byte) int {
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	f := strings.Fields(string(line))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// origPrefix renames the fields of a response head that describe a
// transfer the stored body no longer has: lidi keeps the body as the
// client read it, de-chunked and, when the client asked for gzip itself,
// decompressed, so a reader must not decode it again.
const origPrefix = "X-Lidi-Original-"

// payloadHead returns the response head to store with a body of n bytes
// as lidi kept it: Transfer-Encoding, and Content-Encoding when the
// client decoded it, are renamed (origPrefix), and Content-Length then
// gives the body kept. A body that was not transformed keeps its head as
// received.
func payloadHead(head, req []byte, n int) []byte {
	decodedGzip := strings.EqualFold(field(req, "Accept-Encoding"), "gzip") && strings.EqualFold(field(head, "Content-Encoding"), "gzip")
	lines := strings.Split(strings.TrimSuffix(string(head), "\r\n\r\n"), "\r\n")
	changed := false
	for i, line := range lines[1:] {
		k, _, ok := strings.Cut(line, ":")
		name := strings.TrimSpace(k)
		if ok && (strings.EqualFold(name, "Transfer-Encoding") || decodedGzip && strings.EqualFold(name, "Content-Encoding")) {
			lines[i+1], changed = origPrefix+line, true
		}
	}
	if !changed {
		return head
	}
	var b strings.Builder
	for i, line := range lines {
		if i > 0 {
			if k, _, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "Content-Length") {
				line = origPrefix + line
			}
		}
		b.WriteString(line)
		b.WriteString("\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", n)
	return []byte(b.String())
}
