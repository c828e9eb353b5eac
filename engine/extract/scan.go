package extract

import (
	"bytes"

	"golang.org/x/net/html"
)

// Why a scanner of its own: html.Tokenizer reads a byte at a time through
// its buffer and allocates for every attribute of every tag (it lower-cases
// a copy of the key to drop repeated ones), which made it most of
// extraction's cost on pages that are mostly text. The scanner finds the
// same tokens in the document's bytes, with the tokenizer's rules (those
// of x/net/html's token.go, which follow the HTML Standard's tokenization
// states): the same types with the same raw bytes and text, one for one
// (TestScannerMatchesTokenizer, FuzzScanner). A tag whose attribute values
// need decoding is given to an html.Tokenizer on its own bytes.

// scanner reads the tokens of an HTML document as html.Tokenizer does.
// Its zero value is not usable; newScanner makes one. One goroutine uses
// a scanner at a time.
type scanner struct {
	b          []byte
	start, end int // the current token's raw bytes: b[start:end]
	tt         html.TokenType
	data       [2]int   // its text (TextToken, CommentToken, DoctypeToken): b[data[0]:data[1]]
	textKind   textKind // how its text is read
	rawTag     string   // the raw text element whose text comes next, or ""
	done       bool     // the document has ended (html.ErrorToken returned)

	own *html.Tokenizer // a tokenizer over the current tag alone, for its attributes
}

// textKind says how a token's text is read from its bytes: as the
// tokenizer's Text does for text in the data state, raw text (script,
// style...) and RCDATA (title, textarea), and comments.
type textKind uint8

const (
	textData textKind = iota
	textRaw
	textRCDATA
	textComment
)

func newScanner(b []byte) *scanner { return &scanner{b: b} }

// next reads the next token and returns its type; html.ErrorToken at the
// end of the document, where html.Tokenizer ends.
func (s *scanner) next() html.TokenType {
	s.own = nil
	s.start = s.end
	s.textKind = textData
	if s.done {
		return html.ErrorToken
	}
	b, p := s.b, s.end
	if p >= len(b) {
		return s.stop()
	}
	if tag := s.rawTag; tag != "" {
		s.rawTag = ""
		var end int
		switch tag {
		case "plaintext":
			end = len(b)
		case "script":
			end = scriptEnd(b, p)
		default:
			end = rawEnd(b, p, tag)
		}
		if end > p {
			s.textKind = textRaw
			if tag == "title" || tag == "textarea" {
				s.textKind = textRCDATA
			}
			return s.token(html.TextToken, end, p, end)
		}
	}
	// Text, up to a '<' that starts a tag, an end tag or a comment.
	i := p
	for {
		k := bytes.IndexByte(b[i:], '<')
		if k < 0 || i+k+1 >= len(b) {
			i = len(b)
			break
		}
		i += k
		if c := b[i+1]; isASCIILetter(c) || c == '/' || c == '!' || c == '?' {
			break
		}
		i++
	}
	if i > p {
		return s.token(html.TextToken, i, p, i)
	}
	switch c := b[p+1]; {
	case isASCIILetter(c):
		end, nameEnd, self, ok := scanTag(b, p+1)
		if !ok {
			return s.stop()
		}
		if tag := rawTextElement(b[p+1 : nameEnd]); tag != "" {
			s.rawTag = tag
		}
		if self {
			return s.token(html.SelfClosingTagToken, end, end, end)
		}
		return s.token(html.StartTagToken, end, end, end)
	case c == '/':
		if p+2 >= len(b) {
			// "</" at the end is text.
			return s.token(html.TextToken, len(b), p, len(b))
		}
		switch c := b[p+2]; {
		case c == '>':
			// "</>" is an empty comment.
			s.textKind = textComment
			return s.token(html.CommentToken, p+3, p+3, p+3)
		case isASCIILetter(c):
			end, _, _, ok := scanTag(b, p+2)
			if !ok {
				return s.stop()
			}
			return s.token(html.EndTagToken, end, end, end)
		}
		s.textKind = textComment
		end, dataEnd := closeAngle(b, p+2)
		return s.token(html.CommentToken, end, p+2, dataEnd)
	case c == '?':
		s.textKind = textComment
		end, dataEnd := closeAngle(b, p+1)
		return s.token(html.CommentToken, end, p+1, dataEnd)
	}
	// "<!": a comment, a doctype or a bogus comment.
	s.textKind = textComment
	tt, end, ds, de := markupDeclaration(b, p+2)
	if tt == html.DoctypeToken {
		s.textKind = textData
	}
	return s.token(tt, end, ds, de)
}

