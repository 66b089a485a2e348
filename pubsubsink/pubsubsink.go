// Package pubsubsink publishes a sweep's events (package sweep) to a
// Google Cloud Pub/Sub topic: New makes a topic's publisher a
// sweep.Deliver.
//
//	publisher := client.Publisher("expired-sessions")
//	defer publisher.Stop()
//	deliver, err := pubsubsink.New(publisher, pubsubsink.Options{})
//	...
//	err = s.Every(ctx, time.Minute, deliver, nil) // s is a *sweep.Sweeper
//
// Here client is a *pubsub.Client of cloud.google.com/go/pubsub/v2, which
// a file can import beside this package under its own name: the package
// is named for what it is, a sink, so that it does not take the name
// "pubsub" from Google's client.
package pubsubsink

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"

	"cloud.google.com/go/pubsub/v2"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/sweep"
)

// The attributes of every message the sink publishes, beside its body,
// the event's JSON. Subscriptions can filter on them
// (`attributes.kind = "row"`); consumers deduplicate by AttributeID.
const (
	// AttributeID is the event's ID (sweep.Event.ID): the same each time
	// the same expiry is published, and only then.
	AttributeID = "id"
	// AttributeTable is the event's table.
	AttributeTable = "table"
	// AttributeFamily is the event's family.
	AttributeFamily = "family"
	// AttributeKind is what expired: "cell", "column" or "row".
	AttributeKind = "kind"
)

// ErrNoTopic reports that the topic a sink publishes to does not exist.
var ErrNoTopic = errors.New("pubsubsink: topic not found")

// maxOrderingKey is the longest ordering key Pub/Sub accepts, in bytes.
const maxOrderingKey = 1024

// Options configures New. The zero value publishes without ordering
// keys.
type Options struct {
	// OrderingKey, when not nil, gives each event's message an ordering
	// key: a subscription with message ordering enabled receives the
	// messages of one key in the order they were published. ByRow keeps
	// each row's events in order. A key Pub/Sub cannot take (over 1024
	// bytes, or not valid UTF-8) is replaced by "sha256:" and its SHA-256
	// in hex, the same for the same key. Pub/Sub publishes at most 1 MB/s
	// per ordering key.
	//
	// Ordering needs the publisher's EnableMessageOrdering, set before
	// its first Publish; New refuses a publisher without it.
	OrderingKey func(sweep.Event) string
}

// ByRow is an Options.OrderingKey: the event's row key, so that the
// events of a row arrive in order. Tables that publish to the same topic
// share the keys of their rows.
func ByRow(e sweep.Event) string { return e.Row }

// New returns a sweep.Deliver, the sink, that publishes each event of a batch as
// one message to p's topic: its body the event's JSON
// (sweep.Event.MarshalJSON, which sweep.Event.UnmarshalJSON reads back),
// its attributes the event's ID, table, family and kind (the Attribute
// constants). It publishes the whole batch, waits for every message's
// result, and returns nil only when Pub/Sub accepted them all. Otherwise
// it returns an error that names the topic and says how many events were
// not published, wrapping the first failure: the sweep does not record
// the batch and delivers it again.
//
// A nil p is refused with ttl.ErrNilArgument; an ordering key without
// message ordering with ttl.ErrInvalidOption. The sink is safe for
// concurrent use; the caller owns and stops p.
//
// Costs and rationale: docs/api-notes.md#pubsubsinknew.
func New(p *pubsub.Publisher, opts Options) (sweep.Deliver, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: pubsubsink.New: nil publisher", ttl.ErrNilArgument)
	}
	if opts.OrderingKey != nil && !p.EnableMessageOrdering {
		return nil, fmt.Errorf("%w: pubsubsink.New: an ordering key needs EnableMessageOrdering set on the publisher of %s", ttl.ErrInvalidOption, p)
	}
	d := &deliverer{p: p, key: opts.OrderingKey}
	return d.deliver, nil
}

// A deliverer publishes batches of events to one topic.
type deliverer struct {
	p   *pubsub.Publisher
	key func(sweep.Event) string
}

// deliver publishes events and waits for them; see New.
func (d *deliverer) deliver(ctx context.Context, events []sweep.Event) error {
	msgs := make([]*pubsub.Message, len(events))
	keys := make([]string, len(events))
	for i, e := range events {
		body, err := e.MarshalJSON()
		if err != nil {
			return fmt.Errorf("pubsubsink: publishing to %s: encoding %v: %w", d.p, e, err)
		}
		if d.key != nil {
			keys[i] = orderingKey(d.key(e))
		}
		msgs[i] = &pubsub.Message{Data: body, OrderingKey: keys[i], Attributes: map[string]string{
			AttributeID: e.ID(), AttributeTable: e.Table, AttributeFamily: e.Family, AttributeKind: e.Kind.String(),
		}}
	}
	results := make([]*pubsub.PublishResult, len(msgs))
	for i, m := range msgs {
		results[i] = d.p.Publish(ctx, m)
	}
	var first error
	failed := 0
	paused := map[string]bool{}
	for i, r := range results {
		_, err := r.Get(ctx)
		if err == nil {
			continue
		}
		failed++
		if keys[i] != "" {
			paused[keys[i]] = true
		}
		// A key paused by an earlier failure says less than that failure.
		if first == nil || isPaused(first) && !isPaused(err) {
			first = err
		}
	}
	if failed == 0 {
		return nil
	}
	for key := range paused {
		d.p.ResumePublish(key)
	}
	if status.Code(first) == codes.NotFound {
		return fmt.Errorf("%w: %s: %d of %d events not published: %w", ErrNoTopic, d.p, failed, len(events), first)
	}
	return fmt.Errorf("pubsubsink: publishing to %s: %d of %d events not published: %w", d.p, failed, len(events), first)
}

// isPaused reports whether err is a publisher's refusal of a paused
// ordering key.
func isPaused(err error) bool {
	var paused pubsub.ErrPublishingPaused
	return errors.As(err, &paused)
}

// orderingKey returns key, or its hash when Pub/Sub cannot take it.
func orderingKey(key string) string {
	if len(key) <= maxOrderingKey && utf8.ValidString(key) {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}
