package pubsubsink_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/pubsubsink"
	"github.com/cellttl/ttl/sweep"
)

// TestDeliverPublishes publishes a batch of every kind of event: each is
// one message whose body decodes back to the event and whose attributes
// are its ID, table, family and kind, without an ordering key.
func TestDeliverPublishes(t *testing.T) {
	srv, client := newFake(t)
	deliver, err := pubsubsink.New(createTopic(t, client, "expired", false), pubsubsink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	batch := append(events(3),
		sweep.Event{Kind: sweep.Column, Table: "t", Row: "u\xff\x00", Family: "sess", Column: "c\xfe", Timestamp: 1, Expired: base},
		sweep.Event{Kind: sweep.Row, Table: "t", Row: "u9", Family: "cart", Column: "item", Timestamp: 2, Expired: base},
		sweep.Event{Kind: sweep.Cell, Table: "t", Row: "u10", Family: "sess", Column: "v", Timestamp: 3, Expired: base, Value: []byte("value")},
	)
	if err := deliver(ctx, batch); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	if err := deliver(ctx, nil); err != nil {
		t.Fatalf("deliver of no event: %v", err)
	}
	msgs := srv.Messages()
	if len(msgs) != len(batch) {
		t.Fatalf("published %d messages, want %d", len(msgs), len(batch))
	}
	byID := map[string]*pstest.Message{}
	for _, m := range msgs {
		byID[m.Attributes["id"]] = m
		if m.OrderingKey != "" {
			t.Errorf("message %s: ordering key %q, want none", m.ID, m.OrderingKey)
		}
		if m.Topic != topicName("expired") {
			t.Errorf("message %s: topic %q, want %q", m.ID, m.Topic, topicName("expired"))
		}
	}
	for _, e := range batch {
		m := byID[e.ID()]
		if m == nil {
			t.Errorf("%v: no message with its ID", e)
			continue
		}
		checkMessage(t, m.Data, m.Attributes, e)
		if want, _ := e.MarshalJSON(); !bytes.Equal(m.Data, want) {
			t.Errorf("%v: body %s, want %s", e, m.Data, want)
		}
	}
}

// TestDeliverByRow gives each message its row as ordering key, and a
// hash for a row Pub/Sub cannot take as a key; the messages of a row
// keep their order.
func TestDeliverByRow(t *testing.T) {
	srv, client := newFake(t)
	deliver, err := pubsubsink.New(createTopic(t, client, "ordered", true), pubsubsink.Options{OrderingKey: pubsubsink.ByRow})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("k", 1025)
	batch := events(4)
	batch[2].Row = "row0"
	batch[1].Row = long
	batch[3].Row = "bad\xff"
	if err := deliver(ctx, batch); err != nil {
		t.Fatalf("deliver: %v", err)
	}
	keys := map[string]string{} // by ID
	var row0 []string           // the IDs of row0's messages, in order
	for _, m := range srv.Messages() {
		keys[m.Attributes["id"]] = m.OrderingKey
		if m.OrderingKey == "row0" {
			row0 = append(row0, m.Attributes["id"])
		}
	}
	for _, tc := range []struct {
		e    sweep.Event
		want string
	}{
		{batch[0], "row0"},
		{batch[2], "row0"},
		{batch[1], hashKey(long)},
		{batch[3], hashKey("bad\xff")},
	} {
		if got := keys[tc.e.ID()]; got != tc.want {
			t.Errorf("row %.20q: ordering key %q, want %q", tc.e.Row, got, tc.want)
		}
	}
	if want := []string{batch[0].ID(), batch[2].ID()}; strings.Join(row0, ",") != strings.Join(want, ",") {
		t.Errorf("row0's messages in order %v, want %v", row0, want)
	}

	// The same row gives the same key, however long.
	if err := deliver(ctx, batch[1:2]); err != nil {
		t.Fatal(err)
	}
	msgs := srv.Messages()
	if got, want := msgs[len(msgs)-1].OrderingKey, keys[batch[1].ID()]; got != want {
		t.Errorf("the long row again: ordering key %q, want %q as the first time", got, want)
	}
}

// hashKey is the ordering key of a key Pub/Sub cannot take.
func hashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// TestDeliverRefuses refuses a nil publisher and an ordering key on a
// publisher without message ordering.
func TestDeliverRefuses(t *testing.T) {
	_, client := newFake(t)
	for _, tc := range []struct {
		name string
		p    *pubsub.Publisher
		opts pubsubsink.Options
		want error
	}{
		{"nil publisher", nil, pubsubsink.Options{}, ttl.ErrNilArgument},
		{"ordering not enabled", client.Publisher("t"), pubsubsink.Options{OrderingKey: pubsubsink.ByRow}, ttl.ErrInvalidOption},
	} {
		deliver, err := pubsubsink.New(tc.p, tc.opts)
		if !errors.Is(err, tc.want) || deliver != nil {
			t.Errorf("%s: New = %v, %v, want nil, %v", tc.name, deliver != nil, err, tc.want)
		}
	}
}

// TestDeliverNoTopic fails a delivery to a topic that does not exist, or
// no longer does, with ErrNoTopic and the topic's name.
func TestDeliverNoTopic(t *testing.T) {
	_, client := newFake(t)
	missing := client.Publisher("missing")
	t.Cleanup(missing.Stop)
	deliver, err := pubsubsink.New(missing, pubsubsink.Options{})
	if err != nil {
		t.Fatalf("New checks no topic: %v", err)
	}
	err = deliver(ctx, events(2))
	checkNoTopic(t, err, "missing", "2 of 2 events not published")

	p := createTopic(t, client, "deleted", false)
	deliver, err = pubsubsink.New(p, pubsubsink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := deliver(ctx, events(1)); err != nil {
		t.Fatal(err)
	}
	if err := client.TopicAdminClient.DeleteTopic(ctx, &pubsubpb.DeleteTopicRequest{Topic: topicName("deleted")}); err != nil {
		t.Fatal(err)
	}
	checkNoTopic(t, deliver(ctx, events(3)), "deleted", "3 of 3 events not published")
}

// checkNoTopic checks that err reports topic id missing.
func checkNoTopic(t *testing.T, err error, id, count string) {
	t.Helper()
	if !errors.Is(err, pubsubsink.ErrNoTopic) {
		t.Fatalf("deliver to a missing topic: %v, want ErrNoTopic", err)
	}
	if !strings.Contains(err.Error(), topicName(id)) || !strings.Contains(err.Error(), count) {
		t.Errorf("error %q does not name %s and say %q", err, topicName(id), count)
	}
	if status.Code(err) != codes.NotFound {
		t.Errorf("status.Code(%v) = %v, want NotFound: the server's error is wrapped", err, status.Code(err))
	}
}

// TestDeliverFails fails a delivery that Pub/Sub refuses, with the
// server's error and the topic's name.
func TestDeliverFails(t *testing.T) {
	_, client := newFake(t, pstest.WithErrorInjection("Publish", codes.PermissionDenied, "no publishing today"))
	deliver, err := pubsubsink.New(createTopic(t, client, "refused", false), pubsubsink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = deliver(ctx, events(5))
	if err == nil {
		t.Fatal("deliver succeeded, want the server's refusal")
	}
	if errors.Is(err, pubsubsink.ErrNoTopic) {
		t.Errorf("%v: ErrNoTopic, for a topic that exists", err)
	}
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("status.Code(%v) = %v, want PermissionDenied", err, status.Code(err))
	}
	for _, want := range []string{topicName("refused"), "5 of 5 events not published", "no publishing today"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestDeliverOversized fails a batch of which one event exceeds Pub/Sub's
// size limit, reporting that failure rather than the key it paused, and
// resumes the keys, so that a next batch of them is published.
func TestDeliverOversized(t *testing.T) {
	srv, client := newFake(t)
	p := createTopic(t, client, "big", true)
	p.PublishSettings.CountThreshold = 1
	deliver, err := pubsubsink.New(p, pubsubsink.Options{OrderingKey: pubsubsink.ByRow})
	if err != nil {
		t.Fatal(err)
	}
	// A failure outside the sink pauses row0's key.
	big := bytes.Repeat([]byte("v"), 11<<20)
	if _, err := p.Publish(ctx, &pubsub.Message{Data: big, OrderingKey: "row0"}).Get(ctx); err == nil {
		t.Fatal("an 11 MB message was published")
	}
	batch := events(2)
	batch[1].Value = big
	err = deliver(ctx, batch)
	if !errors.Is(err, pubsub.ErrOversizedMessage) {
		t.Fatalf("deliver of an 11 MB event: %v, want ErrOversizedMessage", err)
	}
	if !strings.Contains(err.Error(), "2 of 2 events not published") {
		t.Errorf("error %q does not count both events: row0's key was paused", err)
	}

	batch[1].Value = []byte("small")
	if err := deliver(ctx, batch); err != nil {
		t.Fatalf("deliver after the failed batch: %v, want the keys resumed", err)
	}
	if n := len(srv.Messages()); n != 2 {
		t.Errorf("%d messages published, want 2", n)
	}
}

// TestDeliverResumesAfterServerFailure fails a batch the server refuses,
// with an ordering key, and publishes it when the sweep delivers it again.
func TestDeliverResumesAfterServerFailure(t *testing.T) {
	srv, client := newFake(t)
	deliver, err := pubsubsink.New(createTopic(t, client, "flaky", true), pubsubsink.Options{OrderingKey: pubsubsink.ByRow})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetAutoPublishResponse(false)
	srv.AddPublishResponse(nil, status.Error(codes.FailedPrecondition, "try later"))
	batch := events(1)
	if err := deliver(ctx, batch); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("deliver: %v, want the server's FailedPrecondition", err)
	}
	srv.AddPublishResponse(&pubsubpb.PublishResponse{MessageIds: []string{"m1"}}, nil)
	if err := deliver(ctx, batch); err != nil {
		t.Fatalf("deliver again: %v, want the key resumed", err)
	}
}
