package dedup

import (
	"encoding/binary"
	"strings"
)

// stringArena stores short strings back to back in large chunks and hands
// out references of 4 bytes: 12 bits of chunk and 20 bits of offset, each
// string preceded by its length as a uvarint. Chunks are strings.Builders
// that are never written past their first allocation, so the strings read
// back are views that stay valid. It saves the 16-byte header and the
// allocation rounding of a Go string per page.
type stringArena struct {
	chunks []*strings.Builder
}

const (
	arenaChunk     = 1 << 20
	arenaMaxChunks = 1 << 12
)

// add stores s and returns its reference; ok is false when the arena is
// full (4 GiB).
func (a *stringArena) add(s string) (ref uint32, ok bool) {
	var lenBuf [binary.MaxVarintLen64]byte
	ln := binary.PutUvarint(lenBuf[:], uint64(len(s)))
	need := ln + len(s)
	var c *strings.Builder
	if k := len(a.chunks); k > 0 {
		c = a.chunks[k-1]
		if c.Cap()-c.Len() < need || c.Len() >= arenaChunk {
			c = nil
		}
	}
	if c == nil {
		if len(a.chunks) == arenaMaxChunks {
			return 0, false
		}
		c = new(strings.Builder)
		c.Grow(max(arenaChunk, need))
		a.chunks = append(a.chunks, c)
	}
	off := c.Len()
	c.Write(lenBuf[:ln])
	c.WriteString(s)
	return uint32(len(a.chunks)-1)<<20 | uint32(off), true
}

// get returns the string stored under ref.
func (a *stringArena) get(ref uint32) string {
	s := a.chunks[ref>>20].String()[ref&(1<<20-1):]
	n, i := 0, 0
	for shift := 0; ; shift += 7 {
		b := s[i]
		i++
		n |= int(b&0x7f) << shift
		if b < 0x80 {
			break
		}
	}
	return s[i : i+n]
}

// first returns the first byte stored under ref.
func (a *stringArena) first(ref uint32) byte {
	return a.chunks[ref>>20].String()[ref&(1<<20-1)]
}

func (a *stringArena) bytes() int {
	n := 0
	for _, c := range a.chunks {
		n += c.Cap()
	}
	return n
}
