package cluster

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"
)

// SlaveStatus is what a slave announces at every heartbeat, on a plain
// NATS subject (it is worth nothing once stale, so it is not kept).
type SlaveStatus struct {
	ID       string    `json:"id"`
	Host     string    `json:"host"`
	Tags     []string  `json:"tags,omitempty"`
	Robots   int       `json:"robots"`
	Leases   int       `json:"leases"`   // leases in hand
	Pages    int64     `json:"pages"`    // pages fetched since the slave started
	Failures int64     `json:"failures"` // visits that ended on a failure
	Spooled  int       `json:"spooled"`  // result batches not yet delivered
	Sent     time.Time `json:"sent"`
	// Held are the leases the slave works on; Stopping says it is
	// stopping (they end after their page in flight).
	Held     []HeldStatus `json:"held,omitempty"`
	Stopping bool         `json:"stopping,omitempty"`
}

// HeldStatus is a lease a slave works on, as its heartbeat says.
type HeldStatus struct {
	ID string `json:"id"`
}

// StatusReply is the master's answer to a slave's status: it renews the
// slave's liberty to fetch.
type StatusReply struct {
	// State is the master's crawl: "running", "paused" or "stopping".
	State string `json:"state"`
	// Heartbeat is the master's cluster.heartbeat: the slave announces
	// itself that often, and its liberty lasts two of them.
	Heartbeat time.Duration `json:"heartbeat,omitempty"`
	// Void are leases of the slave's the master no longer counts on: it
	// declared the slave gone and queued their URLs again.
	Void []string `json:"void,omitempty"`
}

// SlaveInfo is a slave as the master sees it: a value snapshot for the
// console.
type SlaveInfo struct {
	ID            string
	Addr          string // the slave's address as the server saw it, or its host name
	Tags          []string
	Robots        int
	Leases        int
	Pages         int64
	PagesPerSec   float64
	Failures      int64
	Spooled       int
	Stopping      bool // the slave said it is stopping
	LastHeartbeat time.Time
	Joined        time.Time
}

// SlaveEvent is a join, a leave, or a lease expiry, for the master's
// console and its event log.
type SlaveEvent struct {
	Time  time.Time
	Kind  SlaveEventKind
	Slave string
	Text  string
}

// SlaveEventKind says what happened to a slave.
type SlaveEventKind string

// The kinds of SlaveEvent.
const (
	SlaveJoined  SlaveEventKind = "slave-join"
	SlaveLeft    SlaveEventKind = "slave-leave"
	LeaseExpired SlaveEventKind = "lease-expiry"
	// LeaseReturned: a lease of a slave declared gone ended, its URLs
	// not fetched queued again.
	LeaseReturned SlaveEventKind = "lease-returned"
	// LeaseAgain: the site of a lease given back is leased again.
	LeaseAgain SlaveEventKind = "lease-again"
	// LeaseLate: pages a slave declared gone delivered late open its
	// site's next lease.
	LeaseLate SlaveEventKind = "lease-late"
)

// registry follows the slaves from their status messages. It is safe for
// concurrent use.
type registry struct {
	mu      sync.Mutex
	slaves  map[string]*slaveEntry
	silence time.Duration // a slave silent this long has left
	addr    func(name string) string
	events  func(SlaveEvent)
}

type slaveEntry struct {
	info      SlaveInfo
	rateAt    time.Time
	ratePages int64
}

func newRegistry(heartbeat time.Duration, addr func(string) string, events func(SlaveEvent)) *registry {
	if events == nil {
		events = func(SlaveEvent) {}
	}
	return &registry{slaves: make(map[string]*slaveEntry), silence: 3 * heartbeat, addr: addr, events: events}
}

// status records a status message received at now.
func (r *registry) status(data []byte, now time.Time) (SlaveStatus, error) {
	var st SlaveStatus
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("cluster: bad status message: %w", err)
	}
	if st.ID == "" {
		return st, fmt.Errorf("cluster: status message without an id")
	}
	r.mu.Lock()
	e, ok := r.slaves[st.ID]
	if !ok {
		e = &slaveEntry{info: SlaveInfo{ID: st.ID, Joined: now}, rateAt: now, ratePages: st.Pages}
		r.slaves[st.ID] = e
		e.info.Addr = st.Host
		if r.addr != nil {
			if a := r.addr(slaveConnName(st.ID)); a != "" {
				e.info.Addr = a
			}
		}
	}
	in := &e.info
	in.Tags, in.Robots, in.Leases, in.Pages, in.Failures, in.Spooled = st.Tags, st.Robots, st.Leases, st.Pages, st.Failures, st.Spooled
	in.Stopping = st.Stopping
	in.LastHeartbeat = now
	if d := now.Sub(e.rateAt); d >= time.Second {
		in.PagesPerSec = float64(st.Pages-e.ratePages) / d.Seconds()
		e.rateAt, e.ratePages = now, st.Pages
	}
	r.mu.Unlock()
	if !ok {
		r.events(SlaveEvent{Time: now, Kind: SlaveJoined, Slave: st.ID, Text: fmt.Sprintf("slave %s joined from %s (%d robots, tags %v)", st.ID, in.Addr, st.Robots, st.Tags)})
	}
	return st, nil
}

// bye records a slave that said it is leaving, and reports whether it was
// known.
func (r *registry) bye(id string, now time.Time) bool {
	r.mu.Lock()
	_, ok := r.slaves[id]
	delete(r.slaves, id)
	r.mu.Unlock()
	if ok {
		r.events(SlaveEvent{Time: now, Kind: SlaveLeft, Slave: id, Text: fmt.Sprintf("slave %s left", id)})
	}
	return ok
}

// sweep forgets the slaves silent for too long (three heartbeats) and
// returns their ids.
func (r *registry) sweep(now time.Time) (gone []string) {
	var left []SlaveInfo
	r.mu.Lock()
	for id, e := range r.slaves {
		if now.Sub(e.info.LastHeartbeat) > r.silence {
			left = append(left, e.info)
			delete(r.slaves, id)
		}
	}
	r.mu.Unlock()
	for _, in := range left {
		gone = append(gone, in.ID)
		r.events(SlaveEvent{Time: now, Kind: SlaveLeft, Slave: in.ID, Text: fmt.Sprintf("slave %s declared gone: no heartbeat since %s; its leases are queued again", in.ID, in.LastHeartbeat.Format(time.TimeOnly))})
	}
	return gone
}

// snapshot returns the slaves by id.
func (r *registry) snapshot() []SlaveInfo {
	r.mu.Lock()
	out := make([]SlaveInfo, 0, len(r.slaves))
	for _, e := range r.slaves {
		in := e.info
		in.Tags = append([]string(nil), in.Tags...)
		out = append(out, in)
	}
	r.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// slaveConnName is a slave's NATS connection name, by which the master
// finds its address.
func slaveConnName(id string) string { return "lidi-slave " + id }
