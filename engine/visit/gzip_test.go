package visit_test

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/visit"
	"lidi/internal/testkit/gztest"
)

// A body the server sent gzip-coded as one member is stored as a zlib
// stream around the server's own deflate stream (not compressed again),
// whatever the gzip header held; every other body is compressed by the
// robot as before. Either way the stored body inflates, with Go's zlib
// reader and with Python's zlib.decompress, to the decoded page, and the
// record's length and digest are those of the decoded page.
func TestBodyKeptAsTheServerDeflatedIt(t *testing.T) {
	t.Parallel()
	const limit = 8192
	page := func(n int) []byte {
		var b strings.Builder
		b.WriteString("<!doctype html><html><head><title>t</title></head><body>\n")
		for i := 0; b.Len() < n; i++ {
			b.WriteString("<p>paragraph " + strconv.Itoa(i) + " of words that repeat, as pages do</p>\n")
		}
		return []byte(b.String()[:n])
	}
	text := page(6000)
	noise := []byte("<!doctype html><p>" + strings.Repeat("x", 3000)) // stored below, not deflated
	type served struct {
		coding string
		body   []byte
	}
	gz := func(text []byte, flags byte, level int) (served, []byte) {
		m, d := gztest.Member(text, flags, level)
		return served{"gzip", m}, d
	}
	plain, plainD := gz(text, 0, 1)
	named, namedD := gz(text, gztest.Name, 1)
	full, fullD := gz(text, gztest.Extra|gztest.Name|gztest.Comment|gztest.HCRC, 6)
	m1, _ := gztest.Member(text[:4000], gztest.Name, 1)
	m2, _ := gztest.Member(text[4000:], 0, 1)
	over, _ := gz(page(limit+500), 0, 1)
	stored, _ := gz(noise, 0, flate.NoCompression)
	tests := []struct {
		name    string
		resp    served
		level   int    // storage.compress_level
		decoded []byte // what the stored body inflates to
		deflate []byte // the server's stream, when it is what is stored
		cut     bool
	}{
		{"gzip", plain, 1, text, plainD, false},
		{"gzip with a file name", named, 1, text, namedD, false},
		{"gzip with extra field, name, comment and header CRC", full, 1, text, fullD, false},
		{"identity", served{"", text}, 1, text, nil, false},
		{"two gzip members", served{"gzip", append(bytes.Clone(m1), m2...)}, 1, text, nil, false},
		{"gzip over the size limit", over, 1, page(limit + 500)[:limit], nil, true},
		{"gzip that only stored its bytes", stored, 1, noise, nil, false},
		{"gzip, the crawl compressing harder", plain, 6, text, nil, false},
	}
	byPath := map[string]served{}
	for i, tc := range tests {
		byPath["/"+strconv.Itoa(i)] = tc.resp
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := byPath[r.URL.Path]
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if s.coding != "" {
			w.Header().Set("Content-Encoding", s.coding)
		}
		w.Write(s.body)
	}))
	defer srv.Close()
	python, _ := exec.LookPath("python3")
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := engine.Defaults()
			cfg.Seeds = []string{srv.URL + "/"}
			cfg.CompressLevel = tc.level
			cfg.Fetch.MaxBodySize = limit
			robot, err := visit.NewRobot(cfg.Robot(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var rec *record.PageRecord
			robot.Run(context.Background(), leaseOn(t, srv, "/"+strconv.Itoa(i)), func(r visit.Result) {
				if r.Page != nil {
					rec = &r.Page.Record
				}
			})
			if rec == nil || rec.Err != "" || rec.Status != 200 {
				t.Fatalf("record %+v", rec)
			}
			zr, err := zlib.NewReader(bytes.NewReader(rec.Body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(got, tc.decoded) {
				t.Fatalf("the stored body inflates to %d bytes (%v), want the %d decoded", len(got), err, len(tc.decoded))
			}
			if rec.Length != int64(len(tc.decoded)) || rec.Digest != record.NewestDigest.Sum(tc.decoded) || rec.Truncated != tc.cut {
				t.Errorf("length %d, digest %x, truncated %v; want %d, %x, %v", rec.Length, rec.Digest, rec.Truncated,
					len(tc.decoded), record.NewestDigest.Sum(tc.decoded), tc.cut)
			}
			reused := len(rec.Body) == len(tc.deflate)+6 && bytes.Equal(rec.Body[2:len(rec.Body)-4], tc.deflate)
			if reused != (tc.deflate != nil) {
				t.Errorf("the server's deflate stream stored: %v, want %v", reused, tc.deflate != nil)
			}
			if python == "" {
				return
			}
			cmd := exec.Command(python, "-c", "import sys, zlib; sys.stdout.buffer.write(zlib.decompress(sys.stdin.buffer.read()))")
			cmd.Stdin = bytes.NewReader(rec.Body)
			out, err := cmd.Output()
			if err != nil || !bytes.Equal(out, tc.decoded) {
				t.Errorf("Python's zlib.decompress: %d bytes (%v), want %d", len(out), err, len(tc.decoded))
			}
		})
	}
	if python == "" {
		t.Log("python3 not found: zlib.decompress not tried")
	}
}
