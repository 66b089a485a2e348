package pipeline

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

// newSweepShardFn checks cfg, and the table's families, and returns the
// DoFn that sweeps one shard.
func newSweepShardFn(ctx context.Context, cfg SweepConfig) (*sweepShardFn, error) {
	if err := cfg.Table.check(); err != nil {
		return nil, err
	}
	if len(cfg.Families) == 0 {
		return nil, fmt.Errorf("pipeline: %w: no family to sweep", ttl.ErrInvalidOption)
	}
	if cfg.From.IsZero() {
		return nil, fmt.Errorf("pipeline: %w: a round needs its start, the watermark: the Until of the round before", ttl.ErrInvalidOption)
	}
	if err := checkScheme(cfg.Output); err != nil {
		return nil, err
	}
	now, margin, until := cfg.Now, cfg.Margin, cfg.Until
	if now.IsZero() {
		now = time.Now()
	}
	if margin == 0 {
		margin = sweep.DefaultMargin
	}
	if margin < 0 {
		return nil, fmt.Errorf("pipeline: %w: margin %v: want a duration not negative", ttl.ErrInvalidOption, margin)
	}
	end := now.Add(-margin)
	if until.IsZero() {
		until = end.Truncate(time.Millisecond)
	}
	if until.After(end) {
		return nil, fmt.Errorf("pipeline: %w: the round ends at %s, less than its margin (%v) before now (%s): a cell that expires then may not be written yet",
			ttl.ErrInvalidOption, until.UTC().Format(time.RFC3339Nano), margin, now.UTC().Format(time.RFC3339Nano))
	}
	fn := &sweepShardFn{
		shardReader: shardReader{Table: cfg.Table},
		Round: roundSpec{Table: cfg.Table.Table, Families: cfg.Families, From: cfg.From.UTC(), Until: until.UTC(),
			Granularity: cfg.Granularity, Values: cfg.Values, WriteTimes: cfg.WriteTimes},
		Delete: cfg.Delete,
	}
	// The workers make the same round from the same data: fail now, not
	// on every worker.
	client, err := cfg.Table.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer client.Close()
	if _, _, err := fn.Round.rounds(client.Open(cfg.Table.Table)); err != nil {
		return nil, err
	}
	found, err := policies(ctx, cfg.Table)
	if err != nil {
		return nil, fmt.Errorf("pipeline: table %q: %w", cfg.Table.Table, err)
	}
	for name := range cfg.Families {
		if _, ok := found[name]; !ok {
			return nil, fmt.Errorf("pipeline: %w: table %q has no family %q to sweep", policy.ErrFamilyMismatch, cfg.Table.Table, name)
		}
	}
	return fn, nil
}

// checkScheme reports a file no filesystem Beam knows can take.
func checkScheme(filename string) (err error) {
	if filename == "" {
		return errors.New("pipeline: the sweep needs a file to write its events to")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pipeline: the events' file: %v", r)
		}
	}()
	filesystem.ValidateScheme(filename)
	return nil
}

// sweepShardFn sweeps whole shards: every row of the shard, read through
// the round's filter, given to Round.Events, whose events it emits as
// JSON lines; with Delete, the rows in which a cell expired; and the
// shard's counts once it is read to the end. A shard whose read fails
// fails its bundle, which the runner retries: the bundle's events are then
// emitted once, by the attempt that succeeds.
type sweepShardFn struct {
	shardReader           // the table, and the worker's client (Setup, Teardown)
	Round       roundSpec `json:"round"`
	Delete      bool      `json:"delete"`

	round, cells *sweep.Round
	filter       bigtable.Filter
}

// Setup opens the worker's client and makes the round.
func (fn *sweepShardFn) Setup(ctx context.Context) error {
	if err := fn.shardReader.Setup(ctx); err != nil {
		return err
	}
	var err error
	fn.round, fn.cells, err = fn.Round.rounds(fn.tbl)
	if err != nil {
		return err
	}
	if fn.filter = fn.round.Filter(); fn.filter == nil {
		// No cell can have expired in the window (Once reads nothing).
		fn.filter = bigtable.BlockAllFilter()
	}
	return nil
}

// result returns an empty result of the round, whose events go to file.
func (fn *sweepShardFn) result(file string) SweepResult {
	return SweepResult{Table: fn.Round.Table, Families: fn.Round.Families, Granularity: fn.Round.Granularity.String(),
		From: fn.Round.From, Until: fn.Round.Until, Output: file, Delete: fn.Delete}
}

// ProcessElement sweeps one shard.
func (fn *sweepShardFn) ProcessElement(ctx context.Context, shard scan.Shard, emit func(string), expired func(*expiredRow), done func(*SweepResult)) error {
	var r SweepResult
	var err error
	r.Read, err = fn.read(ctx, shard, fn.filter, fn.judge(ctx, &r, emit, expired))
	if err != nil {
		return err
	}
	done(&r)
	return nil
}

