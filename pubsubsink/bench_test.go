package pubsubsink_test

import (
	"testing"
	"time"

	"github.com/cellttl/ttl/pubsubsink"
)

// BenchmarkDeliver publishes batches of 1000 events, the sweep's default
// batch, to the in-process fake (pstest): the cost of encoding, the
// client's batching and a local gRPC server, not of the network. By row,
// each event has an ordering key of its own, which the client sends in
// bundles of its own.
func BenchmarkDeliver(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts pubsubsink.Options
	}{
		{"unordered", pubsubsink.Options{}},
		{"by-row", pubsubsink.Options{OrderingKey: pubsubsink.ByRow}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			srv, client := newFake(b)
			p := createTopic(b, client, "bench", bc.opts.OrderingKey != nil)
			deliver, err := pubsubsink.New(p, bc.opts)
			if err != nil {
				b.Fatal(err)
			}
			batch := events(1000)
			b.ReportAllocs()
			var elapsed time.Duration
			for b.Loop() {
				start := time.Now()
				if err := deliver(ctx, batch); err != nil {
					b.Fatal(err)
				}
				elapsed += time.Since(start)
				srv.ClearMessages() // the fake keeps every message otherwise
			}
			b.ReportMetric(float64(b.N*len(batch))/elapsed.Seconds(), "events/s")
		})
	}
}
