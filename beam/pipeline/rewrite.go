package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/move"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/spec"
)

func init() {
	// A RewriteResult crosses the shuffle as JSON (a time.Time has no
	// schema).
	beam.RegisterCoder(reflect.TypeOf((*RewriteResult)(nil)), marshalRewrite, decodeRewrite)

	beam.RegisterType(reflect.TypeOf((*rewriteShardFn)(nil)).Elem())
	register.Emitter1[*RewriteResult]()
	beam.RegisterType(reflect.TypeOf((*sumRewritesFn)(nil)).Elem())
}

// RewriteConfig is a strategy move's rewrite, as move.Family.Rewrite and
// `cellttl move rewrite` take it.
type RewriteConfig struct {
	// Table is the table whose family moves, and the app profile to read
	// and rewrite it with.
	Table Table
	// Family is the family being moved.
	Family string
	// To is the strategy the family moves to, as the cellttl command's
	// -family takes it: onesecond, default:DURATION or seqnum:VERSIONS.
	To string
	// From is the strategy it moves from, the same way, or "none" for a
	// family without a strategy (real timestamps).
	From string
	// Old is what the cells written before Start live by, as -old takes
	// it: default, for:DURATION, until:TIME or forever; "" is default.
	Old string
	// Start is the move's start (ttl.Move.Start).
	Start time.Time
	// Skew is the most a process's clock may differ from another's
	// (ttl.Move.Skew): the old cells are judged for a reader lagging by it.
	Skew time.Duration
	// Now is the instant at which the old cells are judged live or
	// expired; the zero time means the time the pipeline is built. Every
	// worker judges by this one instant, however long the job runs.
	Now time.Time
	// DryRun counts what the rewrite would do, and writes nothing. As
	// RewriteMove's dry run, it counts as rewritten the live old cells a
	// rewrite would keep below a newer cell of their column: it reads only
	// the old cells, and makes no conditional mutation to find out. It
	// reads no values.
	DryRun bool
	// Schedule, if not "", is the table's schedule table (package
	// schedule), in the same instance, read and written with the same app
	// profile: every cell rewritten with an expiry gets its entry, a row's
	// entries written in one request before its cells
	// (move.RewriteRowScheduled), so that a sweep that reads the schedule
	// finds the rewritten cells. A failed entry write fails the bundle
	// before the row's cells are rewritten: the retry writes the entries
	// again, then rewrites them.
	Schedule string
}

// RewriteResult is what the rewrite did, or in a dry run would do: the
// table's total, or one shard's.
type RewriteResult struct {
	// Table is the table's ID.
	Table string `json:"table"`
	// Family is the family being moved.
	Family string `json:"family"`
	// Move is the ttl.Move, as its String method gives it.
	Move string `json:"move"`
	// Now is the instant every worker judged the old cells at.
	Now time.Time `json:"now"`
	// DryRun reports a rewrite that counted and wrote nothing
	// (RewriteConfig.DryRun).
	DryRun bool `json:"dry_run"`
	// Schedule is the schedule table the entries of the rewritten cells
	// were written to (RewriteConfig.Schedule), "" for none.
	Schedule string `json:"schedule,omitempty"`

	// Rewritten, Kept and Expired, as move.RewriteRow counts them:
	// the old cells rewritten in the new encoding (in a dry run, those
	// that would be), those left as they were (changed by a writer
	// meanwhile, or below a newer cell of their column), and those
	// already expired, left for GC. After a bundle is retried, Rewritten
	// may undercount: see Rewrite.
	move.Counts

	// Read is what was read: the old cells only (move.RewriteFilter). Its
	// Shards is how many the table was split into, ShardsRead how many
	// were read to the end.
	Read scan.Stats `json:"read"`
}

// Complete reports whether every shard was read and rewritten.
func (r *RewriteResult) Complete() bool { return r.Read.Complete() }

// Rewrite adds to the pipeline the rewrite of a strategy move's old cells
// in the new encoding: move.Family.Rewrite's work, done by the runner's
// workers. While the pipeline is built it makes the ttl.Move the specs
// describe and refuses, as RewriteMove does, a move that is invalid, not
// started at Now, or between sequence numbers and times (their cells
// cannot be rewritten); it checks that the table has the family, and
// splits the table into shards (ReadShards). Each worker reads whole
// shards through Move.RewriteFilter and gives every row to
// Move.RewriteRow, the library's own per-row logic: each old cell live at
// Now for a reader lagging by Skew is rewritten with one conditional
// mutation, keeping its value and its expiry, only if still there
// unchanged and below no newer cell of its column. The shards' counts are
// summed into one RewriteResult, the PCollection's one element.
//
// Costs and rationale: docs/api-notes.md#pipelinerewrite.
func Rewrite(ctx context.Context, s beam.Scope, cfg RewriteConfig) (beam.PCollection, error) {
	fn, m, err := newRewriteShardFn(ctx, cfg)
	if err != nil {
		return beam.PCollection{}, err
	}
	return perShard(ctx, s, cfg.Table, "Rewrite", fn, func(n int) any {
		return &sumRewritesFn{Result: fn.result(m), Shards: n}
	})
}

