package record

import (
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
	_ DupCounter     = (*MemStore)(nil)
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
	dups     map[uint64]dedup.Kind // the latest duplicate decision of each URL
	fetches  int64                 // fetches recorded, to order Fingerprints within one millisecond
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
	slowDowns   int
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
	m.dups = map[uint64]dedup.Kind{}
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
		mu.Discovered, mu.LastMod = ms(u.Discovered), ms(u.LastMod)
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
			u.State, u.Priority, u.Seq, u.slowDowns = URLQueued, r.Priority, r.Seq, 0
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
	for _, t := range b.Tallies {
		if m.counters.Tallies == nil {
			m.counters.Tallies = map[string]int64{}
		}
		m.counters.Tallies[t.Key] += t.Add
	}
	for _, sd := range b.SlowDowns {
		if u := m.urls[sd.URL]; u != nil && u.State == URLQueued {
			u.slowDowns = sd.Tries
		}
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
	for _, d := range b.Dups {
		m.dups[d.URL] = d.Kind
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
	r.RobotsRedirects = slices.Clone(s.RobotsRedirects)
	if len(r.RobotsRedirects) == 0 {
		r.RobotsRedirects = nil // as the file keeps none
	}
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
// confirmed; any other fetch replaces what the URL's last fetch left. A
// probe's answer moves its URL to URLProbed and counts nowhere.
func (m *MemStore) page(p *PageRecord) {
	u := m.urls[p.URL]
	if u.State == URLQueued {
		m.dequeue(u)
	}
	u.State = URLFetched
	if p.Probe {
		u.State = URLProbed
	}
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
	if p.Probe {
		return
	}
	m.counters.Pages++
	if p.Recrawl {
		m.counters.Recrawls++
	}
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
