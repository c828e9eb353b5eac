package cluster

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"lidi/engine/visit"
)

// A slave declared gone while the master is behind on the results stream
// (its loop held by another lease's page) has the page it delivered
// before it died applied before its lease ends: the master catches up
// with the stream first, so the page is not fetched again.
func TestASlaveDeclaredGoneHasWhatItDeliveredApplied(t *testing.T) {
	c := &testCluster{t: t, dir: t.TempDir(), got: &applied{}, token: "test-token", addr: "127.0.0.1:0",
		timing: Timing{Grace: 100 * time.Millisecond, Heartbeat: time.Second}}
	c.startMaster()
	t.Cleanup(c.stopMaster)
	firstPage := func(emitted chan<- struct{}, hold <-chan struct{}) Work {
		return func(ctx context.Context, payload []byte, emit func([]byte) error) (Outcome, error) {
			if err := emitFirstPage(payload, emit); err != nil {
				return Outcome{}, err
			}
			close(emitted)
			<-hold
			return Outcome{}, ctx.Err()
		}
	}
	hold := make(chan struct{})
	defer close(hold)
	aSent, bSent := make(chan struct{}), make(chan struct{})
	// Slave a, one robot, takes the pinned lease; b the other.
	c.runSlave(SlaveOptions{ID: "a", Tags: []string{"eu"}, Robots: 1, Work: firstPage(aSent, hold)})
	b, _ := c.runSlave(SlaveOptions{ID: "b", Robots: 1, Work: firstPage(bSent, hold)})
	d := NewDispatcher(c.m, DispatcherOptions{})
	defer d.Close()
	d.Resume(nil, nil)
	waitFor(t, "both slaves heard", func() bool { return len(c.m.Slaves()) == 2 })

	// The loop applies a's page and is held there, behind b's.
	release := make(chan struct{})
	var r reports
	holding := func(res visit.Result) {
		if res.Page != nil {
			<-release
		}
		r.report(res)
	}
	a := testEngineLease(1, "a.example.fr", time.Now().Add(time.Hour))
	d.Dispatch(context.Background(), a, holding)
	<-aSent
	bl := testEngineLease(2, "b.test", time.Now().Add(time.Hour))
	d.Dispatch(context.Background(), bl, r.report)
	<-bSent
	b.nc.Close() // killed: its page is in the stream, not applied yet
	waitFor(t, "b declared gone", func() bool {
		return slices.ContainsFunc(c.m.Events(), func(ev SlaveEvent) bool {
			return ev.Kind == SlaveLeft && strings.Contains(ev.Text, "slave b ")
		})
	})
	close(release) // the master catches up, within a heartbeat
	waitFor(t, "b's lease ended", ended(&r, 2))
	rs := r.of(2)
	if len(rs) != 2 || rs[0].Page == nil || rs[0].Page.Record.URL != bl.URLs[0].ID {
		t.Fatalf("b's lease: %+v, want its page then its end", rs)
	}
	if end := rs[1].End; end.Fetched != 1 || !slices.Equal(end.Returned, []uint64{bl.URLs[1].ID}) {
		t.Errorf("b's end %+v: want 1 page fetched, the other URL returned", end)
	}
}
