package record_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"lidi/engine/record"
)

// MemStore is safe for concurrent use, and the callbacks of its streaming
// methods may call it (the engine's restart does).
func TestMemStoreConcurrentUse(t *testing.T) {
	ctx := context.Background()
	var m record.MemStore
	const writers, each = 4, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			site := int64(w + 1)
			b := record.Batch{Sites: []record.SiteRecord{{ID: site, Key: fmt.Sprintf("http://s%d.test", site)}}}
			if err := m.Apply(ctx, &b); err != nil {
				t.Error(err)
				return
			}
			for i := range each {
				id := uint64(site<<32 | int64(i+1))
				b := record.Batch{URLs: []record.URLRecord{{ID: id, Site: site, URL: fmt.Sprintf("http://s%d.test/%d", site, i), Seq: int64(i)}}}
				if i%2 == 1 {
					b.Pages = []record.PageRecord{{URL: id - 1, Site: site, Status: 200, Fetched: time.Unix(int64(i), 0)}}
					b.Links = []record.Link{{From: id - 1, To: id}}
				}
				if err := m.Apply(ctx, &b); err != nil {
					t.Error(err)
					return
				}
				if _, _, _, err := m.Head(ctx, site, 3); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Go(func() {
		for range each {
			if _, err := m.Sites(ctx); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()

	pages := 0
	err := m.FetchedLinks(ctx, func(page uint64, url string, links []uint64) {
		pages++
		if len(links) != 1 || links[0] != page+1 {
			t.Errorf("links of %x = %x, want [%x]", page, links, page+1)
		}
		if _, _, _, err := m.Head(ctx, int64(page>>32), 1); err != nil { // the lock is not held
			t.Error(err)
		}
	})
	if err != nil || pages != writers*each/2 {
		t.Fatalf("FetchedLinks: %d pages, %v; want %d", pages, err, writers*each/2)
	}
	sites, err := m.Sites(ctx)
	if err != nil || len(sites) != writers {
		t.Fatalf("Sites = %d, %v", len(sites), err)
	}
	for _, s := range sites {
		if s.Pending != each/2 {
			t.Errorf("site %d pending %d, want %d", s.ID, s.Pending, each/2)
		}
	}
}
