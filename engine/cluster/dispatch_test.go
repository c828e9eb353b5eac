package cluster

import (
	"bytes"
	"context"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/engine/visit"
)

func testEngineLease(id uint64, site string, deadline time.Time) *visit.Lease {
	return &visit.Lease{ID: id, Site: int64(id), Key: "http://" + site, Host: site, Addr: netip.MustParseAddr("127.0.0.1"), Port: 80,
		Delay: 10 * time.Millisecond, NotBefore: time.Now().Round(0), Deadline: deadline,
		URLs: []record.QueuedURL{{ID: id*10 + 1, URL: "http://" + site + "/"}, {ID: id*10 + 2, URL: "http://" + site + "/a"}}}
}

// fakeRobot is a slave's Work that "fetches" every URL of a lease.
func fakeRobot(_ context.Context, payload []byte, _ func([]byte) error) (Outcome, error) {
	l, err := DecodeLease(payload)
	if err != nil {
		return Outcome{}, err
	}
	var rs []visit.Result
	for i, q := range l.URLs {
		rs = append(rs, visit.Result{Lease: l.ID, Seq: i + 1, Page: &visit.PageResult{URL: q.URL, Record: record.PageRecord{URL: q.ID, Status: 200}}})
	}
	rs = append(rs, visit.Result{Lease: l.ID, Seq: len(l.URLs) + 1, End: &visit.LeaseEnd{Fetched: len(l.URLs), Next: time.Now()}})
	parts, err := EncodeResults(rs)
	return Outcome{Parts: parts, Pages: len(l.URLs)}, err
}

// emitFirstPage sends the result of a lease's first URL, as a robot that
// fetched it; once it returns, the page is in the results stream.
func emitFirstPage(payload []byte, emit func([]byte) error) error {
	l, err := DecodeLease(payload)
	if err != nil {
		return err
	}
	part, err := EncodeResults([]visit.Result{{Lease: l.ID, Seq: 1, Page: &visit.PageResult{Record: record.PageRecord{URL: l.URLs[0].ID, Status: 200}, URL: l.URLs[0].URL}}})
	if err != nil {
		return err
	}
	return emit(part[0])
}

// reports gathers what a Dispatcher reports, by lease.
type reports struct {
	mu  sync.Mutex
	got map[uint64][]visit.Result
}

func (r *reports) report(res visit.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.got == nil {
		r.got = make(map[uint64][]visit.Result)
	}
	r.got[res.Lease] = append(r.got[res.Lease], res)
}

func (r *reports) of(id uint64) []visit.Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]visit.Result(nil), r.got[id]...)
}

func ended(r *reports, id uint64) func() bool {
	return func() bool {
		rs := r.of(id)
		return len(rs) > 0 && rs[len(rs)-1].End != nil
	}
}

// eventAt returns the index of m's first event of kind (about slave, if
// not empty) at since or after, or -1.
func eventAt(m *Master, kind SlaveEventKind, slave string, since time.Time) int {
	for i, ev := range m.Events() {
		if ev.Kind == kind && (slave == "" || ev.Slave == slave) && !ev.Time.Before(since) {
			return i
		}
	}
	return -1
}

