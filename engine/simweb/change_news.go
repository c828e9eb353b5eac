package simweb

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// News sites (ChangeOptions.News) add pages: article k of a news site is
// published at the k-th change of its home page, which from then on links
// to it among the newest NewsList articles. An article never changes. So
// the ground truth of what was added when is the home page's change
// stream, and a crawler finds an article only by recrawling the home page
// while the article is listed there.

// newsPrefix is the directory of a news site's articles.
const newsPrefix = "/news/"

// News reports whether channel ch is a news site.
func (c *Changes) News(ch int) bool { return c.opt.Enabled && c.channels[ch].news }

// newsFront reports whether page p is a news site's home page.
func (c *Changes) newsFront(p int) bool {
	if !c.opt.Enabled || c.opt.News == 0 {
		return false
	}
	ch := c.ChannelOf(p)
	return c.channels[ch].news && p == int(c.start[ch])
}

// Articles returns the publication times of news site ch's articles up to
// virtual time until: article k (from 1) at index k−1. Nil for a channel
// that is not a news site.
func (c *Changes) Articles(ch int, until time.Duration) []time.Duration {
	if !c.News(ch) {
		return nil
	}
	return c.Stream(int(c.start[ch])).Until(until)
}

// Published returns how many articles news site ch has published by
// virtual time at (0 for any other channel).
func (c *Changes) Published(ch int, at time.Duration) int {
	if !c.News(ch) {
		return 0
	}
	return c.Version(int(c.start[ch]), at)
}

// Article returns the news site and the article number of rawURL, and
// false when it names no article of a news site (published or not).
func (w *Web) Article(rawURL string) (site, k int, ok bool) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, 0, false
	}
	id, found := w.hosts[canonicalHost(u.Host)]
	if !found || !w.changes.News(int(id)) {
		return 0, 0, false
	}
	k, ok = parseArticle(u.EscapedPath())
	return int(id), k, ok
}

// parseArticle reads the number of the article at path, /news/<k>.html.
func parseArticle(path string) (int, bool) {
	rest, ok := strings.CutPrefix(path, newsPrefix)
	if !ok {
		return 0, false
	}
	num, ok := strings.CutSuffix(rest, ".html")
	if !ok || num == "" || num[0] == '0' {
		return 0, false
	}
	k, err := strconv.Atoi(num)
	return k, err == nil && k > 0
}

// appendArticleHref appends the path of article k.
func appendArticleHref(dst []byte, k int) []byte {
	dst = append(dst, newsPrefix...)
	dst = strconv.AppendInt(dst, int64(k), 10)
	return append(dst, ".html"...)
}

// appendNewsList appends a news site's list of its newest articles to its
// home page at version (articles published) v; nothing for other pages.
func (rd *renderer) appendNewsList(dst []byte) []byte {
	w := rd.w
	if rd.page != rd.first || !w.changes.News(rd.site) || rd.at.version == 0 {
		return dst
	}
	dst = append(dst, "<h2>Latest news</h2>\n<ul class=\"news\">\n"...)
	for k := rd.at.version; k > max(0, rd.at.version-NewsList); k-- {
		dst = append(dst, "<li><a href=\""...)
		dst = appendArticleHref(dst, k)
		dst = append(dst, "\">"...)
		dst = w.appendArticleTitle(dst, rd.site, k)
		dst = append(dst, "</a></li>\n"...)
	}
	return append(dst, "</ul>\n"...)
}

// appendArticleTitle appends the title of news site s's article k.
func (w *Web) appendArticleTitle(dst []byte, s, k int) []byte {
	r := newRNG(w.opt.Seed, tagChangeNews, uint64(s)<<32|uint64(uint32(k)))
	for i := range 4 + r.intn(5) {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, w.vocab.word(w.vocab.contentWord(&r))...)
	}
	return dst
}

// serveArticle answers a request for path on news site s: the article if
// it is published at the server's virtual time now, else 404; ok is false
// when path is no article of a news site, for the caller to answer.
func (s *Server) serveArticle(rw http.ResponseWriter, r *http.Request, site int, path string, bp *[]byte) (status int, size int64, ok bool) {
	w := s.web
	c := w.changes
	if !c.News(site) {
		return 0, 0, false
	}
	k, ok := parseArticle(path)
	if !ok {
		return 0, 0, false
	}
	d := s.clock.Offset()
	pub := c.Articles(site, d)
	if k > len(pub) {
		status, size := s.notFound(rw, r, bp, w.sites[site].bandwidth)
		return status, size, true
	}
	hdr := rw.Header()
	hdr["Date"] = []string{s.clock.Time(d).UTC().Format(http.TimeFormat)}
	val := c.Validators(site)
	var etag string
	if val.ETag() {
		etag = c.ETag(-1-site, k) // apart from every page's tags
		hdr["Etag"] = []string{etag}
	}
	var modified time.Time
	if val.LastModified() {
		modified = s.clock.Time(pub[k-1]).UTC().Truncate(time.Second)
		hdr["Last-Modified"] = []string{modified.Format(http.TimeFormat)}
	}
	if notModified(r, etag, modified) {
		rw.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified, 0, true
	}
	body := w.appendArticle((*bp)[:0], site, k)
	*bp = body
	hdr["Content-Type"] = htmlType
	return http.StatusOK, s.write(rw, r, http.StatusOK, body, w.sites[site].bandwidth), true
}

// appendArticle appends the HTML of news site s's article k: its title, a
// few paragraphs and a link to the home page.
func (w *Web) appendArticle(dst []byte, s, k int) []byte {
	dst = append(dst, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>"...)
	dst = w.appendArticleTitle(dst, s, k)
	dst = append(dst, " - "...)
	dst = append(dst, w.sites[s].name...)
	dst = append(dst, "</title>\n</head>\n<body>\n<div id=\"header\"><a href=\"/\">"...)
	dst = append(dst, w.sites[s].name...)
	dst = append(dst, "</a></div>\n<h1>"...)
	dst = w.appendArticleTitle(dst, s, k)
	dst = append(dst, "</h1>\n"...)
	r := newRNG(w.opt.Seed, tagChangeNews, uint64(s)<<32|uint64(uint32(k))|1<<63)
	for range 3 + r.intn(4) {
		dst = append(dst, "<p>"...)
		for i := range 40 + r.intn(80) {
			if i > 0 {
				dst = append(dst, ' ')
			}
			dst = append(dst, w.vocab.word(w.vocab.draw(&r))...)
		}
		dst = append(dst, ".</p>\n"...)
	}
	return w.appendFooter(dst, s)
}
