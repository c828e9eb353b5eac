package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Pin sends the leases of some sites to the slaves that announce a tag
// (LiDi's rule-based assignment). A site matches when its host name ends
// with Suffix, or its address is in Prefix; an empty rule matches nothing.
type Pin struct {
	Suffix string
	Prefix netip.Prefix
	Tag    string
}

// Matches reports whether the rule covers a site.
func (p Pin) Matches(host string, addr netip.Addr) bool {
	if p.Suffix != "" {
		s := strings.TrimPrefix(p.Suffix, ".")
		if host == s || strings.HasSuffix(host, "."+s) {
			return true
		}
	}
	return p.Prefix.IsValid() && addr.IsValid() && p.Prefix.Contains(addr)
}

// MasterOptions configures the master's side of the cluster. Either Server
// is set (an embedded server) or Dial names an existing NATS server.
type MasterOptions struct {
	Server *Server
	Dial   DialOptions
	Timing Timing
	Pins   []Pin
	// Apply applies a part of a lease's result (inflated) to the crawl, as
	// it comes: a slave sends each page as soon as it is fetched. A
	// Dispatcher on the master sets its own. It must be idempotent: a part
	// may come twice (a master killed before it acknowledged one), and
	// parts may come out of order. When it returns nil the part is taken,
	// and its message is acknowledged once it calls stored with nil (the
	// crawl's store has it), or delivered again later when it calls
	// stored with an error. An error wrapping ErrBadMessage drops it, any
	// other has it delivered again later.
	Apply ApplyFunc
	// OnEvent, when not nil, hears of joins, leaves and lease expiries.
	OnEvent func(SlaveEvent)
}

// ApplyFunc applies a part of a lease's result: see MasterOptions.Apply.
type ApplyFunc func(ctx context.Context, lease string, part []byte, stored func(error)) error

// MasterStats are the master's cluster figures, a value snapshot.
type MasterStats struct {
	Published  int64 // leases published
	Applied    int64 // lease results applied
	Duplicates int64 // result parts that came again and were dropped
	Late       int64 // result parts of leases given back, some of whose pages were kept for their site's next lease
	InHand     int   // leases published and not yet applied
	BytesOut   uint64
	BytesIn    uint64
	MsgsOut    uint64
	MsgsIn     uint64
}

// Master hands leases to slaves and applies their results. Its methods are
// safe for concurrent use.
type Master struct {
	opt MasterOptions
	nc  *nats.Conn
	js  jetstream.JetStream
	kv  jetstream.KeyValue
	// leases is the lease stream, looked up once: unbook deletes from
	// it at every lease's end.
	leases jetstream.Stream
	reg    *registry
	subs   []*nats.Subscription

	mu      sync.Mutex
	book    map[string]Booked
	partial map[string]*gathered // results arriving, by lease

	apply  ApplyFunc
	events []SlaveEvent // the latest, oldest first
	// onStatus answers a slave's heartbeat, onGone hears that a slave
	// left (a Dispatcher sets them).
	onStatus func(SlaveStatus) StatusReply
	onGone   func(slave string)
	// onLate hears a part of a lease no longer in the book, and reports
	// whether it kept some of it (Dispatcher.onLate).
	onLate func(lease string, part []byte) bool

	published, applied, duplicates atomic.Int64
	late                           atomic.Int64
	// upTo is the highest stream sequence of a result part received and
	// applied (see catchUp).
	upTo    atomic.Uint64
	results jetstream.Consumer
	done    chan struct{}
	cancel  context.CancelFunc
}

// gathered are the parts of one lease's result received so far.
type gathered struct {
	total  int                   // parts in all, once the last has come; 0 before
	taken  map[int]jetstream.Msg // applied, waiting for the store
	stored map[int]bool          // in the store, acknowledged
}

