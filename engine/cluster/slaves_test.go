package cluster

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

func statusJSON(t *testing.T, st SlaveStatus) []byte {
	t.Helper()
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRegistryFollowsJoinsRatesAndLeaves(t *testing.T) {
	var events []SlaveEventKind
	r := newRegistry(time.Second, func(name string) string {
		if name == slaveConnName("a") {
			return "127.0.0.2:5000"
		}
		return ""
	}, func(ev SlaveEvent) { events = append(events, ev.Kind) })
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	must := func(_ SlaveStatus, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(r.status(statusJSON(t, SlaveStatus{ID: "a", Host: "hosta", Pages: 10, Leases: 2}), t0))
	must(r.status(statusJSON(t, SlaveStatus{ID: "b", Host: "hostb"}), t0))
	must(r.status(statusJSON(t, SlaveStatus{ID: "a", Host: "hosta", Pages: 30, Leases: 1, Failures: 1}), t0.Add(2*time.Second)))
	must(r.status(statusJSON(t, SlaveStatus{ID: "b", Host: "hostb"}), t0.Add(2*time.Second)))
	got := r.snapshot()
	if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
		t.Fatalf("snapshot %+v", got)
	}
	a := got[0]
	if a.Addr != "127.0.0.2:5000" || a.PagesPerSec != 10 || a.Leases != 1 || a.Failures != 1 || a.Pages != 30 {
		t.Errorf("slave a: %+v", a)
	}
	if got[1].Addr != "hostb" {
		t.Errorf("slave b's address %q, want its host name", got[1].Addr)
	}
	// b falls silent; a says goodbye.
	r.sweep(t0.Add(2*time.Second + 2500*time.Millisecond))
	if got := r.snapshot(); len(got) != 2 {
		t.Fatalf("a slave silent 2.5 heartbeats was dropped: %+v", got)
	}
	must(r.status(statusJSON(t, SlaveStatus{ID: "a", Host: "hosta", Pages: 30}), t0.Add(5*time.Second)))
	if gone := r.sweep(t0.Add(5500 * time.Millisecond)); len(gone) != 1 || gone[0] != "b" {
		t.Errorf("declared gone %v, want [b]", gone)
	}
	if got := r.snapshot(); len(got) != 1 || got[0].ID != "a" {
		t.Fatalf("after b's silence: %+v", got)
	}
	r.bye("a", t0.Add(6*time.Second))
	if got := r.snapshot(); len(got) != 0 {
		t.Fatalf("after a's goodbye: %+v", got)
	}
	want := []SlaveEventKind{SlaveJoined, SlaveJoined, SlaveLeft, SlaveLeft}
	if !slices.Equal(events, want) {
		t.Errorf("events %v, want %v", events, want)
	}
	if _, err := r.status([]byte("{"), t0); err == nil {
		t.Error("a malformed status was accepted")
	}
}
