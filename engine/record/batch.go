package record

import "unsafe"

// Batch is a set of changes applied atomically by Store.Apply. Its record
// lists are declared here once; Len, Reset and Append, next to them, cover
// each (TestBatchCoversEveryField checks it, so a new list cannot be
// forgotten in one of them). Its zero value
// is an empty batch. A Batch is not safe for concurrent use.
type Batch struct {
	Sites  []SiteRecord // inserted or updated (matched by ID); Pending is ignored
	URLs   []URLRecord  // inserted; a URL already present is left unchanged
	Pages  []PageRecord // recorded, and their URLs moved to URLFetched
	Links  []Link       // inserted; duplicates ignored
	Skips  []Skip       // queued URLs moved to URLSkipped
	Events []Event
	// SlowDowns set the 429/503 tries of queued URLs (QueuedURL.SlowDowns);
	// URLs no longer queued are left as they are.
	SlowDowns []SlowDown
	Tallies   []Tally // added to the engine's figures (Counters.Tallies)

	Dups     []DupRecord
	Rules    []RuleRecord
	Soft404s []Soft404Record
	// UnskipRules are the IDs (dedup.Rule.ID) of rules withdrawn: the
	// URLs skipped under them (Skip.Rule, URLRecord.Rule) move back to
	// URLQueued, after the batch's Skips.
	UnskipRules []uint64
	// Unskips are URLs skipped under a rule that move back to URLQueued
	// one by one, after UnskipRules: their canonical URL answered that it
	// does not exist (see dedup.Detector.NotFound).
	Unskips []uint64
	// Holds are inserted (matched by Probe), then Releases, probe IDs
	// whose answer decided the links they held, deleted.
	Holds    []HeldLinks
	Releases []uint64

	Priorities []PriorityUpdate // queued URLs re-ordered; URLs no longer queued are left as they are
	RankRuns   []RankRun        // inserted or replaced (matched by Time)
	Ranks      []RankRecord     // each URL's latest rank replaces its earlier one

	// Recrawl (see recrawl_loop.go).
	Requeues      []Requeue            // fetched URLs queued again; URLs not in URLFetched are left as they are
	Channels      []ChannelRecord      // inserted or replaced (matched by ID)
	Groups        []GroupRecord        // inserted or replaced (matched by Index)
	Reassignments []ReassignmentRecord // appended
}

// Len reports how many records the batch holds.
func (b *Batch) Len() int {
	return len(b.Sites) + len(b.URLs) + len(b.Pages) + len(b.Links) + len(b.Skips) + len(b.SlowDowns) + len(b.Tallies) + len(b.UnskipRules) + len(b.Unskips) + len(b.Events) +
		len(b.Dups) + len(b.Rules) + len(b.Soft404s) + len(b.Holds) + len(b.Releases) + len(b.Priorities) + len(b.RankRuns) + len(b.Ranks) +
		len(b.Requeues) + len(b.Channels) + len(b.Groups) + len(b.Reassignments)
}

// Bytes estimates the memory the batch's records hold: their own size
// and what they point to (bodies, heads, URLs, texts), where a crawl's
// batches hold most of it. Spare capacity is not counted, nor strings
// shared with constants (kinds, reasons). It costs a pass over the pages,
// URLs, sites, events and held links.
func (b *Batch) Bytes() int64 {
	n := size(b.Sites) + size(b.URLs) + size(b.Pages) + size(b.Links) + size(b.Skips) + size(b.SlowDowns) + size(b.Tallies) + size(b.UnskipRules) + size(b.Unskips) + size(b.Events) +
		size(b.Dups) + size(b.Rules) + size(b.Soft404s) + size(b.Holds) + size(b.Releases) + size(b.Priorities) + size(b.RankRuns) + size(b.Ranks) +
		size(b.Requeues) + size(b.Channels) + size(b.Groups) + size(b.Reassignments)
	for i := range b.Sites {
		s := &b.Sites[i]
		n += int64(len(s.Key)+len(s.Host)+len(s.Addr)+len(s.RobotsBody)+len(s.RobotsWire)+len(s.RobotsIP)+len(s.RobotsURL)) + size(s.RobotsRedirects)
		for _, h := range s.RobotsRedirects {
			n += int64(len(h.URL))
		}
	}
	for i := range b.URLs {
		n += int64(len(b.URLs[i].URL))
	}
	for i := range b.Pages {
		n += b.Pages[i].payload()
	}
	for i := range b.Tallies {
		n += int64(len(b.Tallies[i].Key))
	}
	for i := range b.Events {
		n += int64(len(b.Events[i].Site) + len(b.Events[i].Text))
	}
	for i := range b.Rules {
		r := &b.Rules[i].Rule
		n += int64(len(r.Origin)+len(r.Name)+len(r.Value)+len(r.From)+len(r.To)) + size(r.Support) + size(r.Contradictions)
	}
	for i := range b.Soft404s {
		s := &b.Soft404s[i].Sig
		n += int64(len(s.Origin)+len(s.OfURL)) + size(s.Evidence)
	}
	for i := range b.Holds {
		h := &b.Holds[i]
		n += int64(len(h.URL)+len(h.Redirect)) + size(h.Links)
		for _, l := range h.Links {
			n += int64(len(l))
		}
	}
	for i := range b.Channels {
		n += int64(len(b.Channels[i].ID))
	}
	for i := range b.Reassignments {
		r := &b.Reassignments[i]
		n += int64(len(r.Policy)) + size(r.Before) + size(r.After) + size(r.SuccessRates)
	}
	return n
}

