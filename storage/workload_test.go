package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"lidi/engine/record"
)

// workload makes realistic batches: each fetched page was queued earlier,
// yields a few new URLs and links to those and to URLs already known, and
// carries a body of incompressible bytes (the store keeps bodies as given).
type workload struct {
	rng   *rand.Rand
	sites int64
	seq   int64
	now   time.Time
	queue []record.URLRecord // queued, fetched in FIFO order
	// visits, when set, fetches as a crawl does instead: robots sites
	// at once, each its own queue in order, up to perVisit pages a
	// visit, so that a batch's pages are scattered over the URLs'
	// rows as a crawl's are (FIFO fetches them in the order they were
	// stored). See newVisiting.
	visits   bool
	bySite   map[int64][]record.URLRecord
	active   []int64 // sites being visited
	inVisit  map[int64]int
	robots   int
	perVisit int
	known    []uint64 // every URL ID, link targets
	blob     []byte
	bodyN    int
	events   int
}

func newWorkload(seed uint64, sites int64, bodySize int) *workload {
	w := &workload{
		rng:   rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		sites: sites,
		now:   time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		bodyN: bodySize,
	}
	w.blob = make([]byte, 1<<20)
	for i := range w.blob {
		w.blob[i] = byte(w.rng.Uint32())
	}
	return w
}

// newVisiting returns a workload that fetches as a crawl does (see
// workload.visits): robots sites visited at once, perVisit pages each.
func newVisiting(seed uint64, sites int64, bodySize, robots, perVisit int) *workload {
	w := newWorkload(seed, sites, bodySize)
	w.visits, w.robots, w.perVisit = true, robots, perVisit
	w.bySite, w.inVisit = map[int64][]record.URLRecord{}, map[int64]int{}
	return w
}

// queued adds u to the queue it is fetched from.
func (w *workload) queued(u record.URLRecord) {
	if w.visits {
		w.bySite[u.Site] = append(w.bySite[u.Site], u)
		return
	}
	w.queue = append(w.queue, u)
}

// next returns the URL fetched next, a new seed when nothing is queued.
func (w *workload) next(b *record.Batch) record.URLRecord {
	if !w.visits {
		if len(w.queue) == 0 {
			w.seed(b)
		}
		u := w.queue[0]
		w.queue = w.queue[1:]
		return u
	}
	for len(w.active) < w.robots {
		site := w.visitable()
		if site == 0 {
			break
		}
		w.active = append(w.active, site)
		w.inVisit[site] = 0
	}
	if len(w.active) == 0 {
		w.seed(b)
		return w.next(b)
	}
	i := w.rng.IntN(len(w.active))
	site := w.active[i]
	q := w.bySite[site]
	u := q[0]
	w.bySite[site] = q[1:]
	if w.inVisit[site]++; w.inVisit[site] >= w.perVisit || len(q) == 1 {
		w.active = slices.Delete(w.active, i, i+1)
		delete(w.inVisit, site)
	}
	return u
}

// visitable returns a site with URLs queued and no visit under way, 0
// for none: one tried at random, then the first found.
func (w *workload) visitable() int64 {
	site := 1 + w.rng.Int64N(w.sites)
	if _, busy := w.inVisit[site]; !busy && len(w.bySite[site]) > 0 {
		return site
	}
	for s := int64(1); s <= w.sites; s++ {
		if _, busy := w.inVisit[s]; !busy && len(w.bySite[s]) > 0 {
			return s
		}
	}
	return 0
}

// seed queues a new URL at depth 0 of a random site.
func (w *workload) seed(b *record.Batch) {
	u := w.newURL(1+w.rng.Int64N(w.sites), 0, 0)
	b.URLs = append(b.URLs, u)
	w.queued(u)
}

func (w *workload) newURL(site int64, parent uint64, depth int) record.URLRecord {
	w.seq++
	id := w.rng.Uint64() | 1 // never 0
	u := record.URLRecord{
		ID:         id,
		Site:       site,
		URL:        fmt.Sprintf("http://site%d.example/d%d/page-%016x.html", site, depth, id),
		Depth:      depth,
		Priority:   float64(depth),
		Seq:        w.seq,
		Parent:     parent,
		Discovered: w.now,
		State:      record.URLQueued,
	}
	w.known = append(w.known, id)
	return u
}

// fill appends to b a batch of pages fetched pages, each with newPer new
// URLs and linksPer links. Sites touched are updated too.
func (w *workload) fill(b *record.Batch, pages, linksPer, newPer int) {
	w.now = w.now.Add(100 * time.Millisecond)
	touched := map[int64]bool{}
	for range pages {
		u := w.next(b)
		touched[u.Site] = true
		var body []byte
		if w.bodyN > 0 {
			off := w.rng.IntN(len(w.blob) - w.bodyN)
			body = w.blob[off : off+w.bodyN]
		}
		b.Pages = append(b.Pages, record.PageRecord{
			URL: u.ID, Site: u.Site, Fetched: w.now, Status: 200, ContentType: "text/html; charset=utf-8",
			Length: int64(3 * w.bodyN), Duration: 1500 * time.Microsecond, Digest: w.rng.Uint64(),
			Body: body, Links: linksPer,
		})
		for j := range linksPer {
			var to uint64
			if j < newPer {
				site := u.Site
				if w.rng.IntN(10) == 0 {
					site = 1 + w.rng.Int64N(w.sites)
				}
				n := w.newURL(site, u.ID, u.Depth+1)
				b.URLs = append(b.URLs, n)
				w.queued(n)
				to = n.ID
			} else {
				to = w.known[w.rng.IntN(len(w.known))]
			}
			b.Links = append(b.Links, record.Link{From: u.ID, To: to})
		}
	}
	for site := range touched {
		b.Sites = append(b.Sites, record.SiteRecord{
			ID: site, Key: fmt.Sprintf("http://site%d.example", site), Host: fmt.Sprintf("site%d.example", site),
			Addr: "127.0.0.1", RobotsStatus: 200, RobotsBody: []byte("User-agent: *\nDisallow: /private\n"),
			RobotsFetched: w.now, NextVisit: w.now.Add(15 * time.Second), Fetched: 1,
		})
	}
	w.events++
	b.Events = append(b.Events, record.Event{Time: w.now, Kind: "batch", Text: fmt.Sprint(w.events)})
}

// openApplied opens a crawl database at path with one small batch
// applied: ten pages with bodies and links, new URLs, their sites.
func openApplied(t *testing.T, path string) *DB {
	t.Helper()
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := newWorkload(1, 5, 1<<10)
	var b record.Batch
	w.fill(&b, 10, 4, 2)
	if err := db.Apply(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	return db
}
