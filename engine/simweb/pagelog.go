package simweb

import (
	"sync"
	"sync/atomic"
	"time"
)

// PageRequests is what the witness's page log knows of one URL: how often it
// was requested and when, enough to tell a page fetched once from one
// fetched again, and whether the first fetch ended before a given moment.
type PageRequests struct {
	// Requests is the number of requests for the URL.
	Requests int64 `json:"requests"`
	// FirstDone is when the server finished answering the first request.
	// It is zero while that answer is still being sent.
	FirstDone time.Time `json:"first_done"`
	// SecondStart is when the second request arrived; zero with fewer
	// than two.
	SecondStart time.Time `json:"second_start"`
}

// pageLog is the witness's per-URL log (ServerConfig.LogPages): a count and
// two times for every URL requested, robots.txt excepted. An entry costs
// its URL plus 24 bytes and the map's overhead, about 100 bytes a URL.
type pageLog struct {
	mu    sync.Mutex
	urls  map[string]*pageEntry
	count atomic.Int64 // len(urls), read without the lock
}

// pageEntry keeps times as Unix nanoseconds, 0 for none.
type pageEntry struct {
	requests               int32
	firstDone, secondStart int64
}

func newPageLog() *pageLog { return &pageLog{urls: make(map[string]*pageEntry)} }

// start records a request for url arriving at now.
func (l *pageLog) start(url []byte, now time.Time) {
	l.mu.Lock()
	e := l.urls[string(url)]
	if e == nil {
		e = &pageEntry{}
		l.urls[string(url)] = e
		l.count.Store(int64(len(l.urls)))
	}
	e.requests++
	if e.requests == 2 {
		e.secondStart = now.UnixNano()
	}
	l.mu.Unlock()
}

// done records that the server finished answering a request for url at now.
func (l *pageLog) done(url []byte, now time.Time) {
	l.mu.Lock()
	if e := l.urls[string(url)]; e != nil && e.firstDone == 0 {
		e.firstDone = now.UnixNano()
	}
	l.mu.Unlock()
}

func (l *pageLog) snapshot() map[string]PageRequests {
	l.mu.Lock()
	defer l.mu.Unlock()
	m := make(map[string]PageRequests, len(l.urls))
	for u, e := range l.urls {
		m[u] = PageRequests{Requests: int64(e.requests), FirstDone: unixTime(e.firstDone), SecondStart: unixTime(e.secondStart)}
	}
	return m
}

func (l *pageLog) reset() {
	l.mu.Lock()
	clear(l.urls)
	l.count.Store(0)
	l.mu.Unlock()
}

func unixTime(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// PageRequests returns the page log (ServerConfig.LogPages): every URL
// requested since the server started or the witness was last reset,
// /robots.txt excepted, as "http://host:port/path?query" (the port left out
// when it is 80). It is nil when the server keeps no page log.
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
