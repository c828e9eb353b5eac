package cluster

import (
	"context"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A slave's results on their way: spooled, published to JetStream, and
// forgotten once it has stored them.

// finished forgets a lease whose result is delivered and acknowledges its
// message.
func (s *Slave) finished(id string) {
	s.mu.Lock()
	h := s.held[id]
	delete(s.held, id)
	s.mu.Unlock()
	if h != nil {
		h.msg.Ack()
	}
}

// deliverLoop delivers spooled results whenever woken, and every half
// second while some wait.
func (s *Slave) deliverLoop(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		s.deliver(ctx)
		select {
		case <-ctx.Done():
			return
		case <-s.kick:
		case <-t.C:
		}
	}
}

// deliverBatch is how many spooled parts are published at once before
// their acknowledgements are awaited: a slave cut off for a while sends
// its backlog in few round trips.
const deliverBatch = 64

// take marks spooled parts as being published by the caller, and returns
// those no other goroutine is publishing: a part is published by one at a
// time, so its delivery is counted once. release undoes it.
func (s *Slave) take(es []SpoolEntry) []SpoolEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := es[:0:0]
	for _, e := range es {
		if !s.sending[e.ID] {
			s.sending[e.ID] = true
			out = append(out, e)
		}
	}
	return out
}

func (s *Slave) release(es []SpoolEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range es {
		delete(s.sending, e.ID)
	}
}

// sentPart is a part published, its acknowledgement to come.
type sentPart struct {
	id, lease string
	ack       jetstream.PubAckFuture
}

// publish publishes spooled parts without waiting for their
// acknowledgements; a part it cannot read is forgotten. It stops at the
// first part the connection refuses.
func (s *Slave) publish(es []SpoolEntry) (out []sentPart, all bool) {
	for _, e := range es {
		lease, seq, err := splitResultID(e.ID)
		if err != nil {
			s.spool.Done(e.ID)
			continue
		}
		parts, payload, err := unspooled(e.Payload)
		if err != nil {
			s.spool.Done(e.ID)
			continue
		}
		m := nats.NewMsg(resultSubject)
		m.Header.Set(hdrLease, lease)
		m.Header.Set(hdrSeq, strconv.Itoa(seq))
		m.Header.Set(hdrParts, strconv.Itoa(parts))
		m.Header.Set(hdrSlave, s.opt.ID)
		m.Data = payload
		f, err := s.js.PublishMsgAsync(m, jetstream.WithMsgID(e.ID))
		if err != nil {
			return out, false // the rest tried again later
		}
		out = append(out, sentPart{e.ID, lease, f})
	}
	return out, true
}

// acked waits for the acknowledgements of parts published, until timeout
// or ctx ends, forgets each part JetStream has stored, and reports whether
// all were.
func (s *Slave) acked(ctx context.Context, out []sentPart, timeout time.Duration) bool {
	t := time.NewTimer(timeout)
	defer t.Stop()
	ok := true
	for _, x := range out {
		select {
		case ack := <-x.ack.Ok():
			s.delivered1(x.id, x.lease, ack.Duplicate)
		case <-x.ack.Err():
			ok = false // tried again later
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
	return ok
}

// deliver publishes what the spool holds, oldest first, a batch at a time
// without waiting for each acknowledgement, and forgets each part once
// JetStream has stored it. The message id makes a part sent twice (an
// acknowledgement lost on the way) count once. Parts a robot is
// delivering itself (deliverNow) are left to it.
func (s *Slave) deliver(ctx context.Context) {
	pending := s.spool.Pending()
	for len(pending) > 0 {
		if ctx.Err() != nil || !s.nc.IsConnected() {
			return
		}
		batch := s.take(pending[:min(len(pending), deliverBatch)])
		pending = pending[min(len(pending), deliverBatch):]
		out, all := s.publish(batch)
		ok := s.acked(ctx, out, 5*time.Second) && all
		s.release(batch)
		if !ok {
			return
		}
	}
}

// deliverNow spools one part a robot has just made, publishes it and
// waits for JetStream to store it, a heartbeat at most: the robot starts
// no other request before its page is with the master's stream, so a
// slave killed at any moment has at most its page in flight undelivered
// per robot. The part is marked as being sent before it is spooled, so
// the delivery loop leaves it alone; what is not stored in time is left to
// that loop.
func (s *Slave) deliverNow(id string, payload []byte) error {
	e := []SpoolEntry{{ID: id, Payload: payload}}
	s.mu.Lock()
	s.sending[id] = true
	s.mu.Unlock()
	err := s.spool.Put(id, payload)
	ok := false
	if err == nil && s.nc.IsConnected() {
		out, _ := s.publish(e)
		ok = s.acked(context.Background(), out, s.heartbeat())
	}
	s.release(e)
	if err == nil && !ok {
		s.wake()
	}
	return err
}

// delivered1 forgets a part JetStream has stored, and acknowledges its
// lease's message once all of the lease's parts are.
func (s *Slave) delivered1(id, lease string, duplicate bool) {
	if duplicate {
		s.duplicates.Add(1)
	}
	s.spool.Done(id)
	s.delivered.Add(1)
	s.mu.Lock()
	h := s.held[lease]
	done := false
	if h != nil {
		h.delivered++
		done = h.total > 0 && h.delivered >= h.total
	}
	s.mu.Unlock()
	if done {
		// Results stored: the lease is done. A lost ack only means
		// another slave may redo it; the master applies it once.
		s.finished(lease)
	}
}
