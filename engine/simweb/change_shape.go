package simweb

import (
	"fmt"
	"strings"
)

// ChangeShape names a kind of changing web, so that a recrawl policy is
// measured on several webs and tuned to none. Each is a ChangeOptions
// value (Options); the seed draws the rest.
type ChangeShape string

// The change shapes. Except for ShapeSARSS, pages change on their own,
// each at its group's mean interval spread by ShapeSpread, so a channel's
// pages do not change alike.
const (
	// ShapeSARSS: SARSS's channels: a site's pages change together, as
	// Poisson processes of the group intervals.
	ShapeSARSS ChangeShape = "sarss"
	// ShapePareto: every page's gaps between changes are Pareto (Wolf et
	// al.'s heavy tails).
	ShapePareto ChangeShape = "pareto"
	// ShapeQuasi: every page is Wolf's quasi-deterministic page, changing
	// only at fixed potential times.
	ShapeQuasi ChangeShape = "quasi"
	// ShapeNews: Poisson pages, and news sites that add an article every
	// DefaultNewsInterval on average, listed on their home pages.
	ShapeNews ChangeShape = "news"
	// ShapeNoValidators: Poisson pages; most sites send neither ETag nor
	// Last-Modified, so every recrawl is a full fetch.
	ShapeNoValidators ChangeShape = "no-validators"
	// ShapeStamped: Poisson pages; half the sites print the time on every
	// page, a change of bytes that is no change of content.
	ShapeStamped ChangeShape = "stamped"
)

// ShapeSpread is the log standard deviation of the pages' mean change
// intervals around their group's, in the shapes whose pages change on
// their own.
const ShapeSpread = 0.5

// ChangeShapes lists every shape.
func ChangeShapes() []ChangeShape {
	return []ChangeShape{ShapeSARSS, ShapePareto, ShapeQuasi, ShapeNews, ShapeNoValidators, ShapeStamped}
}

// ParseChangeShapes reads a comma-separated list of shapes; "all" is every
// shape.
func ParseChangeShapes(s string) ([]ChangeShape, error) {
	if strings.TrimSpace(s) == "all" {
		return ChangeShapes(), nil
	}
	var out []ChangeShape
	for part := range strings.SplitSeq(s, ",") {
		sh := ChangeShape(strings.TrimSpace(part))
		if !sh.valid() {
			return nil, fmt.Errorf("%w: unknown change shape %q (known: %s, all)", ErrChangeOptions, sh, shapeNames())
		}
		out = append(out, sh)
	}
	return out, nil
}

func shapeNames() string {
	var names []string
	for _, sh := range ChangeShapes() {
		names = append(names, string(sh))
	}
	return strings.Join(names, ", ")
}

func (sh ChangeShape) valid() bool {
	for _, known := range ChangeShapes() {
		if sh == known {
			return true
		}
	}
	return false
}

// Options returns the change options of the shape, Enabled; the zero
// ChangeOptions for an unknown shape.
func (sh ChangeShape) Options() ChangeOptions {
	o := ChangeOptions{Enabled: true, Spread: ShapeSpread}
	switch sh {
	case ShapeSARSS:
		o.Spread, o.Together = 0, true
	case ShapePareto:
		o.Pareto = 1
	case ShapeQuasi:
		o.Quasi = 1
	case ShapeNews:
		o.News = 2
	case ShapeNoValidators:
		o.NoValidators = 0.8
	case ShapeStamped:
		o.Stamped = 0.5
	default:
		return ChangeOptions{}
	}
	return o
}
