package record

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"lidi/engine/dedup"
	"lidi/engine/fetch"
)

// ErrUnknownURL reports a page recorded for a URL the MemStore never saw;
// the batch that held it is not applied.
var ErrUnknownURL = errors.New("record: page for an unknown url")

var (
	_ Store          = (*MemStore)(nil)
	_ LinkLoader     = (*MemStore)(nil)
	_ CoverageLoader = (*MemStore)(nil)
	_ RecrawlStore   = (*MemStore)(nil)
)

// MemStore is a Store kept in memory, for tests, as colly ships an
// InMemoryStorage: it lets the engine's logic be tested without SQLite,
// and a test read back what the engine wrote. It implements Store,
// LinkLoader, CoverageLoader and RecrawlStore with the semantics of
// lidi's SQLite store (storage.DB; a conformance test in storage runs the
// same batches against both and compares every answer), times included:
// they are kept to the millisecond, as the file keeps them.
//
// Its limits: it is not durable (a "restart" is reading the same
// MemStore again); it is not a Snapshotter; it keeps only what the read
// methods of Store and its optional interfaces give back, so page bodies,
// the fetch history, duplicates, ranks, priority groups, reassignments
// and events are dropped; and it holds everything in memory, so it is no
// store for a large crawl.
//
// Its zero value is an empty store. It is safe for concurrent use; the
// callbacks of its streaming methods run without its lock held, so they
// may call the MemStore.
type MemStore struct {
	mu       sync.Mutex
	sites    map[int64]*SiteRecord
	siteKeys map[string]int64
	urls     map[uint64]*memURL
	queued   map[int64]map[uint64]struct{} // by site: the IDs of its URLs in URLQueued
	links    map[uint64]map[uint64]struct{}
	rules    []*memRule // in the order first recorded
	ruleKeys map[string]*memRule
	soft404s map[string]*Soft404Record
	holds    map[[2]uint64]string // by (probe, page): the links, one a line
	runs     map[int64]RankRun    // by Time in unix milliseconds
	channels map[string]ChannelRecord
	counters Counters
	fetches  int64 // fetches recorded, to order Fingerprints within one millisecond
}

// memURL is what MemStore keeps of a URL: its record and, once fetched,
// what its latest fetch left.
type memURL struct {
	URLRecord
	fetched     time.Time // zero until fetched (or fetched at the zero time)
	fetchSeq    int64
	hasStatus   bool
	status      int
	redirect    string
	digest      uint64
	simhash     uint64
	main, noURL uint64
	title       uint64
	etag        string
	lastMod     string
}

type memRule struct {
	rule      dedup.Rule
	learned   time.Time // zero for none
	withdrawn time.Time // zero for none
}

func (m *MemStore) init() {
	if m.sites != nil {
		return
	}
	m.sites = map[int64]*SiteRecord{}
	m.siteKeys = map[string]int64{}
	m.urls = map[uint64]*memURL{}
	m.queued = map[int64]map[uint64]struct{}{}
	m.links = map[uint64]map[uint64]struct{}{}
	m.ruleKeys = map[string]*memRule{}
	m.soft404s = map[string]*Soft404Record{}
	m.holds = map[[2]uint64]string{}
	m.runs = map[int64]RankRun{}
	m.channels = map[string]ChannelRecord{}
}

// ms rounds t to the millisecond, as the store keeps times; the zero time
// stays zero (none).
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli())
}

// pairs copies ps, nil for none (as the store keeps them).
func pairs(ps []dedup.Pair) []dedup.Pair {
	if len(ps) == 0 {
		return nil
	}
	return slices.Clone(ps)
}

