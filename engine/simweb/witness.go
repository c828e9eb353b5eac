package simweb

import (
	"sync"
	"sync/atomic"
	"time"
)

// The witness watches how clients treat the simulated sites, so that a
// crawler's politeness can be scored from outside it. It counts per host
// (Host header) and per address (the local address a connection arrived on).

// WitnessSnapshot is a copy of the witness counts at one moment, since the
// server started or since the last reset. Hosts and addresses without any
// request are left out.
type WitnessSnapshot struct {
	Since time.Time `json:"since"`
	Taken time.Time `json:"taken"`
	// Totals over all hosts and addresses.
	Totals WitnessTotals `json:"totals"`
	// Hosts maps host names to their counts.
	Hosts map[string]HostCounts `json:"hosts"`
	// Addresses maps addresses such as "127.1.0.7" to their counts.
	Addresses map[string]AddrCounts `json:"addresses"`
	DNS       DNSCounts             `json:"dns"`
}

// WitnessTotals are counts over the whole server.
type WitnessTotals struct {
	Connections int64 `json:"connections"`
	Requests    int64 `json:"requests"`
	Bytes       int64 `json:"bytes"`
	Disallowed  int64 `json:"disallowed"`
	NotFound    int64 `json:"not_found"`
	Errors      int64 `json:"server_errors"`
	// Misdirected counts requests for an unknown host, or for a host on an
	// address it does not resolve to (421 answers).
	Misdirected int64 `json:"misdirected"`
}

// HostCounts are the witness counts for one host.
type HostCounts struct {
	// Connections is the number of connections that carried at least one
	// request for the host.
	Connections int64 `json:"connections"`
	Requests    int64 `json:"requests"`
	// MaxRequestsPerConn and MeanRequestsPerConn describe how many requests
	// for the host each of those connections carried (keep-alive use).
	MaxRequestsPerConn  int64   `json:"max_requests_per_connection"`
	MeanRequestsPerConn float64 `json:"mean_requests_per_connection"`
	// MaxOpenConns is the most connections open to the host at once; a
	// connection counts from its first request for the host until the
	// server closes it or sees it closed.
	MaxOpenConns int64 `json:"max_open_connections"`
	// MaxInFlight is the most requests for the host being served at once.
	MaxInFlight int64 `json:"max_in_flight"`
	// MinGap is the shortest time between the starts of two consecutive
	// requests for the host, or -1 with fewer than two requests.
	MinGap time.Duration `json:"min_gap_ns"`
	// WithinCrawlDelay counts requests that started sooner after the
	// previous one than the host's robots.txt Crawl-delay allows.
	WithinCrawlDelay int64 `json:"within_crawl_delay"`
	// Disallowed counts requests for paths the host's robots.txt forbids;
	// DisallowedSample lists the first few such paths.
	Disallowed       int64    `json:"disallowed"`
	DisallowedSample []string `json:"disallowed_sample,omitempty"`
	RobotsFetches    int64    `json:"robots_fetches"`
	NotFound         int64    `json:"not_found"`
	Errors           int64    `json:"server_errors"`
	Bytes            int64    `json:"bytes"`
}

// AddrCounts are the witness counts for one address, over all its hosts.
type AddrCounts struct {
	Connections  int64         `json:"connections"`
	Requests     int64         `json:"requests"`
	MaxOpenConns int64         `json:"max_open_connections"`
	MaxInFlight  int64         `json:"max_in_flight"`
	MinGap       time.Duration `json:"min_gap_ns"`
	Misdirected  int64         `json:"misdirected"`
}

// DNSCounts are the queries the DNS server answered.
type DNSCounts struct {
	Queries  int64 `json:"queries"`
	NXDomain int64 `json:"nxdomain"`
	// ByName maps lower-case names without the final dot to query counts.
	// Past maxDNSNames distinct unknown names, the rest are counted under
	// "(other)".
	ByName map[string]int64 `json:"by_name"`
}

const (
	disallowedSampleSize = 10
	maxDNSNames          = 10000
	otherDNSName         = "(other)"
)

// gapClock tracks request starts: count, concurrency and the shortest gap.
type gapClock struct {
	requests, inFlight, maxInFlight int64
	last                            time.Time
	minGap                          time.Duration // -1: none yet
}

func (g *gapClock) start(now time.Time) time.Duration {
	gap := time.Duration(-1)
	if !g.last.IsZero() {
		gap = max(now.Sub(g.last), 0)
		if g.minGap < 0 || gap < g.minGap {
			g.minGap = gap
		}
	}
	g.last = now
	g.requests++
	g.inFlight++
	g.maxInFlight = max(g.maxInFlight, g.inFlight)
	return gap
}

func (g *gapClock) reset() {
	g.requests, g.maxInFlight, g.last, g.minGap = 0, g.inFlight, time.Time{}, -1
}

type hostWitness struct {
	mu                           sync.Mutex
	clock                        gapClock
	conns, open, maxOpen         int64
	perConnMax                   int64
	tooSoon, disallowed          int64
	sample                       []string
	robots, notFound, errs, size int64
}

