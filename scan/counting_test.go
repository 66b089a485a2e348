package scan_test

import (
	"context"
	"sync"
	"testing"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"

	"github.com/cellttl/ttl/internal/emulator"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
)

// This file checks the counting rules (see scan.Stats), each reproducing
// a part of finding 4 of issue 21.

// checkProgress fails the test for a progress that shows more rows or
// cells returned than seen.
func checkProgress(t *testing.T, p scan.Progress) {
	t.Helper()
	if p.Rows > p.RowsSeen || p.Cells > p.CellsSeen {
		t.Errorf("progress %+v: more returned than seen (%s)", p, p)
	}
}

// TestCountingSeenAtEveryInstant: while a shard is being read, the rows
// it returned count as seen. The fixture holds the second shard's stream
// after 10 of its 15 rows until a progress has been reported after the
// first shard, and the first shard waits for the second to be held: a progress that counted seen rows only at a shard's end
// showed 15 rows returned and 5 seen.
func TestCountingSeenAtEveryInstant(t *testing.T) {
	raw := loaded(t, 20)
	tbl := testkit.Tablets{TableAPI: raw, Keys: []string{"r05"}}
	reported, held := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var reports []scan.Progress
	o := scan.Options{Workers: 2, ProgressEvery: 1 << 40, Progress: func(p scan.Progress) {
		reports = append(reports, p)
		if p.ShardsDone == 1 {
			once.Do(func() { close(reported) })
		}
	}}
	shards := []scan.Shard{{End: "r05"}, {Start: "r05"}}
	_, err := scan.Run(context.Background(), shards, o, func(ctx context.Context, s scan.Shard, c *scan.ShardProgress) (scan.Stats, error) {
		rows := 0
		return scan.ReadShard(ctx, tbl, s, bigtable.StripValueFilter(), c, func(bigtable.Row) error {
			switch rows++; {
			case s.Start == "" && rows == 1:
				<-held
			case s.Start != "" && rows == 10:
				close(held)
				<-reported
			}
			return nil
		})
	}, func(int, scan.Stats) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	mid := false
	for _, p := range reports {
		checkProgress(t, p)
		mid = mid || p.ShardsDone == 1 && p.Rows >= 15
	}
	if !mid {
		t.Errorf("no progress while the second shard was held: %+v", reports)
	}
	if last := reports[len(reports)-1]; last.RowsSeen != 20 || last.CellsSeen != 50 || last.Requests != 2 {
		t.Errorf("final progress %+v, want 20 rows and 50 cells seen in 2 requests", last)
	}
}

// TestCountingRetriedStream: a stream that fails after 10 responses is
// retried by the client from its last row. The rows its first attempt
// returned are seen (the attempt never reports), so rows seen are the
// table's 400, and the retry is one more request: Reads equals the
// streams the server was asked for.
func TestCountingRetriedStream(t *testing.T) {
	faults := &testkit.StreamFaults{Fail: map[int]codes.Code{2: codes.Unavailable}, After: 10}
	e := emulator.StartForTest(t, faults.Interceptor())
	tbl := testkit.EightShards(t, e)
	var reports []scan.Progress
	read, err := scan.ReadTable(context.Background(), tbl, bigtable.PassAllFilter(),
		scan.Options{Workers: 1, Progress: func(p scan.Progress) { reports = append(reports, p) }},
		func() int { return 0 }, func(int, bigtable.Row) {}, func(int) {})
	if err != nil {
		t.Fatal(err)
	}
	want := scan.Stats{Reads: faults.Streams(), Retries: 1, RowsSeen: 400, CellsSeen: 800, RowsReturned: 400, CellsReturned: 800, Shards: 8, ShardsRead: 8}
	if read != want || faults.Streams() != 9 {
		t.Errorf("read %+v in %d streams, want %+v", read, faults.Streams(), want)
	}
	for _, p := range reports {
		checkProgress(t, p)
	}
	last := reports[len(reports)-1]
	// Bytes as CountCell counts them: each cell with its row key, its
	// column, its timestamp and its one-byte value.
	bytes := int64(800 * (len("r000") + len("f:live") + 8 + 1))
	if last.Rows != 400 || last.RowsSeen != 400 || last.CellsSeen != 800 || last.Bytes != bytes || last.Requests != 9 || last.Retries != 1 {
		t.Errorf("final progress %+v, want the stats' counts and %d bytes", last, bytes)
	}
}
