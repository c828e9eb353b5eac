// Package visit is the contract between the crawl's scheduler and its
// robots, and the robot itself: what a robot is handed (a Lease), what it
// reports (Results), and the Robot that runs leases. It knows nothing of
// the scheduler, so a cluster slave links this package, not the engine.
//
// The loop turns a visit into a Lease: one site, its address (from the
// loop's DNS cache: a robot never resolves names), its robots.txt as last
// fetched, the delay between requests, the earliest start and the URLs to
// fetch — the head of the site's queue, read by the loop from the store and
// filtered by duplicate detection before leasing. It hands the lease to a
// Dispatcher: local robots (LocalDispatcher, a goroutine of this process
// per lease) or remote slaves run leases the same way, with a Robot each,
// so the scheduler's code is the same for both.
//
// Who sets what:
//   - The loop sets every field of a Lease. A robot reads it and changes
//     nothing in the crawl: it never touches the loop's state or the store.
//   - A robot of this process also takes revocations while it runs (see
//     Feed): duplicate detection learns mid-lease, and what it
//     learns spares the rest of the lease. A remote robot does not.
//   - A robot obeys Deadline by its own clock: it starts no request after
//     it, ends the lease and returns the URLs it did not reach. The loop
//     treats a lease whose End has not arrived by Deadline plus a grace
//     period as ended with every URL not reported returned, so a slow robot
//     and the next lease of the same site never overlap at the site.
//   - A robot reports Results in order, each with the lease's ID and a
//     sequence number (1, 2, …): one Result per page fetched, then one with
//     End. The loop applies a lease's results once each, in Seq order: a
//     delivery retried (the same Lease and Seq) is dropped, one arriving
//     early waits for those before it, and results of a lease the loop does
//     not know (ended, expired or from an earlier run) are dropped.
//
// Leases and results are plain values that round-trip through encoding/json
// (bodies are zlib-compressed bytes, times are absolute, durations in
// nanoseconds), so they can cross a network.
package visit
