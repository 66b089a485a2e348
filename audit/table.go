package audit

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// Options configures an Auditor. The zero value judges cells at time.Now,
// strips values on the server, and reads every shard with
// scan.DefaultWorkers workers.
type Options struct {
	// Values makes the scan transfer values, so that bytes include them.
	// By default the server strips them and bytes count each cell's row
	// key, column and timestamp only: a read of the whole table that
	// moves a small fraction of it.
	Values bool

	// AllBuckets makes the report's JSON list every bucket of its
	// histograms, empty ones too (Report.AllBuckets).
	AllBuckets bool

	// Scan is how the tool reads the table, and its clock and meters:
	// workers, progress, a sample; Scan.Now, the clock that decides which
	// cells are live, read once a run (nil means time.Now); and
	// Scan.MeterProvider, the scan's metrics. They name the table and the
	// work "audit" unless Scan.Table and Scan.Work say otherwise.
	Scan scan.Options
}

// An Auditor audits one table, bound once to its clients, its managed
// families and its options (New), then run as often as needed (Run), each
// run a new scan and a new Report.
//
// It holds no connection of its own and no goroutine: it is safe for
// concurrent use when its clients are.
type Auditor struct {
	policies *policy.Tool // reads the families' GC policies
	data     bigtable.TableAPI
	table    string
	families map[string]ttl.Strategy
	opts     Options
}

// New returns the auditor of table: data is the table opened with a data
// client (client.Open(table)), which Run reads; admin reads the families'
// GC policies, which decide when expired cells become collectable.
// families are the managed families' strategies, which may be nil when
// none is; the table's other families are audited as families without a
// strategy.
//
// It refuses, and reads nothing, a nil admin client or table
// (ttl.ErrNilArgument), families ttl.NewTable would refuse
// (ttl.ErrInvalidStrategy), and scan options that cannot work
// (ttl.ErrInvalidOption).
func New(admin *bigtable.AdminClient, data bigtable.TableAPI, table string, families map[string]ttl.Strategy, opts Options) (*Auditor, error) {
	if admin == nil || data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: audit.New: nil admin client or table", ttl.ErrNilArgument)
	}
	if len(families) > 0 {
		if _, err := rules.CheckFamilies(families); err != nil {
			return nil, fmt.Errorf("audit.New: %w", err)
		}
	}
	if err := opts.Scan.Check(); err != nil {
		return nil, fmt.Errorf("audit.New: %w", err)
	}
	policies, err := policy.New(admin, nil, table, nil, policy.Options{})
	if err != nil {
		return nil, fmt.Errorf("audit.New: %w", err)
	}
	return &Auditor{policies: policies, data: data, table: table, families: families, opts: opts}, nil
}

// Run reads the whole table and returns what it holds, family by family;
// see Report.
//
// The table is read shard by shard (see package scan), values stripped on
// the server unless Options.Values. When the scan stops early (an error, a
// timeout, a cancellation) the report of the shards read is returned with
// the error, its Read not Complete: its counts are partial. With
// Options.Scan.Sample the counts are scaled estimates, and say so. A table
// that does not exist is an error wrapping policy.ErrTableNotFound.
func (au *Auditor) Run(ctx context.Context) (*Report, error) {
	if ctx == nil {
		return nil, fmt.Errorf("%w: audit.Run: nil context", ttl.ErrNilArgument)
	}
	policies, err := au.policies.Policies(ctx)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	opts, table := au.opts, au.table
	now := time.Now
	if opts.Scan.Now != nil {
		now = opts.Scan.Now
	}
	audit, err := NewReport(table, now(), au.families, policies, opts.Values)
	if err != nil {
		return nil, err
	}
	if opts.Scan.Table == "" {
		opts.Scan.Table = table
	}
	if opts.Scan.Work == "" {
		opts.Scan.Work = "audit"
	}
	// Each shard's audit starts from a copy made now: the workers must not
	// read audit while the calling goroutine merges into it.
	blank := audit.empty()
	read, err := scan.ReadTable(ctx, au.data, audit.Filter(), opts.Scan,
		func() *Report { return blank.empty() },
		(*Report).AddRow,
		func(part *Report) {
			// The same table and instant: merging cannot fail.
			_ = audit.Merge(part)
		})
	audit.scale(read.Scale())
	audit.Read = read
	audit.AllBuckets = opts.AllBuckets
	if err != nil {
		return audit, fmt.Errorf("audit: table %q: the audit stopped after %d of %d shards; its counts are partial: %w",
			table, read.ShardsRead, read.Planned(), err)
	}
	return audit, nil
}
