package visit

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/klauspost/compress/zlib"

	"lidi/engine/clock"
	"lidi/engine/cputime"
	"lidi/engine/extract"
	"lidi/engine/fetch"
	"lidi/engine/record"
	"lidi/engine/robots"
	"lidi/engine/scope"
	"lidi/engine/urlnorm"
)

// Robot runs leases: it fetches robots.txt when a lease does not carry it,
// then the lease's pages over one keep-alive connection, and reports each
// page and the lease's end. It knows the crawl's configuration (scope, user
// agent, fetch limits) but nothing of its state: everything else comes with
// the lease. The engine's local robots share one Robot; a slave makes its
// own with NewRobot. A Robot is safe for concurrent use: each Run is one
// robot.
type Robot struct {
	cfg     Config
	clock   clock.Clock
	scope   *scope.Scope
	fetcher *fetch.Fetcher
	links   *extract.Extractor
	bodies  *compressors    // at cfg.CompressLevel
	heads   *compressors    // at zlib.NoCompression (see wire)
	detect  cputime.Sampler // times the pages' fingerprints (PageResult.Detect)
	// seedHosts are the seeds' host names, lower case: the sites whose
	// sitemaps are read by default (SitemapsSeeds).
	seedHosts map[string]bool

	// Halt, when set, reports whether leases should end after their
	// current page (the crawl pauses or stops); the URLs not reached are
	// returned. Set it before the first Run.
	Halt func() bool
}

// NewRobot makes a Robot for the crawl cfg describes. clock may be nil for
// the system clock.
func NewRobot(cfg Config, clk clock.Clock) (*Robot, error) {
	cfg.Scope.Normalizer = &cfg.Normalizer
	sc, err := scope.New(cfg.Scope)
	if err != nil {
		return nil, &ConfigError{Key: "scope", Err: err}
	}
	fc := cfg.Fetch
	fc.CheckType = cfg.CheckType
	if fc.UserAgent == "" {
		fc.UserAgent = cfg.UserAgent
	}
	r := &Robot{cfg: cfg, clock: clock.Or(clk), scope: sc, fetcher: fetch.New(fc)}
	// <meta name="robots"> and <meta name="lidi"> (the product token of
	// the user agent) both speak to the robot.
	r.links = &extract.Extractor{Normalizer: &r.cfg.Normalizer, RobotsNames: robots.MetaNames(cfg.UserAgent)}
	r.seedHosts = make(map[string]bool)
	for _, seed := range cfg.Scope.Seeds {
		if u, err := url.Parse(seed); err == nil && u.Host != "" {
			r.seedHosts[strings.ToLower(u.Hostname())] = true
		}
	}
	r.bodies = newCompressors(cfg.CompressLevel)
	r.heads = newCompressors(zlib.NoCompression)
	return r, nil
}

// haltPoll is how often a robot waiting between two requests checks Halt.
const haltPoll = 100 * time.Millisecond

