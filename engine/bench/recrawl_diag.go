package bench

import (
	"fmt"
	"io"
	"slices"
	"time"

	"lidi/engine/recrawl"
	"lidi/engine/simweb"
)

// printSiteAllocation takes the crawl's loss on one site's scored pages
// apart, by weight quartile: its timing (its own request counts of each
// page, evenly spaced) and its allocation (the optimal one of the same
// requests), and names the pages whose timing lost most. A diagnostic,
// beside printSiteLoss's turns.
func printSiteAllocation(w io.Writer, web *simweb.Web, res *RecrawlLiveResult, site int) {
	ch := web.Changes()
	inl := inLinks(web)
	from, to := res.WarmEnd, res.WarmEnd+res.Virtual
	d := to - from
	var pages []refPage
	for p, ts := range res.Copies {
		if len(ts) == 0 || ts[0] > from || ch.ChannelOf(p) != site {
			continue
		}
		pages = append(pages, refPage{page: p, site: site, weight: recrawl.InLinkWeight(inl[p]), rate: ch.Rate(p),
			changes: streamUntil(ch, p, to), fetches: ts})
	}
	if len(pages) == 0 {
		return
	}
	slices.SortFunc(pages, func(a, b refPage) int {
		if a.weight != b.weight {
			if a.weight > b.weight {
				return -1
			}
			return 1
		}
		return a.page - b.page
	})
	n := 0
	counts := make([]int, len(pages))
	for i, pg := range pages {
		counts[i] = windowFetches(pg.fetches, from, to)
		n += counts[i]
	}
	opt := optimalCrawls(pages, map[int]int{site: n}, n, d)
	var wsum float64
	for _, pg := range pages {
		wsum += pg.weight
	}
	type agg struct {
		pages                 int
		w, rate               float64
		crawl, opt            int
		fresh, even, optFresh float64
		// byQuarter are the crawl's requests in each quarter of the
		// window: whether the site's discovery (its first hours) or its
		// turns after it gave the quartile its share.
		byQuarter [4]int
		// known are the quartile's summed in-link weights from the pages
		// fetched by the window's start and by its middle, as the crawl
		// could count them (crawlWeights).
		known [2]float64
	}
	known := [2]map[int]float64{crawlWeights(web, res.Copies, from), crawlWeights(web, res.Copies, from+d/2)}
	var q [4]agg
	var tot agg
	for i, pg := range pages {
		k := i * 4 / len(pages)
		a := &q[k]
		a.pages++
		a.w += pg.weight
		a.rate += pg.rate * 3600
		a.crawl += counts[i]
		a.known[0] += known[0][pg.page]
		a.known[1] += known[1][pg.page]
		for k := range a.byQuarter {
			a.byQuarter[k] += windowFetches(pg.fetches, from+d*time.Duration(k)/4, from+d*time.Duration(k+1)/4)
		}
		a.opt += opt[i]
		a.fresh += pg.weight * freshShare(pg.changes, pg.fetches, from, to)
		a.even += pg.weight * scheduleFresh(pg.changes, float64(counts[i]), from, to)
		a.optFresh += pg.weight * scheduleFresh(pg.changes, float64(opt[i]), from, to)
	}
	fmt.Fprintf(w, "site %d's scored pages by weight quartile (heaviest first): pages, weight share, mean changes/h, requests crawl/opt at the crawl's %d, freshness of the quartile crawl / crawl's counts evenly spaced / opt, the crawl's requests by quarter of the window, the quartile's in-link weight as known at the window's start and middle against its true\n", site, n)
	for k, a := range q {
		if a.pages == 0 {
			continue
		}
		fmt.Fprintf(w, "  q%d %4d %.3f %.3f %5d %5d | %.3f %.3f %.3f | %v | %.2f %.2f\n", k, a.pages, a.w/wsum, a.rate/float64(a.pages), a.crawl, a.opt, a.fresh/a.w, a.even/a.w, a.optFresh/a.w, a.byQuarter, a.known[0]/a.w, a.known[1]/a.w)
		tot.w += a.w
		tot.fresh += a.fresh
		tot.even += a.even
		tot.optFresh += a.optFresh
	}
	fmt.Fprintf(w, "  all: crawl %.3f, its counts evenly spaced %.3f, optimal at its count %.3f (of the site's weight)\n", tot.fresh/tot.w, tot.even/tot.w, tot.optFresh/tot.w)
	// The crawl's requests against the optimal's, by the page's true rate
	// (halves: the faster half first).
	idx := make([]int, len(pages))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		if pages[a].rate > pages[b].rate {
			return -1
		}
		if pages[a].rate < pages[b].rate {
			return 1
		}
		return 0
	})
	var h [2][3]float64
	for j, i := range idx {
		k := j * 2 / len(idx)
		h[k][0] += pages[i].weight
		h[k][1] += float64(counts[i])
		h[k][2] += float64(opt[i])
	}
	fmt.Fprintf(w, "  by true rate, faster half / slower half: weight %.0f / %.0f, crawl %.0f / %.0f, opt %.0f / %.0f\n", h[0][0], h[1][0], h[0][1], h[1][1], h[0][2], h[1][2])
	zc, zo := 0, 0
	for i := range pages {
		if counts[i] == 0 {
			zc++
		}
		if opt[i] == 0 {
			zo++
		}
	}
	fmt.Fprintf(w, "  pages not recrawled in the window: crawl %d, opt %d\n", zc, zo)
	printTimingLosers(w, web, res.Copies, site, from, to)
}

// printTimingLosers prints what the crawl's timing lost on site's scored
// pages (their freshness against their own counts of requests evenly
// spaced) and the pages that lost most.
func printTimingLosers(w io.Writer, web *simweb.Web, copies map[int][]time.Duration, site int, from, to time.Duration) {
	ch := web.Changes()
	inl := inLinks(web)
	type l struct {
		p          int
		loss, w, n float64
	}
	var ls []l
	var tot, wsum float64
	for p, ts := range copies {
		if ch.ChannelOf(p) != site || len(ts) == 0 || ts[0] > from {
			continue
		}
		wt := recrawl.InLinkWeight(inl[p])
		c := streamUntil(ch, p, to)
		n := windowFetches(ts, from, to)
		loss := wt * (scheduleFresh(c, float64(n), from, to) - freshShare(c, ts, from, to))
		ls = append(ls, l{p, loss, wt, float64(n)})
		tot += loss
		wsum += wt
	}
	slices.SortFunc(ls, func(a, b l) int {
		if a.loss > b.loss {
			return -1
		}
		if a.loss < b.loss {
			return 1
		}
		return 0
	})
	fmt.Fprintf(w, "  the crawl's timing lost %.4f of the site's weight against its own counts evenly spaced; most:", tot/wsum)
	for _, x := range ls[:min(3, len(ls))] {
		var longest time.Duration
		ts := copies[x.p]
		for i := 1; i < len(ts); i++ {
			if ts[i] > from {
				longest = max(longest, ts[i]-ts[i-1])
			}
		}
		fmt.Fprintf(w, " page %d (weight %.0f, %.2f changes/h, %0.f fetches, the longest %v apart) %.4f;", x.p, x.w, ch.Rate(x.p)*3600, x.n, longest.Round(time.Minute), x.loss/wsum)
	}
	fmt.Fprintln(w)
}
