// Package sitemap reads sitemaps as sitemaps.org describes them (the
// protocol Heritrix, Nutch, StormCrawler and Scrapy read): XML <urlset>
// files listing pages, XML <sitemapindex> files listing sitemaps, and plain
// text files of one URL a line, any of them gzip-compressed.
//
// A sitemap comes from a server lidi does not trust, so [Read] streams it:
// the XML is read token by token (encoding/xml's decoder; it expands no
// entity but the five predefined ones, so no entity bomb grows), entries
// are handed over as they are read, and nothing of the file is kept. The
// protocol's limits refuse a file at the entry or byte that breaks them:
// 50,000 entries and 50 MB uncompressed (a gzip bomb stops there), element
// nesting (a deeply nested file stops at [Limits.MaxDepth]), a run of bytes
// without markup (one endless text or tag stops at [Limits.MaxToken]) and
// entry URLs of at most 2,048 characters. The entries handed over before a
// limit was broken were valid and are the caller's to keep; what follows is
// not read. Memory is bounded by MaxToken for what the reader buffers, and
// by MaxSize in the worst case of the decoder (a comment or a CDATA section
// holding markup counts as one token).
//
// The cross-host rule: a sitemap may list only URLs under its own
// directory on its own scheme and host (sitemaps.org, "Sitemap file
// location"), except that a sitemap the robots.txt of a site names may list
// any URL of that site ("Sitemaps & Cross Submits"). [Source] says which
// sites vouch for a file; other entries are counted as off-site and
// skipped. A sitemap index passes its vouchers on to the sitemaps it
// lists ([Walker]).
package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"strings"
	"time"
)

// The protocol's limits (sitemaps.org) and lidi's bounds on what the
// protocol leaves open; [Limits] fields default to them.
const (
	MaxEntries = 50_000   // entries (URLs or sitemaps) in one file
	MaxSize    = 50 << 20 // bytes of one file, uncompressed (50 MiB, the protocol's "50MB")
	MaxURLLen  = 2048     // characters of an entry's URL
	// MaxDepth bounds XML element nesting: a urlset's loc is at depth 3,
	// and extensions (image, video, news) add two or three levels.
	MaxDepth = 12
	// MaxToken bounds a run of bytes without '<': a text or a tag longer
	// than that is no sitemap's.
	MaxToken = 64 << 10
)

// Errors a file is refused with. Read wraps them in a *FileError.
var (
	ErrTooManyEntries = errors.New("sitemap: more than the protocol's 50,000 entries")
	ErrTooLarge       = errors.New("sitemap: more than the protocol's 50 MB uncompressed")
	ErrTooDeep        = errors.New("sitemap: elements nested too deep")
	ErrTokenTooLong   = errors.New("sitemap: text or tag too long")
	ErrNotSitemap     = errors.New("sitemap: root element is neither urlset nor sitemapindex")
	ErrMalformed      = errors.New("sitemap: malformed")
	ErrBadGzip        = errors.New("sitemap: bad gzip stream")
)

// Limits bound what Read accepts. The zero value, and any field left 0,
// means the package constant of the same name.
type Limits struct {
	MaxEntries int
	MaxSize    int64
	MaxDepth   int
	MaxToken   int
}

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = MaxEntries
	}
	if l.MaxSize <= 0 {
		l.MaxSize = MaxSize
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = MaxDepth
	}
	if l.MaxToken <= 0 {
		l.MaxToken = MaxToken
	}
	return l
}

// Kind is the kind of a sitemap file. The zero value is KindUnknown: the
// file was refused before its root element.
type Kind uint8

const (
	KindUnknown Kind = iota
	KindURLSet       // <urlset>: pages
	KindIndex        // <sitemapindex>: sitemaps
	KindText         // one URL a line: pages
)

// String returns the name used in logs and the console.
func (k Kind) String() string {
	switch k {
	case KindURLSet:
		return "urlset"
	case KindIndex:
		return "sitemapindex"
	case KindText:
		return "text"
	}
	return "unknown"
}

// Entry is one URL a sitemap lists: a page of a urlset or text file, or a
// sitemap of an index.
type Entry struct {
	URL string // absolute http or https URL, as written (white space trimmed)
	// LastMod is the entry's <lastmod> (W3C datetime, see ParseLastMod),
	// zero when absent or unreadable. Crawlers take it as a hint of
	// change, not as a fact.
	LastMod time.Time
}

// Source is where a sitemap file comes from. The zero value has no URL,
// and Read then accepts no entry.
type Source struct {
	// URL is the file's URL after any redirect: its scheme, host and
	// directory bound the URLs it may list.
	URL string
	// Vouchers are URL prefixes the file's entries may also have,
	// wherever the file is: the sites ("scheme://host[:port]", the whole
	// site) whose robots.txt named the file or an index leading to it,
	// and the directory of an index listing it. A prefix counts up to its
	// last '/'.
	Vouchers []string
}