func TestLeaseAndResultsRoundTripThroughTheWire(t *testing.T) {
	l := testEngineLease(7, "a.test", time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))
	l.NotBefore = l.Deadline.Add(-time.Minute) // a time as it comes back from JSON (UTC, no monotonic reading)
	l.Robots = &visit.RobotsFile{Status: 200, Body: []byte("User-agent: *\nDisallow: /x\n"), Fetched: l.Deadline}
	b, err := EncodeLease(l)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decompress(Compress(b))
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeLease(back)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, l) {
		t.Errorf("lease changed on the wire:\n in %+v\nout %+v", l, got)
	}
	// Results big enough to take several parts come back whole, in order.
	var rs []visit.Result
	body := bytes.Repeat([]byte{0x78, 0x9c}, 300<<10)
	for i := range 12 {
		rs = append(rs, visit.Result{Lease: 7, Seq: i + 1, Page: &visit.PageResult{URL: "http://a.test/", Record: record.PageRecord{URL: uint64(i), Body: body}}})
	}
	rs = append(rs, visit.Result{Lease: 7, Seq: 13, End: &visit.LeaseEnd{Fetched: 12, Returned: []uint64{99}}})
	parts, err := EncodeResults(rs)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) < 3 {
		t.Fatalf("%d results of 600 KB each in %d parts", len(rs), len(parts))
	}
	for _, p := range parts {
		if len(p) > maxPart+len(body)*2 {
			t.Errorf("a part of %d bytes", len(p))
		}
	}
	// Parts may arrive in any order.
	parts[0], parts[len(parts)-1] = parts[len(parts)-1], parts[0]
	out, err := DecodeResults(parts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, rs) {
		t.Errorf("results changed on the wire")
	}
	if _, err := DecodeLease([]byte(`{"ID":0}`)); err == nil {
		t.Error("a lease without id was accepted")
	}
	if _, err := DecodeResults([][]byte{[]byte("[{")}); err == nil {
		t.Error("a broken part was accepted")
	}
}

func TestDispatcherRunsLeasesOnSlavesAndLocalRobots(t *testing.T) {
	c := newTestCluster(t)
	c.slave("a", []string{"eu"}, fakeRobot)
	var local sync.WaitGroup
	localRan := make(chan uint64, 4)
	d := NewDispatcher(c.m, DispatcherOptions{LocalRobots: 1, Local: localDispatcher(func(ctx context.Context, l *visit.Lease, report func(visit.Result)) {
		local.Add(1)
		go func() {
			defer local.Done()
			localRan <- l.ID
			report(visit.Result{Lease: l.ID, Seq: 1, End: &visit.LeaseEnd{Next: time.Now()}})
		}()
	})})
	defer d.Close()
	d.Resume(nil, nil) // no earlier run
	var r reports
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	d.Dispatch(ctx, testEngineLease(1, "one.test", deadline), r.report) // the local robot has room
	waitFor(t, "the local lease ended", ended(&r, 1))
	if id := <-localRan; id != 1 {
		t.Fatalf("the local robot ran lease %d", id)
	}
	// Pinned sites always go to slaves (here: the local robot is free).
	d.Dispatch(ctx, testEngineLease(2, "two.example.fr", deadline), r.report)
	waitFor(t, "the pinned lease ended", ended(&r, 2))
	select {
	case id := <-localRan:
		t.Fatalf("the pinned lease %d ran on the master", id)
	default:
	}
	rs := r.of(2)
	if len(rs) != 3 || rs[0].Page == nil || rs[0].Page.URL != "http://two.example.fr/" || rs[2].End == nil {
		t.Errorf("lease 2's results: %+v", rs)
	}
	local.Wait()
	waitFor(t, "the slave counted in the robots", func() bool { return d.Stats().Robots == 3 })
}

type localDispatcher func(ctx context.Context, l *visit.Lease, report func(visit.Result))

func (f localDispatcher) Dispatch(ctx context.Context, l *visit.Lease, report func(visit.Result)) {
	f(ctx, l, report)
}

// A lease no slave names in a heartbeat is given up at its deadline plus
// the grace, with an event.
func TestDispatcherGivesUpALeaseAtItsDeadlineAndGrace(t *testing.T) {
	c := newTestCluster(t)
	d := NewDispatcher(c.m, DispatcherOptions{})
	defer d.Close()
	d.Resume(nil, nil) // no earlier run
	var r reports
	deadline := time.Now().Add(200 * time.Millisecond)
	d.Dispatch(context.Background(), testEngineLease(5, "five.test", deadline), r.report)
	waitFor(t, "the lease given up, with an event", func() bool {
		for _, ev := range c.m.Events() {
			if ev.Kind == LeaseExpired && strings.Contains(ev.Text, "five.test") {
				return true
			}
		}
		return false
	})
	if time.Now().Before(deadline.Add(testTiming.Grace)) {
		t.Fatal("given up before its deadline and grace")
	}
	if n := d.Stats().Expired; n != 1 {
		t.Errorf("%d leases given up, want 1", n)
	}
	if len(c.m.Book()) != 0 {
		t.Errorf("book: %+v", c.m.Book())
	}
}

