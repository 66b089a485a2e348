package sweep_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// What a model run puts between a sweep and the world, to stop it at a
// chosen point and to see what it did: the table its Sweeper reads
// (fixed tablets; a read cancelled after some rows; deletions that fail,
// and a record of those that were made), the checkpoint (a Save that
// fails), and the Deliver (a consumer that fails, or cancels, or another
// writer that changes a row of the batch while it is being delivered).

var (
	errConsumer = errors.New("the consumer is down")
	errDisk     = errors.New("disk full")
	errBulk     = errors.New("deletion failed")
)

// A fault is where a sweep op stops its attempt.
type fault uint8

const (
	noFault        fault = iota
	deliverFailure       // the at-th delivery fails, the consumer having taken prefix events
	saveFailure          // the at-th Save fails (and, with all, every later one)
	deliverCancel        // the at-th delivery cancels the context, and returns its error with all
	readCancel           // the context is cancelled as the at-th row is read
	bulkFailure          // the at-th deletion fails: wholly, or (with all) for one row
)

func (f fault) String() string {
	return [...]string{"none", "delivery fails", "save fails", "delivery cancels", "read cancels", "deletion fails"}[f]
}

// sweepData is the table a model run's sweeps read: raw, with the tablets
// the run chose, and the hooks of the attempt under way.
type sweepData struct {
	bigtable.TableAPI
	splits []string
	h      atomic.Pointer[attempt]
}

func (d *sweepData) SampleRowKeys(context.Context) ([]string, error) { return d.splits, nil }

func (d *sweepData) ReadRows(ctx context.Context, rs bigtable.RowSet, f func(bigtable.Row) bool, opts ...bigtable.ReadOption) error {
	if a := d.h.Load(); a != nil && a.op.fault == readCancel {
		each := f
		f = func(r bigtable.Row) bool {
			if a.rows.Add(1) == int64(a.op.at) {
				a.cancel()
			}
			return each(r)
		}
	}
	return d.TableAPI.ReadRows(ctx, rs, f, opts...)
}

// ApplyBulk makes the sweep's deletions, or fails them as the attempt's
// fault says, and records the rows whose deletion was made. A context
// cancelled before the call makes none; one cancelled during it, all,
// with its error (the server made them, the client saw the
// cancellation), so that what was deleted is known.
func (d *sweepData) ApplyBulk(ctx context.Context, rows []string, muts []*bigtable.Mutation, opts ...bigtable.ApplyOption) ([]error, error) {
	a := d.h.Load()
	if a == nil {
		return d.TableAPI.ApplyBulk(ctx, rows, muts, opts...)
	}
	call := int(a.bulks.Add(1))
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	failing := -1 // the row refused
	if a.op.fault == bulkFailure && call == a.op.at {
		if !a.op.all {
			return nil, errBulk
		}
		failing = a.op.prefix % len(rows)
	}
	send, sendMuts := slices.Clone(rows), slices.Clone(muts)
	if failing >= 0 {
		send, sendMuts = slices.Delete(send, failing, failing+1), slices.Delete(sendMuts, failing, failing+1)
	}
	var errs []error
	var err error
	if len(send) > 0 {
		errs, err = d.TableAPI.ApplyBulk(context.WithoutCancel(ctx), send, sendMuts, opts...)
	}
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	for i, row := range send {
		if errs == nil || errs[i] == nil {
			a.log = append(a.log, action{deleted: row})
		}
	}
	a.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if failing < 0 {
		return errs, nil
	}
	out := make([]error, len(rows))
	for i := range rows {
		switch {
		case i == failing:
			out[i] = errBulk
		case i > failing && errs != nil:
			out[i] = errs[i-1]
		case errs != nil:
			out[i] = errs[i]
		}
	}
	return out, nil
}

// faultyCheckpoint is a checkpoint whose Saves fail from the at-th of an
// attempt on (only that one unless all).
type faultyCheckpoint struct {
	scan.Checkpoint
	mu         sync.Mutex
	saves, at  int
	all        bool
	failedOnce bool
}

func (c *faultyCheckpoint) arm(at int, all bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.saves, c.at, c.all, c.failedOnce = 0, at, all, false
}

func (c *faultyCheckpoint) Save(ctx context.Context, r *scan.Record) error {
	c.mu.Lock()
	c.saves++
	fail := c.at > 0 && (c.saves == c.at || c.all && c.saves > c.at)
	c.mu.Unlock()
	if fail {
		return errDisk
	}
	return c.Checkpoint.Save(ctx, r)
}

// An attempt is one call of Once in a model run: its op, and what the
// sweep did, as its Deliver and its table saw it.
type attempt struct {
	op     *sweepOp
	cancel context.CancelFunc
	rows   atomic.Int64 // read, for readCancel
	bulks  atomic.Int64 // ApplyBulk calls

	perturb func() // nil, or the replay's perturbation of schedules

	mu    sync.Mutex
	calls []*delivery
	log   []action // in the order they happened
}

// A delivery is one call of the attempt's Deliver.
type delivery struct {
	events   []sweep.Event
	err      error // returned
	accepted int   // events the consumer took
}

// An action changed the table during the attempt: a row's deletion made
// by the sweep, or another writer's change made during a delivery.
type action struct {
	deleted     string
	inject      *op
	err         error  // the injected change's
	unscheduled string // the key of a schedule's entry the sweep deleted
}

// deliver is the attempt's Deliver: a consumer that takes the events,
// fails or cancels as the op says, honours a cancelled context, and
// during the op's inject-th delivery lets another writer change a row of
// the batch (through tbl, with change, which picks it).
func (a *attempt) deliver(tbl *ttl.Table, change func(row string) *op) sweep.Deliver {
	return func(ctx context.Context, events []sweep.Event) error {
		a.yield()
		d := &delivery{events: slices.Clone(events)}
		a.mu.Lock()
		a.calls = append(a.calls, d)
		n := len(a.calls)
		a.mu.Unlock()
		// Under the race detector no change is made during a delivery:
		// with two workers, another shard's ReadRows stream is still
		// open, and bttest (v1.58) reads a row's column names unlocked
		// there while a CheckAndMutateRow adding a column sorts them in
		// place (family.cellsByColumn): a race of the emulator's own,
		// which startEmulator's ordering cannot hide because the calls
		// really overlap, and which the detector reports.
		if n == a.op.inject && len(events) > 0 && !raceDetector {
			o := change(events[(n*7)%len(events)].Row)
			err := o.applyTo(context.Background(), tbl)
			a.mu.Lock()
			a.log = append(a.log, action{inject: o, err: err})
			a.mu.Unlock()
		}
		a.yield()
		switch {
		case ctx.Err() != nil:
			d.err = ctx.Err()
		case a.op.fault == deliverFailure && n == a.op.at:
			d.accepted, d.err = min(a.op.prefix, len(events)), errConsumer
		case a.op.fault == deliverCancel && n == a.op.at:
			a.cancel()
			a.yield() // the other workers see the cancellation before this delivery returns
			if a.op.all {
				d.err = ctx.Err()
			} else {
				d.accepted = len(events)
			}
		default:
			d.accepted = len(events)
		}
		a.yield()
		return d.err
	}
}

// yield perturbs the schedule, when the attempt is replayed so.
func (a *attempt) yield() {
	if a.perturb != nil {
		a.perturb()
	}
}
