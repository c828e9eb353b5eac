package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The master's book of leases in hand, kept in the cluster's bucket, and
// the claims slaves make on them.

// Booked is a lease in hand as the master's book keeps it in the cluster's
// bucket: a master started again knows which sites slaves may still be
// crawling, and takes their results over.
type Booked struct {
	ID        string    `json:"id"`
	Seq       uint64    `json:"seq"` // its message in the lease stream
	Site      string    `json:"site"`
	Addr      string    `json:"addr"`
	Deadline  time.Time `json:"deadline"`
	Published time.Time `json:"published"`
	// Lease is LeaseMsg.Book: what a master started again needs of the
	// lease to apply its results (nil in books of older versions).
	Lease json.RawMessage `json:"lease,omitempty"`
}

// LeaseMsg is a lease as the master publishes it.
type LeaseMsg struct {
	ID       string // unique in the crawl, across its runs
	Site     string // the site's key, for the book
	Host     string // for pinning rules
	Addr     netip.Addr
	Deadline time.Time // no request after it, by the slave's clock
	Payload  []byte    // the lease as the slave's Work reads it
	Book     []byte    // JSON kept in the book with it (Booked.Lease)
}

// readBook loads the leases in hand a previous run left.
func (m *Master) readBook(ctx context.Context) error {
	keys, err := m.kv.Keys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cluster: reading the lease book: %w", err)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, bookPrefix) {
			continue
		}
		e, err := m.kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var b Booked
		if json.Unmarshal(e.Value(), &b) == nil {
			m.book[b.ID] = b
		}
	}
	return nil
}

const bookPrefix = "lease."

// claimKey is the bucket's key a slave makes when it takes a lease.
func claimKey(id string) string { return "claim." + kvKey(id) }

// Book returns the leases in hand: published, their results not applied.
// After a restart they are those of the previous run, whose sites slaves
// may still be crawling.
func (m *Master) Book() []Booked {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Booked, 0, len(m.book))
	for _, b := range m.book {
		out = append(out, b)
	}
	return out
}

// Lease publishes a lease for the slaves. It is in the book, in memory and
// in the bucket, before it is published: a slave may answer before the
// publication is acknowledged, and a master killed at any moment finds
// every lease it published in the book when it starts again.
func (m *Master) Lease(ctx context.Context, l LeaseMsg) error {
	b := Booked{ID: l.ID, Site: l.Site, Deadline: l.Deadline, Published: time.Now(), Lease: l.Book}
	if l.Addr.IsValid() {
		b.Addr = l.Addr.String()
	}
	m.mu.Lock()
	m.book[l.ID] = b
	m.mu.Unlock()
	key := bookPrefix + kvKey(l.ID)
	raw, _ := json.Marshal(b)
	if _, err := m.kv.Put(ctx, key, raw); err != nil {
		m.mu.Lock()
		delete(m.book, l.ID)
		m.mu.Unlock()
		return fmt.Errorf("cluster: booking lease %s: %w", l.ID, err)
	}
	msg := nats.NewMsg(leaseSubject(m.TagFor(l.Host, l.Addr)))
	msg.Header.Set(hdrLease, l.ID)
	msg.Header.Set(hdrDead, l.Deadline.Format(time.RFC3339Nano))
	msg.Header.Set(hdrBeat, m.opt.Timing.Heartbeat.String())
	msg.Data = Compress(l.Payload)
	ack, err := m.js.PublishMsg(ctx, msg, jetstream.WithMsgID(l.ID))
	if err != nil {
		// Perhaps published all the same (an acknowledgement lost): the
		// book keeps it until its deadline, as the caller's expiry does.
		return fmt.Errorf("cluster: publishing lease %s: %w", l.ID, err)
	}
	m.published.Add(1)
	m.mu.Lock()
	cur, still := m.book[l.ID]
	if still {
		cur.Seq = ack.Sequence
		m.book[l.ID] = cur
	}
	m.mu.Unlock()
	if !still {
		// Applied while it was being published: its entry goes too.
		m.kv.Delete(ctx, key)
	}
	return nil
}

// Forget takes a lease out of the book and its message out of the lease
// stream, if no slave took it yet: the master gave it up. A result that
// comes for it later is dropped.
func (m *Master) Forget(ctx context.Context, id string) {
	m.mu.Lock()
	b, ok := m.book[id]
	delete(m.book, id)
	delete(m.partial, id)
	m.mu.Unlock()
	if !ok {
		return
	}
	// Parts taken and not stored yet are acknowledged when stored.
	m.unbook(ctx, b)
}

// masterClaim is the claim the master makes on a lease it takes back.
const masterClaim = "\x00master"

// takeBack makes sure no slave works a lease no slave has named: it
// claims the lease itself (a slave that receives it later finds the claim
// and leaves it), then takes it out of the book and the lease stream,
// keeping its claim. When a slave claimed it first, nothing changes and
// holder names that slave; mine reports that the master's claim won.
func (m *Master) takeBack(ctx context.Context, id string) (holder string, mine bool, err error) {
	if _, err := m.kv.Create(ctx, claimKey(id), []byte(masterClaim)); err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return "", false, fmt.Errorf("cluster: taking lease %s back: %w", id, err)
		}
		e, err := m.kv.Get(ctx, claimKey(id))
		if err != nil {
			return "", false, fmt.Errorf("cluster: taking lease %s back: %w", id, err)
		}
		return string(e.Value()), false, nil
	}
	m.mu.Lock()
	b, ok := m.book[id]
	delete(m.book, id)
	delete(m.partial, id)
	m.mu.Unlock()
	if ok {
		m.kv.Delete(ctx, bookPrefix+kvKey(id))
		if b.Seq > 0 {
			m.leases.DeleteMsg(ctx, b.Seq)
		}
	}
	return "", true, nil
}

// unbook deletes a lease's book entry, its message, then the slave's
// claim on it: once the message is gone no slave can take the lease again.
func (m *Master) unbook(ctx context.Context, b Booked) {
	m.kv.Delete(ctx, bookPrefix+kvKey(b.ID))
	if b.Seq > 0 {
		m.leases.DeleteMsg(ctx, b.Seq) // gone already when a slave acknowledged it
	}
	m.kv.Purge(ctx, claimKey(b.ID))
}

// kvKey keeps a lease id within the characters KV keys allow.
func kvKey(id string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '=':
			return r
		}
		return '_'
	}, id)
}
