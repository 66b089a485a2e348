package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

func init() {
	// A ScheduleReport is plain data: it crosses the shuffle as JSON, every
	// bucket of Due included, so that the reports of two shards merge.
	beam.RegisterCoder(reflect.TypeOf((*audit.ScheduleReport)(nil)), marshalSchedule, decodeSchedule)

	beam.RegisterType(reflect.TypeOf((*scheduleShardFn)(nil)).Elem())
	register.Emitter1[*audit.ScheduleReport]()
	beam.RegisterType(reflect.TypeOf((*mergeSchedulesFn)(nil)).Elem())
}

// AuditScheduleConfig is what to count, as audit.CountSchedule takes it.
type AuditScheduleConfig struct {
	// Table is the data table whose schedule is counted, and the app
	// profile to read the schedule with.
	Table Table
	// Schedule is the schedule table (package schedule), in the same
	// instance: the table read.
	Schedule string
	// Now is the instant that divides the entries behind from those
	// ahead; the zero time means the time the pipeline is built.
	Now time.Time
}

// AuditSchedule adds to the pipeline the count of a schedule table's
// entries: audit.CountSchedule's report, read by the runner's workers.
// While the pipeline is built it reads the GC policy of the schedule's
// family (an admin call), fixes the instant and splits the schedule table
// into shards (ReadShards). Each worker counts whole shards
// (audit.NewScheduleReport, then ScheduleReport.AddKey for every row of
// the shard, read through audit.ScheduleFilter), and the shards' reports
// are merged (ScheduleReport.Merge) into one.
//
// It refuses a schedule named as the table (ttl.ErrInvalidOption), one
// that does not exist, and one without the schedule's family
// (policy.ErrFamilyMismatch). It returns a PCollection holding that one
// *audit.ScheduleReport, whose Read is Complete when every shard was read.
func AuditSchedule(ctx context.Context, s beam.Scope, cfg AuditScheduleConfig) (beam.PCollection, error) {
	fn, err := newScheduleShardFn(ctx, cfg)
	if err != nil {
		return beam.PCollection{}, err
	}
	return perShard(ctx, s, fn.Table, "AuditSchedule", fn, func(n int) any {
		return &mergeSchedulesFn{Schedule: fn.Table.Table, Data: fn.Data, Now: fn.Now, Policy: fn.Policy, Shards: n}
	})
}

// newScheduleShardFn checks cfg, reads the GC policy of the schedule's
// family and returns the DoFn that counts one shard of the schedule.
func newScheduleShardFn(ctx context.Context, cfg AuditScheduleConfig) (*scheduleShardFn, error) {
	if err := cfg.Table.check(); err != nil {
		return nil, err
	}
	if cfg.Schedule == "" {
		return nil, fmt.Errorf("%w: pipeline: table %q: no schedule table to count", ttl.ErrInvalidOption, cfg.Table.Table)
	}
	gc, err := schedulePolicy(ctx, cfg.Table, cfg.Schedule)
	if err != nil {
		return nil, err
	}
	sched := cfg.Table
	sched.Table = cfg.Schedule
	now := cfg.Now
	if now.IsZero() {
		now = time.Now()
	}
	return &scheduleShardFn{shardReader: shardReader{Table: sched}, Data: cfg.Table.Table, Now: now.UTC(), Policy: policy.Describe(gc)}, nil
}

// scheduleShardFn counts the entries of whole shards of a schedule table:
// a fresh audit.ScheduleReport for each, every row key of the shard given
// to AddKey, emitted when the shard is read to the end. A shard whose
// read fails fails its bundle, which the runner retries; a partial shard
// is never emitted.
type scheduleShardFn struct {
	shardReader           // the schedule table, and the worker's client (Setup, Teardown)
	Data        string    `json:"data"`   // the data table's ID
	Now         time.Time `json:"now"`    // fixed when the pipeline is built
	Policy      string    `json:"policy"` // the schedule family's GC policy, as policy.Describe spells it
}

// ProcessElement counts the entries of one shard.
func (fn *scheduleShardFn) ProcessElement(ctx context.Context, shard scan.Shard, emit func(*audit.ScheduleReport)) error {
	r := audit.NewScheduleReport(fn.Table.Table, fn.Data, fn.Now, fn.Policy)
	read, err := fn.read(ctx, shard, audit.ScheduleFilter(), func(row bigtable.Row) error {
		r.AddKey(row.Key())
		return nil
	})
	if err != nil {
		return err
	}
	r.Read = read
	emit(r)
	return nil
}

// mergeSchedulesFn merges the shards' reports into the schedule's. It
// holds what the shards' reports hold, not a scheduleShardFn, whose
// Setup would open a client.
type mergeSchedulesFn struct {
	Schedule string    `json:"schedule"`
	Data     string    `json:"data"`
	Now      time.Time `json:"now"`
	Policy   string    `json:"policy"`
	Shards   int       `json:"shards"` // the shards the schedule was split into
}

// CreateAccumulator returns a report of no shard.
func (fn *mergeSchedulesFn) CreateAccumulator() *audit.ScheduleReport {
	return audit.NewScheduleReport(fn.Schedule, fn.Data, fn.Now, fn.Policy)
}

// AddInput merges a shard's report.
func (fn *mergeSchedulesFn) AddInput(r, shard *audit.ScheduleReport) (*audit.ScheduleReport, error) {
	return r, r.Merge(shard)
}

// MergeAccumulators merges the reports of two sets of shards.
func (fn *mergeSchedulesFn) MergeAccumulators(r, o *audit.ScheduleReport) (*audit.ScheduleReport, error) {
	return r, r.Merge(o)
}

// ExtractOutput returns the schedule's report, which says how many shards
// the schedule was split into, so that its Read is Complete when every
// one was read.
func (fn *mergeSchedulesFn) ExtractOutput(r *audit.ScheduleReport) *audit.ScheduleReport {
	r.Read.Shards = fn.Shards
	return r
}

// marshalSchedule encodes every bucket of Due, empty ones too, so that
// the decoded report's buckets are the full histogram Merge needs.
func marshalSchedule(r *audit.ScheduleReport) ([]byte, error) {
	all := *r
	all.AllBuckets = true
	return json.Marshal(&all)
}

func decodeSchedule(b []byte) (*audit.ScheduleReport, error) {
	return unmarshalJSON[audit.ScheduleReport](b)
}
