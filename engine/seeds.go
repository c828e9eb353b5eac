package engine

import (
	"fmt"
	"slices"
	"time"

	"lidi/engine/record"
)

func (c *crawl) addSeeds() {
	now := c.e.clock.Now()
	for _, raw := range c.e.cfg.Seeds {
		u, err := c.e.cfg.Normalizer.Normalize(raw)
		if err != nil {
			c.badSeed(fmt.Sprintf("%s: not a URL: %v", raw, err))
			continue
		}
		f, ok := c.inScope(u, 0)
		if !ok {
			c.badSeed(fmt.Sprintf("%s: out of scope", raw))
			continue
		}
		c.discover(f, 0, 0, now)
		if fs := c.f.Lookup(f.Key); fs != nil && !c.seeds.answered {
			c.seeds.sites[fs.ID] = true
		}
	}
}

func (c *crawl) badSeed(why string) {
	c.seeds.bad = append(c.seeds.bad, why)
	c.e.event(record.Event{Kind: record.EventSeedFailed, Text: "seed " + why})
}

// seedFailed notes that the site of a seed failed, while nothing has
// answered yet.
func (c *crawl) seedFailed(s *site, why string, now time.Time) {
	if c.seeds.answered || !c.seeds.sites[s.ID] {
		return
	}
	if _, ok := c.seeds.failed[s.ID]; ok {
		return
	}
	c.seeds.failed[s.ID] = why
	c.e.event(record.Event{Time: now, Kind: record.EventSeedFailed, Site: s.Key, Text: why})
}

// allSeedsFailed returns the error that ends a crawl whose every seed
// failed before anything answered, or nil.
func (c *crawl) allSeedsFailed() error {
	if c.seeds.answered || c.leases.busy > 0 || len(c.seeds.sites)+len(c.seeds.bad) == 0 {
		return nil
	}
	if len(c.seeds.sites) == 0 && c.f.Pending() > 0 {
		return nil // resumed: the seeds were known, their URLs fetched or queued
	}
	reasons := append([]string(nil), c.seeds.bad...)
	ids := make([]int64, 0, len(c.seeds.sites))
	for id := range c.seeds.sites {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		why, failed := c.seeds.failed[id]
		if !failed {
			return nil
		}
		reasons = append(reasons, why)
	}
	return &SeedsFailedError{Reasons: reasons}
}
