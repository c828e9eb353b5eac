package warcexport

import (
	"fmt"
	"testing"
)

func ExampleSURT() {
	fmt.Println(SURT("http://www.Example.com:8080/a/b?z=1&a=2"))
	fmt.Println(SURT("https://blog.example.org/"))
	// Output:
	// com,example:8080)/a/b?a=2&z=1
	// org,example,blog)/
}

func TestPayloadHead(t *testing.T) {
	gz := "GET / HTTP/1.1\r\nHost: a\r\nAccept-Encoding: gzip\r\n\r\n"
	plain := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	for _, tc := range []struct {
		name, req, head, want string
	}{
		{"identity kept as received", plain, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"},
		{"chunked", plain, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX: y\r\n\r\n",
			"HTTP/1.1 200 OK\r\nX-Lidi-Original-Transfer-Encoding: chunked\r\nX: y\r\nContent-Length: 5\r\n\r\n"},
		{"gzip the client decoded", gz, "HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\nContent-Length: 40\r\n\r\n",
			"HTTP/1.1 200 OK\r\nX-Lidi-Original-content-encoding: gzip\r\nX-Lidi-Original-Content-Length: 40\r\nContent-Length: 5\r\n\r\n"},
		{"gzip nobody asked for stays", plain, "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\n",
			"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 5\r\n\r\n"},
	} {
		if got := string(payloadHead([]byte(tc.head), []byte(tc.req), 5)); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
