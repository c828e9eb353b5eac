package engine

import (
	"bytes"
	"context"
	"hash/crc64"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zlib"

	"lidi/engine/dedup"
	"lidi/engine/extract"
	"lidi/engine/fetch"
	"lidi/engine/robots"
	"lidi/engine/urlnorm"
)

// Visit is the unit of work handed to a robot: one site, one keep-alive
// connection, up to Max pages, Delay apart. Everything a robot needs is in
// it, so a visit can be leased to a robot in another process.
type Visit struct {
	Site      int64
	Key       string // "scheme://host[:port]"
	Host      string
	Addr      netip.Addr
	Port      int
	Max       int           // pages at most (c, or less near a page limit)
	Delay     time.Duration // between two requests (w, or robots.txt Crawl-delay)
	NotBefore time.Time     // the first request may not start earlier
	Robots    *robots.Rules // nil: fetch robots.txt first
	FetchHeld bool          // take pages the strategy holds back (frontier.Held) too
}

// Messages from a robot to the loop, in this order: one headTaken, any
// number of pageDone, one visitDone.
type headTaken struct {
	site int64
	n    int
	next float64
	more bool
}

type pageDone struct {
	site   int64
	url    string
	depth  int
	rec    PageRecord
	found  []found
	skip   skipCounts
	detect time.Duration // time spent fingerprinting the page
}

type visitDone struct {
	site       int64
	next       time.Time // when the site may be visited again
	returned   int       // URLs taken from the head but not fetched (still queued)
	retPrio    float64   // the best priority among them
	skips      []Skip    // URLs robots.txt disallows
	robots     *robotsRules
	delay      time.Duration // the delay in force (w raised by Crawl-delay)
	failed     bool          // the visit ended on a failure
	backedOff  bool          // 429/503 or a 5xx robots.txt
	retryAfter bool          // next comes from a Retry-After header
	errKind    string
	fetched    int
	// originals are the URLs that queued copies under a mirror or a loop
	// (dropped at their turn) copy, at the copies' depth.
	originals []original
}

// original is the URL a pruned copy stands for.
type original struct {
	found
	depth  int
	parent uint64 // the copy
}

// found is a link to an URL in scope.
type found struct {
	url      string
	id       uint64
	key      string // site key
	host     string
	nofollow bool
}

// skipCounts counts links not followed, by reason.
type skipCounts struct {
	scope, nofollow, invalid int
}

var crcTable = crc64.MakeTable(crc64.ECMA)

// Digest is the content digest of a page body kept in the store: CRC-64
// (ECMA), fixed so that digests compare across runs and machines, and
// several times faster than FNV on page-sized inputs.
func Digest(body []byte) uint64 { return crc64.Checksum(body, crcTable) }

