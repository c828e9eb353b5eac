package record

// The read methods of MemStore: what a crawl reads back at its start, and
// the queue heads it reads while it runs.

import (
	"cmp"
	"context"
	"lidi/engine/fetch"
	"maps"
	"slices"
	"strings"
	"time"
)

// Sites returns every site, ordered by ID, with Pending set to the number
// of its URLs still queued.
func (m *MemStore) Sites(ctx context.Context) ([]SiteRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []SiteRecord
	for _, s := range m.sites {
		r := *s
		r.RobotsBody, r.RobotsWire = slices.Clone(s.RobotsBody), slices.Clone(s.RobotsWire)
		r.RobotsRedirects = slices.Clone(s.RobotsRedirects)
		r.Pending = int64(len(m.queued[s.ID]))
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b SiteRecord) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// URLFingerprints calls fn with the ID of every URL recorded, in no
// particular order.
func (m *MemStore) URLFingerprints(ctx context.Context, fn func(id uint64)) error {
	m.mu.Lock()
	ids := make([]uint64, 0, len(m.urls))
	for id := range m.urls {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	for _, id := range ids {
		fn(id)
	}
	return nil
}

// Counters returns the fetches recorded, their body bytes, and those that
// failed or answered with a status of 400 or more.
func (m *MemStore) Counters(ctx context.Context) (Counters, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.counters
	c.Tallies = maps.Clone(c.Tallies)
	return c, nil
}

// Fingerprints calls fn for every fetched page and answered probe, in the
// order of their latest fetch.
func (m *MemStore) Fingerprints(ctx context.Context, fn func(FetchedPage)) error {
	m.mu.Lock()
	var us []*memURL
	for _, u := range m.urls {
		if u.State == URLFetched || u.State == URLProbed {
			us = append(us, u)
		}
	}
	slices.SortFunc(us, func(a, b *memURL) int {
		return cmp.Or(a.fetched.Compare(b.fetched), cmp.Compare(a.fetchSeq, b.fetchSeq))
	})
	out := make([]FetchedPage, len(us))
	for i, u := range us {
		out[i] = FetchedPage{URL: u.ID, Addr: u.URL, Digest: u.digest, Simhash: u.simhash,
			Main: u.main, NoURL: u.noURL, Title: u.title, Status: u.status}
	}
	m.mu.Unlock()
	for _, p := range out {
		fn(p)
	}
	return nil
}

// Rules returns every rule recorded, withdrawn ones included, in the
// order they were first recorded; a rule's Time is when it was withdrawn,
// or else learned.
func (m *MemStore) Rules(ctx context.Context) ([]RuleRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []RuleRecord
	for _, mr := range m.rules {
		r := mr.rule
		r.Support, r.Contradictions = pairs(r.Support), pairs(r.Contradictions)
		t := cmp.Or(mr.withdrawn, mr.learned, time.UnixMilli(0))
		out = append(out, RuleRecord{Rule: r, Time: t})
	}
	return out, nil
}

// Soft404s returns every soft-404 page recorded (one per origin), ordered
// by time and origin, with OfURL read from the URL it names.
func (m *MemStore) Soft404s(ctx context.Context) ([]Soft404Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Soft404Record
	for _, s := range m.soft404s {
		r := *s
		r.Sig.Evidence = pairs(s.Sig.Evidence)
		if u := m.urls[r.Sig.Of]; u != nil {
			r.Sig.OfURL = u.URL
		}
		if r.Time.IsZero() {
			r.Time = time.UnixMilli(0)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Soft404Record) int {
		return cmp.Or(a.Time.Compare(b.Time), strings.Compare(a.Sig.Origin, b.Sig.Origin))
	})
	return out, nil
}

// RuleSkipped calls fn for every URL skipped under a rule, in no
// particular order.
func (m *MemStore) RuleSkipped(ctx context.Context, fn func(RuleSkippedURL)) error {
	m.mu.Lock()
	var out []RuleSkippedURL
	for _, u := range m.urls {
		if u.State == URLSkipped && u.Rule != 0 {
			out = append(out, RuleSkippedURL{ID: u.ID, URL: u.URL, Site: u.Site, Rule: u.Rule})
		}
	}
	m.mu.Unlock()
	for _, u := range out {
		fn(u)
	}
	return nil
}

// Held returns the pages whose links wait for a probe's answer, ordered
// by probe and page (as signed numbers, as the file orders them); a hold
// whose page was never recorded is left out.
func (m *MemStore) Held(ctx context.Context) ([]HeldLinks, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []HeldLinks
	for k, links := range m.holds {
		u := m.urls[k[1]]
		if u == nil {
			continue
		}
		h := HeldLinks{Probe: k[0], Page: k[1], URL: u.URL, Depth: u.Depth, Redirect: u.redirect,
			Simhash: u.simhash, NoURL: u.noURL, Title: u.title}
		if links != "" {
			h.Links = strings.Split(links, "\n")
		}
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b HeldLinks) int {
		return cmp.Or(cmp.Compare(int64(a.Probe), int64(b.Probe)), cmp.Compare(int64(a.Page), int64(b.Page)))
	})
	return out, nil
}

// Head returns up to n URLs of site in state URLQueued, ordered by
// (Priority, Seq); next is the Priority of the first queued URL after
// those returned, and more reports whether there is one. A URL fetched
// before and queued again carries its Copy. n <= 0 returns no URLs but
// still reports next and more.
func (m *MemStore) Head(ctx context.Context, site int64, n int) (urls []QueuedURL, next float64, more bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := make([]*memURL, 0, len(m.queued[site]))
	for id := range m.queued[site] {
		q = append(q, m.urls[id])
	}
	slices.SortFunc(q, func(a, b *memURL) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), cmp.Compare(a.Seq, b.Seq), cmp.Compare(int64(a.ID), int64(b.ID)))
	})
	n = max(n, 0)
	if n > 0 {
		urls = make([]QueuedURL, 0, min(n, len(q)))
	}
	for _, u := range q {
		if len(urls) == n {
			return urls, u.Priority, true, nil
		}
		qu := QueuedURL{ID: u.ID, URL: u.URL, Depth: u.Depth, Priority: u.Priority, Seq: u.Seq, SlowDowns: u.slowDowns}
		if !u.fetched.IsZero() {
			qu.Copy = &fetch.Copy{Validators: fetch.Validators{ETag: u.etag, LastModified: u.lastMod},
				Digest: u.digest, Simhash: u.simhash}
		}
		urls = append(urls, qu)
	}
	return urls, 0, false, nil
}

