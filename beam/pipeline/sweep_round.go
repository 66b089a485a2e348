package pipeline

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/spec"
	"github.com/cellttl/ttl/sweep"
)

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
	// Schedule, when not "", is the ID of the table's schedule (package
	// schedule) in the same instance, which writers given ttl.WithSchedule
	// fill: the round reads it instead of the whole table, as a sweep
	// given sweep.Options.Schedule does. Its shards are then the
	// schedule's salts: each worker reads a salt's entries for the
	// round's window, then the rows they name, through the round's
	// filter. With Delete, the entries it served whose second ends by
	// Until are deleted too, after the rows' expired cells.
	Schedule string
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
	// Schedule is the schedule table a scheduled round read
	// (SweepConfig.Schedule), and EntriesDeleted how many of its entries
	// the round deleted, served, with Delete.
	Schedule       string `json:"schedule,omitempty"`
	EntriesDeleted int64  `json:"entries_deleted,omitempty"`
	// Read is what was read, through the round's filter: its Shards is
	// how many the table was split into (a scheduled round's: the
	// schedule's salts), ShardsRead how many were read to the end. A
	// scheduled round's counts include the entries it read.
	Read scan.Stats `json:"read"`
}

// Complete reports whether every shard was read. The pipeline does not
// judge what GC may have deleted before it read a family (sweep's
// Report.Missed): see Sweep.
func (r *SweepResult) Complete() bool { return r.Report().Complete() }

// Report returns the round as package sweep reports a round of
// Sweeper.Once: its window, events, cells expired, rows deleted and what
// was read, so that what the job prints and judges is sweep's own (its
// String: the one line a round sums itself up in). A granularity the
// result does not name is reported as Cell.
func (r *SweepResult) Report() *sweep.Report {
	g, _ := sweep.ParseGranularity(r.Granularity)
	return &sweep.Report{Table: r.Table, Granularity: g, From: r.From, Until: r.Until,
		Events: r.Events, Expired: r.Expired, Deleted: r.Deleted, Read: r.Read}
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
	strategies, err := parseFamilies(rs.Families, spec.Parse)
	if err != nil {
		return nil, nil, err
	}
	round, err = rs.round(data, strategies, rs.Granularity)
	if err == nil && rs.Granularity != sweep.Cell {
		cells, err = rs.round(data, strategies, sweep.Cell)
	}
	return round, cells, err
}

// round returns the round of strategies with events of granularity g.
func (rs roundSpec) round(data bigtable.TableAPI, strategies map[string]ttl.Strategy, g sweep.Granularity) (*sweep.Round, error) {
	s, err := sweep.New(nil, data, rs.Table, strategies, sweep.Options{Granularity: g, Values: rs.Values, WriteTimes: rs.WriteTimes, Scan: scan.Options{Now: func() time.Time { return rs.Until }}})
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	r, err := s.Round(rs.From, rs.Until)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return r, nil
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

// The counters of the sweep, counted as each row is read or deleted.
var (
	sweepEvents    = beam.NewCounter("cellttl", "events")
	rowsDeleted    = beam.NewCounter("cellttl", "rows_deleted")
	entriesDeleted = beam.NewCounter("cellttl", "entries_deleted")
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
	a.EntriesDeleted += b.EntriesDeleted
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

func decodeSweep(b []byte) (*SweepResult, error) { return unmarshalJSON[SweepResult](b) }
