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

	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
	"github.com/cellttl/ttl/spec"
)

func init() {
	// An Audit is plain data that survives JSON (its per-family rules do
	// not, and are not needed to merge): it crosses the shuffle as JSON.
	beam.RegisterCoder(reflect.TypeOf((*audit.Report)(nil)), marshalAudit, decodeAudit)

	beam.RegisterType(reflect.TypeOf((*auditShardFn)(nil)).Elem())
	register.Emitter1[*audit.Report]()
	beam.RegisterType(reflect.TypeOf((*mergeAuditsFn)(nil)).Elem())
}

// AuditConfig is what to audit, as audit.Auditor.Run takes it.
type AuditConfig struct {
	// Table is the table to audit, and the app profile to read it with.
	Table Table
	// Families maps each managed family to its strategy's spec, as the
	// cellttl command's -family takes it: onesecond, default:DURATION
	// (48h, 90m, 30d) or seqnum:VERSIONS. The table's other families are
	// audited as families without a strategy.
	Families map[string]string
	// Now is the instant at which cells are judged; the zero time means
	// the time the pipeline is built. Every worker judges by this one
	// instant, however long the job runs.
	Now time.Time
	// Values makes the reads transfer values, so that bytes include them;
	// by default the server strips them.
	Values bool
}

// Audit adds to the pipeline an audit of the table: audit.Auditor.Run's counts,
// read by the runner's workers. While the pipeline is built it
// reads the table's GC policies (an admin call), fixes the instant to judge
// by and splits the table into shards (ReadShards). Each worker audits
// whole shards with the library's own per-row logic (audit.NewReport, then
// Report.AddRow for every row of the shard, read through Report.Filter),
// and the shards' reports are merged (Report.Merge) into one.
//
// It returns a PCollection holding that one *audit.Report. Its Read
// counts the shards the table was split into and those read; a runner
// emits it only when every shard was read, so that its Read is Complete.
func Audit(ctx context.Context, s beam.Scope, cfg AuditConfig) (beam.PCollection, error) {
	fn, err := newAuditShardFn(ctx, cfg)
	if err != nil {
		return beam.PCollection{}, err
	}
	return perShard(ctx, s, cfg.Table, "Audit", fn, func(n int) any {
		return &mergeAuditsFn{Table: cfg.Table.Table, Now: fn.Now, Values: cfg.Values, Shards: n}
	})
}

// newAuditShardFn checks cfg, reads the table's GC policies and returns
// the DoFn that audits one shard.
func newAuditShardFn(ctx context.Context, cfg AuditConfig) (*auditShardFn, error) {
	if err := cfg.Table.check(); err != nil {
		return nil, err
	}
	now := cfg.Now
	if now.IsZero() {
		now = time.Now()
	}
	fn := &auditShardFn{shardReader: shardReader{Table: cfg.Table}, Families: cfg.Families, Now: now.UTC(), Values: cfg.Values}
	found, err := policies(ctx, cfg.Table)
	if err != nil {
		return nil, err
	}
	// The policies travel to the workers as cbt spells them, the one
	// spelling every report uses; policy.Parse reads them back.
	fn.Policies = make(map[string]string, len(found))
	for name, p := range found {
		fn.Policies[name] = policy.Describe(p)
	}
	// The workers build the same audit from the same data: fail now, not
	// on every worker.
	if _, err := fn.newAudit(); err != nil {
		return nil, err
	}
	return fn, nil
}

// auditShardFn audits whole shards: a fresh audit.Report for each, every row
// of the shard given to AddRow, emitted when the shard is read to the end.
// A shard whose read fails fails its bundle, which the runner retries; a
// partial shard is never emitted.
type auditShardFn struct {
	shardReader                   // the table, and the worker's client (Setup, Teardown)
	Families    map[string]string `json:"families"` // family → strategy spec
	Policies    map[string]string `json:"policies"` // family → GC policy as policy.Describe spells it, read at construction
	Now         time.Time         `json:"now"`
	Values      bool              `json:"values"`
}

// newAudit returns an empty audit of one shard.
func (fn *auditShardFn) newAudit() (*audit.Report, error) {
	strategies, err := parseFamilies(fn.Families, spec.Parse)
	if err != nil {
		return nil, err
	}
	policies, err := parseFamilies(fn.Policies, policy.Parse)
	if err != nil {
		return nil, err
	}
	a, err := audit.NewReport(fn.Table.Table, fn.Now, strategies, policies, fn.Values)
	if err != nil {
		return nil, fmt.Errorf("pipeline: %w", err)
	}
	return a, nil
}

// ProcessElement audits one shard.
func (fn *auditShardFn) ProcessElement(ctx context.Context, shard scan.Shard, emit func(*audit.Report)) error {
	a, err := fn.newAudit()
	if err != nil {
		return err
	}
	read, err := fn.read(ctx, shard, a.Filter(), func(r bigtable.Row) error {
		a.AddRow(r)
		return nil
	})
	if err != nil {
		return err
	}
	a.Read = read
	emit(a)
	return nil
}

// mergeAuditsFn merges the shards' audits into the table's.
type mergeAuditsFn struct {
	Table  string    `json:"table"`
	Now    time.Time `json:"now"`
	Values bool      `json:"values"`
	Shards int       `json:"shards"` // the shards the table was split into
}

// CreateAccumulator returns an audit of no shard: Merge adds each
// family as the first shard's audit has it.
func (fn *mergeAuditsFn) CreateAccumulator() *audit.Report {
	return &audit.Report{Table: fn.Table, Now: fn.Now, Values: fn.Values}
}

// AddInput merges a shard's audit.
func (fn *mergeAuditsFn) AddInput(a, shard *audit.Report) (*audit.Report, error) {
	return a, a.Merge(shard)
}

// MergeAccumulators merges the audits of two sets of shards.
func (fn *mergeAuditsFn) MergeAccumulators(a, b *audit.Report) (*audit.Report, error) {
	return a, a.Merge(b)
}

// ExtractOutput returns the table's audit, which says how many shards the
// table was split into, so that its Read is Complete when every one was
// read.
func (fn *mergeAuditsFn) ExtractOutput(a *audit.Report) *audit.Report {
	a.Read.Shards = fn.Shards
	return a
}

// WriteAudit writes the audits of col (Audit's one) to filename as
// indented JSON, the form `cellttl stats -format json` prints: WriteJSON.
func WriteAudit(s beam.Scope, filename string, col beam.PCollection) {
	WriteJSON(s.Scope("WriteAudit"), filename, col)
}

func marshalAudit(a *audit.Report) ([]byte, error) { return json.Marshal(a) }

func decodeAudit(b []byte) (*audit.Report, error) { return unmarshalJSON[audit.Report](b) }