func (s *scanner) token(tt html.TokenType, end, dataStart, dataEnd int) html.TokenType {
	s.tt, s.end, s.data = tt, end, [2]int{dataStart, dataEnd}
	return tt
}

// stop ends the document, as the tokenizer does at its end and in a tag
// that does not end.
func (s *scanner) stop() html.TokenType {
	s.done = true
	s.end = len(s.b)
	s.tt = html.ErrorToken
	return s.tt
}

// raw returns the current token's bytes. Unlike html.Tokenizer.Raw, the
// slice stays valid: it is the document's.
func (s *scanner) raw() []byte { return s.b[s.start:s.end] }

// text returns the current token's text as html.Tokenizer.Text does: with
// newlines normalised, NUL replaced (in raw text and comments) and
// character references decoded (except in raw text). It is a copy.
func (s *scanner) text() []byte {
	switch s.tt {
	case html.TextToken, html.CommentToken, html.DoctypeToken:
	default:
		return nil
	}
	t := s.b[s.data[0]:s.data[1]]
	if len(t) == 0 {
		return nil
	}
	t = convertNewlines(bytes.Clone(t))
	if s.textKind != textData && bytes.IndexByte(t, 0) >= 0 {
		t = bytes.ReplaceAll(t, []byte{0}, []byte("\ufffd"))
	}
	if s.textKind != textRaw && bytes.IndexByte(t, '&') >= 0 {
		t = []byte(html.UnescapeString(string(t)))
	}
	return t
}

// convertNewlines turns "\r\n" and a lone "\r" into "\n", in place.
func convertNewlines(t []byte) []byte {
	if bytes.IndexByte(t, '\r') < 0 {
		return t
	}
	w := 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c == '\r' {
			c = '\n'
			if i+1 < len(t) && t[i+1] == '\n' {
				i++
			}
		}
		t[w] = c
		w++
	}
	return t[:w]
}

// nextIsNotRawText is html.Tokenizer.NextIsNotRawText: the text after the
// current start tag is read as markup.
func (s *scanner) nextIsNotRawText() { s.rawTag = "" }

// tokenizer returns an html.Tokenizer on the current tag alone, for the
// attributes TagAttr decodes (a tag reads the same alone as in the
// document: the tokenizer's rules for it look no further back).
func (s *scanner) tokenizer() *html.Tokenizer {
	if s.own == nil {
		s.own = html.NewTokenizer(bytes.NewReader(s.raw()))
		s.own.Next()
	}
	return s.own
}

// rawEnd returns where the text of the raw text or RCDATA element tag
// (lower case) that starts at b[p] ends: at its end tag ("</tag" and a
// white space, '/' or '>', in any case), or at the end of the document.
func rawEnd(b []byte, p int, tag string) int {
	for i := p; ; i++ {
		k := bytes.IndexByte(b[i:], '<')
		if k < 0 {
			return len(b)
		}
		i += k
		if endTagAt(b, i, tag) {
			return i
		}
	}
}

// endTagAt reports whether b[i:] starts with "</tag" (tag in lower case,
// matched in any case) followed by white space, '/' or '>'.
func endTagAt(b []byte, i int, tag string) bool {
	j := i + 2 + len(tag)
	if j >= len(b) || b[i] != '<' || b[i+1] != '/' {
		return false
	}
	if !equalLower(b[i+2:j], tag) {
		return false
	}
	switch b[j] {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		return true
	}
	return false
}

