package visit_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"lidi/engine"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// A page's record keeps its body and its exchange's heads as zlib streams
// that the standard library's reader inflates, at every level the
// configuration allows. The heads are stored, not compressed: their
// stream is the heads plus at most 16 bytes (zlib's 2-byte header and
// 4-byte checksum, a 5-byte stored-block header, an empty final block).
func TestRecordKeepsBodyAndHeadsAsZlib(t *testing.T) {
	t.Parallel()
	body := "<!doctype html><html><head><title>t</title></head><body>" +
		strings.Repeat("<p>a paragraph of words that repeat, as pages do</p>\n", 200) + "</body></html>"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, body)
	}))
	defer srv.Close()
	inflate := func(z []byte) []byte {
		t.Helper()
		r, err := zlib.NewReader(bytes.NewReader(z))
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, level := range []int{1, 2, 6, 9} {
		cfg := engine.Defaults()
		cfg.Seeds = []string{srv.URL + "/"}
		cfg.CompressLevel = level
		robot, err := visit.NewRobot(cfg.Robot(), nil)
		if err != nil {
			t.Fatal(err)
		}
		lease := leaseOn(t, srv, "/page")
		var rec *record.PageRecord
		robot.Run(context.Background(), lease, func(r visit.Result) {
			if r.Page != nil {
				rec = &r.Page.Record
			}
		})
		if rec == nil {
			t.Fatalf("level %d: no page reported", level)
		}
		if got := inflate(rec.Body); string(got) != body {
			t.Errorf("level %d: body inflates to %d bytes, want the %d served", level, len(got), len(body))
		}
		if len(rec.Body) >= len(body)/4 {
			t.Errorf("level %d: body of %d bytes kept in %d: not compressed", level, len(body), len(rec.Body))
		}
		heads := inflate(rec.Wire)
		if !bytes.HasPrefix(heads, []byte("GET /page HTTP/1.1\r\n")) || !bytes.Contains(heads, []byte("\r\n\r\nHTTP/1.1 200 OK\r\n")) {
			t.Errorf("level %d: heads inflate to %q", level, heads)
		}
		if len(rec.Wire) <= len(heads) || len(rec.Wire) > len(heads)+16 {
			t.Errorf("level %d: %d bytes of heads kept in %d, want stored: more, by at most 16", level, len(heads), len(rec.Wire))
		}
	}
}