// StartMaster connects to the NATS server, sets up the streams, consumers
// and bucket, reads the book of leases in hand, and starts applying
// results.
func StartMaster(ctx context.Context, opt MasterOptions) (*Master, error) {
	if opt.Timing.Heartbeat <= 0 {
		opt.Timing = DefaultTiming
	}
	for _, p := range opt.Pins {
		if err := CheckTag(p.Tag); err != nil {
			return nil, err
		}
	}
	d := opt.Dial
	if opt.Server != nil {
		// In process: no socket, so no TLS (a tls:// URL would ask
		// for it).
		d.URL, d.inProcess = "nats://"+opt.Server.ns.Addr().String(), opt.Server.ns
	}
	d.Name = "lidi-master"
	nc, err := Dial(d)
	if err != nil {
		return nil, err
	}
	m := &Master{opt: opt, nc: nc, book: make(map[string]Booked), partial: make(map[string]*gathered), done: make(chan struct{}), apply: opt.Apply}
	fail := func(err error) (*Master, error) { nc.Close(); return nil, err }
	if m.js, err = newJetStream(nc); err != nil {
		return fail(err)
	}
	if m.kv, err = setUp(ctx, m.js); err != nil {
		return fail(err)
	}
	if m.leases, err = m.js.Stream(ctx, LeaseStream); err != nil {
		return fail(fmt.Errorf("cluster: stream %s: %w", LeaseStream, err))
	}
	tags := map[string]bool{"": true}
	for _, p := range opt.Pins {
		tags[p.Tag] = true
	}
	for t := range tags {
		if _, err := leaseConsumer(ctx, m.js, t); err != nil {
			return fail(err)
		}
	}
	results, err := resultConsumer(ctx, m.js)
	if err != nil {
		return fail(err)
	}
	if err := m.readBook(ctx); err != nil {
		return fail(err)
	}
	var addr func(string) string
	if opt.Server != nil {
		addr = opt.Server.ClientAddr
	}
	m.reg = newRegistry(opt.Timing.Heartbeat, addr, m.event)
	on := func(subj string, f func(*nats.Msg)) error {
		s, err := nc.Subscribe(subj, f)
		m.subs = append(m.subs, s)
		return err
	}
	err = errors.Join(
		on(statusSubject, m.status),
		on(byeSubject, func(msg *nats.Msg) {
			if m.reg.bye(string(msg.Data), time.Now()) {
				go m.gone(string(msg.Data))
			}
		}),
	)
	if err != nil {
		return fail(fmt.Errorf("cluster: subscribing: %w", err))
	}
	m.results = results
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.cancel = cancel
	go m.run(runCtx, results)
	return m, nil
}

// TagFor returns the tag a site's leases are pinned to, "" for none.
func (m *Master) TagFor(host string, addr netip.Addr) string {
	for _, p := range m.opt.Pins {
		if p.Matches(host, addr) {
			return p.Tag
		}
	}
	return ""
}

