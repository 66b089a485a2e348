package pipeline

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/schedule"
	"github.com/cellttl/ttl/sweep"
)

// A scheduled round (SweepConfig.Schedule) reads the schedule instead of
// the whole table, as sweep's scheduled rounds do: its shards are the
// schedule's salts. A worker reads a salt's entries of the round's window,
// then the rows they name, in key order, a few hundred a request, through
// the round's filter, and judges each row as a shard's worker does. With
// Delete, when the round sweeps every family of the table that may hold
// cells with entries (sweep.OwnsEntries), it sends on the keys of the entries it served whose
// second lies within its window (as sweep's rounds do); they are deleted
// once the events are written and the rows' expired cells deleted, so
// that a failure before then leaves every entry a run again of the same
// round needs. Other entries go by the schedule's GC.

func init() {
	beam.RegisterType(reflect.TypeOf((*sweepSaltFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*deleteEntriesFn)(nil)).Elem())
	beam.RegisterType(reflect.TypeOf((*afterDeletedFn)(nil)).Elem())
	register.Emitter1[[]byte]()
}

// rowsPerRead is the most rows a salt's worker reads in one request, as
// sweep's scheduled rounds read them.
const rowsPerRead = 200

// entryFilter passes one cell of each entry, without its value: a round
// needs only the entries' keys.
var entryFilter = bigtable.ChainFilters(bigtable.CellsPerRowLimitFilter(1), bigtable.StripValueFilter())

// readSalts checks the schedule table of cfg (an admin call, made while
// the pipeline is built) and returns the schedule's salts, reshuffled as
// ReadShards' shards are, how many there are, and whether the round may
// delete the entries it serves: as sweep's rounds, only when it sweeps
// every family of the table that may hold cells with entries
// (sweep.OwnsEntries: GC collects it by age, or not at all, as in a
// ttl.Move). An entry names a
// row and a second, not a family: a sweep of some families that deleted
// it would hide the others' cells from their scheduled sweeps.
func readSalts(ctx context.Context, s beam.Scope, cfg SweepConfig) (beam.PCollection, int, bool, error) {
	if _, err := schedulePolicy(ctx, cfg.Table, cfg.Schedule); err != nil {
		return beam.PCollection{}, 0, false, err
	}
	data, err := policies(ctx, cfg.Table)
	if err != nil {
		return beam.PCollection{}, 0, false, fmt.Errorf("pipeline: table %q: %w", cfg.Table.Table, err)
	}
	owns := sweep.OwnsEntries(data, func(name string) bool { return cfg.Families[name] != "" })
	salts := make([]int, schedule.Salts)
	for i := range salts {
		salts[i] = i
	}
	s = s.Scope("ReadSalts")
	return beam.Reshuffle(s, beam.CreateList(s, salts)), len(salts), owns, nil
}

// unschedule adds the deletion of the entries served, once the events
// are written and the rows' expired cells deleted (given: the rows the
// salts' workers sent to be deleted; handled: those deleteExpiredFn
// deleted), and returns the counts of the entries it deleted.
func unschedule(s beam.Scope, cfg SweepConfig, served, written, given, handled beam.PCollection) beam.PCollection {
	sched := cfg.Table
	sched.Table = cfg.Schedule
	served = beam.ParDo(s, &afterDeletedFn{Schedule: cfg.Schedule}, served,
		beam.SideInput{Input: written}, beam.SideInput{Input: given}, beam.SideInput{Input: handled})
	return beam.ParDo(s, &deleteEntriesFn{shardReader: shardReader{Table: sched}}, served)
}

// afterDeletedFn passes on the key of an entry served once the events are
// written and every row sent to be deleted had its expired cells deleted,
// so that an entry is never deleted before the cells it names. Its side
// inputs are the events' count, the rows each salt's worker sent to be
// deleted and the rows deleteExpiredFn deleted; a runner computes them
// before it runs this step, but may run it though a step before it
// failed: Prism does, counting a failed bundle's elements as done. So it
// does not rely on the order alone: it passes on no key when the events
// were not written or fewer rows were deleted than sent.
type afterDeletedFn struct {
	Schedule string `json:"schedule"`
}

// errNotDeleted is the error of a scheduled round that deletes no entry
// because a row's expired cells were not deleted.
var errNotDeleted = errors.New("pipeline: the expired cells of a row were not deleted: no entry is deleted")

// StartBundle judges the side inputs: a bundle fails before it passes on
// a key unless the events were written and every row sent was deleted.
func (fn *afterDeletedFn) StartBundle(written, given, handled func(*int64) bool) error {
	return fn.check(written, given, handled)
}

// ProcessElement passes on key, the side inputs judged by StartBundle.
func (fn *afterDeletedFn) ProcessElement(key []byte, _, _, _ func(*int64) bool) []byte {
	return key
}

// check returns an error unless the events were written and every row
// given was handled.
func (fn *afterDeletedFn) check(written, given, handled func(*int64) bool) error {
	if _, err := writtenCount(written); err != nil {
		return err
	}
	sent, deleted := sum(given), sum(handled)
	if deleted != sent {
		return fmt.Errorf("%w (%d rows of %d deleted; schedule table %q)", errNotDeleted, deleted, sent, fn.Schedule)
	}
	return nil
}

// sum returns the sum of the values of a side input.
func sum(values func(*int64) bool) int64 {
	var n, v int64
	for values(&v) {
		n += v
	}
	return n
}

