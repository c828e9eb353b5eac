package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"lidi/engine/record"
)

// workload makes realistic batches: each fetched page was queued earlier,
// yields a few new URLs and links to those and to URLs already known, and
// carries a body of incompressible bytes (the store keeps bodies as given).
type workload struct {
	rng    *rand.Rand
	sites  int64
	seq    int64
	now    time.Time
	queue  []record.URLRecord // queued, fetched in FIFO order
	known  []uint64           // every URL ID, link targets
	blob   []byte
	bodyN  int
	events int
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
		if len(w.queue) == 0 {
			site := 1 + w.rng.Int64N(w.sites)
			u := w.newURL(site, 0, 0)
			b.URLs = append(b.URLs, u)
			w.queue = append(w.queue, u)
		}
		u := w.queue[0]
		w.queue = w.queue[1:]
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
				w.queue = append(w.queue, n)
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
