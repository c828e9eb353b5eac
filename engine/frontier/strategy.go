package frontier

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Strategy orders the two levels of the scheduler of Castillo's Figure 6.4:
// the sites, and the pages inside each site. A Strategy must be safe to call
// from the one goroutine that owns the Frontier; it needs no locking of its own.
//
// Later strategies (PageRank-based ones, an oracle) fit the same interface:
// a page's priority can come from any score, and SiteLess sees each site's
// pending count and the priority of its best queued page.
type Strategy interface {
	// Name is the strategy's name in config.yaml.
	Name() string
	// PagePriority places a newly found page in its site's queue: lower is
	// fetched first; ties go to the page found first.
	PagePriority(p PageInfo) float64
	// SiteLess reports whether site a should be visited before site b.
	SiteLess(a, b *Site) bool
}

// PageInfo is what a strategy knows of a page when it is found.
type PageInfo struct {
	URL    string
	Depth  int    // links from the nearest seed
	ID     uint64 // URL fingerprint
	Parent uint64 // fingerprint of the page it was found on; 0 for seeds
}

// Length is Castillo's Length strategy: sites ordered by the number of pages
// pending in their queue (most first, re-ordered as pages are found), pages
// inside a site by depth. Its zero value is ready to use.
type Length struct{}

func (Length) Name() string                    { return "length" }
func (Length) PagePriority(p PageInfo) float64 { return float64(p.Depth) }
func (Length) SiteLess(a, b *Site) bool {
	if a.Pending != b.Pending {
		return a.Pending > b.Pending
	}
	return a.Seq < b.Seq
}

// Depth is the breadth-first strategy: the site whose best queued page is
// shallowest goes first, and pages inside a site go by depth. Its zero value
// is ready to use.
type Depth struct{}

func (Depth) Name() string                    { return "depth" }
func (Depth) PagePriority(p PageInfo) float64 { return float64(p.Depth) }
func (Depth) SiteLess(a, b *Site) bool {
	if a.HeadPriority != b.HeadPriority {
		return a.HeadPriority < b.HeadPriority
	}
	return a.Seq < b.Seq
}

// StrategyOptions are what a strategy is made with besides its name. The
// zero value makes every strategy but "optimal", which needs Oracle.
type StrategyOptions struct {
	// K is the number of pages fetched between two PageRank runs of
	// "batch" and "partial" (pagerank.batch_pages); below 1, DefaultK.
	K int
	// Oracle returns a page's true PageRank, for "optimal" (lidi demo and
	// lidi sim know their synthetic web's); nil: none.
	Oracle func(PageInfo) float64
}

// A StrategyInfo is one strategy of the registry: its name, what it does
// and the options it reads.
type StrategyInfo struct {
	Name        string // as config.yaml's strategy, lidi demo and lidi sim write it
	Summary     string // what it fetches first, for usage texts
	UsesK       bool   // reads StrategyOptions.K
	NeedsOracle bool   // needs StrategyOptions.Oracle
	make        func(StrategyOptions) Strategy
}

// strategies is the registry: every strategy lidi has, in the order usage
// texts list them.
var strategies = []StrategyInfo{
	{Name: "length", Summary: "Castillo's Length: the sites with the most pages pending first, pages inside a site by depth",
		make: func(StrategyOptions) Strategy { return Length{} }},
	{Name: "depth", Summary: "breadth-first: the shallowest page queued first",
		make: func(StrategyOptions) Strategy { return Depth{} }},
	{Name: "batch", Summary: "every K pages, PageRank of the graph known so far orders the next K", UsesK: true,
		make: func(o StrategyOptions) Strategy { return NewBatch(o.k()) }},
	{Name: "partial", Summary: "PageRank every K pages; in between a new page scores the rank its fetched parents pass on", UsesK: true,
		make: func(o StrategyOptions) Strategy { return NewPartial(o.k()) }},
	{Name: "optimal", Summary: "the true PageRank first: needs an oracle that knows it (lidi demo's and lidi sim's synthetic web)", NeedsOracle: true,
		make: func(o StrategyOptions) Strategy { return NewOptimal(o.Oracle) }},
}

func (o StrategyOptions) k() int {
	if o.K < 1 {
		return DefaultK
	}
	return o.K
}

// ErrNoOracle is NewStrategy's error for a strategy that needs an oracle
// made without one.
var ErrNoOracle = errors.New("frontier: the strategy orders pages by their true PageRank and needs an oracle that knows it; none was given")

// LookupStrategy finds a strategy by name, in any case.
func LookupStrategy(name string) (StrategyInfo, bool) {
	for _, s := range strategies {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return StrategyInfo{}, false
}

// NewStrategy makes the strategy named name with o.
func NewStrategy(name string, o StrategyOptions) (Strategy, error) {
	s, ok := LookupStrategy(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("frontier: unknown strategy %q (known: %s)", name, strings.Join(StrategyNames(), ", "))
	case s.NeedsOracle && o.Oracle == nil:
		return nil, ErrNoOracle
	}
	return s.make(o), nil
}

// Strategies lists the registry, in the order usage texts list it.
func Strategies() []StrategyInfo { return slices.Clone(strategies) }

// StrategyNames lists the strategies' names, in the registry's order.
func StrategyNames() []string {
	names := make([]string, len(strategies))
	for i, s := range strategies {
		names[i] = s.Name
	}
	return names
}

// StrategyUsage describes every strategy, one line each ("  length: ..."),
// for a command's usage.
func StrategyUsage() string {
	lines := make([]string, len(strategies))
	for i, s := range strategies {
		lines[i] = "  " + s.Name + ": " + s.Summary
	}
	return strings.Join(lines, "\n")
}
