package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"lidi/internal/testkit/gztest"
)

// A gzip-coded body is decoded by the session as net/http's transport
// decodes it when left to ask for gzip itself (same body, same cut at the
// limit, same error kind, same header fields left; a failed body is a
// prefix of the transport's or the reverse), and its
// deflate stream is handed on (Response.Deflate) only when it is one
// complete member whose decoded length is within the limit.
func TestGzipDecodedAsTheTransportDoes(t *testing.T) {
	const limit = 4096
	text := func(n int) []byte { return []byte(strings.Repeat("<p>a gzip-coded page</p>\n", n/25+1)[:n]) }
	noise := make([]byte, limit-10)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	page := text(3000)
	plain, plainDeflate := gztest.Member(page, 0, 1)
	named, namedDeflate := gztest.Member(page, gztest.Name, 6)
	full, fullDeflate := gztest.Member(page, gztest.Extra|gztest.Name|gztest.Comment|gztest.HCRC, 9)
	empty, emptyDeflate := gztest.Member(nil, 0, 1)
	atLimit, atLimitDeflate := gztest.Member(text(limit), 0, 1)
	overLimit, _ := gztest.Member(text(limit+1), 0, 1)
	stored, _ := gztest.Member(noise, 0, flate.NoCompression) // decoded within the limit, compressed past it
	second, _ := gztest.Member([]byte("<p>and more</p>"), gztest.Name, 1)
	badSum := bytes.Clone(plain)
	badSum[len(badSum)-5] ^= 1
	corrupt := bytes.Clone(plain)
	corrupt[10] = 0xff // a reserved block type

	type response struct {
		coding  string // Content-Encoding; "" for none
		body    []byte
		chunked bool // sent without Content-Length
	}
	tests := []struct {
		name    string
		resp    response
		deflate []byte // the stream handed on; nil for none
	}{
		{"one member", response{"gzip", plain, false}, plainDeflate},
		{"chunked", response{"gzip", plain, true}, plainDeflate},
		{"coding in capitals", response{"GZIP", plain, false}, plainDeflate},
		{"file name in the header", response{"gzip", named, false}, namedDeflate},
		{"extra field, name, comment and header CRC", response{"gzip", full, false}, fullDeflate},
		{"empty text", response{"gzip", empty, false}, emptyDeflate},
		{"decoded length at the limit", response{"gzip", atLimit, false}, atLimitDeflate},
		{"decoded length over the limit", response{"gzip", overLimit, false}, nil},
		{"compressed bytes past the limit", response{"gzip", stored, false}, nil},
		{"two members", response{"gzip", append(bytes.Clone(plain), second...), false}, nil},
		{"a member then garbage", response{"gzip", append(bytes.Clone(plain), "garbage and more garbage"...), false}, nil},
		{"a member then 3 bytes", response{"gzip", append(bytes.Clone(plain), 0x1f, 0x8b, 8), false}, nil},
		{"stream cut", response{"gzip", plain[:len(plain)/2], false}, nil},
		{"trailer cut", response{"gzip", plain[:len(plain)-3], false}, nil},
		{"bad checksum", response{"gzip", badSum, false}, nil},
		{"corrupt deflate", response{"gzip", corrupt, false}, nil},
		{"not gzip", response{"gzip", page, false}, nil},
		{"empty body declared gzip", response{"gzip", nil, false}, nil},
		{"identity", response{"", page, false}, nil},
		{"x-gzip is not decoded", response{"x-gzip", plain, false}, nil},
		{"another coding", response{"br", []byte("\x1b\x02\x00 not really brotli"), false}, nil},
		{"two codings", response{"gzip, identity", plain, false}, nil},
	}
	byPath := map[string]response{}
	for i, tc := range tests {
		byPath["/"+strconv.Itoa(i)] = tc.resp
	}
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Values("Accept-Encoding"); len(got) != 1 || got[0] != "gzip" {
			http.Error(w, "asked for "+strings.Join(got, "|"), http.StatusBadRequest)
			return
		}
		resp := byPath[r.URL.Path]
		w.Header().Set("Content-Type", "text/html")
		if resp.coding != "" {
			w.Header().Set("Content-Encoding", resp.coding)
		}
		if !resp.chunked {
			w.Header().Set("Content-Length", strconv.Itoa(len(resp.body)))
		}
		w.Write(resp.body)
	}))
	base := "http://x.test:" + strconv.Itoa(int(ap.Port()))
	// What the transport makes of a response when it asks for gzip.
	stock := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, ap.String())
		},
	}}
	s := New(Config{MaxBodySize: limit}).Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := base + "/" + strconv.Itoa(i)
			ref, err := stock.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			wantBody, wantTrunc, wantErr := readLimited(&buf, ref.Body, limit, ref.ContentLength)
			ref.Body.Close()
			var wantKind ErrorKind
			if wantErr != nil {
				wantKind = classify(wantErr)
			}

			r, err := s.Get(context.Background(), u)
			var gotKind ErrorKind
			if fe, ok := err.(*Error); ok {
				gotKind = fe.Kind
			} else if err != nil {
				t.Fatalf("error %v not an *Error", err)
			}
			if r.Status != 200 {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			sameBody := bytes.Equal(r.Body, wantBody)
			if wantErr != nil {
				// A failed body is what each decoder had flushed before
				// the failure: a prefix of the page either way.
				sameBody = bytes.HasPrefix(r.Body, wantBody) || bytes.HasPrefix(wantBody, r.Body)
			}
			if gotKind != wantKind || !sameBody || r.Truncated != wantTrunc {
				t.Errorf("got %d bytes, truncated %v, kind %q (%v); the transport: %d bytes, truncated %v, kind %q (%v)",
					len(r.Body), r.Truncated, gotKind, err, len(wantBody), wantTrunc, wantKind, wantErr)
			}
			for _, f := range []string{"Content-Encoding", "Content-Length"} {
				if got, want := r.Header.Values(f), ref.Header.Values(f); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%s: %q, the transport left %q", f, got, want)
				}
			}
			if !bytes.Equal(r.Deflate, tc.deflate) || (r.Deflate == nil) != (tc.deflate == nil) {
				t.Fatalf("deflate stream of %d bytes, want %d (nil %v)", len(r.Deflate), len(tc.deflate), tc.deflate == nil)
			}
			if r.Deflate != nil {
				inflated, err := io.ReadAll(flate.NewReader(bytes.NewReader(r.Deflate)))
				if err != nil || !bytes.Equal(inflated, r.Body) {
					t.Errorf("the deflate stream inflates to %d bytes (%v), the body is %d", len(inflated), err, len(r.Body))
				}
			}
		})
	}
}

