package testkit_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
)

// TestStreamFaults reads the eight shards one stream each: the second
// fails after one row, the third hangs after one row until its deadline,
// the others pass.
func TestStreamFaults(t *testing.T) {
	f := &testkit.StreamFaults{Fail: map[int]codes.Code{2: codes.Internal}, Hang: map[int]bool{3: true}, After: 1}
	e := emulator.StartForTest(t, f.Interceptor())
	tbl := testkit.EightShards(t, e)
	shards, err := scan.Shards(context.Background(), tbl)
	if err != nil || len(shards) != 8 {
		t.Fatalf("%d shards, %v", len(shards), err)
	}
	for i, s := range shards {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		rows := 0
		err := tbl.ReadRows(ctx, s.RowSet(), func(bigtable.Row) bool { rows++; return true })
		cancel()
		switch i {
		case 1:
			if status.Code(err) != codes.Internal || rows != 1 {
				t.Errorf("shard 2: %d rows, %v; want 1 row, then Internal", rows, err)
			}
		case 2:
			if status.Code(err) != codes.DeadlineExceeded || rows != 1 {
				t.Errorf("shard 3: %d rows, %v; want 1 row, then the deadline", rows, err)
			}
		default:
			if err != nil || rows != 50 {
				t.Errorf("shard %d: %d rows, %v; want 50", i+1, rows, err)
			}
		}
	}
	if f.Streams() != 8 {
		t.Errorf("%d streams, want 8", f.Streams())
	}
}
