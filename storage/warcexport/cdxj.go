package warcexport

import (
	"bytes"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// wwwPrefix is the "www." (or "www2.") that SURT keys leave out, as pywb
// and warcio do.
var wwwPrefix = regexp.MustCompile(`^(https?://)www\d*\.`)

// SURT returns the Sort-friendly URI Reordering Transform of u, the key of
// pywb's CDXJ index: lower case, the host's labels reversed and joined by
// commas, then the port, ")", the path and the query with its parameters
// sorted ("http://www.Example.com:8080/a?b=1&a=2" is
// "com,example:8080)/a?a=2&b=1"). A URL that is not http(s) is its own key.
func SURT(u string) string {
	if !strings.HasPrefix(u, "http:") && !strings.HasPrefix(u, "https:") {
		return u
	}
	lower := strings.ToLower(wwwPrefix.ReplaceAllString(u, "$1"))
	p, err := url.Parse(lower)
	if err != nil {
		return u
	}
	labels := strings.Split(p.Hostname(), ".")
	slices.Reverse(labels)
	key := strings.Join(labels, ",")
	if port := p.Port(); port != "" {
		key += ":" + port
	}
	path := p.EscapedPath()
	if path == "" {
		path = "/"
	}
	key += ")" + path
	if p.RawQuery != "" {
		params := strings.Split(p.RawQuery, "&")
		slices.Sort(params)
		key += "?" + strings.Join(params, "&")
	}
	return key
}

// cdxEntry is one line of the CDXJ index, its JSON fields in pywb's order.
type cdxEntry struct {
	key       string
	timestamp string
	URL       string `json:"url"`
	Mime      string `json:"mime,omitempty"`
	Status    string `json:"status,omitempty"`
	Digest    string `json:"digest,omitempty"`
	Length    string `json:"length"`
	Offset    string `json:"offset"`
	Filename  string `json:"filename"`
}

// timestamp14 is a CDX timestamp: the capture's UTC time to the second.
func timestamp14(t time.Time) string { return t.UTC().Format("20060102150405") }

// line renders e as a CDXJ line.
func (e *cdxEntry) line() string {
	var b bytes.Buffer
	b.WriteString(e.key)
	b.WriteByte(' ')
	b.WriteString(e.timestamp)
	b.WriteByte(' ')
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // URLs as they are, as pywb writes them
	enc.Encode(e)            // ends the line
	return b.String()
}

// cdxMime is the mime field of a record: the response's declared type
// without parameters, "warc/revisit" for a revisit.
func cdxMime(warcType, contentType string) string {
	if warcType == "revisit" {
		return "warc/revisit"
	}
	mime, _, _ := strings.Cut(contentType, ";")
	return strings.TrimSpace(mime)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
