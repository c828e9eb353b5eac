package sitemap

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// readXML reads a urlset or a sitemapindex token by token (the decoder
// checks that elements nest and close as they should). Only <loc> and
// <lastmod> children of the root's <url> or <sitemap> elements, in the
// root's namespace, are read: an extension's <image:loc> is not a page.
func readXML(in io.Reader, scope *scope, lim Limits, st *Stats, yield func(Entry) error) error {
	d := xml.NewDecoder(in)
	var (
		depth   int
		ns      string // the root's namespace
		inEntry bool
		field   string // "loc" or "lastmod" while in one, else ""
		loc     strings.Builder
		lastmod strings.Builder
		tooLong bool
	)
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				if st.Kind == KindUnknown {
					return ErrNotSitemap
				}
				return fmt.Errorf("%w: the file ends inside <%s>", ErrMalformed, rootName(st.Kind))
			}
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return fmt.Errorf("%w: line %d: %s", ErrMalformed, se.Line, se.Msg)
			}
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth > lim.MaxDepth {
				return ErrTooDeep
			}
			name := t.Name.Local
			space := t.Name.Space
			switch {
			case depth == 1:
				switch name {
				case "urlset":
					st.Kind = KindURLSet
				case "sitemapindex":
					st.Kind = KindIndex
				default:
					return fmt.Errorf("%w: <%s>", ErrNotSitemap, name)
				}
				ns = space
			case depth == 2 && space == ns && name == entryName(st.Kind):
				inEntry, tooLong = true, false
				loc.Reset()
				lastmod.Reset()
			case depth == 3 && inEntry && space == ns && (name == "loc" || name == "lastmod"):
				field = name
			}
		case xml.EndElement:
			switch {
			case depth == 3:
				field = ""
			case depth == 2 && inEntry:
				inEntry = false
				e := Entry{URL: strings.TrimSpace(loc.String())}
				if tooLong {
					e.URL = ""
				}
				if lm := strings.TrimSpace(lastmod.String()); lm != "" {
					if t, ok := ParseLastMod(lm); ok {
						e.LastMod = t
					} else {
						st.BadLastMod++
					}
				}
				if err := take(e, scope, lim, st, yield); err != nil {
					return err
				}
			case depth == 1:
				return nil // what follows the root is not read
			}
			depth--
		case xml.CharData:
			var b *strings.Builder
			switch field {
			case "loc":
				b = &loc
			case "lastmod":
				b = &lastmod
			default:
				continue
			}
			if b.Len()+len(t) > MaxURLLen*4 {
				tooLong = tooLong || field == "loc"
				continue
			}
			b.Write(t)
		}
	}
}

func entryName(k Kind) string {
	if k == KindIndex {
		return "sitemap"
	}
	return "url"
}

func rootName(k Kind) string {
	if k == KindIndex {
		return "sitemapindex"
	}
	return "urlset"
}

// lastModLayouts are the W3C datetime forms (https://www.w3.org/TR/NOTE-datetime)
// and, after them, the forms without a time zone that sitemaps write
// anyway (read as UTC).
var lastModLayouts = []string{
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04Z07:00",
	"2006-01-02",
	"2006-01",
	"2006",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

// ParseLastMod reads a <lastmod> value: a W3C datetime (a year, a month, a
// date, or a date and time with a time zone), or a date and time without a
// zone, read as UTC. It reports false for anything else.
func ParseLastMod(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 4 || len(s) > 40 {
		return time.Time{}, false
	}
	for _, layout := range lastModLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// scope is the cross-host rule for one file: the URL prefixes its entries
// may have.
type scope struct{ prefixes []prefix }

type prefix struct {
	scheme, host string
	port         int
	path         string // escaped, ending in '/'
}

func newScope(src Source) *scope {
	s := &scope{}
	if u, err := url.Parse(src.URL); err == nil && u.Host != "" {
		s.prefixes = append(s.prefixes, prefixOf(u, dirOf(u)))
	}
	for _, v := range src.Vouchers {
		if u, err := url.Parse(v); err == nil && u.Host != "" {
			s.prefixes = append(s.prefixes, prefixOf(u, dirOf(u)))
		}
	}
	return s
}

// dirOf is the escaped path of u up to its last '/' ("/" for none).
func dirOf(u *url.URL) string {
	dir := u.EscapedPath()
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		return dir[:i+1]
	}
	return "/"
}

func prefixOf(u *url.URL, dir string) prefix {
	return prefix{scheme: strings.ToLower(u.Scheme), host: strings.ToLower(u.Hostname()), port: portOf(u), path: dir}
}

func (s *scope) allows(u *url.URL) bool {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	for _, pr := range s.prefixes {
		if strings.EqualFold(u.Scheme, pr.scheme) && strings.EqualFold(u.Hostname(), pr.host) && portOf(u) == pr.port && strings.HasPrefix(p, pr.path) {
			return true
		}
	}
	return false
}

// portOf is the port a URL is fetched from.
func portOf(u *url.URL) int {
	if p, err := strconv.Atoi(u.Port()); err == nil {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return 443
	}
	return 80
}
