package cluster

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"lidi/engine/record"
	"lidi/engine/visit"
)

// The slave of TestASlaveCutOffInItsOwnNamespace runs in a network
// namespace of its own: this process, started again there with these
// variables set (TestASlaveFrozenPastThreeHeartbeats's, on loopback).
const (
	nsSlaveEnv  = "LIDI_TEST_NETNS_SLAVE" // the master's URL
	nsTokenEnv  = "LIDI_TEST_NETNS_TOKEN"
	nsSpoolEnv  = "LIDI_TEST_NETNS_SPOOL"
	nsPageEvery = 40 * time.Millisecond // the fake robot's time per page
	nsBeat      = 200 * time.Millisecond
)

// netns runs ip with args, failing the test on an error.
func netns(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// newNamespace makes a network namespace joined to this one by a veth pair
// and returns its name, the address of this side (where the master
// listens) and the link to cut. The addresses are link-local
// (169.254.0.0/16) on the test's own veth: loopback addresses do not route
// between namespaces, and these never leave the machine. It skips the
// test where namespaces cannot be made (not root, no ip, a container that
// refuses them).
func newNamespace(t *testing.T) (ns string, here netip.Addr, link string) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root: skipped (run the tests as root to cut a slave off over a veth link)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2): network namespaces skipped")
	}
	id := os.Getpid() % 60000
	ns = fmt.Sprintf("lidi-test-%d", id)
	if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
		t.Skipf("ip netns add refused (%v: %s): network namespaces skipped", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	link, peer := fmt.Sprintf("lt%da", id), fmt.Sprintf("lt%db", id)
	netns(t, "link", "add", link, "type", "veth", "peer", "name", peer)
	t.Cleanup(func() { exec.Command("ip", "link", "del", link).Run() })
	netns(t, "link", "set", peer, "netns", ns)
	a, b := id%250+1, id/250%250+1
	here = netip.AddrFrom4([4]byte{169, 254, byte(a), byte(b)})
	there := netip.AddrFrom4([4]byte{169, 254, byte(a), byte(b) + 1})
	if b == 254 {
		there = netip.AddrFrom4([4]byte{169, 254, byte(a), byte(b) - 1})
	}
	netns(t, "addr", "add", here.String()+"/24", "dev", link)
	netns(t, "link", "set", link, "up")
	netns(t, "-n", ns, "addr", "add", there.String()+"/24", "dev", peer)
	netns(t, "-n", ns, "link", "set", peer, "up")
	netns(t, "-n", ns, "link", "set", "lo", "up")
	// A slow, lossy link where the kernel has netem; without it the test
	// runs on the plain veth.
	if out, err := exec.Command("ip", "netns", "exec", ns, "tc", "qdisc", "add", "dev", peer, "root", "netem", "delay", "50ms", "loss", "1%").CombinedOutput(); err != nil {
		t.Logf("tc netem not available (%v: %s): the link is not slowed", err, strings.TrimSpace(string(out)))
	}
	return ns, here, link
}

// nsLease is a lease of n pages of one site.
func nsLease(id uint64, n int) *visit.Lease {
	l := &visit.Lease{ID: id, Site: int64(id), Key: fmt.Sprintf("http://ns%d.test", id), Host: fmt.Sprintf("ns%d.test", id),
		Addr: netip.MustParseAddr("127.0.0.1"), Port: 80, Delay: nsPageEvery, NotBefore: time.Now().Round(0), Deadline: time.Now().Add(time.Hour)}
	for i := range n {
		l.URLs = append(l.URLs, record.QueuedURL{ID: id*1000 + uint64(i) + 1, URL: fmt.Sprintf("%s/%d", l.Key, i)})
	}
	return l
}

// nsRobot "fetches" a page every nsPageEvery and sends each at once, until
// the lease is done or its context ends (the slave lost its liberty).
func nsRobot(ctx context.Context, payload []byte, emit func([]byte) error) (Outcome, error) {
	l, err := DecodeLease(payload)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Site: l.Key}
	end := &visit.LeaseEnd{Next: time.Now()}
	t := time.NewTicker(nsPageEvery)
	defer t.Stop()
	for i, q := range l.URLs {
		select {
		case <-ctx.Done():
			for _, r := range l.URLs[i:] {
				end.Returned = append(end.Returned, r.ID)
			}
			parts, err := EncodeResults([]visit.Result{{Lease: l.ID, Seq: i + 1, End: end}})
			out.Parts = parts
			return out, err
		case <-t.C:
		}
		part, err := EncodeResults([]visit.Result{{Lease: l.ID, Seq: i + 1, Page: &visit.PageResult{URL: q.URL, Record: record.PageRecord{URL: q.ID, Status: 200}}}})
		if err != nil {
			return out, err
		}
		if err := emit(part[0]); err != nil {
			return out, err
		}
		out.Pages++
		end.Fetched++
	}
	parts, err := EncodeResults([]visit.Result{{Lease: l.ID, Seq: len(l.URLs) + 1, End: end}})
	out.Parts = parts
	return out, err
}