// run pulls results and applies each lease's once all its parts are in.
func (m *Master) run(ctx context.Context, results jetstream.Consumer) {
	defer close(m.done)
	// The sweep runs apart from the results, so that a slave is declared
	// gone on time whatever the store's pace.
	go func() {
		sweep := time.NewTicker(m.opt.Timing.Heartbeat / 4)
		defer sweep.Stop()
		for {
			select {
			case <-sweep.C:
				if ids := m.reg.sweep(time.Now()); len(ids) > 0 {
					m.gone(ids...)
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	for ctx.Err() == nil {
		m.mu.Lock()
		ready := m.apply != nil
		m.mu.Unlock()
		if !ready {
			// No dispatcher yet: the results wait in their stream.
			wait(ctx, 50*time.Millisecond)
			continue
		}
		batch, err := results.Fetch(64, jetstream.FetchMaxWait(250*time.Millisecond))
		if err != nil {
			wait(ctx, 250*time.Millisecond)
			continue
		}
		for msg := range batch.Messages() {
			m.received(ctx, msg)
			if md, err := msg.Metadata(); err == nil {
				m.seen(md.Sequence.Stream)
			}
		}
	}
}

// received applies a result part as it comes.
func (m *Master) received(ctx context.Context, msg jetstream.Msg) {
	h := msg.Headers()
	lease := h.Get(hdrLease)
	seq, err1 := strconv.Atoi(h.Get(hdrSeq))
	parts, err2 := strconv.Atoi(h.Get(hdrParts))
	if lease == "" || err1 != nil || err2 != nil || parts < 0 || seq < 0 || parts > 0 && seq >= parts || parts > 1<<16 || seq > 1<<16 {
		msg.Term()
		return
	}
	m.mu.Lock()
	_, inHand := m.book[lease]
	g := m.partial[lease]
	if !inHand {
		// Applied already, given up (its slave declared gone), or never
		// ours: a copy sent again, dropped, or a late part, whose pages
		// may be applied in their site's next lease.
		late := m.onLate
		m.mu.Unlock()
		if data, err := Decompress(msg.Data()); err == nil && late != nil && late(lease, data) {
			m.late.Add(1)
		} else {
			m.duplicates.Add(1)
		}
		msg.Ack()
		return
	}
	if g == nil {
		g = &gathered{taken: make(map[int]jetstream.Msg), stored: make(map[int]bool)}
		m.partial[lease] = g
	}
	if parts > 0 {
		if g.total > 0 && g.total != parts {
			m.mu.Unlock()
			msg.Term()
			return
		}
		g.total = parts
	}
	switch {
	case g.stored[seq]:
		m.mu.Unlock()
		m.duplicates.Add(1)
		msg.Ack()
		return
	case g.taken[seq] != nil:
		// Applied already, delivered again while the store takes it
		// (or after it failed to): left alone, it is acknowledged with
		// the part, or comes again to the next run.
		m.mu.Unlock()
		return
	}
	g.taken[seq] = msg
	apply := m.apply
	m.mu.Unlock()
	data, bad := Decompress(msg.Data())
	if bad == nil {
		bad = apply(ctx, lease, data, func(err error) { go m.settle(lease, g, seq, err) })
	}
	switch {
	case bad == nil:
	case errors.Is(bad, ErrBadMessage):
		m.settle(lease, g, seq, bad)
	default:
		// Not taken: delivered again shortly.
		m.mu.Lock()
		delete(g.taken, seq)
		m.mu.Unlock()
		msg.NakWithDelay(time.Second)
	}
}

// settle ends a result part once the crawl's store has it (err nil) or
// cannot take it (ErrBadMessage): its message is acknowledged. When the
// lease's parts are all stored, the lease leaves the book first, and only
// then is the last message acknowledged: a master killed in between finds
// the lease in its book and the part delivered again (or acknowledged as a
// copy, if the book entry went already); the store, which has it, takes it
// once. When the store did not take it (it failed, or the crawl ended
// first), the message is left unacknowledged for the master's next run,
// which takes the lease over: this run, whose crawl is ending, applies no
// part of it again.
func (m *Master) settle(lease string, g *gathered, seq int, err error) {
	if err != nil && !errors.Is(err, ErrBadMessage) {
		return
	}
	m.mu.Lock()
	msg := g.taken[seq]
	delete(g.taken, seq)
	g.stored[seq] = true
	whole := g.total > 0 && len(g.stored) >= g.total
	var b Booked
	inHand := false
	if whole {
		b, inHand = m.book[lease]
		delete(m.book, lease)
		if m.partial[lease] == g {
			delete(m.partial, lease)
		}
	}
	m.mu.Unlock()
	if inHand {
		m.unbook(context.Background(), b)
		m.applied.Add(1)
	}
	if msg != nil {
		msg.Ack()
	}
}

// status records a slave's heartbeat and answers it: the answer renews the
// slave's liberty to fetch.
func (m *Master) status(msg *nats.Msg) {
	st, err := m.reg.status(msg.Data, time.Now())
	if err != nil || msg.Reply == "" {
		return
	}
	m.mu.Lock()
	f := m.onStatus
	m.mu.Unlock()
	r := StatusReply{State: "running"}
	if f != nil {
		r = f(st)
	}
	r.Heartbeat = m.opt.Timing.Heartbeat
	b, _ := json.Marshal(r)
	msg.Respond(b)
}

// gone passes on that slaves left, once the results they had delivered
// before are applied (catchUp, once for all of them: it waits for the
// stream's last message whoever sent it): a page that reached the stream
// is not fetched again.
func (m *Master) gone(slaves ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), m.opt.Timing.Heartbeat)
	m.catchUp(ctx)
	cancel()
	m.mu.Lock()
	f := m.onGone
	m.mu.Unlock()
	if f != nil {
		for _, s := range slaves {
			f(s)
		}
	}
}

// seen records that the result part at stream sequence seq was received.
func (m *Master) seen(seq uint64) {
	for {
		cur := m.upTo.Load()
		if seq <= cur || m.upTo.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// catchUpPoll is how often catchUp looks at the master's progress.
const catchUpPoll = 10 * time.Millisecond

// catchUp waits until the master has received every result part the
// stream held when it was called, or ctx ends. A slave declared gone may
// have delivered pages the master has not taken yet: applied before its
// leases end, they are not fetched again.
func (m *Master) catchUp(ctx context.Context) {
	st, err := m.js.Stream(ctx, ResultStream)
	if err != nil {
		return
	}
	si, err := st.Info(ctx)
	if err != nil || si.State.Msgs == 0 {
		return
	}
	last := si.State.LastSeq
	for m.upTo.Load() < last {
		// The last sequence may be a part an earlier run took: then
		// what the consumer has delivered is what there is.
		if ci, err := m.results.Info(ctx); err == nil && ci.NumPending == 0 && m.upTo.Load() >= ci.Delivered.Stream {
			return
		}
		wait(ctx, catchUpPoll)
		if ctx.Err() != nil {
			return
		}
	}
}

// control tells the slaves to end their leases after their current page
// and to stop fetching for three heartbeats (halt, saying whether the crawl
// is "paused" or "stopping"), or to go on. A halt lapses by itself, so a
// slave that misses the "go" is not held for ever; the Dispatcher says it
// again at every heartbeat while it lasts.
func (m *Master) control(halt bool, state string) {
	msg := "go"
	if halt {
		msg = "halt " + (3 * m.opt.Timing.Heartbeat).String() + " " + state
	}
	m.nc.Publish(controlSubject, []byte(msg))
}

// PublishSettings gives slaves the crawl's settings (what their Work is
// built from: the master's configuration, as main wires it).
func (m *Master) PublishSettings(ctx context.Context, settings []byte) error {
	if _, err := m.kv.Put(ctx, settingsKey, settings); err != nil {
		return fmt.Errorf("cluster: publishing settings: %w", err)
	}
	return nil
}

// keptEvents is how many of the latest events Events returns (the
// master's and a slave's).
const keptEvents = 100

// keepLatest appends e to events, dropping the oldest past keptEvents.
func keepLatest[E any](events []E, e E) []E {
	if len(events) == keptEvents {
		copy(events, events[1:])
		events = events[:keptEvents-1]
	}
	return append(events, e)
}

// event records a join, leave or expiry and passes it on.
func (m *Master) event(ev SlaveEvent) {
	m.mu.Lock()
	m.events = keepLatest(m.events, ev)
	m.mu.Unlock()
	if m.opt.OnEvent != nil {
		m.opt.OnEvent(ev)
	}
}

// Events returns the latest joins, leaves and lease expiries, oldest
// first.
func (m *Master) Events() []SlaveEvent {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]SlaveEvent(nil), m.events...)
}

// setApply replaces the function results are applied with.
func (m *Master) setApply(f ApplyFunc) {
	m.mu.Lock()
	m.apply = f
	m.mu.Unlock()
}

// Slaves returns the slaves heard from, by id.
func (m *Master) Slaves() []SlaveInfo { return m.reg.snapshot() }

// Stats returns the master's cluster figures.
func (m *Master) Stats() MasterStats {
	ns := m.nc.Stats()
	m.mu.Lock()
	inHand := len(m.book)
	m.mu.Unlock()
	return MasterStats{Published: m.published.Load(), Applied: m.applied.Load(), Duplicates: m.duplicates.Load(), Late: m.late.Load(), InHand: inHand,
		BytesOut: ns.OutBytes, BytesIn: ns.InBytes, MsgsOut: ns.OutMsgs, MsgsIn: ns.InMsgs}
}

// Close stops applying results and disconnects; leases in hand stay in the
// book for the next start.
func (m *Master) Close() {
	m.cancel()
	<-m.done
	for _, s := range m.subs {
		s.Unsubscribe()
	}
	m.nc.Flush() // the acknowledgements sent last
	m.nc.Close()
}
