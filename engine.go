package ttl

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cellttl/ttl/internal/text"
)

// The engine of table-wide work: EnsureFamilies' loss scan, AuditTable and
// a strategy move's rewrite split the table into shards (see Shards) and
// read them with a bounded pool of workers that ends with the call.

// DefaultWorkers is how many shards table-wide work reads at once unless
// ScanOptions.Workers says otherwise: enough streams to be served by eight
// nodes at once, few enough for one client machine and for a cluster's
// serving traffic. Each worker holds one row at a time, so memory does not
// grow with the table.
const DefaultWorkers = 8

// ScanOptions configures work that reads a whole table. The zero value
// reads every shard with DefaultWorkers workers and reports no progress.
//
// To keep such work off the clusters that serve an application, open the
// table on a client whose bigtable.ClientConfig names an app profile that
// routes to another cluster (the cellttl command's -app-profile).
type ScanOptions struct {
	// Workers is how many shards are read at once; 0 means
	// DefaultWorkers.
	Workers int

	// Progress, if not nil, is called with the work's progress: when a
	// shard is finished, every ProgressEvery while shards are being read,
	// and once at the end. Calls come from the goroutine that called the
	// work, one at a time.
	Progress func(Progress)

	// ProgressEvery is the interval between progress reports while
	// shards are being read; 0 means one second.
	ProgressEvery time.Duration

	// Sample, between 0 and 1, makes the work read only that fraction of
	// the shards, spread evenly over the table, for a fast first answer:
	// counts are then estimates, scaled up, and say so. 0 reads every
	// shard. Work that decides or writes refuses a sample.
	Sample float64
}

// check reports an option that cannot work.
func (o ScanOptions) check() error {
	switch {
	case o.Workers < 0:
		return fmt.Errorf("%w: ScanOptions.Workers %d: must not be negative", ErrInvalidOption, o.Workers)
	case o.ProgressEvery < 0:
		return fmt.Errorf("%w: ScanOptions.ProgressEvery %v: must not be negative", ErrInvalidOption, o.ProgressEvery)
	case math.IsNaN(o.Sample) || o.Sample < 0 || o.Sample >= 1:
		return fmt.Errorf("%w: ScanOptions.Sample %v: want 0 (every shard) or a fraction below 1", ErrInvalidOption, o.Sample)
	}
	return nil
}

func (o ScanOptions) workers() int {
	if o.Workers == 0 {
		return DefaultWorkers
	}
	return o.Workers
}

// Progress is how far table-wide work has come.
type Progress struct {
	// Shards is the number of shards to read (with ScanOptions.Sample,
	// those of the sample); ShardsDone those read to the end.
	Shards, ShardsDone int
	// Rows, Cells and Bytes are what the server returned so far, in every
	// shard, finished or not: after the server's filter, so usually far
	// less than the table holds. Bytes counts keys, qualifiers, timestamps
	// and values as they arrived (values are usually stripped).
	Rows, Cells, Bytes int64
	// RowsSeen and CellsSeen are what the server read to return them, as
	// it reports it at the end of each shard: finished shards only.
	RowsSeen, CellsSeen int64
	// Elapsed is the time since the work started.
	Elapsed time.Duration
}

// RowsPerSecond is the rate at which the server has read rows so far
// (finished shards), or returned them while no shard is finished.
func (p Progress) RowsPerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	n := p.RowsSeen
	if n == 0 {
		n = p.Rows
	}
	return float64(n) / p.Elapsed.Seconds()
}

// Remaining estimates the time left from the share of shards done; shards
// split on tablet boundaries are of about equal size. It reports false
// before the first shard is done.
func (p Progress) Remaining() (time.Duration, bool) {
	if p.ShardsDone == 0 || p.Shards == 0 {
		return 0, false
	}
	left := float64(p.Shards-p.ShardsDone) / float64(p.ShardsDone)
	return time.Duration(float64(p.Elapsed) * left), true
}

// String prints the progress on one line, such as
// "12/64 shards, 1.2M rows seen, 3.1k rows returned, 45.0k rows/s, 2m10s left".
func (p Progress) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d shards, %s rows and %s cells seen, %s rows returned (%s)",
		p.ShardsDone, p.Shards, text.Metric(p.RowsSeen), text.Metric(p.CellsSeen), text.Metric(p.Rows), text.Bytes(p.Bytes))
	if r := p.RowsPerSecond(); r > 0 {
		fmt.Fprintf(&b, ", %s rows/s", text.Metric(int64(r)))
	}
	if left, ok := p.Remaining(); ok && p.ShardsDone < p.Shards {
		fmt.Fprintf(&b, ", %v left", left.Round(time.Second))
	}
	return b.String()
}

// shardCounter is what a worker has read of one shard so far; the
// progress reports sum them while workers add to them.
type shardCounter struct {
	rows, cells, bytes  atomic.Int64 // returned so far
	rowsSeen, cellsSeen atomic.Int64 // read by the server, reported at the shard's end
}

// shardRun is one shard's outcome.
type shardRun[R any] struct {
	i   int
	res R
	err error
}

// runShards runs work on each shard, with at most o.Workers at once, and
// calls merge, in the calling goroutine, with the result of each shard
// work finished without error. It stops at the first error (of work or of
// merge), cancelling the shards being read, and returns it with the
// progress at the end: the shards merged are exactly the ShardsDone. Every
// goroutine it starts has ended when it returns.
func runShards[R any](ctx context.Context, shards []Shard, o ScanOptions,
	work func(ctx context.Context, s Shard, c *shardCounter) (R, error),
	merge func(i int, res R) error) (Progress, error) {

	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	counters := make([]shardCounter, len(shards))
	finished := 0
	report := func() Progress {
		p := Progress{Shards: len(shards), ShardsDone: finished}
		for i := range counters {
			c := &counters[i]
			p.Rows += c.rows.Load()
			p.Cells += c.cells.Load()
			p.Bytes += c.bytes.Load()
			p.RowsSeen += c.rowsSeen.Load()
			p.CellsSeen += c.cellsSeen.Load()
		}
		p.Elapsed = time.Since(start)
		if o.Progress != nil {
			o.Progress(p)
		}
		return p
	}

	next := make(chan int)
	done := make(chan shardRun[R])
	var wg sync.WaitGroup
	for w := 0; w < min(o.workers(), len(shards)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var res R
				err := ctx.Err() // a shard handed out after a failure does not start
				if err == nil {
					res, err = work(ctx, shards[i], &counters[i])
				}
				done <- shardRun[R]{i, res, err}
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range shards {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() {
		wg.Wait()
		close(done)
	}()

	every := o.ProgressEvery
	if every == 0 {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var first error
	for {
		select {
		case r, ok := <-done:
			if !ok {
				// Cancellation by the caller reaches the workers first; say
				// so even when every running shard ended without an error.
				if first == nil && finished < len(shards) {
					first = ctx.Err()
				}
				return report(), first
			}
			if r.err == nil {
				r.err = merge(r.i, r.res)
			}
			if r.err != nil {
				if first == nil {
					first = fmt.Errorf("shard %v: %w", shards[r.i], r.err)
					cancel()
				}
				continue
			}
			finished++
			report()
		case <-tick.C:
			report()
		}
	}
}