// A gzip-coded body handed to a consumer as a stream (a robots.txt
// chain's, a sitemap's) is decoded too, and cut at the limit decoded.
func TestGzipStreamedDecoded(t *testing.T) {
	page := []byte(strings.Repeat("Disallow: /private\n", 400))
	member, _ := gztest.Member(page, gztest.Name, 6)
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(member)
	}))
	s := New(Config{}).Open(ap.Addr(), int(ap.Port()))
	defer s.Close()
	for _, limit := range []int64{int64(len(page)) + 1, 1000} {
		var got []byte
		r, err := s.get(context.Background(), "http://x.test:"+strconv.Itoa(int(ap.Port()))+"/robots.txt", Validators{}, limit,
			func(body io.Reader) (err error) { got, err = io.ReadAll(body); return err })
		want := page[:min(int64(len(page)), limit)]
		if err != nil || !bytes.Equal(got, want) || r.Truncated != (limit < int64(len(page))) || r.Deflate != nil {
			t.Errorf("limit %d: %v, %d bytes (want %d), truncated %v, deflate %d bytes", limit, err, len(got), len(want), r.Truncated, len(r.Deflate))
		}
	}
}

// A chain whose last hop went to another port answers on a connection
// GetFollow closes: its decoder, which holds Deflate, goes back to the
// pool for another session to overwrite, so Deflate must not outlive it;
// Body, the session's own buffer, does.
func TestFollowElsewhereDropsDeflate(t *testing.T) {
	page := []byte(strings.Repeat("<p>the page at the end of the chain</p>\n", 200))
	member, _ := gztest.Member(page, 0, 1)
	_, _, target := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(member)
	}))
	_, _, start := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://x.test:"+strconv.Itoa(int(target.Port()))+"/p", http.StatusFound)
	}))
	for _, tc := range []struct {
		name string
		from netip.AddrPort
		hops int
	}{
		{"on the session's own port", target, 1},
		{"after a redirect to another port", start, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(Config{}).Open(tc.from.Addr(), int(tc.from.Port()))
			defer s.Close()
			c, err := s.GetFollow(context.Background(), "http://x.test:"+strconv.Itoa(int(tc.from.Port()))+"/start", Follow{Max: 5})
			if err != nil || c.Response == nil || len(c.Hops) != tc.hops {
				t.Fatalf("GetFollow: %v, %+v", err, c)
			}
			if !bytes.Equal(c.Response.Body, page) {
				t.Errorf("body of %d bytes, want the page's %d", len(c.Response.Body), len(page))
			}
			if own := tc.hops == 1; (c.Response.Deflate != nil) != own {
				t.Errorf("Deflate set %v, want %v", c.Response.Deflate != nil, own)
			}
		})
	}
}