// Stats says what Read found in a file. It is a plain value.
type Stats struct {
	Kind       Kind
	Gzip       bool
	Bytes      int64 // uncompressed bytes read
	Entries    int   // entries handed over
	OffSite    int   // entries skipped by the cross-host rule
	Invalid    int   // entries that are no absolute http(s) URL of at most MaxURLLen characters, or have no <loc>
	BadLastMod int   // <lastmod> values that are no W3C datetime (the entry is kept without)
}

// FileError is a file refused: what broke (one of the Err values above, or
// a reader's error), where.
type FileError struct {
	URL    string
	Offset int64 // uncompressed bytes read when it broke
	Err    error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("%v (%s, at byte %d)", e.Err, e.URL, e.Offset)
}

func (e *FileError) Unwrap() error { return e.Err }

// Read reads one sitemap file from r, calling yield for each entry in file
// order; an error from yield ends the read and is returned as is. The file
// may be gzip-compressed (recognised by its magic bytes, whatever its name
// or type says). Read returns what it found, and a *FileError when the file
// breaks a limit or is no sitemap; the entries yielded before stay valid.
func Read(r io.Reader, src Source, lim Limits, yield func(Entry) error) (Stats, error) {
	var st Stats
	err := read(r, src, lim, &st, yield)
	return st, err
}

// read is Read filling *st as it goes, so that yield can see the file's
// kind.
func read(r io.Reader, src Source, lim Limits, st *Stats, yield func(Entry) error) error {
	lim = lim.withDefaults()
	scope := newScope(src)
	counted := &countingReader{r: r, max: lim.MaxSize, maxRun: lim.MaxToken}
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return &FileError{URL: src.URL, Err: fmt.Errorf("%w: %v", ErrBadGzip, err)}
		}
		st.Gzip = true
		counted.r = zr
	} else {
		counted.r = br
	}
	var err error
	in := bufio.NewReader(counted)
	if isText(in) {
		st.Kind = KindText
		counted.maxRun = math.MaxInt // lines are bounded by the scanner
		err = readText(in, scope, lim, st, yield)
	} else {
		err = readXML(in, scope, lim, st, yield)
	}
	st.Bytes = counted.n
	if err != nil {
		var ye yieldError
		if errors.As(err, &ye) {
			return ye.err
		}
		if errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
			err = fmt.Errorf("%w: %v", ErrBadGzip, err)
		}
		return &FileError{URL: src.URL, Offset: counted.n, Err: err}
	}
	return nil
}

// yieldError carries the caller's error through the readers.
type yieldError struct{ err error }

func (e yieldError) Error() string { return e.err.Error() }

// isText reports whether the file is a text sitemap: its first byte other
// than white space and a byte order mark is not '<'.
func isText(in *bufio.Reader) bool {
	for i := 1; i <= 1024; i++ {
		b, err := in.Peek(i)
		if len(b) < i {
			return err == nil // empty: no root element, read as XML to say so
		}
		c := b[i-1]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
		case i <= 3 && (c == 0xEF || c == 0xBB || c == 0xBF): // UTF-8 BOM
		default:
			return c != '<'
		}
	}
	return false
}

// readText reads a text sitemap: one URL a line, blank lines skipped.
func readText(in *bufio.Reader, scope *scope, lim Limits, st *Stats, yield func(Entry) error) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), lim.MaxToken)
	for sc.Scan() {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\uFEFF"))
		if line == "" {
			continue
		}
		if err := take(Entry{URL: line}, scope, lim, st, yield); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return ErrTokenTooLong
		}
		return err
	}
	return nil
}

// take checks one entry and hands it over.
func take(e Entry, scope *scope, lim Limits, st *Stats, yield func(Entry) error) error {
	if st.Entries+st.OffSite+st.Invalid >= lim.MaxEntries {
		return ErrTooManyEntries
	}
	u, ok := entryURL(e.URL)
	switch {
	case !ok:
		st.Invalid++
		return nil
	case !scope.allows(u):
		st.OffSite++
		return nil
	}
	st.Entries++
	if err := yield(e); err != nil {
		return yieldError{err}
	}
	return nil
}

// entryURL parses an entry's URL: absolute, http or https, with a host, at
// most MaxURLLen characters.
func entryURL(s string) (*url.URL, bool) {
	if s == "" || len(s) > MaxURLLen*4 || len([]rune(s)) > MaxURLLen {
		return nil, false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return nil, false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u, true
	}
	return nil, false
}

// countingReader counts the bytes it passes, fails past max, and fails when
// more than maxRun bytes pass without a '<' (one text or tag that long is
// no sitemap's, and the XML decoder would buffer it whole).
type countingReader struct {
	r      io.Reader
	n, max int64
	run    int
	maxRun int
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.n >= c.max {
		// One byte more tells an end at max from a file going on.
		var one [1]byte
		if k, _ := io.ReadFull(c.r, one[:]); k == 0 {
			return 0, io.EOF
		}
		return 0, ErrTooLarge
	}
	if rem := c.max - c.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	k, err := c.r.Read(p)
	c.n += int64(k)
	if i := bytes.LastIndexByte(p[:k], '<'); i >= 0 {
		c.run = k - 1 - i
	} else {
		c.run += k
	}
	if c.run > c.maxRun {
		return k, ErrTokenTooLong
	}
	return k, err
}
