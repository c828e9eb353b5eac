package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `lidi export --warc DIR` writes a crawl's WARC files and index, from
// the crawl file and from a snapshot of it alike, with the configuration's
// user agent in warcinfo and a summary on stdout.
func TestExportWARC(t *testing.T) {
	srv := startWeb(t)
	dir := t.TempDir()
	cfg := writeConfig(t, dir, srv, "limits:\n  max_pages: 60\n")
	var out, errOut bytes.Buffer
	if code := run([]string{"crawl", "--config", cfg, "--headless"}, &out, &errOut); code != 0 {
		t.Fatalf("crawl exit %d: %s", code, errOut.String())
	}
	snap := filepath.Join(dir, "snap.db")
	if code := run([]string{"export", "--db", filepath.Join(dir, "crawl.db"), "--out", snap}, &out, &errOut); code != 0 {
		t.Fatalf("snapshot exit %d: %s", code, errOut.String())
	}
	for _, src := range []string{filepath.Join(dir, "crawl.db"), snap} {
		warc := filepath.Join(t.TempDir(), "warc")
		out.Reset()
		if code := run([]string{"export", "--db", src, "--warc", warc, "--prefix", "t", "--config", cfg}, &out, &errOut); code != 0 {
			t.Fatalf("export --warc of %s: exit %d: %s", src, code, errOut.String())
		}
		if !strings.Contains(out.String(), "1 WARC files") || !strings.Contains(out.String(), " response") || strings.Contains(out.String(), "missing") {
			t.Errorf("summary of %s:\n%s", src, out.String())
		}
		files, _ := filepath.Glob(filepath.Join(warc, "t-*.warc.gz"))
		if len(files) != 1 {
			t.Fatalf("files %v", files)
		}
		f, err := os.Open(files[0])
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false) // the first record, warcinfo
		info, _ := io.ReadAll(zr)
		f.Close()
		if !strings.Contains(string(info), "WARC-Type: warcinfo") || !strings.Contains(string(info), "http-header-user-agent: lidi") {
			t.Errorf("warcinfo of %s:\n%s", src, info)
		}
		if fi, err := os.Stat(filepath.Join(warc, "index.cdxj")); err != nil || fi.Size() == 0 {
			t.Errorf("index of %s: %v", src, err)
		}
	}
}
