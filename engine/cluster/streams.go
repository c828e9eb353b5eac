package cluster

import (
	"context"
	"fmt"
	"regexp"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Names of the streams, consumers, subjects and bucket the cluster uses.
const (
	LeaseStream   = "LIDI_LEASES"
	ResultStream  = "LIDI_RESULTS"
	leaseSubjects = "lidi.lease.>"
	leaseAny      = "lidi.lease.any"
	leaseTagged   = "lidi.lease.tag."
	resultSubject = "lidi.result"
	statusSubject = "lidi.slave.status"
	byeSubject    = "lidi.slave.bye"
	bucket        = "lidi-cluster"
	settingsKey   = "settings"
	masterDurable = "master"
	anyDurable    = "any"
)

// Timing is the cluster's lease timing, the same on the master and in the
// consumers it creates. Its zero value is not usable: see DefaultTiming.
type Timing struct {
	// TTL is how long a slave may work on a lease, by its own clock,
	// counted from when it receives it.
	TTL time.Duration
	// Grace is added to TTL before anyone else may work on the same
	// lease: a slow slave and its successor never overlap at a site.
	Grace time.Duration
	// Heartbeat is how often a slave reports progress and status.
	Heartbeat time.Duration
}

// DefaultTiming is the timing a master uses unless told otherwise.
var DefaultTiming = Timing{TTL: 60 * time.Second, Grace: 10 * time.Second, Heartbeat: 2 * time.Second}

// ackWait is the lease consumer's redelivery time: a lease is handed to
// another slave no sooner than TTL + Grace after the last sign of life of
// the slave that held it, and a slave stops working on it TTL after it
// received it, so the two never overlap.
func (t Timing) ackWait() time.Duration { return t.TTL + t.Grace }

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
func leaseConsumer(ctx context.Context, js jetstream.JetStream, tag string, t Timing) (jetstream.Consumer, error) {
	c, err := js.CreateOrUpdateConsumer(ctx, LeaseStream, jetstream.ConsumerConfig{
		Durable:       leaseDurable(tag),
		FilterSubject: leaseSubject(tag),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       t.ackWait(),
		MaxDeliver:    -1,
		MaxAckPending: 100000,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: lease consumer %s: %w", leaseDurable(tag), err)
	}
	return c, nil
}

// resultConsumer returns the master's consumer of results.
func resultConsumer(ctx context.Context, js jetstream.JetStream) (jetstream.Consumer, error) {
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
