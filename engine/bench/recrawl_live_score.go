package bench

import (
	"context"
	"lidi/engine/record"
	"lidi/engine/simweb"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// fetchRecorder is the crawl's store, noting every fetch that left a copy
// (its URL and virtual time) on the way, so that the freshness of the
// copies can be integrated exactly against the web's ground truth.
type fetchRecorder struct {
	tap
	clock simweb.Clock

	mu       sync.Mutex
	urls     map[uint64]string
	fetches  []liveFetch
	recrawls int64
	took     time.Duration // the fetches' durations, virtual
}

// newFetchRecorder returns a recorder of the fetches the engine hands
// store, their times read on clock.
func newFetchRecorder(store record.Store, clock simweb.Clock) *fetchRecorder {
	f := &fetchRecorder{clock: clock, urls: map[uint64]string{}}
	f.tap = tap{Store: store, see: f.note}
	return f
}

type liveFetch struct {
	url uint64
	at  time.Duration // virtual
	// judged is set for a recrawl whose change was judged, changed by the
	// verdict.
	judged, changed bool
}

// note records b's fetches.
func (f *fetchRecorder) note(b *record.Batch) {
	f.mu.Lock()
	for _, u := range b.URLs {
		f.urls[u.ID] = u.URL
	}
	for _, p := range b.Pages {
		if p.Err != "" || p.Status != 200 && p.Status != 304 {
			continue
		}
		at := f.clock.OffsetAt(p.Fetched)
		f.fetches = append(f.fetches, liveFetch{url: p.URL, at: at, judged: p.Recrawl && p.Verdict.Known(), changed: p.Verdict.Changed()})
		f.took += f.clock.OffsetAt(p.Fetched.Add(p.Duration)) - at
		if p.Recrawl {
			f.recrawls++
		}
	}
	f.mu.Unlock()
}

func (f *fetchRecorder) RecrawlURLs(ctx context.Context, fn func(record.RecrawlURL)) error {
	return f.Store.(record.RecrawlStore).RecrawlURLs(ctx, fn)
}

func (f *fetchRecorder) Channels(ctx context.Context) ([]record.ChannelRecord, error) {
	return f.Store.(record.RecrawlStore).Channels(ctx)
}

// freshness integrates the copies' freshness from `from` to `to` (virtual
// time), sampling every ten minutes: per channel the share of its fetched
// pages whose copy is current, averaged over the channels, and over pages.
// It also returns the recrawl fetches and the mean virtual time a fetch
// took.
func (f *fetchRecorder) freshness(web *simweb.Web, from, to time.Duration) (curve []FreshPoint, chans, pages float64, recrawls int64, pageTime time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := web.Changes()
	byPage := map[int][]time.Duration{}
	for _, fe := range f.fetches {
		if p, ok := f.pageOf(web, fe); ok {
			byPage[p] = append(byPage[p], fe.at)
		}
	}
	for _, ts := range byPage {
		slices.Sort(ts)
	}
	for at := from; at <= to; at += liveStep {
		perChan := map[int][2]int{}
		fresh, n := 0, 0
		for p, ts := range byPage {
			i := sort.Search(len(ts), func(i int) bool { return ts[i] > at })
			if i == 0 {
				continue
			}
			c := ch.ChannelOf(p)
			x := perChan[c]
			x[1]++
			n++
			if ch.Fresh(p, ts[i-1], at) {
				x[0]++
				fresh++
			}
			perChan[c] = x
		}
		if n == 0 {
			continue
		}
		var sum float64
		for _, x := range perChan {
			sum += float64(x[0]) / float64(x[1])
		}
		pt := FreshPoint{At: at - from, Channels: sum / float64(len(perChan)), Pages: float64(fresh) / float64(n)}
		curve = append(curve, pt)
		chans += pt.Channels
		pages += pt.Pages
	}
	if len(curve) > 0 {
		chans /= float64(len(curve))
		pages /= float64(len(curve))
	}
	if len(f.fetches) > 0 {
		pageTime = f.took / time.Duration(len(f.fetches))
	}
	return curve, chans, pages, f.recrawls, pageTime
}

// copies returns the virtual times of the crawl's copies of each page of
// the web (by page id, sorted), the first fetch of each news article (by
// site, then article number), and every fetch of a news article (by
// site).
func (f *fetchRecorder) copies(web *simweb.Web) (pages map[int][]time.Duration, articles map[[2]int]time.Duration, news map[int][]time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	pages, articles, news = map[int][]time.Duration{}, map[[2]int]time.Duration{}, map[int][]time.Duration{}
	for _, fe := range f.fetches {
		raw, ok := f.urls[fe.url]
		if !ok {
			continue
		}
		if site, k, ok := web.Article(raw); ok {
			key := [2]int{site, k}
			if t, seen := articles[key]; !seen || fe.at < t {
				articles[key] = fe.at
			}
			news[site] = append(news[site], fe.at)
			continue
		}
		if t := web.Truth(raw); t.Status == 200 && t.Page >= 0 {
			pages[t.Page] = append(pages[t.Page], fe.at)
		}
	}
	for _, ts := range pages {
		slices.Sort(ts)
	}
	for _, ts := range news {
		slices.Sort(ts)
	}
	return pages, articles, news
}

// pageOf returns the web's page a fetch had a copy of, and false for a
// fetch of anything else (a news article, a redirect, an error page).
// f.mu is held.
func (f *fetchRecorder) pageOf(web *simweb.Web, fe liveFetch) (int, bool) {
	raw, ok := f.urls[fe.url]
	if !ok {
		return 0, false
	}
	t := web.Truth(raw)
	return t.Page, t.Status == 200 && t.Page >= 0
}

// verdicts compares the crawl's change verdicts on its recrawls within
// (from, to] with the ground truth: missed is the share of the truly
// changed pages judged unchanged, false the share of the unchanged
// judged changed (NaN for none).
func (f *fetchRecorder) verdicts(web *simweb.Web, from, to time.Duration) (missed, wrong float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := web.Changes()
	last := map[int]time.Duration{}
	var changed, unchanged, miss, fals int
	for _, fe := range f.fetches {
		p, ok := f.pageOf(web, fe)
		if !ok {
			continue
		}
		prev, seen := last[p]
		last[p] = fe.at
		if !seen || !fe.judged || fe.at <= from || fe.at > to {
			continue
		}
		if ch.Fresh(p, prev, fe.at) {
			unchanged++
			if fe.changed {
				fals++
			}
		} else {
			changed++
			if !fe.changed {
				miss++
			}
		}
	}
	missed, wrong = math.NaN(), math.NaN()
	if changed > 0 {
		missed = float64(miss) / float64(changed)
	}
	if unchanged > 0 {
		wrong = float64(fals) / float64(unchanged)
	}
	return missed, wrong
}

// newFound is the share of the articles news sites published within
// (from, to] that the crawl fetched within one recrawl of their home page:
// by the home page's second fetch after the article appeared (the first
// could list it; a recrawl that fetches what its pages link finds it
// then), or by the window's end when there was no second. Articles
// published after the home page's last fetch are not counted: nothing
// could have found them yet. NaN when no article counts.
func newFound(web *simweb.Web, pages map[int][]time.Duration, articles map[[2]int]time.Duration, from, to time.Duration) (float64, int) {
	ch := web.Changes()
	found, total := 0, 0
	for site := range ch.Channels() {
		if !ch.News(site) {
			continue
		}
		front := pages[web.Site(site).HomePage]
		for i, pub := range ch.Articles(site, to) {
			if pub <= from {
				continue
			}
			j := sort.Search(len(front), func(j int) bool { return front[j] >= pub })
			if j == len(front) {
				continue
			}
			by := to
			if j+1 < len(front) {
				by = front[j+1]
			}
			total++
			if t, ok := articles[[2]int{site, i + 1}]; ok && t <= by {
				found++
			}
		}
	}
	if total == 0 {
		return math.NaN(), 0
	}
	return float64(found) / float64(total), total
}

// witnessViolations counts what simweb's witness saw against politeness and
// robots.txt: per host, two requests at once, two closer than nine tenths
// of the delay, requests within the robots.txt Crawl-delay, and requests
// for disallowed paths.
func witnessViolations(wit simweb.WitnessSnapshot, delay time.Duration) int {
	n := 0
	for _, h := range wit.Hosts {
		if h.MaxInFlight > 1 || h.Requests >= 2 && h.MinGap >= 0 && h.MinGap < delay*9/10 {
			n++
		}
		n += int(h.WithinCrawlDelay + h.Disallowed)
	}
	return n
}
