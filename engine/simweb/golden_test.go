package simweb

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// untrappedGolden is the digest of everything a web without traps shows the
// world (pages, links, PageRank, robots.txt, host names, the CSV export and
// the server's answers), computed by webDigest before traps existed. A web
// generated without traps must stay byte for byte what it was.
const untrappedGolden = "f346e04c177d8211c37d0cda9a8ba4bdd5c0078bebde4f6f1237a7e4e931503f"

// untrappedReadme is the SHA-256 of the README.txt that Export wrote for
// goldenOptions before traps existed.
const untrappedReadme = "e98817f797ac6d43815330ffd3ca878407f9eae2c5ba050576f9e012e1faac14"

var goldenOptions = Options{Seed: 42, Sites: 60, Pages: 3000}

// webDigest hashes what w shows the world. The server's port, which changes
// from run to run, is replaced by "PORT" in the bodies and headers.
func webDigest(t *testing.T, w *Web) string {
	t.Helper()
	h := sha256.New()
	put := func(format string, args ...any) { fmt.Fprintf(h, format, args...); h.Write([]byte{0}) }
	st := w.Stats()
	st.GenerateTime = 0
	put("%d %d %d %d %d %d %d %d %d", st.Sites, st.Pages, st.Links, st.ExternalLinks, st.Addresses,
		st.MaxDepth, st.MaxSitePages, st.DisallowedPages, st.PageRankIters)
	for k := range numRobotsKinds {
		put("%v=%d", k, st.RobotsKinds[k])
	}
	var hosts []string
	for host := range w.hosts {
		hosts = append(hosts, host)
	}
	slices.Sort(hosts)
	put("%v", hosts)
	for s := range w.NumSites() {
		put("%+v", w.Site(s))
		status, body := w.RobotsTxt(s)
		put("%d %s", status, body)
	}
	for p := range w.NumPages() {
		put("%+v %s", w.Page(p), w.URL(p))
		h.Write(w.AppendHTML(nil, p, 8080))
	}
	for from, to := range w.Graph().Edges() {
		put("%d>%d", from, to)
	}
	var b [8]byte
	for _, x := range w.PageRank() {
		binary.LittleEndian.PutUint64(b[:], math.Float64bits(x))
		h.Write(b[:])
	}
	dir := t.TempDir()
	if err := w.Export(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pages.csv", "edges.csv", "sites.csv"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		put("%s %s", name, data)
	}
	digestServer(t, w, h)
	return hex.EncodeToString(h.Sum(nil))
}

// digestServer hashes the server's answers to every page, to a directory
// without its slash, to unknown paths and to robots.txt.
func digestServer(t *testing.T, w *Web, h hash.Hash) {
	s := startServer(t, w, ServerConfig{})
	port := []byte(":" + strconv.Itoa(s.Port()))
	do := func(host, path string) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://"+host+path, nil))
		fmt.Fprintf(h, "%s%s %d %q %q %q\x00", host, path, rec.Code, rec.Header().Get("Content-Type"),
			rec.Header().Get("Content-Length"), bytes.ReplaceAll([]byte(rec.Header().Get("Location")), port, []byte(":PORT")))
		h.Write(bytes.ReplaceAll(rec.Body.Bytes(), port, []byte(":PORT")))
	}
	for p := range w.NumPages() {
		pg := w.Page(p)
		host := w.Site(pg.Site).Host
		do(host, pg.Path)
		if pg.Kind == KindIndex && pg.Depth > 0 {
			do(host, pg.Path[:len(pg.Path)-1])
		}
	}
	for _, in := range w.Traps() {
		if u, err := url.Parse(in.URL); err == nil && !strings.Contains(in.URL, "…") {
			do(u.Host, u.EscapedPath())
		}
	}
	for i := range w.NumSites() {
		host := w.Site(i).Host
		do(host, "/robots.txt")
		do(host, "/no-such-page-zz.html")
		do(host, "/calendar/2026/11/")
		do(host, "/print/")
	}
}

func TestUntrappedWebUnchanged(t *testing.T) {
	w, err := Generate(goldenOptions)
	if err != nil {
		t.Fatal(err)
	}
	if got := webDigest(t, w); got != untrappedGolden {
		t.Errorf("web without traps changed: digest %s, want %s", got, untrappedGolden)
	}
	dir := t.TempDir()
	if err := w.Export(dir); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(readme); hex.EncodeToString(sum[:]) != untrappedReadme {
		t.Errorf("README.txt of a web without traps changed:\n%s", readme)
	}
	if _, err := os.Stat(filepath.Join(dir, "traps.csv")); err == nil {
		t.Error("traps.csv written for a web without traps")
	}
	if w.Traps() != nil || w.Stats().Traps != nil {
		t.Error("a web without traps reports traps")
	}
}