// Run runs one lease, reporting its results to report in order; the last
// carries End. It returns when the lease has ended and its connection is
// closed.
func (r *Robot) Run(ctx context.Context, l *Lease, report func(Result)) {
	seq := 0
	send := func(res Result) {
		seq++
		res.Lease, res.Seq = l.ID, seq
		report(res)
	}
	end := &LeaseEnd{Delay: l.Delay}
	sess := r.fetcher.Open(l.Addr, l.Port)
	defer sess.Close()
	halted := func() bool {
		return ctx.Err() != nil || (r.Halt != nil && r.Halt()) || !r.clock.Now().Before(l.Deadline)
	}

	// last is when the previous request to the site ended. Waiting w from
	// the end, not the start, keeps the gap the server sees between two
	// request starts at w or more, whatever the network adds.
	last := l.NotBefore.Add(-l.Delay)
	wait := func() bool {
		at := last.Add(end.Delay)
		if d := at.Sub(r.clock.Now()); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			// A pause or a stop ends the wait: a delay of w = 15 s must
			// not hold a stopping crawl.
			halt := time.NewTicker(haltPoll)
			defer halt.Stop()
			for waiting := true; waiting; {
				select {
				case <-t.C:
					waiting = false
				case <-halt.C:
					if halted() {
						return false
					}
				case <-ctx.Done():
					return false
				}
			}
		}
		return !halted()
	}
	finish := func(i int) {
		// The connection is closed before the loop hears of the end, so
		// the next visit to this site or address never overlaps it.
		sess.Close()
		for _, q := range l.URLs[i:] {
			end.Returned = append(end.Returned, q.ID)
		}
		if end.Next.IsZero() {
			end.Next = last.Add(end.Delay)
		}
		send(Result{End: end})
	}

	rules := l.Rules
	if rules == nil && l.Robots != nil {
		rules = l.Robots.Rules()
	}
	if rules == nil {
		if !wait() {
			finish(0)
			return
		}
		rf, kind := r.fetchRobots(ctx, sess, l, func(context.Context) error {
			// Each redirect is a request like any: the site's delay
			// apart, and none once the lease is halted.
			last = r.clock.Now()
			if !wait() {
				return errHalted
			}
			return nil
		})
		if rf == nil {
			finish(0) // halted between two redirects
			return
		}
		last = r.clock.Now()
		end.Robots = rf
		rules = rf.Rules()
		end.Rules = rules
		if cd := rules.CrawlDelay(r.cfg.UserAgent); cd > end.Delay {
			end.Delay = min(cd, r.cfg.MaxDelay)
		}
		if rf.Unresolved != "" {
			// The chain leads to a host the loop must resolve first: no
			// page now, the next visit as soon as it has (see
			// crawl.lookupRobotsHost).
			end.Failure = kind
			end.Next = last.Add(end.Delay)
			finish(0)
			return
		}
		if rules.Kind().Temporary() {
			// 5xx, 429 or unreachable: disallow all until retried;
			// the queue stays as it is.
			end.BackedOff, end.Failure = true, kind
			end.Next = last.Add(r.cfg.RobotsRetry)
			finish(0)
			return
		}
	}
	named := r.namedSitemaps(l, rules)
	if end.Robots != nil {
		// robots.txt was fetched in this lease: its sitemaps are links
		// of it.
		for u := range named {
			if f, ok := r.InScope(u, 1); ok {
				end.Found = append(end.Found, f)
			}
		}
		slices.SortFunc(end.Found, func(a, b FoundLink) int { return strings.Compare(a.URL, b.URL) })
	}

	// follow waits until the loop has applied the page results up to
	// Seq upTo, taking the URLs it revoked meanwhile (see Feed).
	var revoked map[uint64]bool
	take := func(id uint64) {
		if revoked == nil {
			revoked = make(map[uint64]bool)
		}
		revoked[id] = true
	}
	applied := 0
	follow := func(upTo int) bool {
		var tick <-chan time.Time
		for {
			select {
			case id := <-l.Feed.Revoked:
				take(id)
				continue
			default:
			}
			if applied >= upTo {
				return true
			}
			if tick == nil {
				t := time.NewTicker(haltPoll)
				defer t.Stop()
				tick = t.C
			}
			select {
			case applied = <-l.Feed.Applied:
			case id := <-l.Feed.Revoked:
				take(id)
			case <-tick:
				if halted() {
					return false
				}
			case <-ctx.Done():
				return false
			}
		}
	}

	var res extract.Result // reused for every page of the lease
	for i, q := range l.URLs {
		if halted() {
			finish(i)
			return
		}
		if l.Feed != nil {
			if !follow(seq - AheadMax) {
				finish(i)
				return
			}
			if revoked[q.ID] {
				end.Returned = append(end.Returned, q.ID) // in lease order, before finish's
				continue
			}
		}
		if !rules.Allowed(r.cfg.UserAgent, urlnorm.PathQuery(q.URL)) {
			end.Skips = append(end.Skips, record.Skip{URL: q.ID, Reason: record.SkipRobots})
			continue
		}
		if !wait() {
			finish(i)
			return
		}
		pr, resp, ferr := r.fetchPage(ctx, sess, q, &res, l.Key, named)
		last = r.clock.Now()
		pr.Record.Site = l.Site
		if ferr != nil && ctx.Err() != nil {
			// Stopped in the middle of the page: it is fetched again later.
			finish(i)
			return
		}
		slowDown := ferr == nil && (resp.Status == http.StatusTooManyRequests || resp.Status == http.StatusServiceUnavailable)
		if slowDown {
			// The site asks to slow down: the lease ends here, and the
			// site waits its Retry-After, if it gave one.
			end.BackedOff, end.Failure = true, SlowDown(resp.Status)
			if resp.RetryAfter > 0 {
				end.Next = r.clock.Now().Add(min(resp.RetryAfter, r.cfg.BackoffMax))
				end.RetryAfter = true
			}
			if l.Tries[q.ID]+1 < r.cfg.slowDownTries() {
				// The page is not done with: it goes back to its queue,
				// fetched again after the back-off.
				end.Retried = append(end.Retried, q.ID)
				finish(i) // q first among the returned
				return
			}
		}
		end.Fetched++
		send(Result{Page: pr})
		switch {
		case ferr != nil:
			end.Failed, end.Failure = true, FailureKind(pr.Record.Err)
			if fe, ok := ferr.(*fetch.Error); ok {
				end.Failure = FailureKind(fe.Kind)
			}
			finish(i + 1)
			return
		case slowDown:
			finish(i + 1) // its last try: recorded with its status
			return
		}
	}
	finish(len(l.URLs))
}

