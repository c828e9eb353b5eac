package cluster

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A slave frozen with SIGSTOP past three heartbeats is declared gone and
// its lease ends, the pages it sent applied and the others returned; once
// continued (SIGCONT) it hears the lease is over and sends what it had
// fetched: those late pages open the site's next lease, whose robot does
// not fetch them, and no URL is reported twice across the two leases.
func TestASlaveFrozenPastThreeHeartbeats(t *testing.T) {
	dir := t.TempDir()
	const token = "freeze-token"
	srv, err := StartServer(ServerOptions{Listen: "127.0.0.1:0", StoreDir: filepath.Join(dir, "nats"), Auth: Auth{Token: token}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	m, err := StartMaster(context.Background(), MasterOptions{Server: srv, Dial: DialOptions{Auth: Auth{Token: token}}, Timing: Timing{Grace: time.Second, Heartbeat: nsBeat}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	d := NewDispatcher(m, DispatcherOptions{})
	defer d.Close()
	d.Resume(nil, nil)

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The slave is this test binary run again as TestNetnsSlaveHelper,
	// on loopback: a process of its own, to be stopped and continued.
	cmd := exec.Command(exe, "-test.run=^TestNetnsSlaveHelper$", "-test.v")
	cmd.Env = append(os.Environ(), nsSlaveEnv+"="+srv.URL(), nsTokenEnv+"="+token, nsSpoolEnv+"="+filepath.Join(dir, "frozen.spool"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		cmd.Wait()
		if t.Failed() {
			t.Logf("the slave's log:\n%s", log.String())
		}
	}()
	waitFor(t, "the slave heard", func() bool { return len(m.Slaves()) == 1 })

	var r reports
	l := nsLease(7, 200)
	d.Dispatch(context.Background(), l, r.report)
	waitFor(t, "pages coming back while the lease runs", func() bool { return len(r.of(7)) >= 5 })
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	waitFor(t, "the lease ended", ended(&r, 7))
	if back, most := time.Since(frozen), 3*nsBeat+nsBeat/4+time.Second; back > most {
		t.Errorf("the lease came back %s after the freeze, want at most three heartbeats and a second (%s)", back, most)
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
	kept := m.Stats().Late
	next := nsLease(7, 0)
	next.ID = 8
	for _, q := range l.URLs {
		if slices.Contains(end.Returned, q.ID) {
			next.URLs = append(next.URLs, q)
		}
	}
	d.Dispatch(context.Background(), next, r.report)
	waitFor(t, "the next lease ended", ended(&r, 8))
	seen := make(map[uint64]bool)
	for _, p := range append(r.of(7), r.of(8)...) {
		if p.Page == nil {
			continue
		}
		if seen[p.Page.Record.URL] {
			t.Errorf("URL %d reported twice", p.Page.Record.URL)
		}
		seen[p.Page.Record.URL] = true
	}
	if len(seen) != len(l.URLs) {
		t.Errorf("%d URLs reported of %d", len(seen), len(l.URLs))
	}
	if got := d.Stats().Late; got < kept {
		t.Errorf("%d late pages applied, %d kept before the site's next lease", got, kept)
	}
	t.Logf("frozen after %d pages; %d late pages applied in the next lease", len(rs)-1, d.Stats().Late)
}
