package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Work runs one lease on a slave. lease is what the master published,
// inflated; ctx ends at the lease's deadline, by the slave's own clock,
// when the slave loses its liberty (the master has not acknowledged a
// heartbeat for two of them) or when the master says the lease is over:
// Work then stops fetching at once, its request in flight cut, and reports
// what it did and what it leaves (the master queues that again). emit
// sends a part of the result while the lease runs (a page as soon as it is
// fetched): it is spooled, delivered, and applied by the master as it
// comes, so a slave that dies mid-lease costs only what it had not emitted.
type Work func(ctx context.Context, lease []byte, emit func(part []byte) error) (Outcome, error)

// Outcome is what Work did with a lease.
type Outcome struct {
	// Parts are the rest of the result, after what was emitted, in order,
	// each a batch small enough for one message (uncompressed: the slave
	// compresses them). The last holds the lease's end.
	Parts  [][]byte
	Site   string // the site leased, for the slave's log
	Pages  int    // pages fetched
	Failed bool   // the visit ended on a failure
}

// SlaveOptions configures a light slave. ID, Robots and SpoolPath have
// defaults (host-pid, 1, lidi-slave-ID.spool in the working directory).
type SlaveOptions struct {
	Dial      DialOptions
	ID        string
	Tags      []string // pinned leases to take, besides any slave's
	Robots    int      // leases worked on at once
	SpoolPath string
	// Work runs leases; when nil, NewWork builds it from the settings the
	// master publishes (its crawl configuration), which Run waits for.
	// halt reports whether the master recalled the leases (its crawl
	// pauses or stops) or the slave is stopping: a Work ends its lease
	// after the current page then, returning the URLs it did not reach
	// (visit.Robot.Halt).
	Work    Work
	NewWork func(settings []byte, halt func() bool) (Work, error)
	// Heartbeat is how often the slave announces its status until the
	// master says its own (2s when zero).
	Heartbeat time.Duration
	// OnEvent, when not nil, hears of what the slave does, in words.
	OnEvent func(string)
}

// SlaveStats is a slave's state, a value snapshot for its console.
type SlaveStats struct {
	ID         string
	Master     string
	Connected  bool
	Robots     int
	Leases     int // in hand
	LeasesDone int64
	Pages      int64
	Failures   int64
	Spooled    int   // result parts not yet delivered
	Delivered  int64 // result parts delivered
	Duplicates int64 // of those, parts the master had already (sent before an ack was lost)
	Stale      int64 // leases received after their deadline, left to the master
	Claimed    int64 // leases received again that another slave had (claimed in the bucket)
	Halted     bool  // the master recalled the leases (its crawl is paused or stopping)
	// MasterState is what the master last said of its crawl: "running",
	// "paused" or "stopping" ("" before it said anything).
	MasterState string
	Stopping    bool // the slave itself is stopping: it ends its leases after their page in flight
	// Free is whether the slave may fetch: the master acknowledged one of
	// its heartbeats within the last two.
	Free     bool
	Voided   int64 // leases the master said were over while the slave held them (it had declared the slave gone)
	Started  time.Time
	BytesOut uint64 // sent to the master, all messages
	BytesIn  uint64
	MsgsOut  uint64
	MsgsIn   uint64
}

