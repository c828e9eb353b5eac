package simweb

import (
	"sync"
	"sync/atomic"
	"time"
)

// PageRequests is what the witness's page log knows of one URL: how often it
// was requested and when it was last answered, enough to tell a page
// fetched once from one fetched again and whether its latest fetch ended
// before a given moment.
type PageRequests struct {
	// Requests is the number of requests for the URL.
	Requests int64 `json:"requests"`
	// LastDone is when the server last finished answering a request for
	// the URL. It is zero while the first answer is still being sent.
	LastDone time.Time `json:"last_done"`
}

// pageLog is the witness's per-URL log (ServerConfig.LogPages): a count and
// a time for every URL requested, robots.txt excepted. An entry costs its
// URL plus 16 bytes and the map's overhead, about 100 bytes a URL.
type pageLog struct {
	mu    sync.Mutex
	urls  map[string]*pageEntry
	count atomic.Int64 // len(urls), read without the lock
}

// pageEntry keeps lastDone as Unix nanoseconds, 0 for none.
type pageEntry struct {
	requests int64
	lastDone int64
}

func newPageLog() *pageLog { return &pageLog{urls: make(map[string]*pageEntry)} }

// start records a request for url.
func (l *pageLog) start(url []byte) {
	l.mu.Lock()
	e := l.urls[string(url)]
	if e == nil {
		e = &pageEntry{}
		l.urls[string(url)] = e
		l.count.Store(int64(len(l.urls)))
	}
	e.requests++
	l.mu.Unlock()
}

// done records that the server finished answering a request for url at now.
func (l *pageLog) done(url []byte, now time.Time) {
	l.mu.Lock()
	if e := l.urls[string(url)]; e != nil {
		e.lastDone = now.UnixNano()
	}
	l.mu.Unlock()
}

func (l *pageLog) snapshot() map[string]PageRequests {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[string]PageRequests, len(l.urls))
	for u, e := range l.urls {
		r := PageRequests{Requests: e.requests}
		if e.lastDone != 0 {
			r.LastDone = time.Unix(0, e.lastDone)
		}
		m[u] = r
	}
	return m
}

func (l *pageLog) reset() {
	l.mu.Lock()
	clear(l.urls)
	l.count.Store(0)
	l.mu.Unlock()
}

// PageRequests returns the page log (ServerConfig.LogPages): every URL
// requested since the server started or the witness was last reset,
// /robots.txt excepted, as "http://host:port/path?query" ("https://" on a
// TLS web; the port left out when it is the scheme's default). It is nil when the server keeps no page log.
func (s *Server) PageRequests() map[string]PageRequests {
	if s.wit.pages == nil {
		return nil
	}
	return s.wit.pages.snapshot()
}

// PagesRequested returns the number of distinct URLs in the page log, 0
// when the server keeps none. It is cheap enough to poll.
func (s *Server) PagesRequested() int {
	if s.wit.pages == nil {
		return 0
	}
	return int(s.wit.pages.count.Load())
}
