// Package simweb generates and serves a synthetic web: a deterministic set
// of sites and pages whose whole link graph and PageRank are known, so that
// a crawl of it can be scored. lidi's tests, demo and benchmarks crawl it,
// and so can any researcher studying crawl ordering, politeness or
// freshness, offline and again and again.
//
// # The web
//
// Generate turns Options (a seed, a number of sites and pages, ...) into a
// Web, the same for the same options on every run and platform:
//
//   - Site sizes are heavy-tailed (Pareto): a few sites with thousands of
//     pages, most with a handful, as in Castillo's study of the Chilean web.
//   - Each site's pages form a directory tree (a random recursive tree), so
//     depth grows with the site's size and big sites have pages more than
//     ten directories deep. Index pages have paths ending in "/"
//     ("/seman-4/"), articles have file names ("/seman-4/tolo-1f.html"); the
//     base-36 number is the page's index within its site.
//   - About 90% of the links stay inside their site (navigation, directory
//     listings, content links); the rest go to other sites chosen by a
//     Zipf law over site popularity, so in-degrees are Zipf-like too. Every
//     site's home page is linked from a more popular site through pages a
//     polite crawler may fetch, so a crawl from Seeds reaches every site.
//   - Page text is drawn from a fixed 20,000-word vocabulary with Zipf word
//     frequencies, so pages differ the way real pages do; sizes are
//     lognormal (median 12 KiB by default, from 1 KiB to several hundred).
//     Links are written as relative, host-relative, absolute and
//     scheme-relative hrefs. HTML is rendered on request and never stored.
//   - Every site has a robots.txt of one of the RobotsKind kinds: missing,
//     empty, Disallow rules, Allow overrides, * and $ wildcards,
//     Crawl-delay, Disallow: / or a 5xx answer. Web.Disallowed is the ground
//     truth (RFC 9309, for the "*" group), and links do lead into disallowed
//     paths, so a crawler that ignores robots.txt is caught.
//
// Host names are "site<N>.test" or "www.site<N>.test" under the reserved
// .test TLD. Each host has an address in 127.1.0.1 and up (never 127.0.0.1),
// and several hosts share an address, as with shared hosting.
//
// The oracle is Web.Graph, Web.PageRank (damping 0.85) and Web.Export,
// which writes pages.csv, edges.csv, sites.csv and a README.txt.
//
// # Serving
//
// Start serves a Web: one HTTP server that listens on every address in use,
// all on one port, and routes by the Host header (a host asked for on the
// wrong address gets 421, as it would from a real server); a DNS server on
// 127.0.0.1 (UDP and TCP) answering A records for the simulated names and
// NXDOMAIN for every other name; and an admin server whose /witness
// endpoint returns the witness counts as JSON. On Linux all of 127.0.0.0/8
// reaches the loopback interface, so nothing needs setting up. Connections
// behave like Apache's: keep-alive for up to 100 requests, then
// "Connection: close"; closed after 15 s idle. Sites answer with their own
// latency, bandwidth and error rate if Options ask for them.
//
// The witness counts, per host and per address, connections, requests per
// connection, the most connections open and requests in flight at once, the
// shortest gap between two requests, requests within the Crawl-delay and for
// disallowed paths, 404s and 5xx answers, and DNS queries per name: enough
// to prove a crawler polite, or not.
//
// Command implements "lidi simweb".
//
// # Traps
//
// Options.Traps adds crawler traps, deterministically from the seed, to a
// few sites that a polite crawler may crawl entirely (their robots.txt
// forbids nothing and asks no Crawl-delay): host mirrors (www.siteN.test
// and siteN.test), directory mirrors, relative-link loops, an endless
// calendar, session ids and tracking parameters in links, soft 404s,
// printer-friendly copies, binary files served as text/html, HTML served
// as application/octet-stream, and a genuine directory chain fifteen
// levels deep that only a crawl without a depth limit gets to the bottom
// of (see TrapKind). The graph and PageRank still describe the pages
// without traps; trap pages are rendered on request like the others.
//
// The ground truth is Web.Truth, which says of any URL what the server
// answers and which content it carries (all copies of a page share its
// Content; junk is not Genuine), and Web.ReachableUnique, the genuine
// content a polite crawler can reach from the seeds at any depth, the
// denominator of recall. Web.Traps and traps.csv in Web.Export list the
// trap instances. A web without traps is byte for byte what it was before
// traps existed.
//
// # Changes
//
// Options.Change makes pages change over time, deterministically from the
// seed (see Changes): each site is a channel in one of K priority groups
// whose mean change interval is SARSS's θ (60, 120, 240, 480, 960 minutes
// by default), and each page changes as a Poisson, Pareto or
// quasi-deterministic process (Wolf et al.) with its group's mean. A
// changed page has new text and the same title and links, so the graph and
// PageRank hold at all times. The server keeps a virtual Clock
// (ServerConfig.TimeScale runs it faster than real time; --time-scale) and
// serves each page at its current version, with a virtual Date, an ETag
// and a Last-Modified that change exactly when the page does, and 304 Not
// Modified to conditional requests; a fifth of the sites send no
// validators and a tenth print the time they serve a page, so their bytes
// differ on every fetch while their content does not. Web.Changes is the
// ground truth (versions, freshness and age of any copy) and
// Web.ExportChanges writes it as CSV. A web without Options.Change is byte
// for byte the web before changes existed.
//
// # Hostile servers
//
// ServerConfig.Hostile makes every site misbehave in one way under
// HostilePath (see HostileKind): a gzip bomb, a megabyte of headers, a
// reset halfway through a body, a Content-Length too short or too long,
// broken chunking, a body dripping a byte a second, a 10 MB robots.txt, a
// redirect to ftp:, a 100 KB URL, a page of a million links, and DNS
// answers of SERVFAIL or none at all. The rest of the web is served as
// usual, so a test sees both how a crawler records the bad answer and
// that its crawl goes on; the witness counts hostile answers like the
// others, ending each before the server closes its connection.
//
// # Extending
//
// Later kinds of pages are meant to be
// handled where pages are laid out (generate.go), named (Web.appendSegment,
// Web.lookupPath, Web.resolve) and rendered (render.go); traps.go,
// truth.go and trap_render.go show how traps did it.
package simweb