// Slave is a light slave: it pulls leases, runs them, and delivers their
// results. Its methods are safe for concurrent use.
type Slave struct {
	opt   SlaveOptions
	host  string // the machine's name, for the heartbeat
	spool *Spool
	nc    *nats.Conn
	js    jetstream.JetStream
	kick  chan struct{}

	leases, failures             atomic.Int64
	leasesDone, pages, delivered atomic.Int64
	duplicates                   atomic.Int64
	stale                        atomic.Int64
	claimed                      atomic.Int64 // leases another slave had claimed
	connected                    atomic.Bool
	haltUntil                    atomic.Int64 // unix ns; the master's halt lasts until then
	stopping                     atomic.Bool
	beat                         atomic.Int64 // the heartbeat in force: the master's, once it said it
	voided                       atomic.Int64
	started                      time.Time

	mu     sync.Mutex
	kv     jetstream.KeyValue // the cluster's bucket, once looked up
	events []SlaveLogEntry    // the latest, oldest first
	// held are the lease messages whose results are not all delivered
	// yet, by lease id: each is acknowledged once they are.
	held map[string]*heldLease
	// liberty is until when the slave may start a request, by its own
	// clock: two heartbeats after it sent the last heartbeat the master
	// answered; a request in flight is cut half a heartbeat later. The
	// master declares a slave gone three heartbeats after it last heard
	// one, so by then the slave has stopped fetching on its own: its sites
	// can be leased again at once.
	liberty     time.Time
	masterState string
	// sending are the spooled parts being published, each by one
	// goroutine (see take).
	sending map[string]bool
}

type heldLease struct {
	msg       jetstream.Msg
	emitted   int  // parts spooled
	delivered int  // parts delivered
	total     int  // parts in all, once the lease has ended; 0 before
	working   bool // the lease is being worked
	// void ends the lease's work: the master said it is over.
	void context.CancelFunc
}

// NewSlave opens the slave's spool and connects to the master; the
// connection is retried for ever, so a slave may start before its master.
func NewSlave(opt SlaveOptions) (*Slave, error) {
	if opt.Work == nil && opt.NewWork == nil {
		return nil, errors.New("cluster: a slave needs Work or NewWork")
	}
	for _, t := range opt.Tags {
		if err := CheckTag(t); err != nil {
			return nil, err
		}
	}
	host, _ := os.Hostname()
	if opt.ID == "" {
		opt.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if opt.Robots <= 0 {
		opt.Robots = 1
	}
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = DefaultTiming.Heartbeat
	}
	if opt.SpoolPath == "" {
		opt.SpoolPath = "lidi-slave-" + opt.ID + ".spool"
	}
	sp, err := OpenSpool(opt.SpoolPath)
	if err != nil {
		return nil, err
	}
	s := &Slave{opt: opt, host: host, spool: sp, kick: make(chan struct{}, 1), held: make(map[string]*heldLease), sending: make(map[string]bool), started: time.Now()}
	s.beat.Store(int64(opt.Heartbeat))
	d := opt.Dial
	d.Name = slaveConnName(opt.ID)
	d.retry = true
	prev := d.OnState
	var first atomic.Bool // the first connection is no reconnection
	first.Store(true)
	d.OnState = func(up bool) {
		s.connected.Store(up)
		if up {
			again := " again"
			if first.Swap(false) {
				again = ""
			}
			s.event("connected to the master at " + opt.Dial.URL + again)
			s.wake()
		} else {
			s.event("lost the master; results are spooled until it is back")
		}
		if prev != nil {
			prev(up)
		}
	}
	nc, err := Dial(d)
	if err != nil {
		sp.Close()
		return nil, err
	}
	s.nc = nc
	if nc.IsConnected() {
		// Its ConnectHandler, called a little later, says so.
		s.connected.Store(true)
	}
	if s.js, err = newJetStream(nc); err != nil {
		nc.Close()
		sp.Close()
		return nil, err
	}
	if _, err := nc.Subscribe(controlSubject, s.onControl); err != nil {
		nc.Close()
		sp.Close()
		return nil, fmt.Errorf("cluster: subscribing to the master's control: %w", err)
	}
	if n := sp.Len(); n > 0 {
		s.event(fmt.Sprintf("%d result parts found in the spool, to deliver", n))
	}
	return s, nil
}

// SlaveLogEntry is one thing a slave did, for its console.
type SlaveLogEntry struct {
	Time time.Time
	Text string
}