// scriptEnd returns where the text of a script that starts at b[p] ends,
// following the HTML Standard's script data states: its end tag ends it,
// except inside an escaped "<!--" section, after a "<script" that
// starts a double-escaped section.
func scriptEnd(b []byte, p int) int {
	const (
		data = iota
		escaped
		escapedDash
		escapedDashDash
		double
		doubleDash
		doubleDashDash
	)
	n := len(b)
	state := data
	for i := p; i < n; {
		c := b[i]
		i++
		switch state {
		case data:
			if c != '<' {
				k := bytes.IndexByte(b[i:], '<')
				if k < 0 {
					return n
				}
				i += k
				continue
			}
			if i >= n {
				return n
			}
			switch b[i] {
			case '/':
				if endTagAt(b, i-1, "script") {
					return i - 1
				}
				i++
			case '!':
				if i+2 < n && b[i+1] == '-' && b[i+2] == '-' {
					i += 3
					state = escapedDashDash
				} else {
					i++
				}
			}
		case escaped, escapedDash, escapedDashDash:
			switch c {
			case '-':
				if state == escaped {
					state = escapedDash
				} else {
					state = escapedDashDash
				}
				continue
			case '>':
				if state == escapedDashDash {
					state = data
					continue
				}
			case '<':
				state = escaped
				if i >= n {
					return n
				}
				switch d := b[i]; {
				case d == '/':
					if endTagAt(b, i-1, "script") {
						return i - 1
					}
					i++
				case isASCIILetter(d):
					if scriptTagAt(b, i) {
						i += len("script") + 1
						state = double
					}
				default:
					state = data
				}
				continue
			}
			state = escaped
		default: // double-escaped
			switch c {
			case '-':
				if state == double {
					state = doubleDash
				} else {
					state = doubleDashDash
				}
				continue
			case '>':
				if state == doubleDashDash {
					state = data
					continue
				}
			case '<':
				state = double
				if i < n && b[i] == '/' {
					if endTagAt(b, i-1, "script") {
						i += len("/script") + 1
						state = escaped
					} else {
						i++
					}
				}
				continue
			}
			state = double
		}
	}
	return n
}

// scriptTagAt reports whether b[i:] starts with "script" (in any case)
// followed by white space, '/' or '>'.
func scriptTagAt(b []byte, i int) bool {
	j := i + len("script")
	if j >= len(b) || !equalLower(b[i:j], "script") {
		return false
	}
	switch b[j] {
	case ' ', '\n', '\r', '\t', '\f', '/', '>':
		return true
	}
	return false
}

// closeAngle reads a bogus comment from b[i] to the next '>': the index
// past it and where the comment's text ends (the document's end when no
// '>' follows).
func closeAngle(b []byte, i int) (end, dataEnd int) {
	k := bytes.IndexByte(b[i:], '>')
	if k < 0 {
		return len(b), len(b)
	}
	return i + k + 1, i + k
}

// markupDeclaration reads what follows "<!" at b[i]: a comment, a doctype
// or a bogus comment. It returns the token's type, the index past it and
// its text's span.
func markupDeclaration(b []byte, i int) (tt html.TokenType, end, ds, de int) {
	n := len(b)
	if i+2 > n {
		// A bogus comment that the document ends.
		de = n
		if i+1 == n && b[i] == '>' {
			de--
		}
		return html.CommentToken, n, i, de
	}
	if b[i] == '-' && b[i+1] == '-' {
		end, ds, de = comment(b, i+2)
		return html.CommentToken, end, ds, de
	}
	const doctype = "doctype"
	if i+len(doctype) <= n && equalLower(b[i:i+len(doctype)], doctype) {
		j := i + len(doctype)
		for j < n && isSpace(b[j]) {
			j++
		}
		if j >= n {
			return html.DoctypeToken, n, n, n
		}
		end, de = closeAngle(b, j)
		return html.DoctypeToken, end, j, de
	}
	end, de = closeAngle(b, i)
	return html.CommentToken, end, i, de
}

// comment reads a comment whose text starts at b[i] (after "<!--"): the
// index past it and its text's span. It ends at "-->", "--!>", or a '>'
// right after the opening ("<!-->", "<!--->"); or at the end of the
// document, without the dashes and "--!" just before it.
func comment(b []byte, i int) (end, ds, de int) {
	ds = i
	dashes, beginning := 0, true
	n := len(b)
	for i < n {
		c := b[i]
		i++
		switch c {
		case '-':
			dashes++
			continue
		case '>':
			if dashes >= 2 || beginning {
				return i, ds, max(ds, i-len("-->"))
			}
		case '!':
			if dashes >= 2 {
				if i >= n {
					break
				}
				c = b[i]
				i++
				if c == '>' {
					return i, ds, max(ds, i-len("--!>"))
				}
				if c == '-' {
					dashes, beginning = 1, false
					continue
				}
			}
		}
		dashes, beginning = 0, false
	}
	// The document ends in the comment.
	de = n
	switch t := b[ds:n]; {
	case bytes.HasSuffix(t, []byte("--!")):
		de = n - 3
	case bytes.HasSuffix(t, []byte("--")):
		de = n - 2
	case bytes.HasSuffix(t, []byte("-")):
		de = n - 1
	}
	return n, ds, max(ds, de)
}

