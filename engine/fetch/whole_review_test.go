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
	// 64 MiB of zeros, 65 KB compressed: twice what whole reads before
	// its first decode (32 KiB), so a whole that read the body through
	// fails the bound below. (512 MiB took 49 s of CI under -race.)
	zw.Write(make([]byte, 64<<20))
	zw.Close()
	body := member(z.Bytes(), nil) // trailer values irrelevant
	t.Logf("compressed %d bytes", len(body))

	b := bothWays(body, limit, false)
	if !b.got.equal(b.want) {
		t.Errorf("got %s want %s", b.got, b.want)
	}
	t.Logf("whole read %d, streaming %d", b.gotRead, b.wantRead)
	if b.gotRead > 4*b.wantRead {
		t.Errorf("whole path read %d compressed bytes of the body; the streaming reader %d (truncated %v)", b.gotRead, b.wantRead, b.got.truncated)
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

	if b := bothWays(body, limit, false); !b.got.equal(b.want) {
		t.Errorf("whole %v: got %s; the streaming reader: %s", b.ok, b.got, b.want)
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

	if b := bothWays(body, limit, true); !b.got.equal(b.want) {
		t.Errorf("whole %v: got %s; the streaming reader: %s", b.ok, b.got, b.want)
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
		if b := bothWays(body, 4096, check); !b.got.equal(b.want) {
			t.Fatalf("whole %v: got %s; the streaming reader: %s", b.ok, b.got, b.want)
		}
	})
}

// twoWays is a body decoded by whole and by the streaming reader.
type twoWays struct {
	got, want         decoded // by whole (then the streaming reader, when it leaves the body), by the streaming reader alone
	ok                bool    // whole's
	gotRead, wantRead int     // the compressed bytes each read
}

// bothWays decodes a body declared HTML both ways.
func bothWays(body []byte, limit int64, check bool) twoWays {
	var b twoWays
	ref := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
	rc := &countingReader{r: bytes.NewReader(body)}
	ref.reset(rc, limit)
	b.want = read(ref, limit, "text/html", check)
	g := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
	gc := &countingReader{r: bytes.NewReader(body)}
	g.reset(gc, limit)
	w, ok := g.whole(nil, gc, limit, "text/html", check)
	b.got, b.ok = decoded{w.body, w.truncated, w.check, w.deflate, nil}, ok
	if !ok {
		b.got = read(g, limit, "text/html", check)
	}
	b.gotRead, b.wantRead = gc.n, rc.n
	return b
}