// The compressed bytes kept for Deflate never take more room than the
// limit asks, however the reads fall, and a decoder does not carry a big
// page's buffer to the next body.
func TestKeptBytesBounded(t *testing.T) {
	for _, tc := range []struct {
		name          string
		size, keepMax int
		chunk         int
	}{
		{"at the limit, small reads", 100_000, 100_000, 1000},
		{"at the limit, odd reads", 300_001, 300_001, 4093},
		{"under the limit", 50_000, 1 << 20, 8192},
		{"over the limit", 2 << 20, 1 << 20, 32 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := bytes.NewReader(bytes.Repeat([]byte{'x'}, tc.size))
			g := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
			g.reset(src, int64(tc.keepMax))
			p := make([]byte, tc.chunk)
			for {
				if _, err := g.tee.Read(p); err != nil {
					break
				}
				if cap(g.tee.raw) > tc.keepMax {
					t.Fatalf("kept %d bytes in a buffer of %d, limit %d", len(g.tee.raw), cap(g.tee.raw), tc.keepMax)
				}
			}
			if kept := tc.size <= tc.keepMax; g.tee.keep != kept || kept && len(g.tee.raw) != tc.size {
				t.Errorf("keep %v with %d bytes, want %v", g.tee.keep, len(g.tee.raw), kept)
			}
			g.reset(nil, 0)
			if cap(g.tee.raw) > keepPooled {
				t.Errorf("a reset decoder holds %d bytes", cap(g.tee.raw))
			}
		})
	}
}

// chunked reads its source n bytes at a time, as a body arrives.
type chunked struct {
	r    io.Reader
	n    int
	read int // bytes handed out
}

func (c *chunked) Read(p []byte) (int, error) {
	k, err := c.r.Read(p[:min(len(p), c.n)])
	c.read += k
	return k, err
}