// judge returns what a row read through the round's filter goes to, in a
// shard or a salt: Round.Events, whose events it emits as JSON lines and
// counts in r with the cells expired, and with Delete the row, when a cell
// of it expired, to expired.
func (fn *sweepShardFn) judge(ctx context.Context, r *SweepResult, emit func(string), expired func(*expiredRow)) func(bigtable.Row) error {
	return func(row bigtable.Row) error {
		events := fn.round.Events(row)
		for _, e := range events {
			line, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("pipeline: encoding event %v: %w", e, err)
			}
			emit(string(line))
		}
		r.Events += int64(len(events))
		sweepEvents.Inc(ctx, int64(len(events)))
		cells := events
		if fn.cells != nil {
			cells = fn.cells.Events(row)
		}
		for _, c := range cells {
			// The cell as read: its value only if the round reads values.
			r.Expired.Add(scan.CountCell(row.Key(), bigtable.ReadItem{Row: row.Key(), Column: c.Family + ":" + c.Column, Timestamp: c.Timestamp, Value: c.Value}))
		}
		if fn.Delete && len(cells) > 0 {
			expired(newExpiredRow(row))
		}
		return nil
	}
}

// writeEventsFn writes every event, given as a side input, to its file,
// one a line, and emits how many it wrote: the file is written whole, or
// written again when the runner retries, and written (empty) when there is
// no event. One worker writes the whole file, as textio.Write does.
type writeEventsFn struct {
	Filename string `json:"filename"`
}

// ProcessElement writes the file: it runs once, on the impulse.
func (fn *writeEventsFn) ProcessElement(ctx context.Context, _ []byte, events func(*string) bool, written func(int64)) error {
	fs, err := filesystem.New(ctx, fn.Filename)
	if err != nil {
		return err
	}
	defer fs.Close()
	fd, err := fs.OpenWrite(ctx, fn.Filename)
	if err != nil {
		return fmt.Errorf("pipeline: writing the events: %w", err)
	}
	w := bufio.NewWriterSize(fd, 1<<20)
	var n int64
	var line string
	for events(&line) {
		w.WriteString(line) // a write error sticks, and Flush returns it
		w.WriteByte('\n')
		n++
	}
	err = w.Flush()
	if cerr := fd.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pipeline: writing the events to %s: %w", fn.Filename, err)
	}
	written(n)
	return nil
}

// afterWritten passes on a row to delete once the events are written: it
// takes their number as a side input, so that the runner runs it only
// once the events' file is written. The row is not passed on when there is
// no number: see writtenCount.
func afterWritten(row *expiredRow, written func(*int64) bool) (*expiredRow, error) {
	if _, err := writtenCount(written); err != nil {
		return nil, err
	}
	return row, nil
}

// errNotWritten is the error of the steps that wait for the events' file
// when it was not written.
var errNotWritten = errors.New("pipeline: writing the events failed: no expired cell is deleted")

// writtenCount returns the number of events writeEventsFn wrote, the one
// value of its output, or errNotWritten when it has none: its write
// failed. (A runner may still run the steps that wait for it, as Prism
// does, and report their failure rather than the write's; as a singleton
// side input the missing count read "got 0 values, want one value".)
func writtenCount(written func(*int64) bool) (int64, error) {
	var n int64
	if !written(&n) {
		return 0, errNotWritten
	}
	return n, nil
}

// deleteExpiredFn deletes the expired cells of the rows it is given (by
// afterWritten), with Round.Deletes, in batches of sweep.DefaultBatch
// rows. It emits the number of rows it deleted in, and with each batch
// applied how many rows it was given then: those a scheduled round's
// afterDeletedFn counts. A deletion that fails fails its bundle, which
// the runner retries: deleting a range of timestamps again is harmless.
type deleteExpiredFn struct {
	shardReader           // the table, and the worker's client (Setup, Teardown)
	Round       roundSpec `json:"round"`

	round *sweep.Round
	given int64 // rows given since the last batch applied
	keys  []string
	muts  []*bigtable.Mutation
}

// Setup opens the worker's client and makes the round.
func (fn *deleteExpiredFn) Setup(ctx context.Context) error {
	if err := fn.shardReader.Setup(ctx); err != nil {
		return err
	}
	var err error
	fn.round, _, err = fn.Round.rounds(fn.tbl)
	return err
}

// ProcessElement deletes the expired cells of one row, in a batch.
func (fn *deleteExpiredFn) ProcessElement(ctx context.Context, row *expiredRow, deleted func(*SweepResult), handled func(int64)) error {
	fn.given++
	if m := fn.round.Deletes(row.Row); m != nil {
		fn.keys, fn.muts = append(fn.keys, row.Row.Key()), append(fn.muts, m)
	}
	if len(fn.keys) >= sweep.DefaultBatch {
		return fn.flush(ctx, deleted, handled)
	}
	return nil
}

// FinishBundle deletes the rest of the bundle's batch.
func (fn *deleteExpiredFn) FinishBundle(ctx context.Context, deleted func(*SweepResult), handled func(int64)) error {
	return fn.flush(ctx, deleted, handled)
}

// flush applies the batch, and emits the number of rows it deleted in and
// the number given since the last batch.
func (fn *deleteExpiredFn) flush(ctx context.Context, deleted func(*SweepResult), handled func(int64)) error {
	keys, muts, given := fn.keys, fn.muts, fn.given
	fn.keys, fn.muts, fn.given = nil, nil, 0
	if len(keys) > 0 {
		errs, err := fn.tbl.ApplyBulk(ctx, keys, muts)
		if err != nil {
			return fmt.Errorf("pipeline: deleting the expired cells of %d rows: %w", len(keys), err)
		}
		for i, err := range errs {
			if err != nil {
				return fmt.Errorf("pipeline: deleting the expired cells of row %q: %w", keys[i], err)
			}
		}
		rowsDeleted.Inc(ctx, int64(len(keys)))
		deleted(&SweepResult{Deleted: int64(len(keys))})
	}
	if given > 0 {
		handled(given)
	}
	return nil
}
