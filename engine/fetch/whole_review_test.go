package fetch

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"io"
	"strings"
	"testing"

	"github.com/klauspost/compress/flate"
	"lidi/internal/testkit/gztest"
)

// Bodies the whole-body path once decoded otherwise than the streaming
// reader, or read far more of (found by review).

func member(deflate, out []byte) []byte {
	m := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3}
	m = append(m, deflate...)
	m = binary.LittleEndian.AppendUint32(m, crc32.ChecksumIEEE(out))
	return binary.LittleEndian.AppendUint32(m, uint32(len(out)))
}

// countingReader counts what is read from a body.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// A body far over the limit decoded: the streaming reader reads only the
// compressed bytes the limit needs; whole reads the whole body first.
func TestWholeReadsLittleOfABomb(t *testing.T) {
	const limit = 1 << 20
	var z bytes.Buffer
	zw, _ := flate.NewWriter(&z, 9)
	zw.Write(make([]byte, 512<<20))
	zw.Close()
	body := member(z.Bytes(), nil) // trailer values irrelevant
	t.Logf("compressed %d bytes", len(body))

	ref := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
	rc := &countingReader{r: bytes.NewReader(body)}
	ref.reset(rc, limit)
	want := read(ref, limit, "text/html", false)

	g := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
	gc := &countingReader{r: bytes.NewReader(body)}
	g.reset(gc, limit)
	w, ok := g.whole(nil, gc, limit, "text/html", false)
	got := decoded{w.body, w.truncated, w.check, w.deflate, nil}
	if !ok {
		got = read(g, limit, "text/html", false)
	}
	if !got.equal(want) {
		t.Errorf("got %s want %s", got, want)
	}
	t.Logf("whole read %d, streaming %d", gc.n, rc.n)
	if gc.n > 4*rc.n {
		t.Errorf("whole path read %d compressed bytes of the body; the streaming reader %d (truncated %v)", gc.n, rc.n, got.truncated)
	}
}

// A gzip header whose file name is 600 bytes long: the streaming reader
// refuses it (ErrHeader, its 512-byte buffer); whole must too.
func TestWholeRefusesLongHeaderStrings(t *testing.T) {
	const limit = 64 << 10
	page := []byte(strings.Repeat("<p>a page</p>", 100))
	var d bytes.Buffer
	zw, _ := flate.NewWriter(&d, 1)
	zw.Write(page)
	zw.Close()
	h := []byte{0x1f, 0x8b, 8, 1 << 3, 0, 0, 0, 0, 0, 3}
	h = append(h, strings.Repeat("n", 600)...)
	h = append(h, 0)
	body := append(h, d.Bytes()...)
	body = binary.LittleEndian.AppendUint32(body, crc32.ChecksumIEEE(page))
	body = binary.LittleEndian.AppendUint32(body, uint32(len(page)))

	ref := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
	ref.reset(bytes.NewReader(body), limit)
	want := read(ref, limit, "text/html", false)

	g := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
	src := bytes.NewReader(body)
	g.reset(src, limit)
	w, ok := g.whole(nil, src, limit, "text/html", false)
	got := decoded{w.body, w.truncated, w.check, w.deflate, nil}
	if !ok {
		got = read(g, limit, "text/html", false)
	}
	if !got.equal(want) {
		t.Errorf("whole %v: got %s; the streaming reader: %s", ok, got, want)
	}
}

// A body declared HTML whose first member is a short binary with a bad
// CRC, followed by 40 KiB of garbage: the streaming reader fails (the
// member's checksum), whole's early type check calls it a truncated binary.
func TestWholeSniffsNoShortMember(t *testing.T) {
	const limit = 1 << 20
	bin := []byte("\x89PNG\r\n\x1a\n\x00\x01\x02binary")
	var d bytes.Buffer
	zw, _ := flate.NewWriter(&d, 1)
	zw.Write(bin)
	zw.Close()
	body := member(d.Bytes(), bin)
	body[len(body)-5] ^= 1 // bad CRC
	body = append(body, bytes.Repeat([]byte{0xAA}, 40<<10)...)

	ref := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
	ref.reset(bytes.NewReader(body), limit)
	want := read(ref, limit, "text/html", true)

	g := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
	src := bytes.NewReader(body)
	g.reset(src, limit)
	w, ok := g.whole(nil, src, limit, "text/html", true)
	got := decoded{w.body, w.truncated, w.check, w.deflate, nil}
	if !ok {
		got = read(g, limit, "text/html", true)
	}
	if !got.equal(want) {
		t.Errorf("whole %v: got %s; the streaming reader: %s", ok, got, want)
	}
}

// Whatever the body, whole decodes it as the streaming reader does, or
// leaves it to it: the same body, truncation, type, deflate stream and
// error kind.
func FuzzWholeAsTheStreamingReader(f *testing.F) {
	for _, body := range []string{"", "x", "<html><p>hello hello hello</p></html>", "\x89PNG\r\n\x1a\nabc"} {
		for _, fl := range []byte{0, 2, 4, 8, 16, 30} {
			m, _ := gztest.Member([]byte(body), fl, 1)
			f.Add(m, false)
			f.Add(m, true)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte, check bool) {
		const limit = 4096
		ref := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
		ref.reset(bytes.NewReader(body), limit)
		want := read(ref, limit, "text/html", check)
		g := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
		src := bytes.NewReader(body)
		g.reset(src, limit)
		w, ok := g.whole(nil, src, limit, "text/html", check)
		got := decoded{w.body, w.truncated, w.check, w.deflate, nil}
		if !ok {
			got = read(g, limit, "text/html", check)
		}
		if !got.equal(want) {
			t.Fatalf("whole %v: got %s; the streaming reader: %s", ok, got, want)
		}
	})
}
