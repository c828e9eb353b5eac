package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// What a slave hears from its master: its halts and resumptions, and the
// answers to its heartbeats, which renew its liberty to fetch.

// onControl hears the master's "halt D STATE" (end leases after their
// current page, for D unless said again; STATE is "paused" or "stopping")
// and "go".
func (s *Slave) onControl(msg *nats.Msg) {
	verb, arg, _ := strings.Cut(string(msg.Data), " ")
	switch verb {
	case "halt":
		dur, state, _ := strings.Cut(arg, " ")
		d, err := time.ParseDuration(dur)
		if err != nil || d <= 0 {
			return
		}
		if state == "" {
			state = "paused" // a master of an older version
		}
		if changed := s.setMasterState(state); changed || !s.Halted() {
			s.event(fmt.Sprintf("the master is %s: leases end after their current page", state))
		}
		s.haltUntil.Store(time.Now().Add(d).UnixNano())
	case "go":
		if s.Halted() {
			s.event("the master resumes")
		}
		s.setMasterState("running")
		s.haltUntil.Store(0)
	}
}

// setMasterState records what the master said of its crawl and reports
// whether it changed.
func (s *Slave) setMasterState(state string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	changed := s.masterState != state
	s.masterState = state
	return changed
}

// Halted reports whether the master has recalled the leases: a lease in
// flight ends after its current page, and one taken ends at once, its URLs
// returned.
func (s *Slave) Halted() bool { return time.Now().UnixNano() < s.haltUntil.Load() }

// free reports whether the slave may start a request (see liberty): not
// while it knows it is cut off, since what it fetched could not be
// delivered before the master gives its leases back.
func (s *Slave) free() bool {
	if !s.connected.Load() {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Before(s.liberty)
}

// bound reports whether a request in flight may go on: until half a
// heartbeat after the liberty, still half a heartbeat before the master
// can declare the slave gone. A page that takes longer is cut.
func (s *Slave) bound() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Now().Before(s.liberty.Add(s.heartbeat() / 2))
}

// libertyPoll is how often a lease's watcher checks the slave's liberty.
const libertyPoll = 50 * time.Millisecond

// heartbeat is the heartbeat in force: the master's, once it answered.
func (s *Slave) heartbeat() time.Duration { return time.Duration(s.beat.Load()) }

// statusLoop announces the slave at every heartbeat (the master's, once it
// said it); the master's answer renews its liberty.
func (s *Slave) statusLoop(ctx context.Context) {
	next := time.Now()
	for {
		beat := s.heartbeat()
		s.announce(beat)
		next = next.Add(beat)
		if d := time.Until(next); d < 0 {
			next = time.Now() // late: the next one a heartbeat from now
		}
		wait(ctx, time.Until(next))
		if ctx.Err() != nil {
			return
		}
	}
}

// announce sends the slave's status and waits up to timeout for the
// master's answer: it renews the slave's liberty until two heartbeats
// after the status was sent, says what the master's crawl does, and names
// the leases of this slave the master no longer counts on (it declared the
// slave gone meanwhile): their work ends, the rest of them dropped. Safe
// to call from several goroutines.
func (s *Slave) announce(timeout time.Duration) {
	st := SlaveStatus{ID: s.opt.ID, Host: s.host, Tags: s.opt.Tags, Robots: s.opt.Robots,
		Pages: s.pages.Load(), Failures: s.failures.Load(), Spooled: s.spool.Len(), Stopping: s.stopping.Load()}
	s.mu.Lock()
	for id, h := range s.held {
		if h.working {
			st.Held = append(st.Held, HeldStatus{ID: id})
		}
	}
	s.mu.Unlock()
	st.Leases = len(st.Held)
	sort.Slice(st.Held, func(i, j int) bool { return st.Held[i].ID < st.Held[j].ID })
	sent := time.Now()
	st.Sent = sent
	b, _ := json.Marshal(st)
	if !s.nc.IsConnected() {
		return
	}
	msg, err := s.nc.Request(statusSubject, b, timeout)
	if err != nil {
		return // no liberty renewed: a master that does not answer may have declared us gone
	}
	var r StatusReply
	if json.Unmarshal(msg.Data, &r) != nil {
		return
	}
	beat := s.opt.Heartbeat
	if r.Heartbeat > 0 {
		beat = r.Heartbeat
		s.beat.Store(int64(beat))
	}
	s.mu.Lock()
	if until := sent.Add(2 * beat); until.After(s.liberty) {
		s.liberty = until
	}
	var void []*heldLease
	for _, id := range r.Void {
		if h := s.held[id]; h != nil && h.working {
			void = append(void, h)
		}
	}
	s.mu.Unlock()
	if r.State != "" {
		if s.setMasterState(r.State) && r.State != "running" {
			s.event(fmt.Sprintf("the master is %s", r.State))
		}
	}
	for _, h := range void {
		h.void()
	}
	if len(void) > 0 {
		s.voided.Add(int64(len(void)))
		s.event(fmt.Sprintf("the master gave up %d of this slave's leases (it had declared the slave gone): their work ends, what was fetched is delivered", len(void)))
	}
}
