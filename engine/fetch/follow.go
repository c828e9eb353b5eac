package fetch

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// Redirects are followed only for the files a crawler reads about a site
// rather than as pages of it: robots.txt (RFC 9309 section 2.3.1.2 asks
// for at least five redirects, across authorities) and sitemaps. A page's
// redirect is never followed inside a visit (see Session.Open): its target
// goes through the scheduler like any other link.

// IsRedirect reports whether status asks the client to fetch the Location
// instead (RFC 9110 section 15.4): 301, 302, 303, 307 or 308. 300, 304 and
// 305 do not name one resource to fetch.
func IsRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// Hop is one request of a chain: the URL asked for and its status (0 when
// the request got no response).
type Hop struct {
	URL    string
	Status int
}

// ChainEnd says why [Session.GetFollow] stopped. The zero value is
// ChainAnswered.
type ChainEnd uint8

const (
	// ChainAnswered: the last hop answered with something other than a
	// redirect (or a redirect without a Location).
	ChainAnswered ChainEnd = iota
	// ChainTooLong: the last hop is a redirect past Follow.Max.
	ChainTooLong
	// ChainLoop: the last hop redirects to a URL the chain already asked
	// for.
	ChainLoop
	// ChainBadTarget: the last hop redirects to something that is not an
	// http or https URL with a host.
	ChainBadTarget
	// ChainUnresolved: the last hop redirects to a host whose address the
	// caller does not know yet (Chain.Host); the caller resolves it and
	// asks again.
	ChainUnresolved
	// ChainFailed: the last request failed (GetFollow returns the error).
	ChainFailed
)

// String returns the name used in records and the console.
func (e ChainEnd) String() string {
	switch e {
	case ChainAnswered:
		return "answered"
	case ChainTooLong:
		return "too-many-redirects"
	case ChainLoop:
		return "redirect-loop"
	case ChainBadTarget:
		return "bad-redirect"
	case ChainUnresolved:
		return "unresolved-host"
	case ChainFailed:
		return "failed"
	}
	return "unknown"
}

// Follow says how [Session.GetFollow] follows redirects. The zero value
// follows none and keeps up to Config.MaxBodySize bytes.
type Follow struct {
	// Max is the number of redirects followed; the one after it ends the
	// chain (ChainTooLong).
	Max int
	// Limit caps the final body (and Config.MaxBodySize caps Limit); 0
	// means Config.MaxBodySize.
	Limit int64
	// Addr returns the address of a host other than the first URL's.
	// It must not resolve names (a crawler's robot never waits on DNS,
	// and a cluster slave makes no query): it answers from addresses the
	// caller was handed, and false ends the chain with ChainUnresolved.
	// Nil knows no other host. Redirects to the first URL's host (on any
	// scheme or port) go to the session's address.
	Addr func(host string) (netip.Addr, bool)
	// Pace, if set, is called before every request after the first and
	// may wait (politeness: one request at a time, a delay apart); an
	// error ends the chain with it (ChainFailed).
	Pace func(ctx context.Context) error
	// Body, if set, reads the final answer's body when its status is 2xx,
	// as a stream of at most Limit bytes (a sitemap of 50 MB is not held
	// in memory), with the URL it comes from; Response.Body is then
	// empty. Its error is GetFollow's, with ChainAnswered: the chain
	// ended, the file did not suit. A failure of the connection under it
	// is returned as an *Error instead.
	Body func(url string, body io.Reader) error
}

// Chain is what [Session.GetFollow] did. Hops holds every request in order;
// the last one's response is Response.
type Chain struct {
	Hops []Hop
	End  ChainEnd
	Host string // with ChainUnresolved: the host whose address is needed
	// Response is the last hop's response; nil when it failed. Its Body
	// is valid until the next GetFollow or Get of the session. Its
	// Deflate is nil when the last hop went to another address or port:
	// that connection's decoder, which holds it, is closed on return.
	Response *Response
}