type addrWitness struct {
	mu                   sync.Mutex
	clock                gapClock
	conns, open, maxOpen int64
	misdirected          int64
}

// connState is the witness's view of one connection.
type connState struct {
	addr     int  // index into the server's addresses
	plain    bool // on a TLS web's plain HTTP port
	mu       sync.Mutex
	requests int64
	hosts    []connHost
	released bool
}

type connHost struct {
	site     int32
	requests int64
}

type witness struct {
	now        func() time.Time
	crawlDelay func(site int) time.Duration
	hosts      []hostWitness
	hostNames  func(site int) string
	addrs      []addrWitness
	addrNames  []string

	sinceMu sync.Mutex
	since   time.Time

	conns, requests, bytes                         atomic.Int64
	disallowed, notFound, errs, misdirected, dnsNX atomic.Int64
	dnsQueries                                     atomic.Int64
	dnsMu                                          sync.Mutex
	dnsByName                                      map[string]int64

	pages *pageLog // nil unless ServerConfig.LogPages
}

// newWitness makes a witness for w. Its host slots are the sites and then
// the alias hosts of TrapHostMirror, which are counted on their own (they
// are other host names, though on the same server).
func newWitness(w *Web, addrNames []string, now func() time.Time) *witness {
	slots := len(w.sites)
	if w.traps != nil {
		slots += len(w.traps.aliasSites)
	}
	siteOf := func(slot int) int {
		if slot < len(w.sites) {
			return slot
		}
		return int(w.traps.aliasSites[slot-len(w.sites)])
	}
	wt := &witness{
		now:        now,
		crawlDelay: func(slot int) time.Duration { return w.sites[siteOf(slot)].robots.crawlDelay },
		hostNames: func(slot int) string {
			if slot < len(w.sites) {
				return w.sites[slot].host
			}
			return w.traps.sites[siteOf(slot)].alias
		},
		hosts:     make([]hostWitness, slots),
		addrs:     make([]addrWitness, len(addrNames)),
		addrNames: addrNames,
		since:     now(),
		dnsByName: make(map[string]int64),
	}
	for i := range wt.hosts {
		wt.hosts[i].clock.minGap = -1
	}
	for i := range wt.addrs {
		wt.addrs[i].clock.minGap = -1
	}
	return wt
}

func (wt *witness) connOpened(cs *connState) {
	wt.conns.Add(1)
	a := &wt.addrs[cs.addr]
	a.mu.Lock()
	a.conns++
	a.open++
	a.maxOpen = max(a.maxOpen, a.open)
	a.mu.Unlock()
}

// requestStart records the start of a request for site (-1 when the request
// is misdirected) and returns the request's number on its connection.
func (wt *witness) requestStart(cs *connState, site int, path string, disallowed bool) int64 {
	now := wt.now()
	wt.requests.Add(1)
	a := &wt.addrs[cs.addr]
	a.mu.Lock()
	a.clock.start(now)
	if site < 0 {
		a.misdirected++
	}
	a.mu.Unlock()

	cs.mu.Lock()
	cs.requests++
	n := cs.requests
	var perConn int64
	fresh := false
	if site >= 0 {
		i := 0
		for i < len(cs.hosts) && cs.hosts[i].site != int32(site) {
			i++
		}
		if i == len(cs.hosts) {
			cs.hosts = append(cs.hosts, connHost{site: int32(site)})
			fresh = !cs.released
		}
		cs.hosts[i].requests++
		perConn = cs.hosts[i].requests
	}
	cs.mu.Unlock()
	if site < 0 {
		wt.misdirected.Add(1)
		return n
	}

	h := &wt.hosts[site]
	h.mu.Lock()
	if fresh {
		h.conns++
		h.open++
		h.maxOpen = max(h.maxOpen, h.open)
	}
	gap := h.clock.start(now)
	if d := wt.crawlDelay(site); d > 0 && gap >= 0 && gap < d {
		h.tooSoon++
	}
	h.perConnMax = max(h.perConnMax, perConn)
	if disallowed {
		h.disallowed++
		if len(h.sample) < disallowedSampleSize {
			h.sample = append(h.sample, path)
		}
	}
	h.mu.Unlock()
	if disallowed {
		wt.disallowed.Add(1)
	}
	return n
}

// requestEnd records the end of a request. robots marks a /robots.txt
// fetch; closing says the server closes the connection after this response,
// which ends the connection's count as open right away (the client may
// connect again before the server's close is processed).
func (wt *witness) requestEnd(cs *connState, site int, status int, size int64, robots, closing bool) {
	wt.bytes.Add(size)
	switch {
	case status == 404:
		wt.notFound.Add(1)
	case status >= 500:
		wt.errs.Add(1)
	}
	a := &wt.addrs[cs.addr]
	a.mu.Lock()
	a.clock.inFlight--
	a.mu.Unlock()
	if site >= 0 {
		h := &wt.hosts[site]
		h.mu.Lock()
		h.clock.inFlight--
		h.size += size
		if robots {
			h.robots++
		}
		switch {
		case status == 404:
			h.notFound++
		case status >= 500:
			h.errs++
		}
		h.mu.Unlock()
	}
	if closing {
		wt.release(cs)
	}
}