// errHalted ends a robots.txt redirect chain when the lease is halted.
var errHalted = errors.New("visit: lease halted")

// fetchPage fetches one page and works out what it links to.
func (r *Robot) fetchPage(ctx context.Context, sess *fetch.Session, q record.QueuedURL, res *extract.Result, site string, named map[string]bool) (*PageResult, *fetch.Response, error) {
	pr := &PageResult{Depth: q.Depth, URL: q.URL}
	rec := &pr.Record
	rec.URL = q.ID
	rec.Fetched = r.clock.Now()
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
		rec.Wire, rec.IP = r.wire(resp.Wire)
	}
	if err != nil {
		rec.Err = err.Error()
		return pr, resp, err
	}
	if resp.Location != "" {
		if n, err := r.cfg.Normalizer.Normalize(resp.Location); err == nil {
			rec.Redirect = n
			if f, ok := r.InScope(n, q.Depth); ok {
				pr.Links = append(pr.Links, f)
			} else {
				pr.Skipped.Scope++
			}
		}
	}
	if len(resp.Body) > 0 {
		rec.Digest = r.cfg.Digest.Sum(resp.Body)
	}
	follow := true
	if r.cfg.HonourMetaRobots {
		if xr := resp.Header.Values("X-Robots-Tag"); len(xr) > 0 {
			d := robots.ParseXRobotsTag(xr, r.cfg.UserAgent)
			rec.NoIndex = rec.NoIndex || d.NoIndex
			follow = !d.NoFollow
		}
	}
	isSitemap := false
	if r.cfg.Sitemaps != SitemapsOff && !resp.TypeCheck.IsHTML() && mayBeSitemap(resp, named[q.URL]) {
		isSitemap = r.readSitemap(pr, q, resp.Body, site, len(named) > 0, named[q.URL])
	}
	if !isSitemap && resp.Status >= 200 && resp.Status < 300 && resp.TypeCheck.IsHTML() {
		base, err := url.Parse(q.URL)
		if err == nil {
			res.Reset()
			if err := r.links.Extract(resp.Body, resp.ContentType, base, res); err == nil {
				if r.cfg.HonourMetaRobots && res.MetaRobots != "" {
					d := robots.ParseMeta(res.MetaRobots)
					rec.NoIndex = rec.NoIndex || d.NoIndex
					follow = follow && !d.NoFollow
				}
				rec.Links = len(res.Links)
				if r.cfg.Fingerprint {
					t := r.detect.Start()
					fp := r.cfg.WordHash.Fingerprint(resp.Body, q.URL)
					rec.Simhash, rec.MainSimhash, rec.NoURLSimhash, rec.TitleHash = fp.Text, fp.Main, fp.NoURL, fp.Title
					pr.Claims = claimsOf(res, resp.Header, base)
					pr.Detect = t.Elapsed()
				}
				pr.Skipped.Invalid += res.Invalid
				if follow {
					pr.Links = r.collect(pr.Links, &pr.Skipped, res.Links, q.Depth+1)
				} else {
					pr.Skipped.NoFollow += len(res.Links)
				}
			}
		}
	}
	if r.cfg.KeepBodies && len(resp.Body) > 0 {
		rec.Body = r.storedBody(resp)
	}
	if q.Copy != nil {
		rec.Verdict = fetch.Judge(*q.Copy, rec.Status, rec.Digest, rec.Simhash, r.cfg.RecrawlThreshold)
	}
	return pr, resp, nil
}

