package audit

import (
	"context"
	"fmt"
	"time"

	"cloud.google.com/go/bigtable"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/rules"
	"github.com/cellttl/ttl/policy"
	"github.com/cellttl/ttl/scan"
)

// Options configures Table. The zero value judges cells at time.Now,
// strips values on the server, and reads every shard with
// scan.DefaultWorkers workers.
type Options struct {
	// Now is the clock that decides which cells are live; it is read once.
	// nil means time.Now.
	Now func() time.Time

	// Values makes the scan transfer values, so that bytes include them.
	// By default the server strips them and bytes count each cell's row
	// key, column and timestamp only: a read of the whole table that
	// moves a small fraction of it.
	Values bool

	// AllBuckets makes the report's JSON list every bucket of its
	// histograms, empty ones too (Report.AllBuckets).
	AllBuckets bool

	// Scan configures the scan: workers, progress, a sample.
	Scan scan.Options
}

// Table reads the whole table through data (the table opened with a data
// client) and returns what it holds, family by family; see Report.
// families are the managed families' strategies, which may be nil when
// none is; the table's other families are audited as families without a
// strategy. admin reads the families' GC policies, which decide when
// expired cells become collectable.
//
// The table is read shard by shard (see package scan), values stripped on
// the server unless opts.Values. When the scan stops early (an error, a
// timeout, a cancellation) the report of the shards read is returned with
// the error, its Read not Complete: its counts are partial. With
// opts.Scan.Sample the counts are scaled estimates, and say so.
func Table(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, families map[string]ttl.Strategy, opts Options) (*Report, error) {
	if ctx == nil || admin == nil || data == nil || rules.IsNilPointer(data) {
		return nil, fmt.Errorf("%w: audit.Table: nil context, admin client or table", ttl.ErrNilArgument)
	}
	if err := opts.Scan.Check(); err != nil {
		return nil, fmt.Errorf("audit.Table: %w", err)
	}
	policies, err := policy.Policies(ctx, admin, table)
	if status.Code(err) == codes.NotFound {
		return nil, fmt.Errorf("audit: %w", err)
	}
	if err != nil {
		return nil, err
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	audit, err := New(table, now(), families, policies, opts.Values)
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
	read, err := scan.ReadTable(ctx, data, audit.Filter(), opts.Scan,
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
