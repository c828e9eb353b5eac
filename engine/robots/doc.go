// Package robots answers whether lidi may fetch a URL, following RFC 9309
// (the Robots Exclusion Protocol), and reads the page-level directives of
// <meta name="robots"> and the X-Robots-Tag header.
//
// # Host rules
//
// The crawl engine fetches /robots.txt once per host and hands the outcome
// to [FromResponse] (with status -1 when the fetch failed at the network
// level). The returned [Rules] is immutable, safe for concurrent
// use, and cheap to query with [Rules.Allowed] for every discovered URL:
// patterns are compiled at construction and a query does not allocate in
// the common case.
//
// The status mapping is RFC 9309 section 2.3.1: 2xx is parsed, 4xx means
// "no robots.txt" and allows everything, 5xx and network failures disallow
// everything and are marked temporary ([Kind.Temporary]) so the engine can
// fetch again later. 429 Too Many Requests is treated as a server error,
// as Google does, because it asks the crawler to back off rather than
// saying the file does not exist.
//
// # What comes from github.com/temoto/robotstxt and what does not
//
// lidi depends on temoto/robotstxt v1.1.2, but that parser deviates from
// RFC 9309 in ways that change answers:
//
//   - an Allow/Disallow tie goes to the rule written first, not to Allow;
//   - patterns with '*' or '$' are compiled to unanchored regular
//     expressions, so "/a*b" also matches "/x/a/b";
//   - user-agent groups match by prefix (the agent "lidi" picks the
//     group of "lid");
//   - Group.Test answers "allowed" for a 5xx result (only TestAgent knows);
//   - one malformed line (say, "Crawl-delay: soon") rejects the whole file;
//   - the body is read without the 500 KiB cap.
//
// Its scanner is unexported, so it cannot be used as a tokenizer on its own.
// The split is therefore:
//
//   - lidi's own code caps the body, strips a BOM (and transcodes UTF-16),
//     splits lines, strips comments, splits each line into key and value,
//     forms and merges groups, normalises percent-encoding, compiles the
//     patterns, and decides by longest match with Allow winning ties;
//   - each Crawl-delay and Sitemap record is handed to temoto as a
//     one-record document, so temoto's value handling is reused (the float
//     seconds of Crawl-delay with its rejection of negative, NaN and infinite
//     values; Sitemap collection) while a record temoto rejects costs only
//     that record. lidi checks temoto's result where it does not work: a
//     Crawl-delay too large for time.Duration comes back negative or
//     saturated and is clamped to [MaxCrawlDelay].
//
// # Matching details
//
// The agent given to [Rules.Allowed] may be a full User-Agent header; its
// product token (the leading run of letters, '-' and '_', so "lidi" for
// "lidi/0.1 (+https://...)") is compared case-insensitively with the product
// token of each user-agent line. All groups naming the token are merged; if
// none does, the groups of "*" are used; if there are none, everything is
// allowed. Among the matching rules the one with the longest pattern (in
// octets, after normalisation) wins, and Allow wins a tie. '*' matches any
// run of octets and a final '$' anchors the end. "/robots.txt" is always
// allowed.
//
// Only Allow and Disallow lines end a run of user-agent lines; Sitemap,
// Crawl-delay, unknown and junk lines do not (RFC 9309 section 2.2.4).
// Crawl-delay, which the RFC does not define, applies to the user-agent
// lines directly above it, so a group "User-agent: a / Crawl-delay: 5 /
// User-agent: b / Disallow: /x" gives a, not b, the delay while both get
// the rule.
//
// Percent-encoding is normalised as the conformance cases of Google's
// reference parser require: octets outside US-ASCII (and controls and
// spaces) in a rule are percent-encoded, and the hex digits of every %XX in
// rules and paths are upper-cased. Percent-encoded octets are never decoded,
// so "%2F" stays distinct from "/" and "%62" from "b". The path passed to
// Allowed must therefore be in its escaped wire form, as produced by
// url.URL.RequestURI.
package robots
