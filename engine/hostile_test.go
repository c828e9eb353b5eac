package engine_test

import (
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"lidi/engine"
)

// hostileSite serves, on 127.0.0.1, every kind of bad input a crawler meets,
// and counts the requests for each path.
type hostileSite struct {
	mu       sync.Mutex
	requests map[string]int
}

func (h *hostileSite) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.requests[path]
}

func (h *hostileSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.requests[r.URL.RequestURI()]++
	h.mu.Unlock()
	html := func(body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	p := r.URL.Path
	switch {
	case p == "/robots.txt":
		// Garbage around one valid group.
		w.Write([]byte("\x00\xff\xfe garbage \x01\x02\nUser-agent: *\nDisallow: /private\n\xde\xad\xbe\xef: ???\n<html>"))
	case p == "/":
		html(`<html><body>
			<a href="/malformed">m</a> <a href="/invalid">i</a> <a href="/endless">e</a>
			<a href="/stall">s</a> <a href="/loop1">l</a> <a href="/chain/0">c</a>
			<a href="/binary">b</a> <a href="/octet">o</a> <a href="/png-as-html">g</a> <a href="/private/secret">p</a>
			<a href="/nofollowed" rel="nofollow">n</a></body></html>`)
	case p == "/malformed":
		// What a browser makes of it: good1, good3 and good4 are links;
		// the rest are attributes of other tags, script text, or a tag cut
		// off by the end of the file.
		html("<html><a href=\"/good1\">x<a href='/good2'<<<<>>><div <<a href=/bad1>\x00\xff<p>unclosed <b><i><a href=/good3>y</p></b><a hr ef=/bad><script>document.write('<a href=/js>')</script><table><tr><td><a href=\"/good4\">z</table><a href=\"/bad2\"")
	case p == "/invalid":
		html(`<a href="http://[::1">1</a><a href="ht tp://x">2</a><a href="javascript:alert(1)">3</a>
			<a href="http://127.0.0.1:99999/">4</a><a href="mailto:a@b">5</a><a href="/ok-after-invalid">6</a>`)
	case p == "/endless":
		w.Header().Set("Content-Type", "text/html")
		chunk := []byte(strings.Repeat("<p>more and more</p>", 200))
		for i := 0; i < 100000; i++ { // far past the body limit, bounded anyway
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	case p == "/stall":
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	case p == "/loop1":
		http.Redirect(w, r, "/loop2", http.StatusFound)
	case p == "/loop2":
		http.Redirect(w, r, "/loop1", http.StatusFound)
	case strings.HasPrefix(p, "/chain/"):
		var n int
		fmt.Sscanf(p, "/chain/%d", &n)
		http.Redirect(w, r, fmt.Sprintf("/chain/%d", n+1), http.StatusMovedPermanently)
	case p == "/binary":
		// Binary that happens to hold markup: never parsed.
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(append([]byte{0x89, 'P', 'N', 'G', 0, 0, 0, 0x0d, 0xff, 0xfe}, []byte(`<a href="/from-binary">x</a>`)...))
	case p == "/png-as-html":
		// Binary declared as HTML: the download stops at its first bytes.
		w.Header().Set("Content-Type", "text/html")
		w.Write(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 1<<20)...))
	case p == "/octet":
		// HTML declared as something else: still parsed.
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write([]byte(`<!DOCTYPE html><html><body><a href="/from-octet">x</a></body></html>`))
	default:
		html("<html><body>fine</body></html>")
	}
}

// Bad input gets a clear record and loses nothing: malformed HTML, invalid
// URLs, a robots.txt of garbage, an endless body, a server that stalls, a
// redirect loop and an endless redirect chain, binary bodies.
func TestHostileServer(t *testing.T) {
	site := &hostileSite{requests: map[string]int{}}
	ts := httptest.NewServer(site)
	defer ts.Close()
	_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
	base := "http://127.0.0.1:" + port

	cfg := crawlConfig([]string{base + "/"})
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.ParkAfter = 5
	cfg.Fetch.MaxBodySize = 64 << 10
	cfg.Fetch.HeaderTimeout = 300 * time.Millisecond
	cfg.Fetch.BodyTimeout = 5 * time.Second
	path := filepath.Join(t.TempDir(), "crawl.db")
	st := runCrawl(t, cfg, "127.0.0.1:1", path) // an IP literal needs no DNS

	for _, p := range []string{"/good1", "/good3", "/good4", "/ok-after-invalid", "/from-octet", "/loop1", "/loop2", "/endless", "/stall"} {
		if site.count(p) != 1 {
			t.Errorf("%s requested %d times, want 1", p, site.count(p))
		}
	}
	for _, p := range []string{"/private/secret", "/from-binary", "/nofollowed", "/bad", "/bad1", "/bad2", "/js", "/chain/6"} {
		if site.count(p) != 0 {
			t.Errorf("%s requested %d times, want 0", p, site.count(p))
		}
	}
	for i := 0; i <= 5; i++ { // fetch.max_redirects = 5
		if p := fmt.Sprintf("/chain/%d", i); site.count(p) != 1 {
			t.Errorf("%s requested %d times, want 1", p, site.count(p))
		}
	}

	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	row := func(path string) (status int, truncated bool, errText string, length int64) {
		t.Helper()
		var e sql.NullString
		var tr sql.NullBool
		if err := db.QueryRow("SELECT coalesce(status,0), truncated, error, coalesce(length,0) FROM urls WHERE url = ?", base+path).Scan(&status, &tr, &e, &length); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return status, tr.Bool, e.String, length
	}
	if _, truncated, _, n := row("/endless"); !truncated || n != 64<<10 {
		t.Errorf("/endless: truncated=%v length=%d, want a truncated 64 KiB body", truncated, n)
	}
	if status, _, e, _ := row("/stall"); status != 0 || !strings.Contains(e, "timeout") {
		t.Errorf("/stall: status %d error %q, want a timeout", status, e)
	}
	if status, _, _, _ := row("/loop1"); status != 302 {
		t.Errorf("/loop1: status %d", status)
	}
	var check string
	var length int64
	if err := db.QueryRow("SELECT type_check, length FROM urls WHERE url = ?", base+"/png-as-html").Scan(&check, &length); err != nil || check != "binary-as-html" || length > 512 {
		t.Errorf("/png-as-html: type check %q, %d bytes kept (%v); want binary-as-html, at most 512", check, length, err)
	}
	if err := db.QueryRow("SELECT type_check FROM urls WHERE url = ?", base+"/octet").Scan(&check); err != nil || check != "html-undeclared" {
		t.Errorf("/octet: type check %q (%v), want html-undeclared", check, err)
	}
	var skipped int
	db.QueryRow("SELECT count(*) FROM urls WHERE state = 2").Scan(&skipped)
	if skipped != 1 { // /private/secret
		t.Errorf("%d URLs skipped, want 1 (robots.txt)", skipped)
	}
	if st.ErrorKind["timeout"] != 1 || st.ErrorKind["truncated"] != 1 {
		t.Errorf("errors by kind = %v", st.ErrorKind)
	}
	if st.Skipped["redirect-chain"] != 1 || st.Skipped["nofollow"] < 1 || st.Skipped["invalid"] < 1 {
		t.Errorf("skipped = %v", st.Skipped)
	}
	if st.State != engine.StateDone {
		t.Errorf("state = %s", st.State)
	}
}
