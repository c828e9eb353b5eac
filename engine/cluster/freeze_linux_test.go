package cluster

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"lidi/engine/visit"
)

// freezeTries bounds the leases TestASlaveFrozenPastThreeHeartbeats
// hands out until it freezes its slave in the middle of one.
const freezeTries = 5

// A slave frozen with SIGSTOP past three heartbeats is declared gone and
// its lease ends, the pages it sent applied and the others returned; once
// continued (SIGCONT) it hears the lease is over and sends what it had
// fetched: those late pages open the site's next lease, whose robot does
// not fetch them, and no URL is reported twice across the leases.
//
// A loaded machine may hold the slave's process unasked, long enough for
// it to lose its liberty and end its lease itself before the test freezes
// it, as it should (the master then gives nothing up): that lease is not
// the case under test, and the test hands out another.
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
	var l *visit.Lease
	var since time.Time
	for try := uint64(0); ; try++ {
		if try == freezeTries {
			t.Fatalf("%d leases ended before their slave was frozen", try)
		}
		l = nsLease(7+10*try, 200)
		since = time.Now()
		given := d.Stats().Given
		d.Dispatch(context.Background(), l, r.report)
		waitFor(t, "pages coming back while the lease runs", func() bool { return len(r.of(l.ID)) >= 5 || ended(&r, l.ID)() })
		if ended(&r, l.ID)() {
			t.Logf("lease %d ended after %d results, before its slave was frozen: another", l.ID, len(r.of(l.ID)))
			continue
		}
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the lease ended", ended(&r, l.ID))
		if d.Stats().Given > given {
			break
		}
		// The slave ended it just before it was frozen.
		t.Logf("lease %d ended by its slave as it was frozen: another", l.ID)
		if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the slave back", func() bool { return len(m.Slaves()) == 1 })
	}
	// How soon silence is noticed is the registry's sweep, tested on a
	// fake clock; here, that the lease ended because the slave was
	// declared gone, and only then.
	if left, returned := eventAt(m, SlaveLeft, slave, since), eventAt(m, LeaseReturned, slave, since); left < 0 || returned < left {
		t.Errorf("events %+v: want the slave declared gone (at %d), then its lease returned (at %d)", m.Events(), left, returned)
	}
	rs := r.of(l.ID)
	end := rs[len(rs)-1].End
	if pages := len(rs) - 1; end.Fetched != pages || len(end.Returned) != len(l.URLs)-pages {
		t.Fatalf("end %+v after %d pages: want the other %d URLs returned", end, pages, len(l.URLs)-pages)
	}

	// Back, it sends its lease's end (and what it fetched, if anything):
	// parts of a lease no longer in the book.
	st := m.Stats()
	before := st.Late + st.Duplicates
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the slave's late parts", func() bool { st := m.Stats(); return st.Late+st.Duplicates > before })
	if got := r.of(l.ID); len(got) != len(rs) {
		t.Errorf("%d results reported after the lease ended", len(got)-len(rs))
	}
	nextLeaseOpensWithLatePages(t, m, d, &r, l, end)
	t.Logf("frozen after %d pages; %d late pages applied in the next lease", len(rs)-1, d.Stats().Late)
}