func (s *Slave) event(text string) {
	s.mu.Lock()
	s.events = keepLatest(s.events, SlaveLogEntry{time.Now(), text})
	s.mu.Unlock()
	if s.opt.OnEvent != nil {
		s.opt.OnEvent(text)
	}
}

// Events returns what the slave did lately, oldest first.
func (s *Slave) Events() []SlaveLogEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SlaveLogEntry(nil), s.events...)
}

func (s *Slave) wake() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// Stats returns the slave's state.
func (s *Slave) Stats() SlaveStats {
	ns := s.nc.Stats()
	s.mu.Lock()
	state, free := s.masterState, time.Now().Before(s.liberty)
	s.mu.Unlock()
	return SlaveStats{
		ID: s.opt.ID, Master: s.opt.Dial.URL, Connected: s.connected.Load(), Robots: s.opt.Robots,
		Leases: int(s.leases.Load()), LeasesDone: s.leasesDone.Load(), Pages: s.pages.Load(),
		Failures: s.failures.Load(), Spooled: s.spool.Len(), Delivered: s.delivered.Load(), Duplicates: s.duplicates.Load(),
		Stale: s.stale.Load(), Claimed: s.claimed.Load(), Halted: s.Halted(), MasterState: state, Stopping: s.stopping.Load(),
		Free: free, Voided: s.voided.Load(), Started: s.started,
		BytesOut: ns.OutBytes, BytesIn: ns.InBytes, MsgsOut: ns.OutMsgs, MsgsIn: ns.InMsgs,
	}
}

// stopBound is how long a stopping slave lets a lease's page in flight
// finish before it cuts it.
const stopBound = 15 * time.Second

// Run takes leases until ctx ends. Then the slave is stopping: each lease
// ends after its page in flight, its results are delivered and the URLs it
// did not reach handed back; it delivers what it can for a few seconds,
// says goodbye and closes. What is not delivered stays in the spool for the
// next run.
func (s *Slave) Run(ctx context.Context) error {
	defer s.spool.Close()
	defer s.nc.Close()
	if s.opt.Work == nil {
		settings, err := s.settings(ctx)
		if err != nil {
			return err
		}
		// A slave without its liberty starts no request: its leases end
		// after their page in flight.
		halt := func() bool { return s.Halted() || s.stopping.Load() || !s.free() }
		if s.opt.Work, err = s.opt.NewWork(settings, halt); err != nil {
			return fmt.Errorf("cluster: the master's settings: %w", err)
		}
	}
	var wg sync.WaitGroup
	deliverCtx, stopDeliver := context.WithCancel(context.WithoutCancel(ctx))
	deliverDone := make(chan struct{})
	go func() { s.deliverLoop(deliverCtx); close(deliverDone) }()
	statusCtx, stopStatus := context.WithCancel(context.WithoutCancel(ctx))
	statusDone := make(chan struct{})
	go func() { s.statusLoop(statusCtx); close(statusDone) }()
	// Leases outlive ctx by stopBound at most: a stopping slave ends them
	// after their page in flight (Halt), not in the middle of it.
	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	go func() {
		<-ctx.Done()
		s.stopping.Store(true)
		s.event("stopping: each lease ends after its page in flight, its results delivered and its other URLs handed back")
		t := time.NewTimer(stopBound)
		defer t.Stop()
		select {
		case <-t.C:
			stopWork()
		case <-workCtx.Done():
		}
	}()
	for range s.opt.Robots {
		wg.Add(1)
		go func() { defer wg.Done(); s.robot(ctx, workCtx) }()
	}
	wg.Wait()
	// The delivery loop stops first: the last flush below is the only
	// one publishing the spool, so no part is sent (and counted) twice.
	stopDeliver()
	<-deliverDone
	// Last chance to deliver before leaving: bounded, the spool keeps
	// the rest.
	flushCtx, stopFlush := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	for s.spool.Len() > 0 && flushCtx.Err() == nil && s.nc.IsConnected() {
		s.deliver(flushCtx)
		if s.spool.Len() > 0 {
			wait(flushCtx, 100*time.Millisecond)
		}
	}
	stopFlush()
	stopStatus()
	<-statusDone
	// Goodbye: the master ends at once the leases it still counts on this
	// slave (none, when all was delivered).
	s.nc.Publish(byeSubject, []byte(s.opt.ID))
	s.nc.FlushTimeout(time.Second)
	if n := s.spool.Len(); n > 0 {
		s.event(fmt.Sprintf("stopped with %d result parts spooled in %s: they are delivered at the next start", n, s.opt.SpoolPath))
	}
	return nil
}