// FetchedLinks calls fn for every fetched page whose links are not held
// for a probe, with the IDs of its links (each once), ordered by page ID
// and link ID as signed numbers. links is reused between calls.
func (m *MemStore) FetchedLinks(ctx context.Context, fn func(page uint64, url string, links []uint64)) error {
	type page struct {
		id    uint64
		url   string
		links []uint64
	}
	m.mu.Lock()
	held := map[uint64]bool{}
	for k := range m.holds {
		held[k[1]] = true
	}
	var pages []page
	for _, u := range m.urls {
		if u.State != URLFetched || held[u.ID] {
			continue
		}
		p := page{id: u.ID, url: u.URL}
		for to := range m.links[u.ID] {
			p.links = append(p.links, to)
		}
		slices.SortFunc(p.links, func(a, b uint64) int { return cmp.Compare(int64(a), int64(b)) })
		pages = append(pages, p)
	}
	m.mu.Unlock()
	slices.SortFunc(pages, func(a, b page) int { return cmp.Compare(int64(a.id), int64(b.id)) })
	var buf []uint64
	for _, p := range pages {
		buf = append(buf[:0], p.links...)
		fn(p.id, p.url, buf)
	}
	return nil
}

// CoverageHistory returns the coverage curve of the PageRank runs
// recorded, oldest first (Oracle -1 where none was known).
func (m *MemStore) CoverageHistory(ctx context.Context) ([]CoveragePoint, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]int64, 0, len(m.runs))
	for k := range m.runs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []CoveragePoint
	for _, k := range keys {
		r := m.runs[k]
		out = append(out, CoveragePoint{Pages: r.Pages, Coverage: r.Coverage, Oracle: r.Oracle})
	}
	return out, nil
}

// RecrawlURLs calls fn for every fetched URL whose last answer was 2xx or
// 3xx (a 304 keeps the status of the copy), in no particular order.
func (m *MemStore) RecrawlURLs(ctx context.Context, fn func(RecrawlURL)) error {
	m.mu.Lock()
	var out []RecrawlURL
	for _, u := range m.urls {
		if u.State == URLFetched && u.hasStatus && u.status >= 200 && u.status <= 399 {
			out = append(out, RecrawlURL{ID: u.ID, Site: u.Site, URL: u.URL, Fetched: u.fetched, LastMod: u.LastMod, Discovered: u.Discovered})
		}
	}
	m.mu.Unlock()
	for _, r := range out {
		fn(r)
	}
	return nil
}

// DupCounts counts the latest duplicate decision of each URL, by kind.
func (m *MemStore) DupCounts(ctx context.Context) (DupCounts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var c DupCounts
	for _, k := range m.dups {
		c.Add(k, 1)
	}
	return c, nil
}

// Channels returns every channel recorded, by ID.
func (m *MemStore) Channels(ctx context.Context) ([]ChannelRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ChannelRecord
	for _, c := range m.channels {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b ChannelRecord) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