// rawTextElements are the elements whose start tag makes the tokenizer
// read what follows as raw text (or RCDATA), up to their end tag.
var rawTextElements = [...]string{"iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp"}

// rawTextElement returns the raw text element a start tag named name (as
// written) opens, in lower case, or "".
func rawTextElement(name []byte) string {
	if len(name) < 3 || len(name) > 9 {
		return ""
	}
	for _, e := range rawTextElements {
		if e[0] == name[0]|0x20 && equalLower(name, e) {
			return e
		}
	}
	return ""
}

func isASCIILetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// scanTag reads a start or end tag as the tokenizer's readTag does, from
// b[i], the first byte of its name. It returns the index past the tag's
// '>', the end of its name, and whether the tokenizer calls it
// self-closing (for a start tag); ok is false when the document ends
// inside the tag (the tokenizer then ends with an error).
func scanTag(b []byte, i int) (end, nameEnd int, self, ok bool) {
	n := len(b)
	skip := func() {
		for i < n && isSpace(b[i]) {
			i++
		}
	}
	// Name (readTagName): up to white space (consumed), '/' or '>'.
	for i++; i < n; i++ {
		c := b[i]
		if c == '/' || c == '>' || isSpace(c) {
			break
		}
	}
	nameEnd = i
	if i < n && isSpace(b[i]) {
		i++
	}
	skip()
	// The attributes; for the self-closing test, where each key and
	// value ends.
	type span struct{ ks, ke, ve int }
	var store [16]span
	attrs := store[:0]
	for {
		if i >= n {
			return 0, 0, false, false
		}
		if b[i] == '>' {
			i++
			break
		}
		// Key (readTagAttrKey): up to white space, '/', '>' or an '='
		// that is not its first byte, none of them consumed.
		ks := i
		for ; i < n; i++ {
			c := b[i]
			if c == '=' && i == ks {
				continue
			}
			if c == '=' || c == '/' || c == '>' || isSpace(c) {
				break
			}
		}
		ke := i
		// Value (readTagAttrVal).
		ve := i
		skip()
		if i >= n {
			return 0, 0, false, false
		}
		switch b[i] {
		case '/':
			i++
		case '=':
			i++
			skip()
			if i >= n {
				return 0, 0, false, false
			}
			switch q := b[i]; q {
			case '>':
			case '\'', '"':
				k := bytes.IndexByte(b[i+1:], q)
				if k < 0 {
					return 0, 0, false, false
				}
				ve = i + 1 + k
				i = ve + 1
			default:
				for i++; i < n && b[i] != '>' && !isSpace(b[i]); i++ {
				}
				if i >= n {
					return 0, 0, false, false
				}
				ve = i
				if b[i] != '>' {
					i++
				}
			}
		}
		attrs = append(attrs, span{ks, ke, ve})
		skip()
	}
	end = i
	if b[end-2] == '/' {
		// The tokenizer keeps an attribute unless its key is empty or
		// repeats an earlier one (in any case); the '/' makes the tag
		// self-closing unless it is the last kept value's last byte
		// ("<p a=/>").
		last := -1
		for k, a := range attrs {
			if a.ke == a.ks {
				continue
			}
			seen := false
			for _, e := range attrs[:k] {
				if equalFoldASCII(b[e.ks:e.ke], b[a.ks:a.ke]) {
					seen = true
					break
				}
			}
			if !seen {
				last = a.ve
			}
		}
		self = last < 0 || end-2 != last-1
	}
	return end, nameEnd, self, true
}

// equalFoldASCII reports whether a and b are equal when lower-cased in
// ASCII, as the tokenizer compares attribute keys.
func equalFoldASCII(a, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
