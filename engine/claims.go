package engine

import (
	"time"

	"lidi/engine/dedup"
	"lidi/engine/record"
)

// demoted records pages observed before as new content that duplicate
// detection has since found to be copies (see dedup.Decision.Demoted):
// their original was fetched after them, or a rule keeping the wrong copy
// was reversed. Their links, followed already, stay followed.
func (c *crawl) demoted(ds []dedup.Demotion, now time.Time) {
	for _, dm := range ds {
		c.dup.Near++
		c.batch.Dups = append(c.batch.Dups, record.DupRecord{URL: dm.Copy, Of: dm.Of, Kind: dedup.Near, Test: dedup.TestClaimed, Similarity: dm.Similarity, Time: now})
	}
}