// A slave killed in the middle of a lease: the pages it sent while the
// lease ran are reported as they came; once the slave is declared gone
// (three heartbeats), long before the lease's deadline, the lease ends with
// the other URLs returned, and the robot count drops to the live slaves'.
// The dead slave's spool, delivered when it is started again, holds a
// page it fetched after it was declared gone: that page opens the site's
// next lease and is not fetched again; nothing is reported twice.
func TestDispatcherGivesBackTheLeasesOfASlaveDeclaredGone(t *testing.T) {
	c := newTestCluster(t)
	sent := make(chan struct{})
	release := make(chan struct{})
	a, stopA := c.slave("a", nil, func(ctx context.Context, payload []byte, emit func([]byte) error) (Outcome, error) {
		// The first page is sent at once; the slave dies before the rest.
		if err := emitFirstPage(payload, emit); err != nil {
			return Outcome{}, err
		}
		close(sent)
		<-release
		return fakeRobot(ctx, payload, nil)
	})
	var robots atomic.Int64
	d := NewDispatcher(c.m, DispatcherOptions{SetRobots: func(n int) { robots.Store(int64(n)) }})
	defer d.Close()
	d.Resume(nil, nil)
	waitFor(t, "the slave's robots counted", func() bool { return robots.Load() == 2 })
	var r reports
	l := testEngineLease(6, "six.test", time.Now().Add(time.Hour))
	d.Dispatch(context.Background(), l, r.report)
	<-sent
	waitFor(t, "the first page reported", func() bool { return len(r.of(6)) == 1 })
	killed := time.Now()
	a.nc.Close() // killed: no heartbeat, no delivery
	waitFor(t, "the lease ended", func() bool { rs := r.of(6); return len(rs) == 2 && rs[1].End != nil })
	// How soon silence is noticed is the registry's sweep, tested on a
	// fake clock; here, that the lease ended because its slave was
	// declared gone (not at its deadline, an hour away): the events, and
	// Given below.
	if left, returned := eventAt(c.m, SlaveLeft, "a", killed), eventAt(c.m, LeaseReturned, "a", killed); left < 0 || returned < left {
		t.Errorf("events %+v: want the slave declared gone (at %d), then its lease returned (at %d)", c.m.Events(), left, returned)
	}
	end := r.of(6)[1]
	if end.Seq != 2 || end.End.Fetched != 1 || !slices.Equal(end.End.Returned, []uint64{l.URLs[1].ID}) {
		t.Errorf("end %+v, %+v: want Seq 2, 1 fetched, the other returned", end, end.End)
	}
	if robots.Load() != 0 {
		t.Errorf("robots %d with the only slave gone", robots.Load())
	}
	if d.Stats().Given != 1 || d.Stats().Expired != 0 || len(d.Waiting()) != 0 {
		t.Errorf("stats %+v, waiting %v", d.Stats(), d.Waiting())
	}
	close(release)
	stopA()
	// Started again with its spool, the slave delivers the page of
	// the lease it finished after it was declared gone: its URL is
	// queued again and not leased yet, so it is kept, and the site's
	// next lease opens with it; its robot does not fetch it again.
	var fetched sync.Map
	a2, _ := c.slave("a", nil, func(ctx context.Context, payload []byte, emit func([]byte) error) (Outcome, error) {
		l, err := DecodeLease(payload)
		if err == nil {
			for _, q := range l.URLs {
				fetched.Store(q.ID, true)
			}
		}
		return fakeRobot(ctx, payload, emit)
	})
	waitFor(t, "the spool delivered", func() bool { return a2.Stats().Spooled == 0 && a2.Stats().Delivered > 0 })
	waitFor(t, "the late part kept", func() bool { return c.m.Stats().Late >= 1 })
	if rs := r.of(6); len(rs) != 2 {
		t.Errorf("%d results reported, want the page and the end", len(rs))
	}
	if len(c.m.Book()) != 0 {
		t.Errorf("book: %+v", c.m.Book())
	}
	late := l.URLs[1]
	next := testEngineLease(16, "six.test", time.Now().Add(time.Hour))
	next.URLs = []record.QueuedURL{{ID: 999, URL: "http://six.test/b"}, late}
	d.Dispatch(context.Background(), next, r.report)
	waitFor(t, "the next lease ended", ended(&r, 16))
	rs := r.of(16)
	slices.SortFunc(rs, func(a, b visit.Result) int { return a.Seq - b.Seq })
	if len(rs) != 3 || rs[0].Page == nil || rs[0].Page.Record.URL != late.ID || rs[1].Page == nil || rs[1].Page.Record.URL != 999 || rs[2].End == nil {
		t.Fatalf("the next lease's results: %+v", rs)
	}
	if rs[2].End.Fetched != 2 || len(rs[2].End.Returned) != 0 || rs[2].Seq != 3 {
		t.Errorf("its end: Seq %d, %+v", rs[2].Seq, rs[2].End)
	}
	if _, again := fetched.Load(late.ID); again {
		t.Error("the late page was fetched again")
	}
	if next.URLs[0].ID != late.ID {
		t.Errorf("the engine's lease does not open with the late page: %v", urlIDs(next.URLs))
	}
	if d.Stats().Late != 1 {
		t.Errorf("late pages applied: %d, want 1", d.Stats().Late)
	}
}