// sweepSaltFn sweeps the salts of a scheduled round: it is a
// sweepShardFn, whose round and per-row logic it uses, that reads a salt
// of the schedule instead of a shard of the table. It emits what a
// shard's worker does, and with Delete the keys of the entries it served
// and how many rows it sent to be deleted.
// A salt whose read fails fails its bundle, which the runner retries.
type sweepSaltFn struct {
	sweepShardFn        // the round, the data table's client, judge
	Schedule     string `json:"schedule"`
	// DeletesEntries: with Delete, the round deletes the entries it
	// served whose second lies within its window (see readSalts).
	DeletesEntries bool `json:"deletes_entries"`

	sched *bigtable.Table
	none  bool // no cell can have expired in the window
}

// Setup opens the worker's client, makes the round and opens the
// schedule.
func (fn *sweepSaltFn) Setup(ctx context.Context) error {
	if err := fn.sweepShardFn.Setup(ctx); err != nil {
		return err
	}
	fn.sched = fn.client.Open(fn.Schedule)
	fn.none = fn.round.Filter() == nil
	return nil
}

// ProcessElement sweeps one salt.
func (fn *sweepSaltFn) ProcessElement(ctx context.Context, salt int, emit func(string), expired func(*expiredRow), served func([]byte), given func(int64), done func(*SweepResult)) error {
	var r SweepResult
	if !fn.none { // as Once, which reads nothing then
		rows, keys, err := fn.entries(ctx, salt, &r.Read)
		if err != nil {
			return err
		}
		var sent int64
		judge := fn.judge(ctx, &r, emit, func(row *expiredRow) {
			sent++
			expired(row)
		})
		for len(rows) > 0 {
			chunk := rows[:min(rowsPerRead, len(rows))]
			rows = rows[len(chunk):]
			read, err := scan.ReadSet(ctx, fn.tbl, bigtable.RowList(chunk), fn.filter, nil, judge)
			r.Read.Add(read)
			if err != nil {
				return fmt.Errorf("pipeline: salt %d: reading %d rows of table %q: %w", salt, len(chunk), fn.Table.Table, err)
			}
		}
		if fn.Delete {
			for _, k := range keys {
				served([]byte(k))
			}
			given(sent)
		}
	}
	r.Read.ShardsRead = 1
	shardsRead.Inc(ctx, 1)
	rowsReturned.Inc(ctx, int64(r.Read.RowsReturned))
	cellsReturned.Inc(ctx, int64(r.Read.CellsReturned))
	done(&r)
	return nil
}

// entries reads salt's entries of the round's window, counting the read
// in read, and returns the rows they name, in key order, and the keys of
// the entries whose second lies within the round's window: those a round
// that deletes entries deletes once it served their rows. An entry whose
// second straddles Until names cells the next round reports, and one
// whose second began before From cells a sweep further behind may need.
func (fn *sweepSaltFn) entries(ctx context.Context, salt int, read *scan.Stats) (rows, served []string, err error) {
	named := map[string]bool{}
	var bad error
	st, err := scan.ReadSet(ctx, fn.sched, schedule.Range(salt, fn.Round.From, fn.Round.Until), entryFilter, nil, func(row bigtable.Row) error {
		e, err := schedule.Parse(row.Key())
		if err != nil {
			bad = fmt.Errorf("pipeline: schedule table %q holds a key that is no entry; delete it: %w", fn.Schedule, err)
			return bad
		}
		if !named[e.Row] {
			named[e.Row] = true
			rows = append(rows, e.Row)
		}
		if fn.DeletesEntries && e.Slot.After(fn.Round.From) && !e.Slot.Add(schedule.Slot).After(fn.Round.Until) {
			served = append(served, row.Key())
		}
		return nil
	})
	read.Add(st)
	if err != nil {
		if err != bad {
			err = fmt.Errorf("pipeline: salt %d: reading the entries of schedule table %q: %w", salt, fn.Schedule, err)
		}
		return nil, nil, err
	}
	sort.Strings(rows)
	return rows, served, nil
}

// deleteEntriesFn deletes the schedule's entries it is given (by
// afterDeletedFn), in batches of sweep.DefaultBatch. Its table is the
// schedule. A deletion that fails fails its bundle, which the runner
// retries: deleting an entry again is harmless.
type deleteEntriesFn struct {
	shardReader // the schedule table, and the worker's client (Setup, Teardown)

	keys []string
}

// ProcessElement deletes one entry, in a batch.
func (fn *deleteEntriesFn) ProcessElement(ctx context.Context, key []byte, deleted func(*SweepResult)) error {
	fn.keys = append(fn.keys, string(key))
	if len(fn.keys) >= sweep.DefaultBatch {
		return fn.flush(ctx, deleted)
	}
	return nil
}

// FinishBundle deletes the rest of the bundle's batch.
func (fn *deleteEntriesFn) FinishBundle(ctx context.Context, deleted func(*SweepResult)) error {
	return fn.flush(ctx, deleted)
}

// flush deletes the batch, and emits the number of entries it deleted.
func (fn *deleteEntriesFn) flush(ctx context.Context, deleted func(*SweepResult)) error {
	keys := fn.keys
	fn.keys = nil
	if len(keys) == 0 {
		return nil
	}
	if err := schedule.Delete(ctx, fn.tbl, fn.Table.Table, keys); err != nil {
		return fmt.Errorf("pipeline: %w", err)
	}
	entriesDeleted.Inc(ctx, int64(len(keys)))
	deleted(&SweepResult{EntriesDeleted: int64(len(keys))})
	return nil
}
