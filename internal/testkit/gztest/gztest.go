// Package gztest builds gzip members (RFC 1952) with the header fields
// a test asks for, which compress/gzip's writer cannot all write (FHCRC).
// It imports nothing of lidi, so any package's tests may use it.
package gztest

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
)

// The optional fields of a gzip header (RFC 1952, 2.3.1), for Member.
const (
	HCRC    = 1 << 1 // FHCRC: a CRC-16 of the header
	Extra   = 1 << 2 // FEXTRA: an extra field (one subfield here)
	Name    = 1 << 3 // FNAME: a file name
	Comment = 1 << 4 // FCOMMENT: a comment
)

// Member returns text as one gzip member (RFC 1952) whose header has
// the optional fields flags names, deflated at level (compress/flate's),
// and the member's deflate stream. It panics on a level flate refuses.
func Member(text []byte, flags byte, level int) (member, deflate []byte) {
	h := []byte{0x1f, 0x8b, 8, flags, 0x78, 0x56, 0x34, 0x12, 0, 3}
	if flags&Extra != 0 {
		h = append(h, 7, 0, 'l', 'x', 3, 0, 'a', 'b', 'c')
	}
	if flags&Name != 0 {
		h = append(h, "page.html\x00"...)
	}
	if flags&Comment != 0 {
		h = append(h, "a comment\x00"...)
	}
	if flags&HCRC != 0 {
		h = binary.LittleEndian.AppendUint16(h, uint16(crc32.ChecksumIEEE(h)))
	}
	var d bytes.Buffer
	zw, err := flate.NewWriter(&d, level)
	if err != nil {
		panic(err)
	}
	zw.Write(text)
	zw.Close()
	member = append(h, d.Bytes()...)
	member = binary.LittleEndian.AppendUint32(member, crc32.ChecksumIEEE(text))
	member = binary.LittleEndian.AppendUint32(member, uint32(len(text)))
	return member, d.Bytes()
}
