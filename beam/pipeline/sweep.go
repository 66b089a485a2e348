package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/spec"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/sweep"
)

func init() {
	// A SweepResult crosses the shuffle as JSON (a time.Time has no
	// schema); a row to delete as gob, which keeps every byte of its keys
	// and columns (JSON would replace those that are not UTF-8).
	beam.RegisterCoder(reflect.TypeOf((*SweepResult)(nil)), marshalSweep, decodeSweep)
	beam.RegisterCoder(reflect.TypeOf((*expiredRow)(nil)), encodeRow, decodeRow)

	register.DoFn5x1[context.Context, scan.Shard, func(string), func(*expiredRow), func(*SweepResult), error](&sweepShardFn{})
	register.DoFn4x1[context.Context, []byte, func(*string) bool, func(int64), error](&writeEventsFn{})
	register.DoFn3x1[context.Context, *expiredRow, func(*SweepResult), error](&deleteExpiredFn{})
	register.Function2x1[*expiredRow, int64, *expiredRow](afterWritten)
	register.Function2x2[*SweepResult, int64, *SweepResult, error](checkWritten)
	register.Emitter1[string]()
	register.Emitter1[*expiredRow]()
	register.Emitter1[*SweepResult]()
	register.Emitter1[int64]()
	register.Iter1[string]()
	register.Combiner1[*SweepResult](&sumSweepsFn{})
}

// SweepConfig is one round of a sweep (package sweep): the cells of
// families of a table that expired after From, up to Until.
type SweepConfig struct {
	// Table is the table to sweep, and the app profile to read (and
	// delete) with.
	Table Table
	// Families maps each family to sweep to its strategy's spec, as the
	// cellttl command's -family takes it: onesecond, default:DURATION,
	// and their counter: and grace:DURATION: forms. Each must expire its
	// cells at an instant, as sweep.New requires (not seqnum).
	Families map[string]string
	// From and Until bound the round: it reports the expiries after From,
	// up to Until. From is required: it is the watermark, the Until of
	// the round before, which the caller keeps (a pipeline is one round).
	// The zero Until means Now less Margin, to the millisecond, as
	// Sweeper.Once ends its rounds.
	From, Until time.Time
	// Now is the instant the round is judged at: Until must not be after
	// Now less Margin. The zero time means the time the pipeline is built.
	Now time.Time
	// Margin is how far behind Now the round must end, as
	// sweep.Options.Margin: it covers the longest write and the skew
	// between the writers' clocks and Now. Zero means
	// sweep.DefaultMargin; negative is invalid.
	Margin time.Duration
	// Granularity is what each event reports: each Cell (the default), a
	// Column or a Row once nothing in it is live.
	Granularity sweep.Granularity
	// Values puts the expired cells' values in the events (not a row
	// event's), which the server then transfers.
	Values bool
	// WriteTimes says the table records write times (ttl.RecordWriteTime):
	// the companions are neither reported nor read, and are deleted with
	// their cells.
	WriteTimes bool
	// Delete deletes, once the events are written, the expired cells of
	// the columns in which the round found cells expired, with
	// sweep.Round.Deletes: the cells expired at Until, by ranges of
	// timestamps no live cell occupies.
	Delete bool
	// Output is the file the events are written to, one JSON object a
	// line (sweep.Event's MarshalJSON, as `cellttl sweep -format json`
	// prints them): a local path, or a gs:// path on Dataflow. It is
	// written, empty when no event, once every shard is read.
	Output string
}

// SweepResult is what a round did: the table's totals, or one shard's.
type SweepResult struct {
	// Table is the table swept.
	Table string `json:"table"`
	// Families are the families swept, with their strategies' specs.
	Families map[string]string `json:"families"`
	// Granularity is what each event reports: cell, column or row.
	Granularity string `json:"granularity"`
	// From and Until are the round's window: the expiries after From, up
	// to Until. Once the round is complete, Until is the next round's
	// From.
	From  time.Time `json:"from"`
	Until time.Time `json:"until"`
	// Output is the file the events were written to.
	Output string `json:"output"`
	// Events is the number of events written, as Report.Events counts
	// them.
	Events int64 `json:"events"`
	// Expired counts the cells found expired in the window, in the rows
	// read, as Report.Expired: their bytes include values only with
	// SweepConfig.Values.
	Expired scan.Count `json:"expired"`
	// Delete reports a round that deletes (SweepConfig.Delete), and
	// Deleted the rows in which it deleted expired cells.
	Delete  bool  `json:"delete"`
	Deleted int64 `json:"deleted"`
	// Read is what was read, through the round's filter: its Shards is
	// how many the table was split into, ShardsRead how many were read to
	// the end.
	Read scan.Stats `json:"read"`
}