// A body decoded whole (gunzip.whole) is what the streaming reader makes
// of it, with and without the type check, however its reads fall; and
// one that whole leaves to the streaming reader (several members,
// garbage after the member, a cut, a bad checksum, a body past the
// limit, a read error) is decoded by it from the same bytes, as if whole
// had never read them.
func TestWholeDecodesAsTheStreamingReader(t *testing.T) {
	const limit = 64 << 10
	text := func(n int) []byte { return []byte(strings.Repeat("<p>a gzip-coded page</p>\n", n/25+1)[:n]) }
	rng := rand.New(rand.NewPCG(5, 6))
	noise := make([]byte, 20_000)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	png := append([]byte("\x89PNG\r\n\x1a\n"), noise...)
	page := text(30_000)
	plain, _ := gztest.Member(page, 0, 1)
	full, _ := gztest.Member(page, gztest.Extra|gztest.Name|gztest.Comment|gztest.HCRC, 9)
	badHCRC := bytes.Clone(full)
	badHCRC[len(badHCRC)-len(full)+30] ^= 1 // within the comment: the header CRC no longer matches
	empty, _ := gztest.Member(nil, 0, 1)
	binary, _ := gztest.Member(png, 0, 1)
	stored, _ := gztest.Member(noise, 0, flate.NoCompression)
	// Over checkAfter compressed: decoded once at the check, then whole.
	long, _ := gztest.Member(text(50_000), 0, flate.NoCompression)
	atLimit, _ := gztest.Member(text(limit), 0, 1)
	overLimit, _ := gztest.Member(text(limit+1), 0, 1)
	second, _ := gztest.Member([]byte("<p>and more</p>"), 0, 1)
	badSum := bytes.Clone(plain)
	badSum[len(badSum)-5] ^= 1
	badSize := bytes.Clone(plain)
	badSize[len(badSize)-1] ^= 1
	corrupt := bytes.Clone(plain)
	corrupt[10] = 0xff
	bodies := map[string][]byte{
		"one member": plain, "header fields": full, "bad header CRC": badHCRC, "empty": empty,
		"binary": binary, "stored": stored, "past the first check": long, "at the limit": atLimit, "over the limit": overLimit,
		"two members":     append(bytes.Clone(plain), second...),
		"garbage after":   append(bytes.Clone(plain), "garbage"...),
		"stream cut":      plain[:len(plain)/2],
		"trailer cut":     plain[:len(plain)-3],
		"bad checksum":    badSum,
		"bad size":        badSize,
		"corrupt deflate": corrupt,
		"not gzip":        page,
		"nothing":         nil,
	}
	// The bodies whole decodes itself; it leaves the others to the
	// streaming reader.
	decodesWhole := map[string]bool{"one member": true, "header fields": true, "empty": true, "binary": true, "stored": true, "past the first check": true, "at the limit": true}
	readErr := errors.New("connection reset")
	for name, body := range bodies {
		for _, ct := range []string{"text/html", "application/octet-stream"} {
			for _, check := range []bool{false, true} {
				for _, chunk := range []int{1, 777, 16 << 10, 1 << 20} {
					for _, fails := range []bool{false, true} {
						src := io.Reader(bytes.NewReader(body))
						if fails {
							src = io.MultiReader(src, errReader{readErr})
						}
						// The streaming reader alone.
						ref := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
						ref.reset(src, limit)
						want := read(ref, limit, ct, check)

						src = bytes.NewReader(body)
						if fails {
							src = io.MultiReader(src, errReader{readErr})
						}
						g := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
						g.reset(src, limit)
						w, ok := g.whole(nil, &chunked{r: src, n: chunk}, limit, ct, check)
						got := decoded{w.body, w.truncated, w.check, w.deflate, nil}
						if !ok {
							got = read(g, limit, ct, check)
						}
						if wantWhole := decodesWhole[name] && !fails; ok != wantWhole {
							t.Errorf("%s, %s, check %v, reads of %d, failing %v: whole %v, want %v", name, ct, check, chunk, fails, ok, wantWhole)
						}
						if !got.equal(want) {
							t.Errorf("%s, %s, check %v, reads of %d, failing %v (whole %v): got %s, want %s", name, ct, check, chunk, fails, ok, got, want)
						}
					}
				}
			}
		}
	}
}

// decoded is what a session makes of a body.
type decoded struct {
	body      []byte
	truncated bool
	check     TypeCheck
	deflate   []byte
	err       error
}

func (d decoded) equal(o decoded) bool {
	return bytes.Equal(d.body, o.body) && d.truncated == o.truncated && d.check == o.check &&
		bytes.Equal(d.deflate, o.deflate) && (d.deflate == nil) == (o.deflate == nil) && (d.err == nil) == (o.err == nil) &&
		(d.err == nil || classify(d.err) == classify(o.err))
}

func (d decoded) String() string {
	return fmt.Sprintf("%d bytes, truncated %v, %s, deflate %d (nil %v), %v", len(d.body), d.truncated, d.check, len(d.deflate), d.deflate == nil, d.err)
}

