package pubsubsink_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"cloud.google.com/go/bigtable"
	"cloud.google.com/go/pubsub/v2"
	"cloud.google.com/go/pubsub/v2/apiv1/pubsubpb"
	"cloud.google.com/go/pubsub/v2/pstest"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/cellttl/ttl/pubsubsink"
	"github.com/cellttl/ttl/sweep"
)

// A sweep's events published to a topic, on the in-process Pub/Sub fake:
// a sweep (see package sweep) calls deliver with each batch.
func ExampleNew() {
	ctx := context.Background()
	srv := pstest.NewServer()
	defer srv.Close()
	conn, err := grpc.NewClient(srv.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	client, err := pubsub.NewClient(ctx, "proj", option.WithGRPCConn(conn))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	if _, err := client.TopicAdminClient.CreateTopic(ctx, &pubsubpb.Topic{Name: "projects/proj/topics/expired"}); err != nil {
		log.Fatal(err)
	}

	publisher := client.Publisher("expired")
	defer publisher.Stop()
	publisher.EnableMessageOrdering = true
	deliver, err := pubsubsink.New(publisher, pubsubsink.Options{OrderingKey: pubsubsink.ByRow})
	if err != nil {
		log.Fatal(err)
	}
	expired := time.Date(2030, 4, 30, 9, 0, 0, 0, time.UTC)
	err = deliver(ctx, []sweep.Event{
		{Kind: sweep.Row, Table: "sessions", Row: "user#1", Family: "sess", Column: "token", Timestamp: bigtable.Time(expired), Expired: expired},
	})
	if err != nil {
		log.Fatal(err)
	}

	for _, m := range srv.Messages() {
		fmt.Println("ordering key:", m.OrderingKey)
		fmt.Println("attributes:", m.Attributes)
		fmt.Println("body:", string(m.Data))
	}
	missing := client.Publisher("missing")
	defer missing.Stop()
	deliver, _ = pubsubsink.New(missing, pubsubsink.Options{})
	err = deliver(ctx, []sweep.Event{{Kind: sweep.Cell, Table: "sessions", Row: "user#2"}})
	fmt.Println(errors.Is(err, pubsubsink.ErrNoTopic))
	// Output:
	// ordering key: user#1
	// attributes: map[family:sess id:8fe267b673be3b83e3feddb8ea03b317 kind:row table:sessions]
	// body: {"kind":"row","id":"8fe267b673be3b83e3feddb8ea03b317","table":"sessions","row":"user#1","family":"sess","column":"token","timestamp":1903770000000000,"expired":"2030-04-30T09:00:00Z"}
	// true
}