// Complete reports whether every shard was read. The pipeline does not
// judge what GC may have deleted before it read a family (sweep's
// Report.Missed): see Sweep.
func (r *SweepResult) Complete() bool { return r.Read.Complete() }

// Sweep adds to the pipeline one round of a sweep: the events
// sweep.Sweeper.Once delivers for the round from cfg.From up to cfg.Until,
// found by the runner's workers, written to cfg.Output, and with
// cfg.Delete the expired cells deleted once the events are written.
//
// While the pipeline is built it checks cfg, makes the round
// (sweep.New, then Sweeper.Round), checks that the table has the
// families (an admin call) and splits the table into shards (ReadShards).
// Each worker reads whole shards through the round's Filter and gives
// every row to Round.Events, the library's per-row logic: the events are
// those Once delivers for the same round, in no particular order across
// rows. One worker writes them all to cfg.Output. With cfg.Delete, each
// row in which a cell expired is sent on, once the file is written, to a
// worker that applies Round.Deletes to it: a failure before then deletes
// nothing, and a run again of the same round reports the same events.
//
// It returns a PCollection of one *SweepResult, the round's counts, which
// is complete once the events are written and the cells deleted.
//
// A pipeline is one round, with no checkpoint: the caller keeps the
// watermark, and gives the Until of a round that completed as the next
// one's From. A run that fails writes nothing that says it finished; run
// the same round again, whose events have the same IDs. Unlike Once, the
// pipeline does not judge whether GC may have deleted expired cells
// before it read them (Report.Missed): keep From within each family's
// grace (ttl.Grace) of the time the job runs.
func Sweep(ctx context.Context, s beam.Scope, cfg SweepConfig) (beam.PCollection, error) {
	fn, err := newSweepShardFn(ctx, cfg)
	if err != nil {
		return beam.PCollection{}, err
	}
	shards, n, err := ReadShards(ctx, s, cfg.Table)
	if err != nil {
		return beam.PCollection{}, err
	}
	s = s.Scope("Sweep")
	events, expired, results := beam.ParDo3(s, fn, shards)
	written := beam.ParDo(s.Scope("WriteEvents"), &writeEventsFn{Filename: cfg.Output}, beam.Impulse(s), beam.SideInput{Input: events})
	if cfg.Delete {
		d := s.Scope("Delete")
		expired = beam.ParDo(d, afterWritten, expired, beam.SideInput{Input: written})
		deleted := beam.ParDo(d, &deleteExpiredFn{shardReader: shardReader{Table: cfg.Table}, Round: fn.Round}, expired)
		results = beam.Flatten(s, results, deleted)
	}
	sum := beam.Combine(s, &sumSweepsFn{Result: fn.result(cfg.Output), Shards: n}, results)
	return beam.ParDo(s, checkWritten, sum, beam.SideInput{Input: written}), nil
}

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
			return nil, fmt.Errorf("pipeline: %w: table %q has no family %q to sweep", ttl.ErrFamilyMismatch, cfg.Table.Table, name)
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

// roundSpec is a round as plain data, its strategies as the cellttl
// command takes them: what the DoFns carry to the workers, each of which
// makes the same sweep.Round from it (a Strategy is an interface, and a
// Round's fields are unexported).
type roundSpec struct {
	Table       string            `json:"table"`
	Families    map[string]string `json:"families"`
	From        time.Time         `json:"from"`
	Until       time.Time         `json:"until"`
	Granularity sweep.Granularity `json:"granularity"`
	Values      bool              `json:"values"`
	WriteTimes  bool              `json:"write_times"`
}

// rounds returns the round rs describes, of the table data, and, for
// events of columns or rows, the same round's cell events, which count
// the cells expired; nil for cell events, which are those cells.
func (rs roundSpec) rounds(data bigtable.TableAPI) (round, cells *sweep.Round, err error) {
	strategies := make(map[string]ttl.Strategy, len(rs.Families))
	for name, text := range rs.Families {
		s, err := spec.Parse(text)
		if err != nil {
			return nil, nil, fmt.Errorf("pipeline: family %q: %w", name, err)
		}
		strategies[name] = s
	}
	round, err = rs.round(data, strategies, rs.Granularity)
	if err == nil && rs.Granularity != sweep.Cell {
		cells, err = rs.round(data, strategies, sweep.Cell)
	}
	return round, cells, err
}

// round returns the round of strategies with events of granularity g.
func (rs roundSpec) round(data bigtable.TableAPI, strategies map[string]ttl.Strategy, g sweep.Granularity) (*sweep.Round, error) {
	s, err := sweep.New(nil, data, rs.Table, strategies, sweep.Options{Granularity: g, Values: rs.Values, WriteTimes: rs.WriteTimes,
		Now: func() time.Time { return rs.Until }})
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	r, err := s.Round(rs.From, rs.Until)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return r, nil
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
	r.Read, err = fn.read(ctx, shard, fn.filter, func(row bigtable.Row) error {
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
	})
	if err != nil {
		return err
	}
	done(&r)
	return nil
}

