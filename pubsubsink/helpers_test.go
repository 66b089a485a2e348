package pubsubsink_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cellttl/ttl/sweep"
)

const project = "proj"

var (
	ctx  = context.Background()
	base = time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
)

// newFake starts an in-process Pub/Sub fake (pstest) for the test and
// returns it with a client of project proj connected to it.
func newFake(t testing.TB, opts ...pstest.ServerReactorOption) (*pstest.Server, *pubsub.Client) {
	t.Helper()
	srv := pstest.NewServer(opts...)
	t.Cleanup(func() { srv.Close() })
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	client, err := pubsub.NewClient(ctx, project, option.WithGRPCConn(conn))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return srv, client
}

// topicName is the full name of topic id in project proj.
func topicName(id string) string { return "projects/" + project + "/topics/" + id }

// createTopic creates topic id and returns a publisher of it, stopped at
// the end of the test; ordered enables message ordering on it.
func createTopic(t testing.TB, client *pubsub.Client, id string, ordered bool) *pubsub.Publisher {
	t.Helper()
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: topicName(id)}); err != nil {
		t.Fatal(err)
	}
	p := client.Publisher(id)
	p.EnableMessageOrdering = ordered
	t.Cleanup(p.Stop)
	return p
}

// events returns n cell events of table t, family sess, one per row
// row0, row1, ..., expired a second apart from base.
func events(n int) []sweep.Event {
	out := make([]sweep.Event, n)
	for i := range out {
		expired := base.Add(time.Duration(i) * time.Second)
		out[i] = sweep.Event{Kind: sweep.Cell, Table: "t", Row: fmt.Sprintf("row%d", i), Family: "sess",
			Column: "token", Timestamp: bigtable.Time(expired), Expired: expired}
	}
	return out
}

// decode returns the event a message's body encodes.
func decode(t testing.TB, data []byte) sweep.Event {
	t.Helper()
	var e sweep.Event
	if err := e.UnmarshalJSON(data); err != nil {
		t.Fatalf("decoding %s: %v", data, err)
	}
	return e
}

// sameEvent reports whether got is want, as an event decoded from JSON
// reads it back (times compared as instants, nil and empty values alike).
func sameEvent(got, want sweep.Event) bool {
	return got.Kind == want.Kind && got.Table == want.Table && got.Row == want.Row &&
		got.Family == want.Family && got.Column == want.Column && got.Timestamp == want.Timestamp &&
		got.Expired.Equal(want.Expired) && string(got.Value) == string(want.Value)
}

// checkMessage checks that a message carries e: its body and attributes.
func checkMessage(t testing.TB, data []byte, attrs map[string]string, e sweep.Event) {
	t.Helper()
	if got := decode(t, data); !sameEvent(got, e) {
		t.Errorf("message body decodes to %v, want %v", got, e)
	}
	want := map[string]string{"id": e.ID(), "table": e.Table, "family": e.Family, "kind": e.Kind.String()}
	if fmt.Sprint(attrs) != fmt.Sprint(want) {
		t.Errorf("attributes = %v, want %v", attrs, want)
	}
}
