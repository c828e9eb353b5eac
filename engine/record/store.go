// Package record is the contract between the crawl and its durable store:
// the Store interface and every optional interface a Store may implement
// (this file, in the manner of database/sql/driver), the Batch of changes
// the engine hands it, and the records and kinds they hold. The engine,
// storage (SQLite), the cluster and the exports depend on it; it depends on
// no part of the engine's logic. MemStore keeps a crawl in memory, for tests.
package record

import (
	"context"
)

// Store is what the engine needs from durable storage. The engine owns the
// crawl's logic; a Store only keeps what the engine tells it and gives it back
// after a restart. lidi's implementation is storage.DB (SQLite); main.go wires
// it in, so the engine never imports storage.
//
// The engine calls Apply and Head from a single goroutine (its committer), so
// an implementation need not serialise them itself; Sites, URLFingerprints and
// Counters are called once at start, before any Apply.
type Store interface {
	// Sites returns every site ever recorded, with Pending set to the number
	// of its URLs still in state URLQueued.
	Sites(ctx context.Context) ([]SiteRecord, error)
	// URLFingerprints calls fn with the ID of every URL ever recorded, in
	// any order, so the engine can rebuild its seen-set after a restart.
	URLFingerprints(ctx context.Context, fn func(id uint64)) error
	// Counters returns totals recorded so far (pages fetched, bytes, ...),
	// so a resumed crawl's statistics continue where they stopped.
	Counters(ctx context.Context) (Counters, error)
	// Apply writes a batch atomically: all of it or none of it.
	Apply(ctx context.Context, b *Batch) error
	// Fingerprints calls fn for every fetched page (and answered probe,
	// URLProbed) with its content fingerprints, so duplicate detection
	// can be rebuilt after a restart.
	Fingerprints(ctx context.Context, fn func(FetchedPage)) error
	// Rules returns every URL rewrite rule recorded (withdrawn ones
	// included), oldest first, and Soft404s every soft-404 signature.
	Rules(ctx context.Context) ([]RuleRecord, error)
	Soft404s(ctx context.Context) ([]Soft404Record, error)
	// RuleSkipped calls fn for every URL skipped under a rule
	// (URLRecord.Rule, Skip.Rule) and not queued again since; Held
	// returns the pages whose links wait for a probe's answer.
	RuleSkipped(ctx context.Context, fn func(RuleSkippedURL)) error
	Held(ctx context.Context) ([]HeldLinks, error)
	// Head returns up to n URLs of site in state URLQueued, ordered by
	// (Priority, Seq) ascending. next is the Priority of the first queued URL
	// after those returned, and more reports whether there is one.
	Head(ctx context.Context, site int64, n int) (urls []QueuedURL, next float64, more bool, err error)
}

// BatchWriter is an optional interface that may be implemented by a Store
// that can write batches into one transaction and commit them together,
// reading its queue heads (Head) through it. storage.DB is one.
//
// A Head that fails inside the open transaction (a full disk, when the
// read makes the store write the transaction's pages out) may end it: the
// batches written since the last Commit are then lost, and the next Write
// or Commit reports it with an error, so that a caller telling its
// batches' senders they are stored learns they are not.
type BatchWriter interface {
	// Write writes b as Apply does, but into the transaction it leaves
	// open (beginning one if none is): nothing of it is durable, nor seen
	// by other readers, until Commit. An error rolls back the whole
	// transaction, the batches written before b included.
	Write(ctx context.Context, b *Batch) error
	// Commit commits the open transaction, if any. It returns an error,
	// committing nothing, if the transaction was lost since the last
	// Commit (see above).
	Commit(ctx context.Context) error
}

// Snapshotter is an optional interface that may be implemented by a Store
// that can write a consistent copy of itself while the
// crawl goes on.
type Snapshotter interface {
	Snapshot(ctx context.Context, path string) error
}

// LinkLoader is an optional interface that may be implemented by a Store
// that gives back the links of the pages fetched so
// far, so that a resumed crawl's PageRank covers the pages of its earlier
// runs. storage.DB is one; without it a resumed crawl's graph holds only the
// links found since it resumed.
type LinkLoader interface {
	// FetchedLinks calls fn for every fetched page with its URL and the IDs
	// of its links (links may be reused after fn returns), the pages in no
	// promised order.
	FetchedLinks(ctx context.Context, fn func(page uint64, url string, links []uint64)) error
}

// CoverageLoader is an optional interface that may be implemented by a
// Store that gives back the coverage curve of earlier
// runs (their PageRank runs, oldest first), so that a resumed crawl's curve
// goes on from where it was instead of starting over. storage.DB is one.
type CoverageLoader interface {
	CoverageHistory(ctx context.Context) ([]CoveragePoint, error)
}

// DupCounter is an optional interface that may be implemented by a Store
// that counts the duplicate decisions it keeps (Batch.Dups, the latest of
// each URL) by kind, so that a resumed crawl's duplicate figures go on
// from where they stopped, as its rules do. storage.DB and MemStore are
// ones.
type DupCounter interface {
	DupCounts(ctx context.Context) (DupCounts, error)
}

// RecrawlStore is an optional interface that may be implemented by a Store:
// what recrawling needs besides Store itself, to pick up where a crawl stopped. storage.DB implements it.
type RecrawlStore interface {
	// RecrawlURLs calls fn for every URL in state URLFetched whose last
	// fetch left a copy to recrawl (a 2xx, 3xx or 304 answer), with its
	// site and when it was fetched.
	RecrawlURLs(ctx context.Context, fn func(RecrawlURL)) error
	// Channels returns every channel recorded.
	Channels(ctx context.Context) ([]ChannelRecord, error)
}
