package engine

// refilter applies what duplicate detection learned from a page of a
// running lease to the rest of that lease, as onHead would have had it
// known it then: the URLs a rule now covers, and the copies of a
// candidate rule beyond what its evidence still needs, are revoked (see
// leaseFeed). The robot returns them unfetched and they are decided
// again when the site's queue is next read (skipped under the rule, or
// fetched if it never came). Each URL is revoked once; URLs queued for a
// recrawl are left to the recrawler.
func (c *crawl) refilter(run *leaseRun) {
	det := c.e.det
	l := run.lease
	if det == nil || l.feed == nil {
		return
	}
	var taken map[uint64]int // copies of a candidate left in the lease
	for i := run.upTo; i < len(l.URLs); i++ {
		q := &l.URLs[i]
		if q.Copy != nil || run.revoked != nil && run.revoked[i] {
			continue
		}
		if _, _, covered := det.Canonical(q.URL); !covered {
			cand, need, ok := det.Unproven(q.URL)
			if !ok {
				continue
			}
			if taken == nil {
				taken = make(map[uint64]int)
			}
			if taken[cand] < need {
				taken[cand]++
				continue
			}
		}
		if run.revoked == nil {
			run.revoked = make([]bool, len(l.URLs))
		}
		run.revoked[i] = true
		l.feed.revoked <- q.ID // never blocks: it holds every URL of the lease
	}
}
