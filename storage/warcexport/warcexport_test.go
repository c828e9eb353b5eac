package warcexport_test

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/base32"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	iawarc "github.com/internetarchive/gowarc"

	"lidi/engine"
	"lidi/engine/dns"
	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"lidi/storage"
	"lidi/storage/warcexport"
)

// crawlChangingWeb crawls a small simweb whose pages change, recrawling
// it on its virtual clock (so that 304s, unchanged and changed pages come
// back), into a crawl file, and returns its path. A third of the pages
// change every hundred virtual hours, so never during the crawl: the
// crawl keeps a URL's latest body only, and the revisits of those pages
// refer to a capture whose body is in the archive.
func crawlChangingWeb(t *testing.T, keepHeaders bool) string {
	t.Helper()
	web, err := simweb.Generate(simweb.Options{Seed: 9, Sites: 4, Pages: 40, PageSizeMedian: 2 << 10, Change: simweb.ChangeOptions{Enabled: true,
		Intervals: [simweb.MaxChangeGroups]time.Duration{3 * time.Minute, 6 * time.Minute, 100 * time.Hour}, Stamped: 0.3}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := simweb.Start(context.Background(), web, simweb.ServerConfig{TimeScale: 240})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cfg := engine.Defaults()
	cfg.Seeds = srv.SeedURLs(2)
	cfg.Robots, cfg.PagesPerVisit = 8, 10
	cfg.Delay, cfg.MaxDelay = 0, 0
	cfg.FlushEvery = 20 * time.Millisecond
	cfg.MaxPages = 300
	cfg.KeepHeaders = keepHeaders
	cfg.Recrawl.Enabled = true
	cfg.Recrawl.Clock = srv.VirtualTime()
	cfg.Recrawl.Freshness = srv
	cfg.Recrawl.InitialInterval = time.Minute
	cfg.Recrawl.Warmup = 5 * time.Minute
	cfg.Recrawl.Options.MinInterval = 30 * time.Second

	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	resolver, err := dns.NewCache(dns.Config{Servers: []string{srv.DNSAddr()}})
	if err != nil {
		t.Fatal(err)
	}
	defer resolver.Close()
	eng, err := engine.New(cfg, db, resolver, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := eng.Run(ctx); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	return path
}

func export(t *testing.T, path string, opt warcexport.Options) *warcexport.Summary {
	t.Helper()
	src, err := storage.OpenCaptures(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if opt.Dir == "" {
		opt.Dir = t.TempDir()
	}
	sum, err := warcexport.Export(context.Background(), src, opt)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// warcRecord is a record as the Internet Archive's reader returned it.
type warcRecord struct {
	file           string
	offset, size   int64
	header         iawarc.Header
	block          []byte
	id, uri, wtype string
}

// readAll reads every record of the files with github.com/internetarchive/gowarc,
// a WARC library other than the writer's.
func readAll(t *testing.T, files []string) []warcRecord {
	t.Helper()
	var out []warcRecord
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := iawarc.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			rec, err := r.ReadRecord()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: record %d: %v", name, len(out), err)
			}
			rec.Content.Seek(0, io.SeekStart)
			block, err := io.ReadAll(rec.Content)
			if err != nil {
				t.Fatal(err)
			}
			rec.Content.Close()
			if rec.Version != "WARC/1.1" {
				t.Errorf("%s: version %q", name, rec.Version)
			}
			out = append(out, warcRecord{file: filepath.Base(name), offset: rec.Offset, size: rec.Size, header: rec.Header, block: block,
				id: rec.Header.Get("WARC-Record-ID"), uri: rec.Header.Get("WARC-Target-URI"), wtype: rec.Header.Get("WARC-Type")})
		}
		f.Close()
	}
	return out
}

func sha1b32(b []byte) string {
	s := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(s[:])
}

// payload is what follows the HTTP head of an application/http block.
func payload(block []byte) []byte {
	if i := bytes.Index(block, []byte("\r\n\r\n")); i >= 0 {
		return block[i+4:]
	}
	return nil
}

// A crawl with recrawls, exported, reads back with another library:
// every record's digests hold, every WARC-Concurrent-To and
// WARC-Refers-To names a record of the archive with the same URL (a
// revisit's also its date and payload), both revisit profiles appear,
// and every CDXJ line points at its record's offset and length.
func TestExportReadsBackWithAnotherLibrary(t *testing.T) {
	path := crawlChangingWeb(t, true)
	sum := export(t, path, warcexport.Options{MaxSize: 200 << 10, Prefix: "test"})
	if len(sum.Files) < 2 {
		t.Fatalf("%d files at a 200 KiB limit, want several", len(sum.Files))
	}
	profiles := validate(t, sum)
	// simweb sends its pages gzip-coded, as asked: their records keep
	// the payload decoded, the head saying what came (origPrefix).
	gzipped := 0
	for _, r := range readAll(t, sum.Files) {
		if r.wtype == "response" && strings.Contains(string(r.block), "\r\nX-Lidi-Original-Content-Encoding: gzip\r\n") {
			gzipped++
		}
	}
	if gzipped == 0 {
		t.Errorf("no response record came gzip-coded")
	}
	// Which pages the recrawl finds unchanged with a 200 (rather than a
	// 304) varies; TestIdenticalPayloadRevisit makes sure of those.
	if profiles[notModified] == 0 {
		t.Errorf("revisit profiles %v: want server-not-modified ones", profiles)
	}
}

const (
	notModified      = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
	identicalPayload = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
)

// validate reads the export back and checks every record, reference and
// index line; it returns the revisit records' profiles.
func validate(t *testing.T, sum *warcexport.Summary) map[string]int {
	t.Helper()
	recs := readAll(t, sum.Files)
	byID := map[string]*warcRecord{}
	types := map[string]int{}
	for i := range recs {
		r := &recs[i]
		if r.id == "" || byID[r.id] != nil {
			t.Fatalf("record %d: id %q missing or repeated", i, r.id)
		}
		byID[r.id] = r
		types[r.wtype]++
		if got := r.header.Get("WARC-Block-Digest"); got != sha1b32(r.block) {
			t.Errorf("%s %s: block digest %s, computed %s", r.wtype, r.uri, got, sha1b32(r.block))
		}
		if r.wtype == "response" {
			if got := r.header.Get("WARC-Payload-Digest"); got != sha1b32(payload(r.block)) {
				t.Errorf("response %s: payload digest %s, computed %s", r.uri, got, sha1b32(payload(r.block)))
			}
			if r.header.Get("WARC-IP-Address") == "" {
				t.Errorf("response %s: no WARC-IP-Address", r.uri)
			}
			// The block is an HTTP message whose head describes the
			// payload kept: its length, and no coding left to undo.
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(r.block)), nil)
			if err != nil {
				t.Fatalf("response %s: %v", r.uri, err)
			}
			body, err := io.ReadAll(resp.Body)
			if err != nil || !bytes.Equal(body, payload(r.block)) || resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Transfer-Encoding") != "" {
				t.Errorf("response %s: the head frames %d bytes (%v) of a %d-byte payload, Content-Encoding %q, Transfer-Encoding %q",
					r.uri, len(body), err, len(payload(r.block)), resp.Header.Get("Content-Encoding"), resp.Header.Get("Transfer-Encoding"))
			}
		}
	}
	if types["warcinfo"] != len(sum.Files) {
		t.Errorf("%d warcinfo records in %d files", types["warcinfo"], len(sum.Files))
	}
	profiles := map[string]int{}
	for i := range recs {
		r := &recs[i]
		if c := r.header.Get("WARC-Concurrent-To"); c != "" {
			o := byID[c]
			if o == nil || o.uri != r.uri || o.header.Get("WARC-Date") != r.header.Get("WARC-Date") {
				t.Errorf("%s %s: WARC-Concurrent-To %s is not a record of the same capture", r.wtype, r.uri, c)
			}
		} else if r.wtype == "request" {
			t.Errorf("request %s has no WARC-Concurrent-To", r.uri)
		}
		if r.wtype != "revisit" {
			continue
		}
		p := r.header.Get("WARC-Profile")
		profiles[p]++
		o := byID[r.header.Get("WARC-Refers-To")]
		switch {
		case o == nil || o.wtype != "response":
			t.Errorf("revisit %s: WARC-Refers-To %q is not a response of the archive", r.uri, r.header.Get("WARC-Refers-To"))
		case o.uri != r.uri || r.header.Get("WARC-Refers-To-Target-URI") != o.uri || r.header.Get("WARC-Refers-To-Date") != o.header.Get("WARC-Date"):
			t.Errorf("revisit %s refers to %s of %s", r.uri, o.uri, o.header.Get("WARC-Date"))
		case r.header.Get("WARC-Payload-Digest") != o.header.Get("WARC-Payload-Digest"):
			t.Errorf("revisit %s: payload digest %s, its original's %s", r.uri, r.header.Get("WARC-Payload-Digest"), o.header.Get("WARC-Payload-Digest"))
		}
		status := strings.Fields(string(r.block))[1]
		if want := map[string]string{notModified: "304", identicalPayload: "200"}[p]; status != want {
			t.Errorf("revisit %s of profile %s answered %s", r.uri, p, status)
		}
		// Replay joins an identical payload's head to the payload of the
		// response it refers to: the head must frame that payload.
		if p == identicalPayload && o != nil {
			resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(r.block)), nil)
			if err != nil {
				t.Fatalf("revisit %s: %v", r.uri, err)
			}
			if n := len(payload(o.block)); resp.ContentLength != int64(n) || resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Transfer-Encoding") != "" {
				t.Errorf("revisit %s: the head frames %d bytes, Content-Encoding %q, Transfer-Encoding %q, over a %d-byte payload",
					r.uri, resp.ContentLength, resp.Header.Get("Content-Encoding"), resp.Header.Get("Transfer-Encoding"), n)
			}
		}
	}
	for _, k := range []string{"request", "response", "metadata"} {
		if int64(types[k]) != sum.Records[k] || k == "response" && types[k] == 0 {
			t.Errorf("%d %s records read, %d written", types[k], k, sum.Records[k])
		}
	}
	if sum.Missing.Headers != 0 || sum.Missing.RobotsHeaders != 0 {
		t.Errorf("missing %+v with headers kept", sum.Missing)
	}

	// The index: one line per response, revisit and resource, sorted.
	at := map[string]*warcRecord{}
	indexed := 0
	for i := range recs {
		r := &recs[i]
		at[r.file+"@"+itoa(r.offset)] = r
		if r.wtype == "response" || r.wtype == "revisit" || r.wtype == "resource" {
			indexed++
		}
	}
	f, err := os.Open(sum.Index)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, prev := 0, ""
	for sc := bufio.NewScanner(f); sc.Scan(); lines++ {
		line := sc.Text()
		if line < prev {
			t.Errorf("index not sorted: %q after %q", line, prev)
		}
		prev = line
		fields := strings.SplitN(line, " ", 3)
		var e struct{ URL, Digest, Length, Offset, Filename, Status string }
		if len(fields) != 3 || json.Unmarshal([]byte(fields[2]), &e) != nil {
			t.Fatalf("bad line %q", line)
		}
		r := at[e.Filename+"@"+e.Offset]
		switch {
		case r == nil:
			t.Errorf("%s: no record at %s offset %s", e.URL, e.Filename, e.Offset)
		case r.uri != e.URL || itoa(r.size) != e.Length || "sha1:"+e.Digest != r.header.Get("WARC-Payload-Digest"):
			t.Errorf("line %q: the record there is %s of %s, %d bytes, digest %s", line, r.wtype, r.uri, r.size, r.header.Get("WARC-Payload-Digest"))
		case fields[0] != warcexport.SURT(e.URL) || !strings.HasPrefix(strings.NewReplacer("-", "", ":", "", "T", "").Replace(r.header.Get("WARC-Date")), fields[1]):
			t.Errorf("line %q: key or timestamp do not match %s", line, r.header.Get("WARC-Date"))
		}
	}
	if lines != indexed {
		t.Errorf("%d index lines, %d records to index", lines, indexed)
	}
	return profiles
}

