package fetch

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// BenchmarkSessionGet fetches simweb's pages gzip-coded (level 1, as
// simweb serves them) over loopback, a few pages a session as a crawl's
// visits fetch them, from a server that writes prepared responses (so
// that what it allocates is next to nothing). It reports the client's
// allocation per page: a crawl's collector pays for it.
func BenchmarkSessionGet(b *testing.B) {
	const pagesPerSession = 4
	var responses [][]byte
	for _, z := range simwebCoded(b, func(w io.Writer) io.WriteCloser { zw, _ := gzip.NewWriterLevel(w, 1); return zw }) {
		head := "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\nContent-Length: " + strconv.Itoa(len(z)) + "\r\n\r\n"
		responses = append(responses, append([]byte(head), z...))
	}
	ap := loopbackServer(b, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			// GET /N HTTP/1.1: the page's response, once the head has ended.
			i, _ := strconv.Atoi(strings.Fields(string(line))[1][1:])
			for len(line) > 2 {
				if line, err = br.ReadSlice('\n'); err != nil {
					return
				}
			}
			if _, err := c.Write(responses[i%len(responses)]); err != nil {
				return
			}
		}
	})
	f := New(Config{CheckType: true, KeepWire: true}) // as a crawl's robots fetch
	urls := make([]string, len(responses))
	for i := range urls {
		urls[i] = fmt.Sprintf("http://site.test:%d/%d", ap.Port(), i)
	}
	b.ReportAllocs()
	page := 0
	for b.Loop() {
		s := f.Open(ap.Addr(), int(ap.Port()))
		for range pagesPerSession {
			r, err := s.Get(context.Background(), urls[page%len(urls)])
			if err != nil || r.Status != http.StatusOK || r.Deflate == nil {
				b.Fatalf("%v %v", r, err)
			}
			page++
		}
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(page)/1000, "us_per_page")
}