// Bytes estimates the memory the record holds, what it points to
// included (see Batch.Bytes).
func (p *PageRecord) Bytes() int64 { return int64(unsafe.Sizeof(*p)) + p.payload() }

// payload is the bytes p points to.
func (p *PageRecord) payload() int64 {
	return int64(len(p.ContentType) + len(p.Body) + len(p.Err) + len(p.Redirect) + len(p.ETag) + len(p.LastModified) + len(p.Wire) + len(p.IP))
}

// size is the memory of the elements of s.
func size[T any](s []T) int64 { return int64(len(s)) * int64(unsafe.Sizeof(*new(T))) }

// Reset empties the batch, keeping its storage.
func (b *Batch) Reset() {
	clear(b.Sites)
	clear(b.Pages)
	clear(b.Rules)
	clear(b.Soft404s)
	clear(b.Holds)
	b.Sites, b.URLs, b.Pages, b.Links, b.Skips, b.Events = b.Sites[:0], b.URLs[:0], b.Pages[:0], b.Links[:0], b.Skips[:0], b.Events[:0]
	b.SlowDowns, b.Tallies = b.SlowDowns[:0], b.Tallies[:0]
	b.Dups, b.Rules, b.Soft404s, b.UnskipRules, b.Unskips = b.Dups[:0], b.Rules[:0], b.Soft404s[:0], b.UnskipRules[:0], b.Unskips[:0]
	b.Holds, b.Releases = b.Holds[:0], b.Releases[:0]
	b.Priorities, b.RankRuns, b.Ranks = b.Priorities[:0], b.RankRuns[:0], b.Ranks[:0]
	clear(b.Reassignments)
	b.Requeues, b.Channels, b.Groups, b.Reassignments = b.Requeues[:0], b.Channels[:0], b.Groups[:0], b.Reassignments[:0]
}

// Append appends src's records to b's.
func (b *Batch) Append(src *Batch) {
	b.Sites = append(b.Sites, src.Sites...)
	b.URLs = append(b.URLs, src.URLs...)
	b.Pages = append(b.Pages, src.Pages...)
	b.Links = append(b.Links, src.Links...)
	b.Skips = append(b.Skips, src.Skips...)
	b.Events = append(b.Events, src.Events...)
	b.SlowDowns = append(b.SlowDowns, src.SlowDowns...)
	b.Tallies = append(b.Tallies, src.Tallies...)
	b.Dups = append(b.Dups, src.Dups...)
	b.Rules = append(b.Rules, src.Rules...)
	b.Soft404s = append(b.Soft404s, src.Soft404s...)
	b.UnskipRules = append(b.UnskipRules, src.UnskipRules...)
	b.Unskips = append(b.Unskips, src.Unskips...)
	b.Holds = append(b.Holds, src.Holds...)
	b.Releases = append(b.Releases, src.Releases...)
	b.Priorities = append(b.Priorities, src.Priorities...)
	b.RankRuns = append(b.RankRuns, src.RankRuns...)
	b.Ranks = append(b.Ranks, src.Ranks...)
	b.Requeues = append(b.Requeues, src.Requeues...)
	b.Channels = append(b.Channels, src.Channels...)
	b.Groups = append(b.Groups, src.Groups...)
	b.Reassignments = append(b.Reassignments, src.Reassignments...)
}
