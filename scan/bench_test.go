package scan_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	btpb "cloud.google.com/go/bigtable/apiv2/bigtablepb"
	"google.golang.org/grpc"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
)

// Table-wide work scales with its workers: BenchmarkShardedScan audits a
// table of 64 shards with 1, 2, 4 and 8 workers on the in-process
// emulator, every ReadRows response delayed in proportion to what it
// carries, at scanRate bytes a second per stream: a tablet server's scan
// rate, which bounds one stream however large the cluster. The emulator's
// own work is small beside the delay, so the wall time measures how many
// streams run at once.
//
//	go test -run '^$' -bench '^BenchmarkShardedScan$' -benchtime 5x -count 3 ./scan

const readRows = "/google.bigtable.v2.Bigtable/ReadRows"

const (
	scanShards = 64
	scanRows   = 5 * scanShards // 5 rows a shard
	scanValue  = 16 << 10       // one 16 KiB cell a row
	scanRate   = 4 << 20        // bytes a second per stream: 1.25 s for the table on one stream
)

// scanRateLimit delays each ReadRows response by the time a server
// scanning rate bytes a second takes to read what it carries.
func scanRateLimit(rate int) grpc.DialOption {
	return grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		s, err := streamer(ctx, desc, cc, method, opts...)
		if err != nil || method != readRows {
			return s, err
		}
		return rateLimited{s, rate}, nil
	})
}

type rateLimited struct {
	grpc.ClientStream
	rate int
}

func (s rateLimited) RecvMsg(m any) error {
	if err := s.ClientStream.RecvMsg(m); err != nil {
		return err
	}
	if resp, ok := m.(*btpb.ReadRowsResponse); ok {
		size := 0
		for _, c := range resp.Chunks {
			size += len(c.RowKey) + len(c.GetQualifier().GetValue()) + 8 + len(c.Value)
		}
		time.Sleep(time.Duration(size) * time.Second / time.Duration(s.rate))
	}
	return nil
}

// scanTable loads the benchmark's table and returns it split into
// scanShards shards.
func scanTable(b *testing.B, e *emulator.Emulator) bigtable.TableAPI {
	b.Helper()
	raw := e.TableForTest(b, "t", map[string]bigtable.GCPolicy{"f": nil})
	rows := make([]string, scanRows)
	muts := make([]*bigtable.Mutation, scanRows)
	value := make([]byte, scanValue)
	for i := range rows {
		rows[i] = fmt.Sprintf("r%05d", i)
		muts[i] = bigtable.NewMutation()
		muts[i].Set("f", "c", testkit.MS(testkit.Base.Add(time.Duration(i%3-1)*time.Hour)), value)
	}
	for i := 0; i < scanRows; i += 64 { // requests under gRPC's 4 MiB
		if errs, err := raw.ApplyBulk(context.Background(), rows[i:i+64], muts[i:i+64]); err != nil || errs != nil {
			b.Fatal(err, errs)
		}
	}
	var keys []string
	for i := scanRows / scanShards; i < scanRows; i += scanRows / scanShards {
		keys = append(keys, rows[i])
	}
	return testkit.Tablets{TableAPI: raw, Keys: keys}
}

func BenchmarkShardedScan(b *testing.B) {
	e := emulator.StartForTest(b, scanRateLimit(scanRate))
	tbl := scanTable(b, e)
	for _, workers := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(scanRows * scanValue)
			for i := 0; i < b.N; i++ {
				auditor, err := audit.New(e.Admin, tbl, "t", map[string]ttl.Strategy{"f": ttl.OneSecond()},
					audit.Options{Values: true, Scan: scan.Options{Now: func() time.Time { return testkit.Base }, Workers: workers}})
				if err != nil {
					b.Fatal(err)
				}
				a, err := auditor.Run(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if a.Read.ShardsRead != scanShards {
					b.Fatalf("%d shards read, want %d", a.Read.ShardsRead, scanShards)
				}
			}
		})
	}
}