// read decodes a body with the streaming reader g as Session.get does.
func read(g *gunzip, limit int64, ct string, check bool) decoded {
	var buf bytes.Buffer
	var d decoded
	if check {
		d.body, d.truncated, d.check, d.err = readChecked(&buf, g, limit, -1, ct)
	} else {
		d.body, d.truncated, d.err = readLimited(&buf, g, limit, -1)
		d.check = declaredType(ct)
	}
	if d.err == nil && !d.truncated {
		d.deflate = g.deflate()
	}
	d.body = bytes.Clone(d.body)
	return d
}

// A gzip-coded binary declared HTML is decoded no further than its
// first bytes, and read no further than checkAfter (and one read) when
// it has not ended by then; an HTML page declared otherwise is found
// HTML.
func TestWholeChecksTheType(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	noise := make([]byte, 1<<20)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	binary, _ := gztest.Member(append([]byte("\x89PNG\r\n\x1a\n"), noise...), 0, 1)
	html, _ := gztest.Member([]byte(strings.Repeat("<!DOCTYPE html><p>été</p>", 5000)), 0, 1)
	for _, tc := range []struct {
		name, ct  string
		body      []byte
		check     TypeCheck
		truncated bool
		maxRead   int
	}{
		{"binary as html", "text/html", binary, TypeBinaryAsHTML, true, checkAfter + 4096},
		{"html as octets", "application/octet-stream", html, TypeHTMLUndeclared, false, len(html)},
		{"html", "text/html", html, TypeHTML, false, len(html)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &chunked{r: bytes.NewReader(tc.body), n: 4096}
			g := &gunzip{br: bufio.NewReaderSize(nil, 8<<10)}
			g.reset(src, 10<<20)
			w, ok := g.whole(nil, src, 10<<20, tc.ct, true)
			if !ok || w.check != tc.check || w.truncated != tc.truncated || src.read > tc.maxRead ||
				tc.truncated && len(w.body) != sniffLen {
				t.Errorf("whole %v: %s, truncated %v, %d bytes decoded, %d read; want %s, %v, at most %d read",
					ok, w.check, w.truncated, len(w.body), src.read, tc.check, tc.truncated, tc.maxRead)
			}
		})
	}
}

// A body decoded whole stays as it was until its session's next Get, while
// other sessions, which borrow decoders from the same pool, fetch theirs.
func TestWholeBodyKeptUntilNextGet(t *testing.T) {
	pages := map[string][]byte{}
	for i := range 6 {
		pages["/"+strconv.Itoa(i)] = bytes.Repeat([]byte("<p>page "+strconv.Itoa(i)+" of a gzip-coded site</p>\n"), 200+100*i)
	}
	_, _, ap := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		z, _ := gztest.Member(pages[r.URL.Path], 0, 1)
		w.Write(z)
	}))
	f := New(Config{CheckType: true})
	url := func(i int) string { return "http://site.test:" + strconv.Itoa(int(ap.Port())) + "/" + strconv.Itoa(i) }
	a := f.Open(ap.Addr(), int(ap.Port()))
	defer a.Close()
	for i := range 3 {
		ra, err := a.Get(context.Background(), url(i))
		if err != nil || ra.Deflate == nil {
			t.Fatalf("session a, page %d: %v, deflate %v", i, err, ra.Deflate != nil)
		}
		// Other sessions come and go, as a crawl's visits do.
		for j := 3; j < 6; j++ {
			b := f.Open(ap.Addr(), int(ap.Port()))
			rb, err := b.Get(context.Background(), url(j))
			if err != nil || !bytes.Equal(rb.Body, pages["/"+strconv.Itoa(j)]) {
				t.Fatalf("session b, page %d: %v, %d bytes", j, err, len(rb.Body))
			}
			b.Close()
		}
		if !bytes.Equal(ra.Body, pages["/"+strconv.Itoa(i)]) {
			t.Fatalf("session a's page %d changed while other sessions fetched", i)
		}
		if got, err := io.ReadAll(flate.NewReader(bytes.NewReader(ra.Deflate))); err != nil || !bytes.Equal(got, ra.Body) {
			t.Fatalf("session a's page %d: its deflate stream inflates to %d bytes, %v", i, len(got), err)
		}
	}
}