// Apply applies b atomically, in the order storage.DB does: sites, URLs,
// pages, requeues and the recrawl's records, links, skips, UnskipRules,
// Unskips, rules and soft 404s, holds, releases, priorities, PageRank runs.
// A page for a URL never recorded fails the batch with ErrUnknownURL, a
// URL in an invalid state or a site whose Key another site has fails it
// too; a failed batch changes nothing.
func (m *MemStore) Apply(ctx context.Context, b *Batch) error {
	if b == nil || b.Len() == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.init()
	if err := m.check(b); err != nil {
		return fmt.Errorf("record: mem store: apply: %w", err)
	}
	for i := range b.Sites {
		m.site(&b.Sites[i])
	}
	for i := range b.URLs {
		u := &b.URLs[i]
		if _, ok := m.urls[u.ID]; ok {
			continue
		}
		mu := &memURL{URLRecord: *u}
		mu.Discovered = ms(u.Discovered)
		m.urls[u.ID] = mu
		if u.State == URLQueued {
			m.enqueue(mu)
		}
	}
	for i := range b.Pages {
		m.page(&b.Pages[i])
	}
	for _, r := range b.Requeues {
		if u := m.urls[r.URL]; u != nil && u.State == URLFetched {
			u.State, u.Priority, u.Seq = URLQueued, r.Priority, r.Seq
			m.enqueue(u)
		}
	}
	for _, c := range b.Channels {
		c.Interval = c.Interval.Truncate(time.Millisecond)
		c.LastUpdate, c.Updated = ms(c.LastUpdate), ms(c.Updated)
		m.channels[c.ID] = c
	}
	for _, l := range b.Links {
		to := m.links[l.From]
		if to == nil {
			to = map[uint64]struct{}{}
			m.links[l.From] = to
		}
		to[l.To] = struct{}{}
	}
	for _, s := range b.Skips {
		if u := m.urls[s.URL]; u != nil && u.State == URLQueued {
			m.dequeue(u)
			u.State, u.SkipReason, u.Rule = URLSkipped, s.Reason, s.Rule
		}
	}
	// A withdrawn rule queues again all it skipped; then single URLs whose
	// canonical URL does not exist.
	for _, rule := range b.UnskipRules {
		for _, u := range m.urls {
			if u.State == URLSkipped && u.Rule == rule && rule != 0 {
				m.unskip(u)
			}
		}
	}
	for _, id := range b.Unskips {
		if u := m.urls[id]; u != nil && u.State == URLSkipped && u.SkipReason == SkipRule {
			m.unskip(u)
		}
	}
	for i := range b.Rules {
		m.rule(&b.Rules[i])
	}
	for i := range b.Soft404s {
		s := b.Soft404s[i]
		s.Sig.OfURL = "" // read from the URL it names
		s.Sig.Evidence = pairs(s.Sig.Evidence)
		if s.Sig.Probe == 0 {
			s.Sig.ProbeStatus = 0
		}
		s.Time = ms(s.Time)
		m.soft404s[s.Sig.Origin] = &s
	}
	for i := range b.Holds {
		h := &b.Holds[i]
		m.holds[[2]uint64{h.Probe, h.Page}] = strings.Join(h.Links, "\n")
	}
	for _, probe := range b.Releases {
		for k := range m.holds {
			if k[0] == probe {
				delete(m.holds, k)
			}
		}
	}
	for _, p := range b.Priorities {
		if u := m.urls[p.URL]; u != nil && u.State == URLQueued {
			u.Priority = p.Priority
		}
	}
	for _, r := range b.RankRuns {
		key := r.Time.UnixMilli()
		if r.Time.IsZero() { // a new row with the next key, as SQLite numbers rows
			key = 1
			for k := range m.runs {
				key = max(key, k+1)
			}
		}
		if !(r.Oracle >= 0) { // NaN too, as the file keeps NULL
			r.Oracle = -1
		}
		m.runs[key] = r
	}
	return nil
}

// check finds what would fail b before anything of it is applied.
func (m *MemStore) check(b *Batch) error {
	keys := map[string]int64{} // the batch's sites, by key, over m.siteKeys
	gone := map[string]bool{}  // keys the batch's sites gave up
	owner := func(key string) (int64, bool) {
		if id, ok := keys[key]; ok {
			return id, true
		}
		if gone[key] {
			return 0, false
		}
		id, ok := m.siteKeys[key]
		return id, ok
	}
	ids := map[int64]string{}
	for i := range b.Sites {
		s := &b.Sites[i]
		if id, ok := owner(s.Key); ok && id != s.ID {
			return fmt.Errorf("site %d (%s): key already recorded for site %d", s.ID, s.Key, id)
		}
		old, ok := ids[s.ID]
		if !ok {
			if r := m.sites[s.ID]; r != nil {
				old, ok = r.Key, true
			}
		}
		if ok && old != s.Key {
			delete(keys, old)
			gone[old] = true
		}
		keys[s.Key], ids[s.ID] = s.ID, s.Key
	}
	added := map[uint64]bool{}
	for i := range b.URLs {
		u := &b.URLs[i]
		if u.State < URLQueued || u.State > URLSkipped {
			return fmt.Errorf("url %s: invalid state %d", u.URL, u.State)
		}
		added[u.ID] = true
	}
	for i := range b.Pages {
		if id := b.Pages[i].URL; m.urls[id] == nil && !added[id] {
			return fmt.Errorf("%w: %016x", ErrUnknownURL, id)
		}
	}
	return nil
}