// A recrawl that gets the same body with a 200 is an
// identical-payload-digest revisit of the first capture; a 304 a
// server-not-modified one.
func TestIdenticalPayloadRevisit(t *testing.T) {
	// The file's stored digests are compared with its bodies' under the
	// function the file names (record.MetaDigest), CRC-64 when it names none.
	for _, kind := range []record.DigestKind{0, record.DigestCRC64, record.DigestCRC32Pair} {
		name := "unnamed"
		if kind != 0 {
			name = kind.String()
		}
		t.Run(name, func(t *testing.T) { identicalPayloadRevisit(t, kind) })
	}
}

func identicalPayloadRevisit(t *testing.T, kind record.DigestKind) {
	path := filepath.Join(t.TempDir(), "crawl.db")
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := record.DigestCRC64.Sum
	if kind != 0 {
		if err := db.SetMeta(context.Background(), record.MetaDigest, kind.String()); err != nil {
			t.Fatal(err)
		}
		sum = kind.Sum
	}
	body := []byte("<html><title>same</title></html>")
	const u = "http://a.test/page"
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	page := func(at time.Time, status int, v fetch.Verdict, head string) record.PageRecord {
		req := "GET /page HTTP/1.1\r\nHost: a.test\r\nUser-Agent: lidi-test\r\n\r\n"
		p := record.PageRecord{URL: 1, Site: 1, Fetched: at, Status: status, Recrawl: v != fetch.VerdictNone, Verdict: v,
			Wire: zlibBytes(t, []byte(req+head)), IP: "127.0.0.1"}
		if status == 200 {
			p.Body, p.Digest, p.Length = zlibBytes(t, body), sum(body), int64(len(body))
		}
		return p
	}
	ok := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	for _, b := range []record.Batch{
		{Sites: []record.SiteRecord{{ID: 1, Key: "http://a.test", Host: "a.test"}},
			URLs:  []record.URLRecord{{ID: 1, Site: 1, URL: u, Discovered: t0, State: record.URLQueued}},
			Pages: []record.PageRecord{page(t0, 200, fetch.VerdictNone, ok)}},
		{Pages: []record.PageRecord{page(t0.Add(time.Hour), 200, fetch.VerdictSameDigest, ok)}},
		{Pages: []record.PageRecord{page(t0.Add(2*time.Hour), 304, fetch.VerdictNotModified, "HTTP/1.1 304 Not Modified\r\n\r\n")}},
	} {
		if err := db.Apply(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
	}
	// Exported while the crawl still holds the file, as lidi export --warc
	// does beside a running crawl.
	defer db.Close()
	got := export(t, path, warcexport.Options{})
	profiles := validate(t, got)
	if profiles[identicalPayload] != 1 || profiles[notModified] != 1 || got.Records["response"] != 1 || got.Missing.Total() != 0 {
		t.Errorf("profiles %v, records %v, missing %+v: want one response and a revisit of each profile", profiles, got.Records, got.Missing)
	}
}

func zlibBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Without the heads, each response is a metadata record standing in for
// it, and the summary counts them.
func TestExportWithoutHeaders(t *testing.T) {
	path := crawlChangingWeb(t, false)
	sum := export(t, path, warcexport.Options{})
	recs := readAll(t, sum.Files)
	if sum.Missing.Headers == 0 || sum.Records["response"] != 0 || sum.Records["request"] != 0 || sum.Missing.RobotsHeaders == 0 {
		t.Fatalf("records %v, missing %+v", sum.Records, sum.Missing)
	}
	standIns := 0
	for _, r := range recs {
		if r.wtype == "metadata" && strings.Contains(string(r.block), "missing: response headers not kept") {
			standIns++
		}
	}
	if int64(standIns) != sum.Missing.Headers {
		t.Errorf("%d stand-ins read, %d fetches without headers", standIns, sum.Missing.Headers)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