// settings waits for the master's settings.
func (s *Slave) settings(ctx context.Context) ([]byte, error) {
	said := false
	for {
		kv, err := s.js.KeyValue(ctx, bucket)
		if err == nil {
			var e jetstream.KeyValueEntry
			if e, err = kv.Get(ctx, settingsKey); err == nil {
				return e.Value(), nil
			}
		}
		if !said {
			s.event("waiting for the master's settings")
			said = true
		}
		wait(ctx, 250*time.Millisecond)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
}

// consumers returns the lease consumers to pull from: the slave's tags
// first, then any slave's. Those the master has not created yet are left
// out (no lease is pinned to a tag without a rule).
func (s *Slave) consumers(ctx context.Context) []jetstream.Consumer {
	var out []jetstream.Consumer
	for _, t := range append(append([]string(nil), s.opt.Tags...), "") {
		c, err := s.js.Consumer(ctx, LeaseStream, leaseDurable(t))
		if err == nil {
			out = append(out, c)
		}
	}
	return out
}

// robot pulls one lease at a time, while ctx lasts, and works on it under
// workCtx.
func (s *Slave) robot(ctx, workCtx context.Context) {
	var cons []jetstream.Consumer
	var looked time.Time
	for ctx.Err() == nil {
		if len(cons) == 0 || time.Since(looked) > 10*time.Second {
			looked = time.Now()
			if c := s.consumers(ctx); len(c) > 0 {
				cons = c
			}
		}
		if len(cons) == 0 || !s.nc.IsConnected() || !s.free() || s.stopping.Load() {
			wait(ctx, 250*time.Millisecond)
			continue
		}
		var msg jetstream.Msg
		for i, c := range cons {
			mw := 50 * time.Millisecond
			if i == len(cons)-1 {
				mw = time.Second
			}
			m, err := c.Next(jetstream.FetchMaxWait(mw))
			if err == nil {
				msg = m
				break
			}
			if !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.Canceled) && !errors.Is(err, jetstream.ErrNoMessages) {
				// A consumer gone (the master reset the cluster): look
				// again.
				looked = time.Time{}
				wait(ctx, 250*time.Millisecond)
				break
			}
		}
		if msg != nil {
			s.work(workCtx, msg)
		}
	}
}

func wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// work runs one lease until its deadline, by this machine's clock, while
// the slave has its liberty, and until the master says it is over.
func (s *Slave) work(ctx context.Context, msg jetstream.Msg) {
	h := msg.Headers()
	id := h.Get(hdrLease)
	beat := durationHeader(h.Get(hdrBeat), DefaultTiming.Heartbeat)
	deadline, err := timeHeader(h.Get(hdrDead))
	var payload []byte
	if err == nil {
		payload, err = Decompress(msg.Data())
	}
	if id == "" || err != nil {
		// Nobody can run it: drop it rather than see it again.
		msg.Term()
		s.event(fmt.Sprintf("dropped a malformed lease %q: %v", id, err))
		return
	}
	if !time.Now().Before(deadline) {
		// Taken too late (it waited in the stream past its deadline, or
		// the slave was cut off): the master gives it up by itself and
		// leases the site again.
		msg.Ack()
		s.stale.Add(1)
		s.event(fmt.Sprintf("lease %s arrived after its deadline: left to the master", id))
		return
	}
	if err := s.claim(ctx, id); err != nil {
		// Another slave has it (a server killed with kill -9 may
		// deliver a lease again: its consumer's state is not synced
		// with every delivery), or the claim could not be made: the
		// lease is not worked here, the master gives it up at its
		// deadline if nobody delivers its result.
		if errors.Is(err, jetstream.ErrKeyExists) {
			msg.Ack()
			s.claimed.Add(1)
		}
		s.event(fmt.Sprintf("lease %s not worked: %v", id, err))
		return
	}
	leaseCtx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	hl := &heldLease{msg: msg, working: true, void: cancel}
	s.mu.Lock()
	s.held[id] = hl
	s.mu.Unlock()
	s.leases.Add(1)
	defer s.leases.Add(-1)
	// The master hears at once that this slave holds the lease: should
	// the slave die, the master gives the lease up with it.
	s.announce(beat)
	// Progress reports keep the lease ours while we work; the watcher
	// ends the work when the slave loses its liberty.
	beatDone := make(chan struct{})
	go func() {
		t := time.NewTicker(beat)
		defer t.Stop()
		poll := time.NewTicker(libertyPoll)
		defer poll.Stop()
		for {
			select {
			case <-t.C:
				msg.InProgress()
			case <-poll.C:
				if !s.bound() {
					cancel()
				}
			case <-beatDone:
				return
			}
		}
	}()
	emit := func(part []byte) error {
		s.mu.Lock()
		n := hl.emitted
		hl.emitted++
		s.mu.Unlock()
		return s.deliverNow(resultID(id, n), spooled(0, Compress(part)))
	}
	out, err := s.opt.Work(leaseCtx, payload, emit)
	close(beatDone)
	if err != nil {
		// The lease could not run at all (a bad lease): the master
		// gives it up at its deadline.
		s.failures.Add(1)
		s.event(fmt.Sprintf("lease %s failed: %v", id, err))
		return
	}
	s.pages.Add(int64(out.Pages))
	if out.Failed {
		s.failures.Add(1)
	}
	parts := out.Parts
	if len(parts) == 0 {
		parts = [][]byte{[]byte("[]")} // the part that says the result is whole
	}
	s.mu.Lock()
	first := hl.emitted
	hl.emitted += len(parts)
	hl.total, hl.working = hl.emitted, false
	done := hl.delivered >= hl.total
	s.mu.Unlock()
	for i, p := range parts {
		if err := s.spool.Put(resultID(id, first+i), spooled(first+len(parts), Compress(p))); err != nil {
			// The disk failed us: the master gives the lease up.
			s.event(fmt.Sprintf("lease %s: %v", id, err))
			return
		}
	}
	if done {
		s.finished(id)
	}
	s.leasesDone.Add(1)
	how := ""
	switch {
	case out.Failed:
		how = ", ended on a failure"
	case leaseCtx.Err() != nil && ctx.Err() == nil && time.Now().Before(deadline):
		how = ", cut: the slave lost the master, or the master gave the lease up"
	}
	s.event(fmt.Sprintf("lease %s of %s: %d pages%s", id, out.Site, out.Pages, how))
	s.wake()
}

// claim records in the cluster's bucket that this slave works the lease:
// the key can be made once, so a lease delivered twice is worked once.
func (s *Slave) claim(ctx context.Context, id string) error {
	s.mu.Lock()
	kv := s.kv
	s.mu.Unlock()
	if kv == nil {
		var err error
		if kv, err = s.js.KeyValue(ctx, bucket); err != nil {
			return fmt.Errorf("claiming: %w", err)
		}
		s.mu.Lock()
		s.kv = kv
		s.mu.Unlock()
	}
	if _, err := kv.Create(ctx, claimKey(id), []byte(s.opt.ID)); err != nil {
		return fmt.Errorf("claiming: %w", err)
	}
	return nil
}