func (m *MemStore) site(s *SiteRecord) {
	r := *s
	r.Pending = 0
	r.RobotsBody = slices.Clone(s.RobotsBody)
	r.RobotsWire = slices.Clone(s.RobotsWire)
	r.RobotsFetched, r.NextVisit = ms(s.RobotsFetched), ms(s.NextVisit)
	if old := m.sites[s.ID]; old != nil {
		delete(m.siteKeys, old.Key)
	}
	m.sites[s.ID] = &r
	m.siteKeys[r.Key] = r.ID
}

func (m *MemStore) enqueue(u *memURL) {
	q := m.queued[u.Site]
	if q == nil {
		q = map[uint64]struct{}{}
		m.queued[u.Site] = q
	}
	q[u.ID] = struct{}{}
}

func (m *MemStore) dequeue(u *memURL) { delete(m.queued[u.Site], u.ID) }

func (m *MemStore) unskip(u *memURL) {
	u.State, u.SkipReason, u.Rule = URLQueued, "", 0
	m.enqueue(u)
}

// page records a fetch on its URL, as storage.DB does: a 304, or a
// recrawl that got no answer, a 5xx or a 429, only says when the copy was
// confirmed; any other fetch replaces what the URL's last fetch left.
func (m *MemStore) page(p *PageRecord) {
	u := m.urls[p.URL]
	if u.State == URLQueued {
		m.dequeue(u)
	}
	u.State = URLFetched
	m.fetches++
	u.fetched, u.fetchSeq = ms(p.Fetched), m.fetches
	notModified := p.Verdict == fetch.VerdictNotModified ||
		p.Recrawl && (p.Err != "" || p.Status >= 500 || p.Status == 429)
	if notModified {
		if p.ETag != "" {
			u.etag = p.ETag
		}
		if p.LastModified != "" {
			u.lastMod = p.LastModified
		}
	} else {
		u.hasStatus, u.status, u.redirect = true, p.Status, p.Redirect
		u.digest, u.simhash, u.main, u.noURL, u.title = p.Digest, p.Simhash, p.MainSimhash, p.NoURLSimhash, p.TitleHash
		u.etag, u.lastMod = p.ETag, p.LastModified
	}
	m.counters.Pages++
	m.counters.Bytes += p.Length
	if p.Err != "" || p.Status >= 400 {
		m.counters.Errors++
	}
}

// rule records a rule when learned and updates it when withdrawn; the
// time it was learned stays.
func (m *MemStore) rule(rec *RuleRecord) {
	r := rec.Rule
	r.Support, r.Contradictions = pairs(r.Support), pairs(r.Contradictions)
	key := r.Key()
	mr := m.ruleKeys[key]
	if mr == nil {
		mr = &memRule{}
		if !r.Withdrawn {
			mr.learned = ms(rec.Time)
		}
		m.ruleKeys[key] = mr
		m.rules = append(m.rules, mr)
	}
	mr.rule = r
	mr.withdrawn = time.Time{}
	if r.Withdrawn {
		mr.withdrawn = ms(rec.Time)
	}
}

// Sites returns every site, ordered by ID, with Pending set to the number
// of its URLs still queued.
func (m *MemStore) Sites(ctx context.Context) ([]SiteRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []SiteRecord
	for _, s := range m.sites {
		r := *s
		r.RobotsBody, r.RobotsWire = slices.Clone(s.RobotsBody), slices.Clone(s.RobotsWire)
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
	return m.counters, nil
}

// Fingerprints calls fn for every fetched page, in the order of their
// latest fetch.
func (m *MemStore) Fingerprints(ctx context.Context, fn func(FetchedPage)) error {
	m.mu.Lock()
	var us []*memURL
	for _, u := range m.urls {
		if u.State == URLFetched {
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
		qu := QueuedURL{ID: u.ID, URL: u.URL, Depth: u.Depth, Priority: u.Priority, Seq: u.Seq}
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
			out = append(out, RecrawlURL{ID: u.ID, Site: u.Site, URL: u.URL, Fetched: u.fetched})
		}
	}
	m.mu.Unlock()
	for _, r := range out {
		fn(r)
	}
	return nil
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
