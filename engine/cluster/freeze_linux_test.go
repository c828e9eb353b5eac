package cluster

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
)

// eventAt returns the index of m's first event of kind (about slave, if
// not empty), or -1.
func eventAt(m *Master, kind SlaveEventKind, slave string) int {
	for i, ev := range m.Events() {
		if ev.Kind == kind && (slave == "" || ev.Slave == slave) {
			return i
		}
	}
	return -1
}

// A slave frozen with SIGSTOP past three heartbeats is declared gone and
// its lease ends, the pages it sent applied and the others returned; once
// continued (SIGCONT) it hears the lease is over and sends what it had
// fetched: those late pages open the site's next lease, whose robot does
// not fetch them, and no URL is reported twice across the two leases.
func TestASlaveFrozenPastThreeHeartbeats(t *testing.T) {
	dir := t.TempDir()
	const token = "freeze-token"
	srv, m, d := helperMaster(t, "127.0.0.1:0", token, dir)

	// The slave is this test binary run again as TestNetnsSlaveHelper,
	// on loopback: a process of its own, to be stopped and continued.
	cmd := helperSlave(t, nil, srv.URL(), token, filepath.Join(dir, "frozen.spool"))
	waitFor(t, "the slave heard", func() bool { return len(m.Slaves()) == 1 })
	slave := m.Slaves()[0].ID

	var r reports
	l := nsLease(7, 200)
	d.Dispatch(context.Background(), l, r.report)
	waitFor(t, "pages coming back while the lease runs", func() bool { return len(r.of(7)) >= 5 })
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the lease ended", ended(&r, 7))
	// How soon silence is noticed is the registry's sweep, tested on a
	// fake clock; here, that the lease ended because the slave was
	// declared gone, and only then.
	if left, returned := eventAt(m, SlaveLeft, slave), eventAt(m, LeaseReturned, slave); left < 0 || returned < left {
		t.Errorf("events %+v: want the slave declared gone (at %d), then its lease returned (at %d)", m.Events(), left, returned)
	}
	rs := r.of(7)
	end := rs[len(rs)-1].End
	if pages := len(rs) - 1; end.Fetched != pages || len(end.Returned) != len(l.URLs)-pages {
		t.Fatalf("end %+v after %d pages: want the other %d URLs returned", end, pages, len(l.URLs)-pages)
	}

	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Back, it sends its lease's end (and what it fetched, if anything):
	// parts of a lease no longer in the book.
	waitFor(t, "the slave's late parts", func() bool { return m.Stats().Late+m.Stats().Duplicates > 0 })
	if got := r.of(7); len(got) != len(rs) {
		t.Errorf("%d results reported after the lease ended", len(got)-len(rs))
	}
	nextLeaseOpensWithLatePages(t, m, d, &r, l, end)
	t.Logf("frozen after %d pages; %d late pages applied in the next lease", len(rs)-1, d.Stats().Late)
}