// A master started again hands the engine the leases its earlier run left
// with slaves, URLs and all (engine.Resumer); the results of those the
// engine takes over are reported to it, the last one acknowledged only once
// stored, and the others are forgotten.
func TestDispatcherHandsAnEarlierRunsLeasesOver(t *testing.T) {
	c := newTestCluster(t)
	d := NewDispatcher(c.m, DispatcherOptions{})
	deadline := time.Now().Add(time.Hour).Round(0)
	var first reports
	d.Dispatch(context.Background(), testEngineLease(41, "taken.test", deadline), first.report)
	d.Dispatch(context.Background(), testEngineLease(42, "dropped.test", deadline), first.report)
	waitFor(t, "both leases booked", func() bool {
		n := 0
		for _, b := range c.m.Book() {
			if b.Seq > 0 {
				n++
			}
		}
		return n == 2
	})
	d.Close()
	c.stopMaster()
	c.startMaster()
	d = NewDispatcher(c.m, DispatcherOptions{})
	defer d.Close()
	out := d.Outstanding()
	slices.SortFunc(out, func(a, b *visit.Lease) int { return int(a.ID) - int(b.ID) })
	want := testEngineLease(41, "taken.test", deadline)
	if len(out) == 2 && out[0].Deadline.Equal(want.Deadline) {
		// Times come through JSON (UTC, no monotonic reading); the
		// lease's NotBefore is its own.
		want.NotBefore, want.Deadline = out[0].NotBefore, out[0].Deadline
	}
	if len(out) != 2 || !reflect.DeepEqual(out[0], want) || out[1].Key != "http://dropped.test" {
		t.Fatalf("outstanding: %+v\nwant %+v", *out[0], *want)
	}
	var r reports
	d.Resume(out[:1], r.report)
	if b := c.m.Book(); len(b) != 1 || b[0].ID != "41" {
		t.Fatalf("the lease not taken over is still booked: %+v", b)
	}
	c.slave("a", nil, fakeRobot)
	waitFor(t, "the earlier lease's results reported", ended(&r, 41))
	rs := r.of(41)
	if len(rs) != 3 || rs[0].Page == nil || rs[2].Committed == nil || rs[0].Committed != nil {
		t.Fatalf("results of the lease taken over: %+v", rs)
	}
	if len(c.m.Book()) != 1 {
		t.Fatal("the lease left the book before its result was stored")
	}
	rs[2].Committed(nil)
	waitFor(t, "the book empty once stored", func() bool { return len(c.m.Book()) == 0 && c.m.Stats().Applied == 1 })
}

