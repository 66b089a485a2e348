package scan

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Run runs work on each shard, with at most o.Workers at once, and calls
// merge, in the calling goroutine, with the result of each shard's work
// finished without error. It stops at the first error (of work or of
// merge), cancelling the shards being read, and returns it with the
// progress at the end: the shards merged are exactly the ShardsDone. A
// cancellation of ctx is returned even when every shard being read ended
// without an error. Every goroutine Run starts has ended when it returns.
func Run[R any](ctx context.Context, shards []Shard, o Options,
	work func(ctx context.Context, s Shard, c *ShardProgress) (R, error),
	merge func(i int, res R) error) (Progress, error) {

	m, err := newMeters(o)
	if err != nil {
		return Progress{Shards: len(shards)}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r := &runner{ctx: ctx, shards: shards, o: o, now: o.clock(), counters: make([]ShardProgress, len(shards)), meters: m}
	r.start = r.now()
	done := startWorkers(ctx, r, work)

	tick := time.NewTicker(o.every())
	defer tick.Stop()
	var first error
	for {
		select {
		case res, ok := <-done:
			if !ok {
				if first == nil && r.finished < len(shards) {
					first = ctx.Err()
				}
				return r.report(), first
			}
			if res.err == nil {
				res.err = merge(res.i, res.res)
			}
			if res.err != nil {
				if first == nil {
					first = fmt.Errorf("shard %v: %w", shards[res.i], res.err)
					cancel()
				}
				continue
			}
			r.finished++
			r.report()
		case <-tick.C:
			r.report()
		}
	}
}

// A runner is the state of one Run that its progress reports read.
type runner struct {
	ctx      context.Context
	meters   *meters // nil: no metrics
	shards   []Shard
	o        Options
	now      func() time.Time
	start    time.Time
	counters []ShardProgress // one per shard, added to by the workers
	finished int             // shards merged
}

// report sums the counters into the progress, and reports it.
func (r *runner) report() Progress {
	p := Progress{Shards: len(r.shards), ShardsDone: r.finished}
	for i := range r.counters {
		r.counters[i].addTo(&p)
	}
	p.Elapsed = r.now().Sub(r.start)
	r.meters.record(r.ctx, p)
	if r.o.Progress != nil {
		r.o.Progress(p)
	}
	return p
}

// shardRun is one shard's outcome.
type shardRun[R any] struct {
	i   int
	res R
	err error
}

// startWorkers starts the workers and the goroutine that hands them the
// shards, and returns the channel of their outcomes, closed once every
// worker has ended. A shard handed out after ctx is cancelled does not
// start: its outcome is the cancellation.
func startWorkers[R any](ctx context.Context, r *runner,
	work func(ctx context.Context, s Shard, c *ShardProgress) (R, error)) <-chan shardRun[R] {

	next := make(chan int)
	done := make(chan shardRun[R])
	var wg sync.WaitGroup
	for w := 0; w < min(r.o.workers(), len(r.shards)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var res R
				err := ctx.Err()
				if err == nil {
					res, err = work(ctx, r.shards[i], &r.counters[i])
				}
				done <- shardRun[R]{i, res, err}
				if err != nil {
					// Run stops at the first error: a worker whose shard
					// failed takes no other, so that one worker reads the
					// shards strictly in turn, none after a failure.
					return
				}
			}
		}()
	}
	go func() {
		defer close(next)
		for i := range r.shards {
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
	return done
}
