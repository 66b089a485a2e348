package scan

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cellttl/ttl"
)

// shardsOf returns n contiguous shards.
func shardsOf(n int) []Shard {
	keys := make([]string, n-1)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%04d", i)
	}
	return splitOn(keys, n)
}

// TestRunBoundedWorkers checks that the engine runs exactly Workers
// shards at once, merges every shard once in the calling goroutine, and
// reports progress for each.
func TestRunBoundedWorkers(t *testing.T) {
	for _, workers := range []int{1, 2, 4, 8} {
		shards := shardsOf(40)
		var running, most atomic.Int32
		// The first shards wait until as many run as there are workers,
		// so the test fails if the engine runs fewer at once.
		full := make(chan struct{})
		var once sync.Once
		merged := map[int]int{}
		var reports []Progress
		p, err := Run(context.Background(), shards, Options{Workers: workers, Progress: func(p Progress) { reports = append(reports, p) }},
			func(ctx context.Context, s Shard, c *ShardProgress) (int, error) {
				n := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				if n == int32(workers) {
					once.Do(func() { close(full) })
				}
				<-full
				c.rows.Add(3)
				c.rowsSeen.Add(10)
				return len(s.Start), nil
			},
			func(i int, res int) error {
				merged[i]++
				return nil
			})
		if err != nil {
			t.Fatalf("workers=%d: %v", workers, err)
		}
		if got := int(most.Load()); got != workers {
			t.Errorf("workers=%d: at most %d shards ran at once", workers, got)
		}
		if len(merged) != len(shards) {
			t.Errorf("workers=%d: %d shards merged, want %d", workers, len(merged), len(shards))
		}
		for i, n := range merged {
			if n != 1 {
				t.Errorf("workers=%d: shard %d merged %d times", workers, i, n)
			}
		}
		if p.ShardsDone != 40 || p.Rows != 120 || p.RowsSeen != 400 {
			t.Errorf("workers=%d: final progress %+v", workers, p)
		}
		if len(reports) < 41 || reports[len(reports)-1] != p {
			t.Errorf("workers=%d: %d progress reports, the last %+v", workers, len(reports), reports[len(reports)-1])
		}
	}
}

// TestRunStopsAtFirstError checks that a failing shard stops the
// work: the shards being read are cancelled, no new one starts, only the
// shards finished without error are merged, and every worker has returned
// when runShards does.
func TestRunStopsAtFirstError(t *testing.T) {
	shards := shardsOf(100)
	boom := errors.New("boom")
	var started, returned atomic.Int32
	merged := 0
	p, err := Run(context.Background(), shards, Options{Workers: 4},
		func(ctx context.Context, s Shard, c *ShardProgress) (struct{}, error) {
			n := started.Add(1)
			defer returned.Add(1)
			switch {
			case n <= 5:
				return struct{}{}, nil
			case n == 6:
				return struct{}{}, boom
			}
			<-ctx.Done() // a shard being read when another fails
			return struct{}{}, ctx.Err()
		},
		func(int, struct{}) error { merged++; return nil })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if returned.Load() != started.Load() {
		t.Errorf("%d shards started, %d returned before runShards did", started.Load(), returned.Load())
	}
	if merged != 5 || p.ShardsDone != 5 {
		t.Errorf("merged %d shards, progress says %d done; want 5", merged, p.ShardsDone)
	}
	if started.Load() > 6+4 {
		t.Errorf("%d shards started after the failure", started.Load()-6)
	}
}

// TestRunCancelled checks that cancelling the caller's context stops
// the work promptly with context.Canceled.
func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int32
	_, err := Run(ctx, shardsOf(50), Options{Workers: 3},
		func(ctx context.Context, s Shard, c *ShardProgress) (struct{}, error) {
			if started.Add(1) == 3 {
				cancel()
			}
			<-ctx.Done()
			return struct{}{}, ctx.Err()
		},
		func(int, struct{}) error { t.Error("a cancelled shard was merged"); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := started.Load(); n > 3+3 {
		t.Errorf("%d shards started; the work did not stop promptly", n)
	}
}

// TestRunMergeError checks that an error recording a shard (a
// checkpoint that cannot be written, say) stops the work like a shard's.
func TestRunMergeError(t *testing.T) {
	full := errors.New("disk full")
	last := 0
	p, err := Run(context.Background(), shardsOf(10), Options{Workers: 1},
		func(ctx context.Context, s Shard, c *ShardProgress) (int, error) { return 1, ctx.Err() },
		func(i int, _ int) error {
			last = i
			if i == 2 {
				return full
			}
			return nil
		})
	// The one worker may have finished shard 3 before the failure stopped
	// it: a shard finished without error is merged.
	if !errors.Is(err, full) || p.ShardsDone != last || last > 3 {
		t.Fatalf("err = %v, %d shards done, the last merged %d; want disk full at shard 2, nothing after shard 3", err, p.ShardsDone, last)
	}
}

// TestScanOptionsRefused checks the options that cannot work.
func TestScanOptionsRefused(t *testing.T) {
	for _, o := range []Options{{Workers: -1}, {Sample: -0.1}, {Sample: 1}, {Sample: 2}, {ProgressEvery: -1}} {
		if err := o.Check(); !errors.Is(err, ttl.ErrInvalidOption) {
			t.Errorf("%+v: %v, want ErrInvalidOption", o, err)
		}
	}
}
