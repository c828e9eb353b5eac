package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/internal/testkit"
)

// headWorld makes random batches of the records that change sites' queues
// (new URLs, pages, skips, slow-downs) over a few sites, following which
// URLs are queued so that pages and skips name real ones.
type headWorld struct {
	rng    *rand.Rand
	seq    int64
	queued []record.URLRecord // queued once the batches made so far are written
	sites  int64
}

func (w *headWorld) batch(n int) *pending {
	p := &pending{}
	t := time.Unix(1000, 0)
	for range n {
		switch k := w.rng.IntN(10); {
		case k < 5 || len(w.queued) == 0: // a URL found
			w.seq++
			r := record.URLRecord{ID: w.rng.Uint64(), Site: 1 + w.rng.Int64N(w.sites), Depth: w.rng.IntN(4),
				Priority: float64(w.rng.IntN(4)), Seq: w.seq, Discovered: t}
			r.URL = fmt.Sprintf("http://s%d.test/%016x", r.Site, r.ID)
			if w.rng.IntN(8) == 0 {
				r.State, r.SkipReason = record.URLSkipped, record.SkipScope
			} else {
				w.queued = append(w.queued, r)
			}
			p.URLs = append(p.URLs, r)
		case k < 7: // fetched
			r := w.take()
			p.Pages = append(p.Pages, record.PageRecord{URL: r.ID, Site: r.Site, Fetched: t, Status: 200})
		case k < 8: // skipped
			r := w.take()
			p.Skips = append(p.Skips, record.Skip{URL: r.ID, Reason: record.SkipRobots})
		default: // slowed down, still queued
			r := w.queued[w.rng.IntN(len(w.queued))]
			p.SlowDowns = append(p.SlowDowns, record.SlowDown{URL: r.ID, Tries: 1 + w.rng.IntN(3)})
		}
	}
	return p
}

// take takes a queued URL out of its queue: half the time the first one
// found (often at the head of its site's queue, as leases take them),
// else any.
func (w *headWorld) take() record.URLRecord {
	i := w.rng.IntN(len(w.queued))
	if w.rng.IntN(2) == 0 {
		i = 0
	}
	r := w.queued[i]
	w.queued = append(w.queued[:i], w.queued[i+1:]...)
	return r
}

// The committer answers a head request from the store read through the
// batch it has not written as the store answers once that batch is
// written: the same URLs in the same order with the same slow-down tries,
// the same next priority and more.
func TestHeadThroughUnwrittenMatchesWritten(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(200) {
		w := &headWorld{rng: rand.New(rand.NewPCG(seed, 7)), sites: 1 + int64(seed%4)}
		read := &record.MemStore{}    // holds what was written: the committer reads it
		written := &record.MemStore{} // holds that and the unwritten batch
		for range 1 + w.rng.IntN(3) {
			b := w.batch(w.rng.IntN(200))
			for _, st := range []*record.MemStore{read, written} {
				if err := st.Apply(ctx, &b.Batch); err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
			}
		}
		c := newCommitter(read, time.Hour, 1<<30)
		acc := &pending{}
		for range 1 + w.rng.IntN(4) {
			c.gather(acc, w.batch(w.rng.IntN(40)))
		}
		if err := written.Apply(ctx, &acc.Batch); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for site := int64(1); site <= w.sites; site++ {
			for _, n := range []int{1, 2, 5, 20, 200} {
				got, gotNext, gotMore, err := c.head(ctx, &acc.Batch, site, n)
				if err != nil {
					t.Fatal(err)
				}
				want, wantNext, wantMore, _ := written.Head(ctx, site, n)
				if len(got) == 0 && len(want) == 0 {
					got, want = nil, nil
				}
				if !reflect.DeepEqual(got, want) || gotNext != wantNext || gotMore != wantMore {
					t.Fatalf("seed %d site %d n %d:\n got %v next %v more %v\nwant %v next %v more %v",
						seed, site, n, got, gotNext, gotMore, want, wantNext, wantMore)
				}
			}
		}
	}
}

// A head request is answered without a write when the batch gathered
// holds only what the committer follows, and after writing it when it
// holds queue changes it does not (here a re-ordering).
func TestHeadWritesOnlyWhatItCannotRead(t *testing.T) {
	tests := []struct {
		name   string
		reprio bool
		writes int
	}{
		{"new URLs and pages", false, 0},
		{"a re-ordering", true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &testkit.FailingStore{Store: &record.MemStore{}, Fail: func(int, *record.Batch) error { return nil }}
			c := newCommitter(st, time.Hour, 1<<30)
			done := make(chan struct{})
			go func() { c.run(context.Background()); close(done) }()
			b := c.batch()
			b.Sites = append(b.Sites, record.SiteRecord{ID: 1, Key: "http://a.test", Host: "a.test"})
			for i := range 3 {
				b.URLs = append(b.URLs, record.URLRecord{ID: uint64(10 + i), Site: 1, URL: fmt.Sprintf("http://a.test/%d", i), Priority: 1, Seq: int64(i + 1)})
			}
			b.Pages = append(b.Pages, record.PageRecord{URL: 10, Site: 1, Status: 200, Fetched: time.Unix(1, 0)})
			if tt.reprio {
				b.Priorities = append(b.Priorities, record.PriorityUpdate{URL: 12, Priority: 0})
			}
			c.in <- b
			reply := make(chan headReply, 1)
			c.in <- headReq{site: 1, n: 10, reply: reply}
			h := <-reply
			if h.err != nil {
				t.Fatal(h.err)
			}
			var ids []uint64
			for _, q := range h.urls {
				ids = append(ids, q.ID)
			}
			want := []uint64{11, 12}
			if tt.reprio {
				want = []uint64{12, 11}
			}
			if !reflect.DeepEqual(ids, want) || h.more {
				t.Errorf("head %v more %v, want %v and no more", ids, h.more, want)
			}
			if got := st.Calls(); got != tt.writes {
				t.Errorf("%d writes before the head was answered, want %d", got, tt.writes)
			}
			close(c.in)
			<-done
		})
	}
}