// storedBody returns a response's body as PageRecord.Body keeps it, a
// zlib stream (RFC 1950). A body the server sent gzip-coded is kept as
// the server deflated it (fetch.Response.Deflate: a real server's
// compression, which saves compressing the same bytes again, most of the
// robot's CPU) when the crawl compresses at the fastest level and the
// stream is smaller than the body: a crawl set to compress harder, and a
// server that only stored its body, get the body compressed here.
func (r *Robot) storedBody(resp *fetch.Response) []byte {
	if resp.Deflate != nil && r.cfg.CompressLevel == zlib.BestSpeed && len(resp.Deflate) < len(resp.Body) {
		return zlibOf(resp.Deflate, resp.Body)
	}
	return r.bodies.compress(resp.Body)
}

// zlibOf wraps deflate, a complete deflate stream (RFC 1951) that
// inflates to body, as a zlib stream: a 2-byte header, the stream as it
// is, the Adler-32 of body. The header is the one lidi's own writer puts
// at the fastest level: a 32 KiB window (the largest deflate, and so
// gzip, allows) and FLEVEL 0 (informational only).
func zlibOf(deflate, body []byte) []byte {
	z := make([]byte, 0, 2+len(deflate)+4)
	z = append(z, 0x78, 0x01)
	z = append(z, deflate...)
	return binary.BigEndian.AppendUint32(z, adler32Sum(body))
}

// collect keeps the links in scope. dst gets room for all of them at
// once: grown as append grows it, it was allocated about twice over (a
// page's links took 6% of what a crawl allocated).
func (r *Robot) collect(dst []FoundLink, skip *LinkSkips, links []extract.Link, depth int) []FoundLink {
	dst = slices.Grow(dst, len(links))
	for _, l := range links {
		if l.NoFollow && r.cfg.HonourNofollow {
			skip.NoFollow++
			continue
		}
		f, ok := r.InScope(l.URL, depth)
		if !ok {
			skip.Scope++
			continue
		}
		dst = append(dst, f)
	}
	return dst
}

// InScope checks a normalised URL against the crawl's scope.
func (r *Robot) InScope(u string, depth int) (FoundLink, bool) {
	if ok, _ := r.scope.Allow(u, depth); !ok {
		return FoundLink{}, false
	}
	f := FoundLink{URL: u}
	return f, f.Resolve()
}

// wire returns an exchange's heads as PageRecord.Wire keeps them, and
// the address; nothing when not recorded. The heads are a zlib stream of
// stored blocks: a few hundred bytes of header fields compress little at
// zlib's fastest level (simweb's 389 bytes to 332), and that took 2.4% of
// a crawl's CPU, for 0.6% of the file; any zlib reader inflates either.
func (r *Robot) wire(w *fetch.Wire) ([]byte, string) {
	if w == nil {
		return nil, ""
	}
	return r.heads.compress(append(w.Request, w.Head...)), w.IP
}

// compressors is a pool of zlib writers at one level, at most one per
// core (a compressing writer holds about 1 MB). Safe for concurrent use.
type compressors struct {
	level int
	free  chan *compressor // nil until first used
}

func newCompressors(level int) *compressors {
	p := &compressors{level: level, free: make(chan *compressor, runtime.GOMAXPROCS(0))}
	for range cap(p.free) {
		p.free <- nil
	}
	return p
}

// compress returns b as a zlib stream, in a slice of its own size (bodies
// wait in batches for the writer; slack would be memory wasted).
func (p *compressors) compress(b []byte) []byte {
	c := <-p.free
	if c == nil {
		c = &compressor{}
		c.w, _ = zlib.NewWriterLevel(&c.buf, p.level)
	}
	c.buf.Reset()
	c.w.Reset(&c.buf)
	c.w.Write(b)
	c.w.Close()
	out := bytes.Clone(c.buf.Bytes())
	p.free <- c
	return out
}

// compressor is a zlib writer with its output buffer, reused.
type compressor struct {
	w   *zlib.Writer
	buf bytes.Buffer
}

// ConnStats returns the connection counters of the robot's fetches.
func (r *Robot) ConnStats() fetch.ConnStats { return r.fetcher.Stats() }

// LocalDispatcher runs leases on robots of this process, a goroutine each.
// The engine limits how many run at once (r). It is safe for concurrent use.
type LocalDispatcher struct {
	Robot *Robot
}

// Dispatch starts a robot on l.
func (d LocalDispatcher) Dispatch(ctx context.Context, l *Lease, report func(Result)) {
	go d.Robot.Run(ctx, l, report)
}