// TestNetnsSlaveHelper is the slave of TestASlaveCutOffInItsOwnNamespace,
// run in its namespace, and of TestASlaveFrozenPastThreeHeartbeats, a
// process to freeze; it does nothing otherwise. It prints each page it
// sends, and stops when its standard input closes.
func TestNetnsSlaveHelper(t *testing.T) {
	url := os.Getenv(nsSlaveEnv)
	if url == "" {
		return
	}
	s, err := NewSlave(SlaveOptions{Dial: DialOptions{URL: url, Auth: Auth{Token: os.Getenv(nsTokenEnv)}}, ID: "ns", Robots: 1,
		SpoolPath: os.Getenv(nsSpoolEnv), Heartbeat: nsBeat, Work: nsRobot,
		OnEvent: func(text string) { fmt.Println(time.Now().Format("15:04:05.000"), text) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		b := make([]byte, 1)
		os.Stdin.Read(b)
		cancel()
	}()
	s.Run(ctx)
}

// A slave in a network namespace of its own, reached over a veth link
// (slowed by netem where available), is cut off by setting the link down
// in the middle of a lease: the master declares it gone three heartbeats
// after its last one and ends its lease at once, the pages that came back
// applied and the others returned, long before the lease's deadline; the
// slave, without its liberty, stops sending pages. When the link is up
// again the slave comes back, hears that the lease is over, and the pages
// it fetched after the cut open the site's next lease, whose robot does
// not fetch them again: nothing is reported twice or after the end.
func TestASlaveCutOffInItsOwnNamespace(t *testing.T) {
	ns, here, link := newNamespace(t)
	dir := t.TempDir()
	const token = "netns-token"
	srv, m, d := helperMaster(t, netip.AddrPortFrom(here, 0).String(), token, dir)

	helperSlave(t, []string{"ip", "netns", "exec", ns}, srv.URL(), token, filepath.Join(dir, "ns.spool"))
	waitFor(t, "the slave heard over the veth link", func() bool { return len(m.Slaves()) == 1 })
	if a := m.Slaves()[0].Addr; strings.HasPrefix(a, "127.") {
		t.Fatalf("the slave reached the master from %s: not from its own namespace", a)
	}

	var r reports
	l := nsLease(7, 200)
	d.Dispatch(context.Background(), l, r.report)
	waitFor(t, "pages coming back while the lease runs", func() bool { return len(r.of(7)) >= 5 })
	netns(t, "link", "set", link, "down")
	cut := time.Now()
	waitFor(t, "the lease ended", ended(&r, 7))
	back := time.Since(cut)
	// How soon silence is noticed is the registry's sweep, tested on a
	// fake clock; here, that the lease ended because the slave was
	// declared gone (not at its deadline, an hour away): the events, and
	// Given below.
	if left, returned := eventAt(m, SlaveLeft, "", cut), eventAt(m, LeaseReturned, "", cut); left < 0 || returned < left {
		t.Errorf("events %+v: want the slave declared gone (at %d), then its lease returned (at %d)", m.Events(), left, returned)
	}
	rs := r.of(7)
	end := rs[len(rs)-1]
	pages := rs[:len(rs)-1]
	for i, p := range pages {
		if p.Seq != i+1 || p.Page == nil {
			t.Fatalf("result %d: %+v, want page %d", i, p, i+1)
		}
	}
	if end.Seq != len(pages)+1 || end.End.Fetched != len(pages) || len(end.End.Returned) != len(l.URLs)-len(pages) {
		t.Errorf("end %+v after %d pages: want the other %d URLs returned", end.End, len(pages), len(l.URLs)-len(pages))
	}
	if d.Stats().Given != 1 {
		t.Errorf("stats %+v: want the lease given back", d.Stats())
	}

	netns(t, "link", "set", link, "up")
	waitFor(t, "the slave back", func() bool { return len(m.Slaves()) == 1 })
	// What it fetched after the cut comes late: kept for the site's
	// next lease, not reported in the lease that ended.
	waitFor(t, "its late pages seen", func() bool { return m.Stats().Late+m.Stats().Duplicates > 0 })
	if got := r.of(7); len(got) != len(rs) {
		t.Errorf("%d results reported after the lease ended", len(got)-len(rs))
	}
	// Without its liberty the slave stopped within two heartbeats and a
	// half of its last acknowledged one: it sent no page for most of
	// the lease.
	late := int(m.Stats().Late)
	t.Logf("cut after %d pages; the lease came back %s after the cut; the slave sent %d pages of it after, %d other parts", len(pages), back.Round(time.Millisecond), late, m.Stats().Duplicates)
	if late > int((3*nsBeat)/nsPageEvery)+2 {
		t.Errorf("the slave sent %d pages after it was cut off: it went on fetching without its liberty", late)
	}
	nextLeaseOpensWithLatePages(t, m, d, &r, l, end.End)
}

// helperSlave starts TestNetnsSlaveHelper as the slave of the master at
// url, its command prefixed with wrap (e.g. ip netns exec NS), and stops
// it when the test ends, logging what it said if the test failed.
func helperSlave(t *testing.T, wrap []string, url, token, spool string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	argv := append(append([]string(nil), wrap...), exe, "-test.run=^TestNetnsSlaveHelper$", "-test.v")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), nsSlaveEnv+"="+url, nsTokenEnv+"="+token, nsSpoolEnv+"="+spool)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// One writer for both: exec then writes from one goroutine at a time.
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT) // a frozen slave too
		stdin.Close()
		cmd.Wait()
		if t.Failed() {
			t.Logf("the slave's log:\n%s", log.String())
		}
	})
	return cmd
}

