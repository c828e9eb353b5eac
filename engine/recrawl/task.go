package recrawl

import (
	"crypto/sha1"
	"encoding/binary"
	"regexp"
	"slices"
	"time"
)

// Task is one recrawl of a channel, with SARSS's fields (section 2.1). It
// is a value: the Manager hands out copies.
type Task struct {
	ID      uint64
	Channel ChannelID
	Group   int

	// Seeds are where the recrawl starts: the channel's entry pages, then
	// the inter-site URLs other channels were found to link into it.
	Seeds []string
	// Filters: a URL is fetched only if it matches one of them (none:
	// every URL of the channel).
	Filters []*regexp.Regexp
	// ExpectedPages is the channel's page count at its last recrawl. SARSS
	// sizes the crawler's URL-seen set with it; lidi also bounds the task
	// with it (PageLimit).
	ExpectedPages int
	// MaxDepth is how many links from a seed the recrawl follows (0: no
	// limit).
	MaxDepth int
	// PageSeen holds the digests of the pages known from the last recrawl:
	// a fetched page whose digest is in it has not changed, and its links
	// are not followed anew.
	PageSeen PageSeen

	Submitted time.Time
	// Deadline: a task not started by then is dropped (SARSS cancels a
	// task that waited longer than its channel's recrawl interval).
	Deadline time.Time
}

// Allows reports whether the task's filters let rawURL be fetched.
func (t *Task) Allows(rawURL string) bool {
	if len(t.Filters) == 0 {
		return true
	}
	for _, f := range t.Filters {
		if f.MatchString(rawURL) {
			return true
		}
	}
	return false
}

// PageLimit is the most pages the task fetches: the expected count with
// room for a quarter more (at least one), so that a growing channel is
// found a quarter at a time and a channel that suddenly links to
// thousands of new pages does not hold a robot for hours. 0 (no expected
// count) means no limit.
func (t *Task) PageLimit() int {
	if t.ExpectedPages <= 0 {
		return 0
	}
	return t.ExpectedPages + max(1, (t.ExpectedPages+growthShare-1)/growthShare)
}

// growthShare: a task may find 1/growthShare more pages than expected.
const growthShare = 4

// Digest is SARSS's 32-bit page content digest. DigestOf takes the first
// four bytes of the body's SHA-1, as SARSS does; a crawler that already
// has a wider digest of the body may use 32 bits of it instead.
type Digest uint32

// DigestOf returns body's digest.
func DigestOf(body []byte) Digest {
	sum := sha1.Sum(body)
	return Digest(binary.BigEndian.Uint32(sum[:4]))
}

// PageSeen is a sorted set of digests. The zero value is empty. It is safe
// for concurrent reads.
type PageSeen []Digest

// NewPageSeen returns the set of ds.
func NewPageSeen(ds []Digest) PageSeen {
	s := slices.Clone(ds)
	slices.Sort(s)
	return slices.Compact(s)
}

// Has reports whether d is in the set.
func (s PageSeen) Has(d Digest) bool {
	_, ok := slices.BinarySearch(s, d)
	return ok
}
