package simulate

import (
	"errors"
	"sort"
	"time"

	"lidi/engine/recrawl"
)

// Page is one page of a page-level simulation (Pages): its ground truth
// and what a crawler can learn of it.
type Page struct {
	Channel recrawl.ChannelID
	Site    string
	Weight  float64 // importance; 0 means 1
	// Changes are the page's change times, sorted, as offsets from the
	// simulation's start (virtual time 0).
	Changes []time.Duration
	// Dated: its server sends Last-Modified, so a visit that sees a change
	// also learns when it happened.
	Dated bool
	// NewLinks, if set, is how many links to pages the crawler has not
	// seen a visit at `to` finds, the previous visit having been at `from`
	// (a news site's front page lists the articles published between).
	NewLinks func(from, to time.Duration) int
}

// PagesSetup describes a page-level simulation: a recrawl.Planner
// schedules the pages, whose copies are all fetched at time 0, until
// Until; each site takes one request per its Gap at most.
type PagesSetup struct {
	Pages   []Page
	Until   time.Duration
	Budget  float64 // visits a second the planner may spend
	Gap     map[string]time.Duration
	Step    time.Duration // the event loop's step; 0 means a minute
	Options recrawl.PlannerOptions
}

// ErrPagesSetup reports a page-level set-up that cannot run.
var ErrPagesSetup = errors.New("simulate: bad page set-up")

// Pages runs a page-level simulation and returns every page's fetch times
// (the first at 0). It is deterministic in its set-up.
func Pages(s PagesSetup) ([][]time.Duration, error) {
	if s.Until <= 0 || s.Budget <= 0 || len(s.Pages) == 0 {
		return nil, ErrPagesSetup
	}
	step := s.Step
	if step <= 0 {
		step = time.Minute
	}
	epoch := time.Unix(0, 0).UTC()
	pl := recrawl.NewPlanner(s.Options)
	pl.SetBudget(s.Budget)
	for site, g := range s.Gap {
		pl.SetSiteGap(site, g)
	}
	fetches := make([][]time.Duration, len(s.Pages))
	for i, p := range s.Pages {
		pl.Add(recrawl.PageInfo{ID: uint64(i), Channel: p.Channel, Site: p.Site, Weight: p.Weight}, epoch)
		fetches[i] = []time.Duration{0}
	}
	// Each site's queue of due pages, served one per gap.
	queued := make([]bool, len(s.Pages))
	siteQueue := map[string][]int{}
	siteNext := map[string]time.Duration{}
	var sites []string
	for now := step; now <= s.Until; now += step {
		for _, id := range pl.Due(epoch.Add(now), 0) {
			i := int(id)
			if queued[i] {
				continue
			}
			queued[i] = true
			site := s.Pages[i].Site
			if _, ok := siteQueue[site]; !ok {
				sites = append(sites, site)
				sort.Strings(sites)
			}
			siteQueue[site] = append(siteQueue[site], i)
		}
		for _, site := range sites {
			q := siteQueue[site]
			for len(q) > 0 && siteNext[site] <= now {
				i := q[0]
				q = q[1:]
				queued[i] = false
				// Served within the step, no sooner than the site allows.
				at := max(siteNext[site], now-step+1)
				visit(pl, s.Pages[i], i, fetches, at, epoch)
				siteNext[site] = at + max(s.Gap[site], time.Nanosecond)
			}
			siteQueue[site] = q
		}
	}
	return fetches, nil
}

// visit fetches page i at now and tells the planner what it saw.
func visit(pl *recrawl.Planner, p Page, i int, fetches [][]time.Duration, now time.Duration, epoch time.Time) {
	prev := fetches[i][len(fetches[i])-1]
	fetches[i] = append(fetches[i], now)
	// The changes in (prev, now].
	a := sort.Search(len(p.Changes), func(j int) bool { return p.Changes[j] > prev })
	b := sort.Search(len(p.Changes), func(j int) bool { return p.Changes[j] > now })
	v := recrawl.Visit{At: epoch.Add(now), Interval: now - prev, Changed: b > a}
	if v.Changed && p.Dated {
		v.LastModified = epoch.Add(p.Changes[b-1])
	}
	n := 0
	if p.NewLinks != nil {
		n = p.NewLinks(prev, now)
	}
	pl.Visit(uint64(i), v, n)
}