// An expiredRow is a row read through a round's filter in which a cell
// expired, without its values: what Round.Deletes needs.
type expiredRow struct {
	Row bigtable.Row
}

// newExpiredRow returns row without its values.
func newExpiredRow(row bigtable.Row) *expiredRow {
	out := make(bigtable.Row, len(row))
	for family, items := range row {
		stripped := make([]bigtable.ReadItem, len(items))
		for i, it := range items {
			stripped[i] = bigtable.ReadItem{Row: it.Row, Column: it.Column, Timestamp: it.Timestamp}
		}
		out[family] = stripped
	}
	return &expiredRow{Row: out}
}

func encodeRow(r *expiredRow) ([]byte, error) {
	var b bytes.Buffer
	err := gob.NewEncoder(&b).Encode(r)
	return b.Bytes(), err
}

func decodeRow(b []byte) (*expiredRow, error) {
	r := new(expiredRow)
	return r, gob.NewDecoder(bytes.NewReader(b)).Decode(r)
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
// once the events' file is written.
func afterWritten(row *expiredRow, _ int64) *expiredRow { return row }

// deleteExpiredFn deletes the expired cells of the rows it is given (by
// afterWritten), with Round.Deletes, in batches of sweep.DefaultBatch
// rows. A deletion that fails fails its bundle, which the runner retries:
// deleting a range of timestamps again is harmless.
type deleteExpiredFn struct {
	shardReader           // the table, and the worker's client (Setup, Teardown)
	Round       roundSpec `json:"round"`

	round *sweep.Round
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
func (fn *deleteExpiredFn) ProcessElement(ctx context.Context, row *expiredRow, deleted func(*SweepResult)) error {
	if m := fn.round.Deletes(row.Row); m != nil {
		fn.keys, fn.muts = append(fn.keys, row.Row.Key()), append(fn.muts, m)
	}
	if len(fn.keys) >= sweep.DefaultBatch {
		return fn.flush(ctx, deleted)
	}
	return nil
}

// FinishBundle deletes the rest of the bundle's batch.
func (fn *deleteExpiredFn) FinishBundle(ctx context.Context, deleted func(*SweepResult)) error {
	return fn.flush(ctx, deleted)
}

// flush applies the batch, and emits the number of rows it deleted in.
func (fn *deleteExpiredFn) flush(ctx context.Context, deleted func(*SweepResult)) error {
	keys, muts := fn.keys, fn.muts
	fn.keys, fn.muts = nil, nil
	if len(keys) == 0 {
		return nil
	}
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
	return nil
}

// checkWritten returns the round's result once its events are written,
// and an error if the file does not hold every event the shards emitted.
func checkWritten(r *SweepResult, written int64) (*SweepResult, error) {
	if written != r.Events {
		return nil, fmt.Errorf("pipeline: wrote %d events of %d", written, r.Events)
	}
	return r, nil
}

// The counters of the sweep, counted as each row is read or deleted.
var (
	sweepEvents = beam.NewCounter("cellttl", "events")
	rowsDeleted = beam.NewCounter("cellttl", "rows_deleted")
)

// sumSweepsFn sums the shards' counts, and the deletions', into the
// table's.
type sumSweepsFn struct {
	Result SweepResult `json:"result"` // the round's table, families, window and file
	Shards int         `json:"shards"` // the shards the table was split into
}

// CreateAccumulator returns the counts of no shard.
func (fn *sumSweepsFn) CreateAccumulator() *SweepResult {
	r := fn.Result
	return &r
}

// AddInput adds a shard's counts, or a deletion's.
func (fn *sumSweepsFn) AddInput(r, shard *SweepResult) *SweepResult {
	return fn.MergeAccumulators(r, shard)
}

// MergeAccumulators adds the counts of b to a's.
func (fn *sumSweepsFn) MergeAccumulators(a, b *SweepResult) *SweepResult {
	a.Events += b.Events
	a.Expired.Add(b.Expired)
	a.Deleted += b.Deleted
	a.Read.Add(b.Read)
	a.Read.ShardsRead += b.Read.ShardsRead
	return a
}

// ExtractOutput returns the table's counts, which say how many shards the
// table was split into, so that the result is Complete when every one was
// read.
func (fn *sumSweepsFn) ExtractOutput(r *SweepResult) *SweepResult {
	r.Read.Shards = fn.Shards
	return r
}

func marshalSweep(r *SweepResult) ([]byte, error) { return json.Marshal(r) }

func decodeSweep(b []byte) (*SweepResult, error) {
	r := new(SweepResult)
	return r, json.Unmarshal(b, r)
}