// nextLeaseOpensWithLatePages hands the site of lease l, which ended with
// end while its slave was away, its next lease, with the URLs given back:
// the late pages kept by then open it, the slave fetches the others, and
// no URL of l is reported twice across the leases. A loaded machine may
// hold the slave's process past its liberty again, unasked: the slave then
// ends that lease itself (or the master gives it up), the pages it sent
// applied and the others given back, as it should; those go in the site's
// next lease, until every URL of l is reported (at most againLeases more).
func nextLeaseOpensWithLatePages(t *testing.T, m *Master, d *Dispatcher, r *reports, l *visit.Lease, end *visit.LeaseEnd) {
	t.Helper()
	const againLeases = 5
	kept := m.Stats().Late // late pages may still come: those are fetched again
	returned := end.Returned
	ids := []uint64{l.ID}
	for n := range uint64(againLeases + 1) {
		next := nsLease(l.ID, 0)
		next.ID = l.ID*100 + n + 1
		for _, q := range l.URLs {
			if slices.Contains(returned, q.ID) {
				next.URLs = append(next.URLs, q)
			}
		}
		ids = append(ids, next.ID)
		d.Dispatch(context.Background(), next, r.report)
		waitFor(t, fmt.Sprintf("lease %d ended", next.ID), ended(r, next.ID))
		if n == 0 {
			if got := d.Stats().Late; got < kept {
				t.Errorf("%d late pages applied, %d kept before the site's next lease", got, kept)
			}
		}
		rs := r.of(next.ID)
		if returned = rs[len(rs)-1].End.Returned; len(returned) == 0 {
			break
		}
		t.Logf("lease %d ended with %d URLs given back: its slave lost its liberty", next.ID, len(returned))
	}
	seen := make(map[uint64]bool)
	for _, id := range ids {
		for _, p := range r.of(id) {
			if p.Page == nil {
				continue
			}
			if seen[p.Page.Record.URL] {
				t.Errorf("URL %d reported twice", p.Page.Record.URL)
			}
			seen[p.Page.Record.URL] = true
		}
	}
	if len(seen) != len(l.URLs) {
		t.Errorf("%d URLs reported of %d in leases %v", len(seen), len(l.URLs), ids)
	}
}

// helperMaster starts a master on a server listening on listen, at the
// helper slave's heartbeat, with its Dispatcher; the test's end stops
// them, after the helper slave (cleanups run last first).
func helperMaster(t *testing.T, listen, token, dir string) (*Server, *Master, *Dispatcher) {
	srv, err := StartServer(ServerOptions{Listen: listen, StoreDir: filepath.Join(dir, "nats"), Auth: Auth{Token: token}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	m, err := StartMaster(context.Background(), MasterOptions{Server: srv, Dial: DialOptions{Auth: Auth{Token: token}}, Timing: Timing{Grace: time.Second, Heartbeat: nsBeat}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	d := NewDispatcher(m, DispatcherOptions{})
	t.Cleanup(d.Close)
	d.Resume(nil, nil)
	return srv, m, d
}
