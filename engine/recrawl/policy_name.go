package recrawl

import (
	"errors"
	"fmt"
	"strings"
)

// ErrConfig reports a recrawl configuration that cannot work.
var ErrConfig = errors.New("recrawl: bad configuration")

// PolicyName names a recrawl policy, as config.yaml writes it.
type PolicyName string

// The policies. PolicyNames lists them; NewPolicy builds one.
const (
	// Fixed recrawls each channel every 1/λ̂ (SARSS's FIXED), whatever
	// the capacity.
	Fixed PolicyName = "fixed"
	// IIR is SARSS's Iterated Interval Reassignment (section 3.1).
	IIR PolicyName = "iir"
	// ICR is SARSS's Iterated Capacity Reassignment (section 3.2).
	ICR PolicyName = "icr"
	// Optimal is Wolf et al.'s optimal number of crawls per channel for a
	// budget of fetches, equally spaced.
	Optimal PolicyName = "optimal"
	// Adaptive is the per-channel multiplicative rule of Nutch's
	// AdaptiveFetchSchedule and StormCrawler's AdaptiveScheduler.
	Adaptive PolicyName = "adaptive"
	// Pages schedules page by page (Scheduler, Planner): each page's rate
	// estimated from its own visits and its channel's, the budget given
	// by Wolf's and Cho's optimal allocation, weighted by importance,
	// within each site's politeness. It has no Manager.
	Pages PolicyName = "pages"
)

// PolicyNames lists every policy in the order reports print them.
func PolicyNames() []PolicyName { return []PolicyName{Fixed, IIR, ICR, Optimal, Adaptive, Pages} }

// PerPage reports whether the policy schedules pages (a Scheduler) rather
// than channels (a Manager).
func (p PolicyName) PerPage() bool { return p == Pages }

// ParsePolicyName reads a policy's name (case-insensitive).
func ParsePolicyName(s string) (PolicyName, error) {
	for _, p := range PolicyNames() {
		if strings.EqualFold(s, string(p)) {
			return p, nil
		}
	}
	names := make([]string, 0, len(PolicyNames()))
	for _, p := range PolicyNames() {
		names = append(names, string(p))
	}
	return "", fmt.Errorf("%w: unknown policy %q (known: %s)", ErrConfig, s, strings.Join(names, ", "))
}
