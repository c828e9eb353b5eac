package visit

import (
	"bytes"
	"context"
	"errors"
	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/robots"
	"lidi/engine/sitemap"
	"net/netip"
	"net/url"
	"strings"
)

// fetchRobots fetches the site's robots.txt, following up to
// robots.MaxRedirects redirects (RFC 9309 2.3.1.2) on any scheme and to any
// host whose address the lease carries (Lease.RobotsAddrs: a robot never
// resolves a name); pace runs before each redirect's request. When it is
// unreachable, the kind of error says why. It returns nil when pace
// stopped the chain.
func (r *Robot) fetchRobots(ctx context.Context, sess *fetch.Session, l *Lease, pace func(context.Context) error) (*RobotsFile, FailureKind) {
	rf := &RobotsFile{Fetched: r.clock.Now()}
	c, err := sess.GetFollow(ctx, l.Key+"/robots.txt", fetch.Follow{
		Max:   robots.MaxRedirects,
		Limit: robots.MaxBodySize + 1, // one byte more shows the cut
		Addr: func(host string) (netip.Addr, bool) {
			a, ok := l.RobotsAddrs[host]
			return a, ok
		},
		Pace: pace,
	})
	if errors.Is(err, errHalted) {
		return nil, FailureNone
	}
	rf.URL, rf.End = c.Final(), c.End
	if n := len(c.Hops); n > 1 {
		rf.Redirects = c.Hops[:n-1]
	}
	switch {
	case c.End == fetch.ChainUnresolved:
		// Disallow all until the loop has resolved the host the chain
		// leads to; the next visit asks again.
		rf.Status, rf.Unresolved = -1, c.Host
		return rf, FailureRobotsHost
	case err != nil || c.Response == nil:
		rf.Status = -1
		kind := FetchFailure(fetch.KindOther)
		if fe, ok := err.(*fetch.Error); ok {
			kind = FetchFailure(fe.Kind)
		}
		return rf, kind
	}
	// A chain given up (too long, a loop, no fetchable target) ends on a
	// 3xx, which robots.FromResponse reads as "unavailable".
	rf.Status, rf.Body = c.Response.Status, bytes.Clone(c.Response.Body) // the session reuses its buffer
	rf.Wire, rf.IP = r.wire(c.Response.Wire)
	return rf, FailureNone
}

// namedSitemaps returns the sitemaps the site's robots.txt names,
// normalised, when the crawl reads this site's sitemaps (nil otherwise).
func (r *Robot) namedSitemaps(l *Lease, rules *robots.Rules) map[string]bool {
	switch {
	case r.cfg.Sitemaps == SitemapsOff, r.cfg.Sitemaps == SitemapsSeeds && !r.seedHosts[strings.ToLower(l.Host)]:
		return nil
	}
	lines := rules.Sitemaps()
	if len(lines) == 0 {
		return nil
	}
	base := l.Key + "/robots.txt"
	if l.Robots != nil && l.Robots.URL != "" {
		base = l.Robots.URL // relative lines are relative to where the file was read
	}
	b, err := url.Parse(base)
	if err != nil {
		return nil
	}
	named := make(map[string]bool, len(lines))
	for _, line := range lines {
		u, err := b.Parse(line)
		if err != nil {
			continue
		}
		if n, err := r.cfg.Normalizer.Normalize(u.String()); err == nil {
			named[n] = true
		}
	}
	return named
}

// readSitemap reads body as a sitemap, reporting its entries as links of
// the page, and reports whether it is one. A sitemap on a site whose
// robots.txt names sitemaps (vouched) may list any URL of the site, as
// sitemaps.org lets a sitemap robots.txt names do: the sitemaps of an
// index that robots.txt names are reached as links, and a robot does not
// know the index that led to one, so every sitemap of such a site is
// taken as the owner's. Elsewhere a sitemap lists only URLs under its own
// directory. A text file is read as a sitemap only when robots.txt names
// it.
func (r *Robot) readSitemap(pr *PageResult, q record.QueuedURL, body []byte, site string, vouched, named bool) bool {
	src := sitemap.Source{URL: q.URL}
	if vouched {
		src.Vouchers = []string{site}
	}
	read := &SitemapRead{}
	var links []FoundLink
	st, err := sitemap.Read(bytes.NewReader(body), src, sitemap.Limits{}, func(e sitemap.Entry) error {
		n, err := r.cfg.Normalizer.Normalize(e.URL)
		if err != nil {
			read.Skipped++
			return nil
		}
		f, ok := r.InScope(n, q.Depth+1)
		if !ok {
			read.Skipped++
			return nil
		}
		f.LastMod = e.LastMod
		links = append(links, f)
		return nil
	})
	if st.Kind == sitemap.KindUnknown || st.Kind == sitemap.KindText && !named {
		return false
	}
	read.Kind, read.Entries, read.OffSite = st.Kind, len(links), st.OffSite
	read.Skipped += st.Invalid
	if err != nil {
		read.Err = err.Error()
	}
	pr.Sitemap = read
	pr.Links = append(pr.Links, links...)
	pr.Record.Links = len(links)
	return true
}

// mayBeSitemap says whether a body is worth reading as a sitemap: XML,
// gzip, or a file robots.txt names.
func mayBeSitemap(resp *fetch.Response, named bool) bool {
	if resp.Status < 200 || resp.Status > 299 || len(resp.Body) == 0 {
		return false
	}
	b := bytes.TrimLeft(resp.Body, " \t\r\n\ufeff")
	return named || bytes.HasPrefix(resp.Body, []byte{0x1f, 0x8b}) || bytes.HasPrefix(b, []byte("<"))
}
