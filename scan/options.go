package scan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/cellttl/ttl/internal/rules"
)

// DefaultWorkers is how many shards table-wide work reads at once unless
// Options.Workers says otherwise: enough streams to be served by eight
// nodes at once, few enough for one client machine and for a cluster's
// serving traffic. Each worker holds one row at a time, so memory does not
// grow with the table.
const DefaultWorkers = 8

// Options configures work that reads a whole table. The zero value reads
// every shard with DefaultWorkers workers and reports no progress.
//
// To keep such work off the clusters that serve an application, open the
// table on a client whose bigtable.ClientConfig names an app profile that
// routes to another cluster (the cellttl command's -app-profile).
type Options struct {
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

	// Sample, between 0 and 1, makes the work read only about that
	// fraction of the table, for a fast first answer: every shard is split
	// into up to 2/Sample ranges of row keys and two of them, picked at
	// random, are read. Counts are then estimates, scaled up, with 95%
	// intervals (Stats.Estimates), and say so. 0 reads every shard. Work
	// that decides or writes refuses a sample.
	Sample float64

	// Seed, if not 0, fixes the ranges a sample picks: the same seed over
	// the same shards reads the same ranges (tests, a run repeated to
	// compare). 0 picks at random.
	Seed uint64

	// Now is the clock the work's progress is timed with; nil means
	// time.Now.
	Now func() time.Time

	// MeterProvider, if not nil, records the work's progress as
	// OpenTelemetry counters named cellttl.scan.* (docs/metrics.md), by
	// the same counting rules as Progress and Stats, whenever a progress
	// is reported (with or without a Progress func). nil records nothing,
	// at no cost.
	MeterProvider metric.MeterProvider

	// Table and Work name the table read and the work (such as "audit",
	// "move rewrite") in the metrics' attributes cellttl.table and
	// cellttl.work; "" leaves the attribute out.
	Table, Work string
}

// Check reports options that cannot work, wrapping ttl.ErrInvalidOption.
func (o Options) Check() error {
	switch {
	case o.Workers < 0:
		return fmt.Errorf("%w: scan.Options.Workers %d: must not be negative", rules.ErrInvalidOption, o.Workers)
	case o.ProgressEvery < 0:
		return fmt.Errorf("%w: scan.Options.ProgressEvery %v: must not be negative", rules.ErrInvalidOption, o.ProgressEvery)
	case math.IsNaN(o.Sample) || o.Sample < 0 || o.Sample >= 1:
		return fmt.Errorf("%w: scan.Options.Sample %v: want 0 (every shard) or a fraction below 1", rules.ErrInvalidOption, o.Sample)
	}
	return nil
}

func (o Options) workers() int {
	if o.Workers == 0 {
		return DefaultWorkers
	}
	return o.Workers
}

func (o Options) every() time.Duration {
	if o.ProgressEvery == 0 {
		return time.Second
	}
	return o.ProgressEvery
}

func (o Options) clock() func() time.Time {
	if o.Now == nil {
		return time.Now
	}
	return o.Now
}

// random returns the source a sample picks its ranges with: seeded with
// o.Seed, or at random.
func (o Options) random() *rand.Rand {
	if o.Seed != 0 {
		return rand.New(rand.NewPCG(o.Seed, o.Seed))
	}
	return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
}