// newRewriteShardFn checks cfg, and the table's family, and returns the
// DoFn that rewrites one shard with the move it describes.
func newRewriteShardFn(ctx context.Context, cfg RewriteConfig) (*rewriteShardFn, ttl.Move, error) {
	if err := cfg.Table.check(); err != nil {
		return nil, ttl.Move{}, err
	}
	if cfg.Family == "" {
		return nil, ttl.Move{}, errors.New("pipeline: the rewrite needs the family being moved")
	}
	now := cfg.Now
	if now.IsZero() {
		now = time.Now()
	}
	fn := &rewriteShardFn{
		shardReader: shardReader{Table: cfg.Table},
		Family:      cfg.Family,
		Move:        moveSpec{To: cfg.To, From: cfg.From, Old: cfg.Old, Start: cfg.Start, Skew: cfg.Skew.String()},
		Now:         now.UTC(),
		DryRun:      cfg.DryRun,
		Schedule:    cfg.Schedule,
	}
	m, err := fn.Move.move()
	if err != nil {
		return nil, m, err
	}
	// RewriteRow checks the move before it reads its row: given none, it
	// only checks. Its refusals are move.Family.Rewrite's: an invalid
	// move, or one to or from sequence numbers.
	if _, err := move.RewriteRow(ctx, nil, cfg.Family, m, nil, fn.Now, true); err != nil {
		return nil, m, fmt.Errorf("pipeline: family %q: %w", cfg.Family, err)
	}
	if fn.Now.Before(m.Start) {
		return nil, m, fmt.Errorf("pipeline: family %q: %w: the move starts at %s, after the instant the rewrite judges by (%s); until then the old encoding is still written",
			cfg.Family, ttl.ErrInvalidOption, m.Start.UTC().Format(time.RFC3339Nano), fn.Now.Format(time.RFC3339Nano))
	}
	found, err := policies(ctx, cfg.Table)
	if err != nil {
		return nil, m, err
	}
	if found[cfg.Family] == nil {
		return nil, m, fmt.Errorf("%w: pipeline: table %q has no family %q", policy.ErrFamilyMismatch, cfg.Table.Table, cfg.Family)
	}
	if err := checkSchedule(ctx, cfg); err != nil {
		return nil, m, err
	}
	return fn, m, nil
}

// checkSchedule refuses a schedule table the rewrite cannot write its
// entries to: named as the table, missing, or without its family.
func checkSchedule(ctx context.Context, cfg RewriteConfig) error {
	if cfg.Schedule == "" {
		return nil
	}
	_, err := schedulePolicy(ctx, cfg.Table, cfg.Schedule)
	return err
}

// moveSpec is a ttl.Move as plain data, its strategies and old rule as
// the cellttl command takes them: what a DoFn carries to the workers,
// each of which makes the same ttl.Move from it (a Strategy is an
// interface, which a DoFn's fields cannot carry).
type moveSpec struct {
	To    string    `json:"to"`
	From  string    `json:"from"`
	Old   string    `json:"old"`
	Start time.Time `json:"start"`
	Skew  string    `json:"skew"` // "1m0s", a Go duration string, as every duration in the module's JSON
}

// move returns the ttl.Move ms describes.
func (ms moveSpec) move() (ttl.Move, error) {
	to, err := spec.Parse(ms.To)
	if err != nil {
		return ttl.Move{}, fmt.Errorf("pipeline: the strategy moved to: %w", err)
	}
	if ms.From == "" {
		return ttl.Move{}, errors.New("pipeline: the strategy moved from is missing: give a strategy, or none for real timestamps")
	}
	from, err := spec.ParseFrom(ms.From)
	if err != nil {
		return ttl.Move{}, fmt.Errorf("pipeline: the strategy moved from: %w", err)
	}
	skew, err := time.ParseDuration(ms.Skew)
	if err != nil {
		return ttl.Move{}, fmt.Errorf("pipeline: the move's skew: %w", err)
	}
	old := ttl.Default
	if ms.Old != "" {
		if old, err = spec.ParseOld(ms.Old); err != nil {
			return ttl.Move{}, fmt.Errorf("pipeline: the old cells' rule: %w", err)
		}
	}
	return ttl.Move{From: from, To: to, Start: ms.Start, Old: old, Skew: skew}, nil
}

