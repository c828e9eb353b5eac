package extract

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/charset"
)

// decode returns body as UTF-8 and the name of the encoding it was in. The
// encoding comes from, in order: a byte order mark, the charset parameter
// of contentType, a <meta> in the first 1024 bytes; without any, UTF-8 if
// body is valid UTF-8, else windows-1252 (the HTML Standard's default for
// unlabelled Western pages). UTF-8 bodies, and pure-ASCII bodies in an
// ASCII-compatible encoding, are returned as they are, without a copy.
func decode(body []byte, contentType string) ([]byte, string) {
	switch {
	case bytes.HasPrefix(body, []byte("\xEF\xBB\xBF")):
		return body[3:], "utf-8"
	case bytes.HasPrefix(body, []byte("\xFE\xFF")):
		return transcode(body[2:], "utf-16be")
	case bytes.HasPrefix(body, []byte("\xFF\xFE")):
		return transcode(body[2:], "utf-16le")
	}
	label := headerCharset(contentType)
	if strings.EqualFold(label, "utf-8") {
		// What transcode returns for it, without charset.Lookup's two
		// allocations (its label lower-cased), twice: nearly every page
		// is labelled so.
		return body, "utf-8"
	}
	if label == "" || !known(label) {
		label = metaCharset(body)
		// A meta cannot truthfully declare UTF-16: the bytes that declare
		// it would not be readable as ASCII.
		if l := strings.ToLower(label); l == "utf-16" || l == "utf-16le" || l == "utf-16be" {
			label = "utf-8"
		} else if l == "x-user-defined" {
			label = "windows-1252"
		}
	}
	if label == "" || !known(label) {
		if utf8.Valid(body) {
			return body, "utf-8"
		}
		label = "windows-1252"
	}
	return transcode(body, label)
}

// known reports whether label names an encoding of the Encoding Standard.
func known(label string) bool {
	e, _ := charset.Lookup(label)
	return e != nil
}

// transcode decodes body from the encoding named label.
func transcode(body []byte, label string) ([]byte, string) {
	enc, name := charset.Lookup(label)
	if enc == nil {
		return body, "utf-8"
	}
	if name == "utf-8" {
		return body, name
	}
	if asciiCompatible(name) && isASCII(body) {
		return body, name
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		// The decoders replace bad input rather than fail; should one
		// fail, the raw bytes are still the best guess.
		return body, name
	}
	return out, name
}

// asciiCompatible reports whether the encoding maps bytes below 0x80 to
// ASCII, so that an all-ASCII body needs no decoding.
func asciiCompatible(name string) bool {
	switch name {
	case "utf-16be", "utf-16le", "iso-2022-jp", "replacement":
		return false
	}
	return true
}

func isASCII(b []byte) bool {
	for len(b) >= 8 {
		v := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if v&0x8080808080808080 != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// headerCharset returns the charset parameter of a Content-Type value, or
// "". It does not allocate (mime.ParseMediaType builds a map).
func headerCharset(ct string) string {
	for {
		i := strings.IndexByte(ct, ';')
		if i < 0 {
			return ""
		}
		ct = ct[i+1:]
		p := strings.TrimLeft(ct, " \t")
		if len(p) < 8 || !strings.EqualFold(p[:7], "charset") {
			continue
		}
		p = strings.TrimLeft(p[7:], " \t")
		if p == "" || p[0] != '=' {
			continue
		}
		p = strings.TrimLeft(p[1:], " \t")
		if p != "" && p[0] == '"' {
			if j := strings.IndexByte(p[1:], '"'); j >= 0 {
				return p[1 : 1+j]
			}
			return p[1:]
		}
		if j := strings.IndexAny(p, "; \t"); j >= 0 {
			p = p[:j]
		}
		return p
	}
}

// metaCharset looks for <meta charset> or <meta http-equiv="content-type"
// content="...; charset=..."> in the first 1024 bytes, as the HTML
// Standard's prescan does, and returns the label or "".
func metaCharset(body []byte) string {
	if len(body) > 1024 {
		body = body[:1024]
	}
	if !containsFold(body, "charset") {
		return "" // the common case costs one scan, no tokenizer
	}
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return ""
		case html.StartTagToken, html.SelfClosingTagToken:
			var buf [8]byte
			if string(tagName(z.Raw(), &buf)) != "meta" {
				continue
			}
			var cs, content string
			var isContentType bool
			for {
				key, val, more := z.TagAttr()
				if key == nil {
					break
				}
				switch string(key) {
				case "charset":
					cs = strings.TrimSpace(string(val))
				case "content":
					content = string(val)
				case "http-equiv":
					isContentType = strings.EqualFold(strings.TrimSpace(string(val)), "content-type")
				}
				if !more {
					break
				}
			}
			if cs != "" {
				return cs
			}
			if isContentType {
				if l := headerCharset(";" + contentAfterType(content)); l != "" {
					return l
				}
			}
		}
	}
}

// contentAfterType returns the part of a content attribute after the media
// type, so that headerCharset can read its parameters.
func contentAfterType(content string) string {
	if i := strings.IndexByte(content, ';'); i >= 0 {
		return content[i+1:]
	}
	return content
}

func containsFold(b []byte, word string) bool {
	for i := 0; i+len(word) <= len(b); i++ {
		c := b[i] | 0x20
		if c != word[0] {
			continue
		}
		j := 1
		for j < len(word) && b[i+j]|0x20 == word[j] {
			j++
		}
		if j == len(word) {
			return true
		}
	}
	return false
}
