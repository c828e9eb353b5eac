package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/engine/visit"
)

// Late pages kept for a site open its next lease, on the master's own
// robots too: a page stands only for a URL of its kind (a recrawl for a
// recrawl), a page of a URL the lease does not hold stays kept, and the
// robot's results are numbered after the late pages, its end counting
// them as fetched.
func TestLatePagesOpenTheSitesNextLease(t *testing.T) {
	c := newTestCluster(t)
	var robotGot []uint64
	d := NewDispatcher(c.m, DispatcherOptions{LocalRobots: 1, Local: localDispatcher(func(_ context.Context, l *visit.Lease, report func(visit.Result)) {
		for i, q := range l.URLs {
			robotGot = append(robotGot, q.ID)
			report(visit.Result{Lease: l.ID, Seq: i + 1, Page: &visit.PageResult{URL: q.URL, Record: record.PageRecord{URL: q.ID, Status: 200}}})
		}
		report(visit.Result{Lease: l.ID, Seq: len(l.URLs) + 1, End: &visit.LeaseEnd{Fetched: len(l.URLs), Next: time.Now()}})
	})})
	defer d.Close()
	d.Resume(nil, nil)

	// Lease 1 of late.test ended with its slave gone, URLs 11 to 14
	// given back; the slave then delivered 11, 12 (a recrawl) and 14.
	gone := testEngineLease(1, "late.test", time.Now().Add(time.Hour))
	page := func(u uint64, recrawl bool) visit.Result {
		return visit.Result{Lease: 1, Page: &visit.PageResult{URL: "http://late.test/", Record: record.PageRecord{URL: u, Status: 200, Recrawl: recrawl}}}
	}
	d.mu.Lock()
	d.haunt("1", &remoteLease{lease: gone}, &visit.LeaseEnd{Returned: []uint64{11, 12, 13, 14}})
	kept := d.keepLate("1", []visit.Result{page(11, false), page(12, true), page(14, false), page(99, false)})
	d.mu.Unlock()
	if kept != 3 {
		t.Fatalf("%d late pages kept, want 3 (99 was not given back)", kept)
	}

	// The next lease holds 13, 12 (not a recrawl) and 11, not 14.
	next := testEngineLease(2, "late.test", time.Now().Add(time.Hour))
	next.URLs = []record.QueuedURL{{ID: 13, URL: "http://late.test/13"}, {ID: 12, URL: "http://late.test/12"}, {ID: 11, URL: "http://late.test/11"}}
	var r reports
	d.Dispatch(context.Background(), next, r.report)
	// The late page is reported off the engine's loop, the robot's
	// results in their own time: the engine orders them by Seq.
	waitFor(t, "the lease's four results", func() bool { return len(r.of(2)) == 4 })
	rs := r.of(2)
	slices.SortFunc(rs, func(a, b visit.Result) int { return a.Seq - b.Seq })
	var order []uint64
	for i, res := range rs {
		if res.Seq != i+1 {
			t.Fatalf("results %+v: not numbered 1, 2, 3, …", rs)
		}
		if res.Page != nil {
			order = append(order, res.Page.Record.URL)
		}
	}
	if !slices.Equal(order, []uint64{11, 13, 12}) || !slices.Equal(robotGot, []uint64{13, 12}) {
		t.Errorf("pages %v (robot fetched %v): want the late 11 first, then the robot's 13 and 12", order, robotGot)
	}
	if end := rs[len(rs)-1].End; end == nil || end.Fetched != 3 {
		t.Errorf("end %+v: want 3 fetched", end)
	}
	if ids := urlIDs(next.URLs); !slices.Equal(ids, []uint64{11, 13, 12}) {
		t.Errorf("the engine's lease holds %v: want the late page's URL first", ids)
	}
	if d.Stats().Late != 1 {
		t.Errorf("late pages applied: %d, want 1", d.Stats().Late)
	}
	// 14 stays kept for a lease that holds it; 12's recrawl is dropped.
	d.mu.Lock()
	left := d.late["http://late.test"]
	d.mu.Unlock()
	if len(left) != 1 || left[14].page == nil {
		t.Errorf("kept after the lease: %v, want 14 only", left)
	}
}
