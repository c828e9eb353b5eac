// Package recrawl decides when lidi visits what it has already crawled
// again. It holds the model of Xu et al.'s scale-adaptable recrawl
// strategies (SARSS, NPC 2010) and Wolf et al.'s optimal crawling
// frequencies (WWW 2002):
//
//   - Channels: a whole host by default, or sub-directories (or sets of
//     them) by configured rules; every URL belongs to exactly one channel.
//   - Tasks: a channel's recrawl with SARSS's fields (seeds, filters,
//     expected page count, maximum depth, the Pageseen digests).
//   - Change-rate estimators of Cho and Garcia-Molina (ACM TOIT 2003) for
//     visits at regular and irregular intervals.
//   - Priority groups: channels in K groups by estimated change rate.
//   - Policies behind one interface, chosen by name: fixed, iir, icr,
//     optimal and adaptive; a Manager applies the chosen one, caps each
//     channel's recrawl rate and keeps the statistics the console shows.
//
// Group 0 is the fastest-changing group, as in SARSS's pseudocode; SARSS's
// tables call it rank K-1 (Rank converts), and its weighted update quality
// gives rank r the weight 2^r.
//
// The package does no I/O: the engine (or the simulation in engine/sim)
// runs the tasks and reports their outcomes. Time comes from a Clock that
// tests and simulations replace.
package recrawl