// A lease no slave names within three heartbeats (it went to a slave that
// died before naming it, or waits in the stream) is taken back by the
// master's own claim: it ends at once with every URL returned, and no
// slave works it afterwards.
func TestDispatcherTakesBackALeaseNoSlaveNamed(t *testing.T) {
	c := newTestCluster(t)
	d := NewDispatcher(c.m, DispatcherOptions{})
	defer d.Close()
	d.Resume(nil, nil)
	var r reports
	l := testEngineLease(8, "eight.test", time.Now().Add(time.Hour))
	handed := time.Now()
	d.Dispatch(context.Background(), l, r.report)
	waitFor(t, "the lease taken back", ended(&r, 8))
	if took := time.Since(handed); took < 3*testTiming.Heartbeat {
		t.Errorf("taken back %s after it was handed out, before three heartbeats", took)
	}
	rs := r.of(8)
	if len(rs) != 1 || rs[0].Seq != 1 || !slices.Equal(rs[0].End.Returned, []uint64{l.URLs[0].ID, l.URLs[1].ID}) {
		t.Errorf("results %+v: want one end with both URLs returned", rs)
	}
	if len(c.m.Book()) != 0 || d.Stats().Given != 1 {
		t.Errorf("book %+v, stats %+v", c.m.Book(), d.Stats())
	}
	// A slave started now works the next lease, never the one taken back.
	s, _ := c.slave("a", nil, fakeRobot)
	d.Dispatch(context.Background(), testEngineLease(9, "nine.test", time.Now().Add(time.Hour)), r.report)
	waitFor(t, "the next lease worked", ended(&r, 9))
	if n := s.Stats().LeasesDone; n != 1 {
		t.Errorf("the slave worked %d leases, want only the next one", n)
	}
	if rs := r.of(8); len(rs) != 1 {
		t.Errorf("%d results of the lease taken back", len(rs))
	}
}

// A lease taken over from an earlier run whose first pages that run stored
// (their parts acknowledged, never delivered again) has the rest of its
// results numbered from 1 for the engine's run of it, which would wait
// for its Seq 1 for ever otherwise.
func TestAnAdoptedLeasesLaterPartsAreNumberedAnew(t *testing.T) {
	c := newTestCluster(t)
	d := NewDispatcher(c.m, DispatcherOptions{})
	l := testEngineLease(51, "half.test", time.Now().Add(time.Hour))
	var first reports
	d.Dispatch(context.Background(), l, first.report)
	waitFor(t, "the lease booked", func() bool { b := c.m.Book(); return len(b) == 1 && b[0].Seq > 0 })
	d.Close()
	c.stopMaster()
	c.startMaster()
	d = NewDispatcher(c.m, DispatcherOptions{})
	defer d.Close()
	var r reports
	d.Resume(d.Outstanding(), r.report)
	// The slave sends only what the earlier run did not store: the
	// second page (Seq 2) and the end (Seq 3).
	c.slave("a", nil, func(ctx context.Context, payload []byte, _ func([]byte) error) (Outcome, error) {
		l, err := DecodeLease(payload)
		if err != nil {
			return Outcome{}, err
		}
		parts, err := EncodeResults([]visit.Result{
			{Lease: l.ID, Seq: 2, Page: &visit.PageResult{URL: l.URLs[1].URL, Record: record.PageRecord{URL: l.URLs[1].ID, Status: 200}}},
			{Lease: l.ID, Seq: 3, End: &visit.LeaseEnd{Fetched: 2, Next: time.Now()}}})
		return Outcome{Parts: parts, Pages: 1}, err
	})
	waitFor(t, "the lease's end reported", ended(&r, 51))
	rs := r.of(51)
	if len(rs) != 2 || rs[0].Seq != 1 || rs[0].Page == nil || rs[0].Page.Record.URL != l.URLs[1].ID || rs[1].Seq != 2 || rs[1].End == nil {
		t.Fatalf("results %+v: want the page as Seq 1 and the end as Seq 2", rs)
	}
}