// Final returns the URL of the chain's last request.
func (c *Chain) Final() string {
	if len(c.Hops) == 0 {
		return ""
	}
	return c.Hops[len(c.Hops)-1].URL
}

// Redirects returns the number of redirects followed.
func (c *Chain) Redirects() int { return max(len(c.Hops)-1, 0) }

// GetFollow fetches rawURL, following redirects as fl says, one request at a
// time: the session's connection serves the hops on its own address and
// port, and a hop elsewhere (another scheme, port or host) gets a
// connection of its own, closed before the next request. The returned
// Chain is never nil; the error is that of a failed request (or of Pace).
func (s *Session) GetFollow(ctx context.Context, rawURL string, fl Follow) (*Chain, error) {
	limit := s.f.cfg.MaxBodySize
	if fl.Limit > 0 {
		limit = min(fl.Limit, limit)
	}
	c := &Chain{}
	first, err := url.Parse(rawURL)
	if err != nil || first.Host == "" {
		c.Hops, c.End = []Hop{{URL: rawURL}}, ChainFailed
		if err == nil {
			err = errNoHost
		}
		return c, &Error{URL: rawURL, Kind: KindBadURL, Err: err}
	}
	seen := map[string]bool{}
	sess, cur := s, first
	var other *Session // the connection to another address, if any
	defer func() {
		if other != nil {
			if sess == other && c.Response != nil {
				c.Response.Deflate = nil // other's decoder goes back to the pool
			}
			other.Close()
		}
	}()
	for {
		if len(c.Hops) > 0 && fl.Pace != nil {
			if err := fl.Pace(ctx); err != nil {
				c.End = ChainFailed
				return c, err
			}
		}
		seen[chainKey(cur)] = true
		var consume func(io.Reader) error
		if fl.Body != nil {
			at := cur.String()
			consume = func(r io.Reader) error { return fl.Body(at, r) }
		}
		resp, err := sess.get(ctx, cur.String(), Validators{}, limit, consume)
		hop := Hop{URL: cur.String()}
		if resp != nil {
			hop.Status = resp.Status
		}
		c.Hops, c.Response = append(c.Hops, hop), resp
		var fe *Error
		if err != nil && (resp == nil || errors.As(err, &fe)) {
			c.End = ChainFailed
			return c, err
		}
		if err != nil {
			return c, err // Body's
		}
		if !IsRedirect(resp.Status) || resp.Location == "" {
			return c, nil
		}
		next, err := url.Parse(resp.Location)
		if err != nil || (next.Scheme != "http" && next.Scheme != "https") || next.Host == "" {
			c.End = ChainBadTarget
			return c, nil
		}
		next.Fragment, next.RawFragment = "", ""
		switch {
		case seen[chainKey(next)]:
			c.End = ChainLoop
			return c, nil
		case c.Redirects() >= fl.Max:
			c.End = ChainTooLong
			return c, nil
		}
		addr, ok := s.addr, true
		if host := next.Hostname(); !strings.EqualFold(host, first.Hostname()) {
			addr, ok = netip.Addr{}, false
			if fl.Addr != nil {
				addr, ok = fl.Addr(strings.ToLower(host))
			}
			if !ok {
				c.End, c.Host = ChainUnresolved, strings.ToLower(host)
				return c, nil
			}
		}
		port := portOf(next)
		switch {
		case addr == s.addr && port == s.port:
			sess = s
		case other != nil && addr == other.addr && port == other.port:
			sess = other
		default:
			if other != nil {
				other.Close() // one connection at a time
			}
			other = s.f.Open(addr, port)
			sess = other
		}
		cur = next
	}
}

// errNoHost is the error of a URL without a host.
var errNoHost = errors.New("fetch: URL has no host")

// chainKey is how a chain recognises a URL it asked for already: scheme and
// host in lower case, the default port dropped, no fragment.
func chainKey(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	return scheme + "://" + strings.ToLower(u.Hostname()) + ":" + strconv.Itoa(portOf(u)) + u.RequestURI()
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
