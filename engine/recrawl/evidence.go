package recrawl

import (
	"math"
	"time"
)

// Per-page estimation. A channel is the unit of scheduling, not a promise
// that its pages change alike: each page's rate is estimated from its own
// visits, drawn towards its channel's pooled rate while its own evidence is
// thin (a Gamma prior, the conjugate of the Poisson likelihood), so that a
// page seen twice is its channel's and a page seen fifty times is its own.
//
// The visits give two kinds of evidence (Cho and Garcia-Molina, "Estimating
// frequency of change", ACM TOIT 2003):
//   - a visit that only says whether the page changed since the last one
//     (the irregular-interval estimator): an unchanged interval t adds
//     e^(−λt) to the likelihood, a changed one 1 − e^(−λt);
//   - a visit that also knows when the page last changed (Last-Modified,
//     or a sitemap's lastmod, newer than the previous visit): the last
//     change at τ before the visit adds λ·e^(−λτ), since a change happened
//     then and none since (the last-modified estimator). Such visits make
//     the estimate sharper: what was "changed, some time in t" becomes
//     "changed, and quiet for τ".
//
// A page's age when first fetched, from a date its last change was given
// before any visit (a sitemap's lastmod), is evidence of the same kind:
// under a Poisson process the time since the last change is exponential
// at λ, so a last change τ before the first fetch adds λ·e^(−λτ). A date
// of a sitemap is weaker evidence than a Last-Modified header (sitemaps
// are often written with the file's own date, or never updated), so it
// counts as a share of a dated change (AddAge's weight): the likelihood
// raised to that power, w pseudo-changes over w·τ.
//
// With the prior Gamma(κ+1, κ/λ₀) — κ pseudo-changes over κ/λ₀ of time at
// the prior rate λ₀ — the estimate is the posterior's mode, the root of
//
//	(κ + D)/λ − (κ/λ₀ + Q) + Σ_changed t_i/(e^(λ·t_i) − 1) = 0
//
// D the dated changes, Q the time known quiet (unchanged intervals and the
// τ of dated changes), t_i the undated changed intervals. Without undated
// changes it is (κ + D)/(κ/λ₀ + Q) in closed form.

// PriorWeight is κ, the pseudo-changes a prior counts for: one.
const PriorWeight = 1.0

// SitemapWeight is the share of a dated change a sitemap's lastmod counts
// for (Evidence.AddAge): half, so that two pages' sitemap dates weigh as
// much as one Last-Modified seen on a visit.
const SitemapWeight = 0.5

// maxPageVisits bounds the visits a page keeps: its estimate follows its
// recent behaviour, and its memory stays small.
const maxPageVisits = 32

// Visit is what one fetch of a page that had a copy told: when, how long
// since the previous fetch, whether the page changed between the two, and
// if known when it last changed.
type Visit struct {
	At       time.Time
	Interval time.Duration // since the previous fetch of the page
	Changed  bool
	// LastModified is the page's last change as the server (its
	// Last-Modified) or a sitemap (lastmod) says, zero if unknown. It is
	// used only for a change seen since the previous fetch and dated after
	// it, and not in the future.
	LastModified time.Time
}

// dated returns τ, the time the page was quiet before the visit since its
// dated last change, and whether the visit dates its change.
func (v Visit) dated() (time.Duration, bool) {
	if !v.Changed || v.LastModified.IsZero() {
		return 0, false
	}
	tau := v.At.Sub(v.LastModified)
	if tau < 0 || tau >= v.Interval {
		return 0, false // a date from before the previous fetch, or a clock skew
	}
	return tau, true
}

// Evidence is the sufficient statistics of some visits for the rate: the
// dated changes, the time known quiet, and the undated changed intervals.
// The zero value is no evidence. It is a plain value.
type Evidence struct {
	Dated   int
	Quiet   time.Duration
	Changed []time.Duration
	Visits  int
	// Aged is the weight of the changes dated before any visit (AddAge),
	// their τ counted in Quiet, weighted alike.
	Aged float64
}

// AddAge adds the evidence of a last change tau before a page's first
// fetch, as a share weight of a dated change (see SitemapWeight). A tau
// that is not positive adds nothing.
func (e *Evidence) AddAge(tau time.Duration, weight float64) {
	if tau <= 0 || weight <= 0 {
		return
	}
	e.Aged += weight
	e.Quiet += time.Duration(weight * float64(tau))
}

// Add adds one visit's evidence.
func (e *Evidence) Add(v Visit) {
	if v.Interval <= 0 {
		return
	}
	e.Visits++
	switch tau, ok := v.dated(); {
	case ok:
		e.Dated++
		e.Quiet += tau
	case v.Changed:
		e.Changed = append(e.Changed, v.Interval)
	default:
		e.Quiet += v.Interval
	}
}

// Merge adds o's evidence to e.
func (e *Evidence) Merge(o Evidence) {
	e.Dated += o.Dated
	e.Quiet += o.Quiet
	e.Changed = append(e.Changed, o.Changed...)
	e.Visits += o.Visits
	e.Aged += o.Aged
}

// Changes returns the changes the evidence saw, dated or not.
func (e Evidence) Changes() int { return e.Dated + len(e.Changed) }

// Posterior returns the rate the evidence and the prior rate prior give,
// the prior counting for weight pseudo-changes (see PriorWeight). A zero
// prior with no change seen gives 0; a zero weight is the plain maximum
// likelihood, which is 0 with no change seen and has no maximum when every
// visit changed undated (it then falls back to EstimateRegular's
// estimator at the mean interval).
func (e Evidence) Posterior(prior Rate, weight float64) Rate {
	var b float64 // the prior's time
	if weight > 0 {
		if prior <= 0 {
			return 0
		}
		b = weight / float64(prior)
	}
	a := weight + float64(e.Dated) + e.Aged
	q := b + e.Quiet.Seconds()
	if len(e.Changed) == 0 {
		if a == 0 || q == 0 {
			return 0
		}
		return Rate(a / q)
	}
	if q == 0 {
		// Every visit changed and nothing is known quiet: the likelihood
		// grows without bound; Cho and Garcia-Molina's regular estimator
		// at the mean interval is finite.
		var sum time.Duration
		for _, t := range e.Changed {
			sum += t
		}
		r, _ := EstimateRegular(len(e.Changed), 0, sum/time.Duration(len(e.Changed)))
		return r
	}
	// g decreases from +∞ at 0 to −q at ∞.
	g := func(l float64) float64 {
		s := a/l - q
		for _, t := range e.Changed {
			x := l * t.Seconds()
			s += t.Seconds() / math.Expm1(x)
		}
		return s
	}
	hi := (a + float64(len(e.Changed))) / q // every term is at most 1/λ
	return Rate(decreasingRoot(g, hi*1e-6, hi, 1e-6))
}
