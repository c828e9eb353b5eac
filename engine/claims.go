package engine

import (
	"time"

	"lidi/engine/dedup"
	"lidi/engine/record"
	"lidi/engine/visit"
)

// demoted records pages observed before as new content that duplicate
// detection has since found to be copies (see dedup.Decision.Demoted):
// their original was fetched after them, or a rule keeping the wrong copy
// was reversed. Their links, followed already, stay followed.
func (d *detection) demoted(ds []dedup.Demotion, now time.Time, v *verdict) {
	for _, dm := range ds {
		d.dup.Near++
		v.rec.Dups = append(v.rec.Dups, record.DupRecord{URL: dm.Copy, Of: dm.Of, Kind: dedup.Near, Test: dedup.TestClaimed, Similarity: dm.Similarity, Time: now})
	}
}

// prefer queues urls, the original page m claims to copy (see
// dedup.Decision.Prefer), ahead of the rest of their site's queue, as a
// probe is (see probe), so that the original answers before more copies
// are fetched. A URL out of scope, known already or covered by a rule is
// left as it is.
func (c *crawl) prefer(urls []string, m *visit.PageResult, now time.Time) {
	for _, u := range urls {
		c.queueFirst(u, m.Depth, m.Record.URL, now)
	}
}

// queueFirst queues url, found at depth on page parent, ahead of the
// rest of its site's queue (probePriority), and returns its id; it
// reports false when url was not queued (out of scope, known already,
// covered by a rule).
func (c *crawl) queueFirst(url string, depth int, parent uint64, now time.Time) (uint64, bool) {
	f, ok := c.inScope(url, depth)
	n := len(c.batch.URLs)
	if ok {
		c.discover(f, depth, parent, now)
	}
	if len(c.batch.URLs) != n+1 || c.batch.URLs[n].ID != f.ID || c.batch.URLs[n].State != record.URLQueued {
		return 0, false
	}
	rec := &c.batch.URLs[n]
	rec.Priority = probePriority
	s := c.sites[rec.Site]
	if p := s.leasing; p != nil {
		p.sincePrio = min(p.sincePrio, probePriority)
	}
	c.f.Found(&s.Site, 0, probePriority, now)
	return f.ID, true
}