// release ends a connection's count as open, once.
func (wt *witness) release(cs *connState) {
	cs.mu.Lock()
	if cs.released {
		cs.mu.Unlock()
		return
	}
	cs.released = true
	hosts := cs.hosts
	cs.mu.Unlock()
	for _, ch := range hosts {
		h := &wt.hosts[ch.site]
		h.mu.Lock()
		h.open--
		h.mu.Unlock()
	}
	a := &wt.addrs[cs.addr]
	a.mu.Lock()
	a.open--
	a.mu.Unlock()
}

func (wt *witness) dnsQuery(name string, known bool) {
	wt.dnsQueries.Add(1)
	if !known {
		wt.dnsNX.Add(1)
	}
	wt.dnsMu.Lock()
	if _, ok := wt.dnsByName[name]; !ok && !known && len(wt.dnsByName) >= maxDNSNames {
		name = otherDNSName
	}
	wt.dnsByName[name]++
	wt.dnsMu.Unlock()
}

// reset zeroes the counts. Connections and requests in progress stay
// counted as open and in flight, so the maxima start from them.
func (wt *witness) reset() {
	wt.sinceMu.Lock()
	wt.since = wt.now()
	wt.sinceMu.Unlock()
	for _, c := range []*atomic.Int64{&wt.conns, &wt.requests, &wt.bytes, &wt.disallowed,
		&wt.notFound, &wt.errs, &wt.misdirected, &wt.dnsNX, &wt.dnsQueries} {
		c.Store(0)
	}
	for i := range wt.hosts {
		h := &wt.hosts[i]
		h.mu.Lock()
		h.clock.reset()
		h.conns, h.maxOpen, h.perConnMax = 0, h.open, 0
		h.tooSoon, h.disallowed, h.sample = 0, 0, nil
		h.robots, h.notFound, h.errs, h.size = 0, 0, 0, 0
		h.mu.Unlock()
	}
	for i := range wt.addrs {
		a := &wt.addrs[i]
		a.mu.Lock()
		a.clock.reset()
		a.conns, a.maxOpen, a.misdirected = 0, a.open, 0
		a.mu.Unlock()
	}
	wt.dnsMu.Lock()
	clear(wt.dnsByName)
	wt.dnsMu.Unlock()
	if wt.pages != nil {
		wt.pages.reset()
	}
}

func (wt *witness) snapshot() WitnessSnapshot {
	wt.sinceMu.Lock()
	snap := WitnessSnapshot{Since: wt.since, Taken: wt.now()}
	wt.sinceMu.Unlock()
	snap.Totals = WitnessTotals{
		Connections: wt.conns.Load(),
		Requests:    wt.requests.Load(),
		Bytes:       wt.bytes.Load(),
		Disallowed:  wt.disallowed.Load(),
		NotFound:    wt.notFound.Load(),
		Errors:      wt.errs.Load(),
		Misdirected: wt.misdirected.Load(),
	}
	snap.Hosts = make(map[string]HostCounts)
	for i := range wt.hosts {
		h := &wt.hosts[i]
		h.mu.Lock()
		if h.clock.requests > 0 {
			c := HostCounts{
				Connections:        h.conns,
				Requests:           h.clock.requests,
				MaxRequestsPerConn: h.perConnMax,
				MaxOpenConns:       h.maxOpen,
				MaxInFlight:        h.clock.maxInFlight,
				MinGap:             h.clock.minGap,
				WithinCrawlDelay:   h.tooSoon,
				Disallowed:         h.disallowed,
				DisallowedSample:   append([]string(nil), h.sample...),
				RobotsFetches:      h.robots,
				NotFound:           h.notFound,
				Errors:             h.errs,
				Bytes:              h.size,
			}
			if h.conns > 0 {
				c.MeanRequestsPerConn = float64(h.clock.requests) / float64(h.conns)
			}
			snap.Hosts[wt.hostNames(i)] = c
		}
		h.mu.Unlock()
	}
	snap.Addresses = make(map[string]AddrCounts)
	for i := range wt.addrs {
		a := &wt.addrs[i]
		a.mu.Lock()
		if a.clock.requests > 0 || a.conns > 0 {
			snap.Addresses[wt.addrNames[i]] = AddrCounts{
				Connections:  a.conns,
				Requests:     a.clock.requests,
				MaxOpenConns: a.maxOpen,
				MaxInFlight:  a.clock.maxInFlight,
				MinGap:       a.clock.minGap,
				Misdirected:  a.misdirected,
			}
		}
		a.mu.Unlock()
	}
	snap.DNS = DNSCounts{Queries: wt.dnsQueries.Load(), NXDomain: wt.dnsNX.Load(), ByName: make(map[string]int64)}
	wt.dnsMu.Lock()
	for k, v := range wt.dnsByName {
		snap.DNS.ByName[k] = v
	}
	wt.dnsMu.Unlock()
	return snap
}
