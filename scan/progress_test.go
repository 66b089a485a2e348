package scan_test

import (
	"context"
	"testing"
	"time"

	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/scan"
)

// TestProgressText checks the rate, the time left and the line a
// progress prints as.
func TestProgressText(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    scan.Progress
		rate float64
		left time.Duration // -1: not known
		text string
	}{
		{"nothing yet", scan.Progress{Shards: 8}, 0, -1,
			"0/8 shards, 0 rows and 0 cells seen, 0 rows returned (0 B)"},
		{"rows returned, no shard done", scan.Progress{Shards: 8, Rows: 500, Cells: 900, Bytes: 2048, RowsSeen: 500, CellsSeen: 900, Elapsed: 2 * time.Second}, 250, -1,
			"0/8 shards, 500 rows and 900 cells seen, 500 rows returned (2.0 KiB), 250 rows/s"},
		{"under way", scan.Progress{Shards: 64, ShardsDone: 16, Rows: 3100, Cells: 6000, Bytes: 1258291,
			RowsSeen: 1_200_000, CellsSeen: 3_400_000, Elapsed: 30 * time.Second}, 40_000, 90 * time.Second,
			"16/64 shards, 1.2M rows and 3.4M cells seen, 3.1k rows returned (1.2 MiB), 40.0k rows/s, 1m30s left"},
		{"retried", scan.Progress{Shards: 4, ShardsDone: 2, Rows: 10, RowsSeen: 10, Requests: 3, Retries: 1}, 0, 0,
			"2/4 shards, 10 rows and 0 cells seen, 10 rows returned (0 B), 1 stream retried, 0s left"},
		{"done", scan.Progress{Shards: 4, ShardsDone: 4, Rows: 10, RowsSeen: 100, CellsSeen: 300, Elapsed: 4 * time.Second}, 25, 0,
			"4/4 shards, 100 rows and 300 cells seen, 10 rows returned (0 B), 25 rows/s"},
		{"no shards", scan.Progress{}, 0, -1,
			"0/0 shards, 0 rows and 0 cells seen, 0 rows returned (0 B)"},
	} {
		if got := tt.p.RowsPerSecond(); got != tt.rate {
			t.Errorf("%s: RowsPerSecond = %v, want %v", tt.name, got, tt.rate)
		}
		left, known := tt.p.Remaining()
		if known != (tt.left >= 0) || known && left != tt.left {
			t.Errorf("%s: Remaining = %v, %v; want %v", tt.name, left, known, tt.left)
		}
		if got := tt.p.String(); got != tt.text {
			t.Errorf("%s: String\n got %q\nwant %q", tt.name, got, tt.text)
		}
	}
}

// TestProgressClock checks that progress is timed with Options.Now: each
// shard's work moves a fake clock on by ten seconds, and the progress
// reports exactly the time that clock says went by.
func TestProgressClock(t *testing.T) {
	clock := testkit.NewClock(testkit.Base)
	var reports []scan.Progress
	p, err := scan.Run(context.Background(), make([]scan.Shard, 4), scan.Options{Workers: 1, Now: clock.Now, ProgressEvery: time.Hour,
		Progress: func(p scan.Progress) { reports = append(reports, p) }},
		func(context.Context, scan.Shard, *scan.ShardProgress) (struct{}, error) {
			clock.Advance(10 * time.Second)
			return struct{}{}, nil
		},
		func(int, struct{}) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if p.Elapsed != 40*time.Second || p.ShardsDone != 4 {
		t.Errorf("final progress %+v, want 4 shards in 40s", p)
	}
	if left, ok := p.Remaining(); !ok || left != 0 {
		t.Errorf("Remaining at the end = %v, %v; want 0, true", left, ok)
	}
	// One report a shard and one at the end; each shard done took at
	// least its own ten seconds.
	if len(reports) != 5 || reports[4] != p {
		t.Fatalf("reports %+v, want 5 ending with %+v", reports, p)
	}
	for i, r := range reports[:4] {
		if r.ShardsDone != i+1 || r.Elapsed < time.Duration(i+1)*10*time.Second || r.Elapsed > p.Elapsed {
			t.Errorf("report %d: %+v", i, r)
		}
	}
}

// TestOptionsAccepted checks that options that can work are accepted.
func TestOptionsAccepted(t *testing.T) {
	for _, o := range []scan.Options{{}, {Workers: 1, ProgressEvery: time.Millisecond, Sample: 0.5}, {Sample: 0.999}} {
		if err := o.Check(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
