package frontier

import (
	"fmt"
	"sort"
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

var strategies = map[string]func() Strategy{
	"length": func() Strategy { return Length{} },
	"depth":  func() Strategy { return Depth{} },
}

// Register makes a strategy available by name to NewStrategy. It is meant to
// be called from init functions and is not safe for concurrent use.
func Register(name string, make func() Strategy) { strategies[name] = make }

// NewStrategy returns the strategy named in config.yaml.
func NewStrategy(name string) (Strategy, error) {
	if make, ok := strategies[strings.ToLower(name)]; ok {
		return make(), nil
	}
	return nil, fmt.Errorf("frontier: unknown strategy %q (known: %s)", name, strings.Join(StrategyNames(), ", "))
}

// StrategyNames lists the registered strategies, sorted.
func StrategyNames() []string {
	names := make([]string, 0, len(strategies))
	for n := range strategies {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