// rewriteShardFn rewrites the old cells of whole shards: every row of the
// shard, read through move.RewriteFilter, given to move.RewriteRow; the
// shard's counts are emitted when it is read to the end. A shard whose
// read or rewrite fails fails its bundle, which the runner retries (see
// Rewrite).
type rewriteShardFn struct {
	shardReader           // the table, and the worker's client (Setup, Teardown)
	Family      string    `json:"family"`
	Move        moveSpec  `json:"move"`
	Now         time.Time `json:"now"`
	DryRun      bool      `json:"dry_run"`
	Schedule    string    `json:"schedule,omitempty"`

	sched bigtable.TableAPI // the schedule table, on the worker; nil for none
}

// Setup opens the worker's client, and the schedule table.
func (fn *rewriteShardFn) Setup(ctx context.Context) error {
	if err := fn.shardReader.Setup(ctx); err != nil {
		return err
	}
	if fn.Schedule != "" {
		fn.sched = fn.client.Open(fn.Schedule)
	}
	return nil
}

// result returns an empty result of the rewrite by m.
func (fn *rewriteShardFn) result(m ttl.Move) RewriteResult {
	return RewriteResult{Table: fn.Table.Table, Family: fn.Family, Move: m.String(), Now: fn.Now, DryRun: fn.DryRun, Schedule: fn.Schedule}
}

// ProcessElement rewrites one shard.
func (fn *rewriteShardFn) ProcessElement(ctx context.Context, shard scan.Shard, emit func(*RewriteResult)) error {
	m, err := fn.Move.move()
	if err != nil {
		return err
	}
	filter := move.RewriteFilter(m, fn.Family)
	if fn.DryRun {
		// A dry run only counts: the values need not cross the network.
		filter = bigtable.ChainFilters(filter, bigtable.StripValueFilter())
	}
	r := fn.result(m)
	r.Read, err = fn.read(ctx, shard, filter, func(row bigtable.Row) error {
		n, err := move.RewriteRowScheduled(ctx, fn.tbl, fn.sched, fn.Family, m, row, fn.Now, fn.DryRun)
		r.Counts.Add(n)
		cellsRewritten.Inc(ctx, n.Rewritten)
		cellsKept.Inc(ctx, n.Kept)
		cellsExpired.Inc(ctx, n.Expired)
		return err
	})
	if err != nil {
		return err
	}
	emit(&r)
	return nil
}

// The counters of the rewrite, counted as each row is rewritten, so that a
// runner shows the progress of a long shard; in a dry run, "rewritten"
// counts the cells that would be.
var (
	cellsRewritten = beam.NewCounter("cellttl", "cells_rewritten")
	cellsKept      = beam.NewCounter("cellttl", "cells_kept")
	cellsExpired   = beam.NewCounter("cellttl", "cells_expired")
)

// sumRewritesFn sums the shards' counts into the table's.
type sumRewritesFn struct {
	Result RewriteResult `json:"result"` // the rewrite's table, family, move, instant, dry run
	Shards int           `json:"shards"` // the shards the table was split into
}

// CreateAccumulator returns the counts of no shard.
func (fn *sumRewritesFn) CreateAccumulator() *RewriteResult {
	r := fn.Result
	return &r
}

// AddInput adds a shard's counts.
func (fn *sumRewritesFn) AddInput(r, shard *RewriteResult) *RewriteResult {
	return fn.MergeAccumulators(r, shard)
}

// MergeAccumulators adds the counts of b to a's.
func (fn *sumRewritesFn) MergeAccumulators(a, b *RewriteResult) *RewriteResult {
	a.Counts.Add(b.Counts)
	a.Read.Add(b.Read)
	a.Read.ShardsRead += b.Read.ShardsRead
	return a
}

// ExtractOutput returns the table's counts, which say how many shards the
// table was split into, so that the result is Complete when every one was
// read.
func (fn *sumRewritesFn) ExtractOutput(r *RewriteResult) *RewriteResult {
	r.Read.Shards = fn.Shards
	return r
}

func marshalRewrite(r *RewriteResult) ([]byte, error) { return json.Marshal(r) }

func decodeRewrite(b []byte) (*RewriteResult, error) { return unmarshalJSON[RewriteResult](b) }
