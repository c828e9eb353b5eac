package cluster

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"lidi/engine/visit"
)

// Names of the streams, consumers, subjects and bucket the cluster uses.
const (
	LeaseStream    = "LIDI_LEASES"
	ResultStream   = "LIDI_RESULTS"
	leaseSubjects  = "lidi.lease.>"
	leaseAny       = "lidi.lease.any"
	leaseTagged    = "lidi.lease.tag."
	resultSubject  = "lidi.result"
	statusSubject  = "lidi.slave.status"
	byeSubject     = "lidi.slave.bye"
	expirySubject  = "lidi.slave.expired"
	controlSubject = "lidi.control" // the master's "halt D" and "go" to slaves
	bucket         = "lidi-cluster"
	settingsKey    = "settings"
	masterDurable  = "master"
	anyDurable     = "any"
)

// Timing is the cluster's timing. Its zero value is not usable: see
// DefaultTiming.
type Timing struct {
	// Grace is how long after a lease's deadline the master gives it up
	// (and a site's next lease may start): the engine's lease grace.
	Grace time.Duration
	// Heartbeat is how often a slave reports progress (InProgress on the
	// lease it holds) and its status.
	Heartbeat time.Duration
}

// DefaultTiming is the timing a master uses unless told otherwise: the
// default lease grace (cluster.lease_grace).
var DefaultTiming = Timing{Grace: visit.DefaultLeaseGrace, Heartbeat: 2 * time.Second}

// leaseAckWait is how long the server waits for a slave's heartbeat before
// it counts a lease unacknowledged. A lease is delivered once (MaxDeliver
// 1): when its holder dies the master's own expiry, at the deadline plus
// the grace, gives its URLs to a new lease, so no delivery of the old one
// may start on another slave; it stays in the stream until the master
// deletes it.
const leaseAckWait = 10 * time.Minute

var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,32}$`)

// CheckTag reports whether tag can name a slave's pinned leases: letters,
// digits, '-' and '_', at most 32 (a NATS subject token and consumer name).
func CheckTag(tag string) error {
	if !tagPattern.MatchString(tag) {
		return fmt.Errorf("cluster: tag %q: use letters, digits, - and _ (at most 32)", tag)
	}
	return nil
}

// leaseSubject is where a lease pinned to tag ("" for none) is published.
func leaseSubject(tag string) string {
	if tag == "" {
		return leaseAny
	}
	return leaseTagged + tag
}

// leaseDurable is the consumer slaves share for a tag's leases.
func leaseDurable(tag string) string {
	if tag == "" {
		return anyDurable
	}
	return "tag-" + tag
}

// setUp creates (or updates) the streams, the results consumer and the
// bucket. Both the master and slaves call it, so that either may start
// first.
func setUp(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	streams := []jetstream.StreamConfig{{
		Name:      LeaseStream,
		Subjects:  []string{leaseSubjects},
		Retention: jetstream.WorkQueuePolicy,
		Storage:   jetstream.FileStorage,
		// A master that publishes a lease again after a restart
		// (same lease id) does not queue it twice.
		Duplicates: 10 * time.Minute,
	}, {
		Name:      ResultStream,
		Subjects:  []string{resultSubject},
		Retention: jetstream.WorkQueuePolicy,
		Storage:   jetstream.FileStorage,
		// A slave that delivers its spool again after losing the
		// master's acknowledgement is recognised for an hour; later
		// the master's own record of applied batches takes over.
		Duplicates: time.Hour,
		MaxMsgSize: 8 << 20,
	}}
	for _, sc := range streams {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return nil, fmt.Errorf("cluster: stream %s: %w", sc.Name, err)
		}
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, Storage: jetstream.FileStorage})
	if err != nil {
		return nil, fmt.Errorf("cluster: bucket %s: %w", bucket, err)
	}
	return kv, nil
}

// leaseConsumer returns the consumer of a tag's leases ("" for the leases
// any slave may take).
func leaseConsumer(ctx context.Context, js jetstream.JetStream, tag string) (jetstream.Consumer, error) {
	c, err := js.CreateOrUpdateConsumer(ctx, LeaseStream, jetstream.ConsumerConfig{
		Durable:       leaseDurable(tag),
		FilterSubject: leaseSubject(tag),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       leaseAckWait,
		MaxDeliver:    1,
		MaxAckPending: 100000,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: lease consumer %s: %w", leaseDurable(tag), err)
	}
	return c, nil
}

// resultConsumer returns the master's consumer of results, made anew: the
// results an earlier run of the master took and did not acknowledge (it
// was killed before its store had them) are delivered at once, not after
// their acknowledgement wait. The stream is a work queue: a message leaves
// it when acknowledged, whatever consumer it was delivered by.
func resultConsumer(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
	err := js.DeleteConsumer(ctx, ResultStream, masterDurable)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("cluster: result consumer: %w", err)
	}
	c, err := js.CreateOrUpdateConsumer(ctx, ResultStream, jetstream.ConsumerConfig{
		Durable:       masterDurable,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       time.Minute,
		MaxDeliver:    -1,
		MaxAckPending: 4096,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: result consumer: %w", err)
	}
	return c, nil
}

// newJetStream wraps a connection in the JetStream API.
func newJetStream(nc *nats.Conn) (jetstream.JetStream, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("cluster: jetstream: %w", err)
	}
	return js, nil
}
