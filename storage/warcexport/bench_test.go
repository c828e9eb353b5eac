package warcexport_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/storage"
	"lidi/storage/warcexport"
)

// BenchmarkExport exports a crawl file of 2,000 pages of 8 KiB of text with their
// heads, a third of them recrawled (304s), and reports records and
// megabytes written per second.
func BenchmarkExport(b *testing.B) {
	path := filepath.Join(b.TempDir(), "crawl.db")
	db, err := storage.Open(path, storage.Options{})
	if err != nil {
		b.Fatal(err)
	}
	const pages = 2000
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	batch := record.Batch{Sites: []record.SiteRecord{{ID: 1, Key: "http://a.test", Host: "a.test"}}}
	var recrawl record.Batch
	for i := range pages {
		u := fmt.Sprintf("http://a.test/p%d", i)
		body := make([]byte, 8<<10) // letters and spaces: about as compressible as a page's text
		x := uint32(i + 1)
		for j := range body {
			x = x*1664525 + 1013904223
			body[j] = " etaoinshrdlucmfwypvbgkjqxz"[x>>24%27]
		}
		req := "GET /p" + strconv.Itoa(i) + " HTTP/1.1\r\nHost: a.test\r\nUser-Agent: lidi-bench\r\nAccept-Encoding: gzip\r\n\r\n"
		head := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 8192\r\nServer: bench\r\n\r\n"
		batch.URLs = append(batch.URLs, record.URLRecord{ID: uint64(i + 1), Site: 1, URL: u, Discovered: t0, State: record.URLQueued})
		batch.Pages = append(batch.Pages, record.PageRecord{URL: uint64(i + 1), Site: 1, Fetched: t0, Status: 200, Length: int64(len(body)),
			Digest: record.DigestCRC64.Sum(body), Body: zlibBytes(b, body), Wire: zlibBytes(b, []byte(req+head)), IP: "127.0.0.1"})
		if i%3 == 0 {
			recrawl.Pages = append(recrawl.Pages, record.PageRecord{URL: uint64(i + 1), Site: 1, Fetched: t0.Add(time.Hour), Status: 304, Recrawl: true,
				Wire: zlibBytes(b, []byte(req+"HTTP/1.1 304 Not Modified\r\n\r\n")), IP: "127.0.0.1"})
		}
	}
	for _, bt := range []*record.Batch{&batch, &recrawl} {
		if err := db.Apply(context.Background(), bt); err != nil {
			b.Fatal(err)
		}
	}
	db.Close()
	var records, bytes int64
	b.ResetTimer()
	for range b.N {
		src, err := storage.OpenCaptures(context.Background(), path)
		if err != nil {
			b.Fatal(err)
		}
		sum, err := warcexport.Export(context.Background(), src, warcexport.Options{Dir: b.TempDir()})
		src.Close()
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range sum.Records {
			records += n
		}
		bytes += sum.Bytes
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(records)/secs, "records/s")
	b.ReportMetric(float64(bytes)/1e6/secs, "MB/s")
}