// robot runs one visit. It sends its messages to out and never touches the
// loop's state.
func (e *Engine) robot(ctx context.Context, v Visit, tr *visitTracker, out chan<- any) {
	done := visitDone{site: v.Site, delay: v.Delay}
	head, err := e.commit.head(ctx, v.Site, v.Max)
	if !v.FetchHeld {
		head = cutHeld(head)
	}
	out <- headTaken{site: v.Site, n: len(head.urls), next: head.next, more: head.more}
	if err != nil {
		done.next = v.NotBefore
		done.returned, done.retPrio = returned(head.urls)
		done.failed, done.errKind = true, "store"
		out <- done
		return
	}
	sess := e.fetcher.Open(v.Addr, v.Port)
	defer sess.Close()

	// last is when the previous request to the site ended. Waiting w from
	// the end, not the start, keeps the gap the server sees between two
	// request starts at w or more, whatever the network adds.
	last := v.NotBefore.Add(-v.Delay)
	wait := func() bool {
		at := last.Add(v.Delay)
		if d := at.Sub(e.clock.Now()); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	finish := func(i int) {
		// The connection is closed before the loop hears of the end, so
		// the next visit to this site or address never overlaps it.
		sess.Close()
		done.returned, done.retPrio = returned(head.urls[i:])
		if done.next.IsZero() {
			done.next = last.Add(done.delay)
		}
		out <- done
	}

	rules := v.Robots
	if rules == nil {
		if !wait() {
			finish(0)
			return
		}
		rr := e.fetchRobots(ctx, sess, v.Key)
		last = e.clock.Now()
		done.robots = rr
		rules = rr.rules
		if cd := rules.CrawlDelay(e.cfg.UserAgent); cd > done.delay {
			done.delay = min(cd, e.cfg.MaxDelay)
		}
		if rr.status > 0 && rr.status < 500 { // -1: unreachable
			// fine
		} else {
			// 5xx or unreachable: disallow all until retried; the
			// queue stays as it is.
			done.backedOff, done.errKind = true, rr.errKind
			done.next = last.Add(e.cfg.RobotsRetry)
			finish(0)
			return
		}
	}
	v.Delay = done.delay

	var res extract.Result // reused for every page of the visit
	for i, q := range head.urls {
		if e.paused.Load() || e.stopping.Load() || ctx.Err() != nil {
			finish(i)
			return
		}
		if !rules.Allowed(e.cfg.UserAgent, pathOf(q.URL)) {
			done.skips = append(done.skips, Skip{URL: q.ID, Reason: "robots"})
			continue
		}
		if pruned, orig := e.prunedTo(q.URL); pruned {
			// Queued before its directory was labelled a mirror or a
			// loop: the original it copies is followed instead.
			done.skips = append(done.skips, Skip{URL: q.ID, Reason: "mirror"})
			if orig != "" {
				if f, ok := e.inScope(orig, q.Depth); ok {
					done.originals = append(done.originals, original{found: f, depth: q.Depth, parent: q.ID})
				}
			}
			continue
		}
		if !wait() {
			finish(i)
			return
		}
		tr.url.Store(&head.urls[i].URL)
		pd, resp, ferr := e.fetchPage(ctx, sess, q, &res)
		last = e.clock.Now()
		pd.site = v.Site
		tr.pages.Add(1)
		tr.bytes.Add(pd.rec.Length)
		done.fetched++
		if ferr != nil && ctx.Err() != nil {
			// Stopped in the middle of the page: it is fetched again later.
			finish(i)
			return
		}
		out <- pd
		switch {
		case ferr != nil:
			done.failed, done.errKind = true, pd.rec.Err
			if fe, ok := ferr.(*fetch.Error); ok {
				done.errKind = fe.Kind
			}
			finish(i + 1)
			return
		case resp.Status == http.StatusTooManyRequests || resp.Status == http.StatusServiceUnavailable:
			done.backedOff, done.errKind = true, "http-"+strconv.Itoa(resp.Status)
			if resp.RetryAfter > 0 {
				done.next = e.clock.Now().Add(min(resp.RetryAfter, e.cfg.BackoffMax))
				done.retryAfter = true
			}
			finish(i + 1)
			return
		}
	}
	finish(len(head.urls))
}

func returned(urls []QueuedURL) (int, float64) {
	best := 0.0
	for i, q := range urls {
		if i == 0 || q.Priority < best {
			best = q.Priority
		}
	}
	return len(urls), best
}

// fetchRobots fetches and parses the site's robots.txt.
func (e *Engine) fetchRobots(ctx context.Context, sess *fetch.Session, key string) *robotsRules {
	rr := &robotsRules{fetched: e.clock.Now()}
	resp, err := sess.GetLimit(ctx, key+"/robots.txt", robots.MaxBodySize+1) // one byte more shows the cut
	if err != nil || resp == nil {
		rr.status = -1
		rr.rules = robots.Unreachable()
		rr.errKind = fetch.KindOther
		if fe, ok := err.(*fetch.Error); ok {
			rr.errKind = fe.Kind
		}
		return rr
	}
	rr.status, rr.body = resp.Status, bytes.Clone(resp.Body) // the session reuses its buffer
	rr.rules = robots.FromResponse(resp.Status, resp.Body)
	return rr
}

// fetchPage fetches one page and works out what it links to.
func (e *Engine) fetchPage(ctx context.Context, sess *fetch.Session, q QueuedURL, res *extract.Result) (pageDone, *fetch.Response, error) {
	pd := pageDone{depth: q.Depth, url: q.URL}
	rec := &pd.rec
	rec.URL = q.ID
	rec.Fetched = e.clock.Now()
	var v fetch.Validators
	if q.Copy != nil {
		rec.Recrawl, v = true, q.Copy.Validators
	}
	resp, err := sess.GetIf(ctx, q.URL, v)
	if resp != nil {
		rec.ETag, rec.LastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
		rec.Status = resp.Status
		rec.ContentType = resp.ContentType
		rec.Length = int64(len(resp.Body))
		rec.Truncated = resp.Truncated
		rec.Duration = resp.Duration
		rec.TypeCheck = resp.TypeCheck
	}
	if err != nil {
		rec.Err = err.Error()
		return pd, resp, err
	}
	if resp.Location != "" {
		if n, err := e.cfg.Normalizer.Normalize(resp.Location); err == nil {
			rec.Redirect = n
			if f, ok := e.inScope(n, q.Depth); ok {
				pd.found = append(pd.found, f)
			} else {
				pd.skip.scope++
			}
		}
	}
	if len(resp.Body) > 0 {
		rec.Digest = Digest(resp.Body)
	}
	follow := true
	if e.cfg.HonourMetaRobots {
		if xr := resp.Header.Values("X-Robots-Tag"); len(xr) > 0 {
			d := robots.ParseXRobotsTag(xr, e.cfg.UserAgent)
			rec.NoIndex = rec.NoIndex || d.NoIndex
			follow = !d.NoFollow
		}
	}
	if resp.Status >= 200 && resp.Status < 300 && (resp.TypeCheck == "html" || resp.TypeCheck == "html-undeclared") {
		base, err := url.Parse(q.URL)
		if err == nil {
			res.Reset()
			if err := e.links.Extract(resp.Body, resp.ContentType, base, res); err == nil {
				if e.cfg.HonourMetaRobots && res.MetaRobots != "" {
					d := robots.ParseMeta(res.MetaRobots)
					rec.NoIndex = rec.NoIndex || d.NoIndex
					follow = follow && !d.NoFollow
				}
				rec.Links = len(res.Links)
				if e.det != nil || e.cfg.Recrawl.Enabled {
					t := startCPUTimer()
					rec.Simhash = dedup.Simhash(resp.Body)
					pd.detect = t.elapsed()
				}
				pd.skip.invalid += res.Invalid
				if follow {
					pd.found = e.collect(pd.found, &pd.skip, res.Links, q.Depth+1)
				} else {
					pd.skip.nofollow += len(res.Links)
				}
			}
		}
	}
	if e.cfg.KeepBodies && len(resp.Body) > 0 {
		rec.Body = e.compress(resp.Body)
	}
	if q.Copy != nil {
		rec.Verdict = fetch.Judge(*q.Copy, rec.Status, rec.Digest, rec.Simhash, e.cfg.Recrawl.Threshold)
	}
	return pd, resp, nil
}

// collect keeps the links in scope.
func (e *Engine) collect(dst []found, skip *skipCounts, links []extract.Link, depth int) []found {
	for _, l := range links {
		if l.NoFollow && e.cfg.HonourNofollow {
			skip.nofollow++
			continue
		}
		f, ok := e.inScope(l.URL, depth)
		if !ok {
			skip.scope++
			continue
		}
		dst = append(dst, f)
	}
	return dst
}

// inScope checks a normalised URL against the crawl's scope.
func (e *Engine) inScope(u string, depth int) (found, bool) {
	if ok, _ := e.scope.Allow(u, depth); !ok {
		return found{}, false
	}
	key, host, ok := siteOf(u)
	if !ok {
		return found{}, false
	}
	return found{url: u, id: urlnorm.Fingerprint(u), key: key, host: host}, true
}

// siteOf splits a normalised URL into its site key and host name.
func siteOf(u string) (key, host string, ok bool) {
	i := strings.Index(u, "://")
	if i < 0 {
		return "", "", false
	}
	rest := u[i+3:]
	j := strings.IndexAny(rest, "/?#")
	if j < 0 {
		j = len(rest)
	}
	key = u[:i+3+j]
	hostport := rest[:j]
	host = hostport
	if strings.HasPrefix(hostport, "[") {
		if k := strings.Index(hostport, "]"); k > 0 {
			host = hostport[1:k]
		}
	} else if k := strings.LastIndexByte(hostport, ':'); k >= 0 {
		host = hostport[:k]
	}
	return key, host, host != ""
}

// portOf returns the port of a site key.
func portOf(key string) int {
	i := strings.Index(key, "://")
	hostport := key[i+3:]
	if k := strings.LastIndexByte(hostport, ':'); k >= 0 && !strings.HasSuffix(hostport, "]") {
		if p, err := strconv.Atoi(hostport[k+1:]); err == nil {
			return p
		}
	}
	if strings.HasPrefix(key, "https:") {
		return 443
	}
	return 80
}

// pathOf returns the path and query of a normalised URL.
func pathOf(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	rest := u[i+3:]
	j := strings.IndexAny(rest, "/?")
	if j < 0 {
		return "/"
	}
	p := rest[j:]
	if k := strings.IndexByte(p, '#'); k >= 0 {
		p = p[:k]
	}
	if p[0] == '?' {
		p = "/" + p
	}
	return p
}

// compress returns body compressed with zlib, in a slice of its own size
// (bodies wait in batches for the writer; slack would be memory wasted).
func (e *Engine) compress(body []byte) []byte {
	c := <-e.zlib // at most one compression per core: each writer holds ~1 MB
	if c == nil {
		c = &compressor{}
		c.w, _ = zlib.NewWriterLevel(&c.buf, e.cfg.CompressLevel)
	}
	c.buf.Reset()
	c.w.Reset(&c.buf)
	c.w.Write(body)
	c.w.Close()
	out := bytes.Clone(c.buf.Bytes())
	e.zlib <- c
	return out
}

// compressor is a zlib writer with its output buffer, reused.
type compressor struct {
	w   *zlib.Writer
	buf bytes.Buffer
}
