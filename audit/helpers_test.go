package audit_test

import (
	"context"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/audit"
	"github.com/cellttl/ttl/policy"
)

// runAudit is audit.New then Auditor.Run: New's refusals come back as the
// run's, so that a test of bad arguments reads the same whichever of the
// two refused.
func runAudit(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, families map[string]ttl.Strategy, opts audit.Options) (*audit.Report, error) {
	auditor, err := audit.New(admin, data, table, families, opts)
	if err != nil {
		return nil, err
	}
	return auditor.Run(ctx)
}

// runEnsure is policy.New then Tool.Ensure.
func runEnsure(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, families map[string]ttl.Strategy, opts policy.Options) (*policy.Plan, error) {
	tool, err := policy.New(admin, data, table, families, opts)
	if err != nil {
		return nil, err
	}
	return tool.Ensure(ctx)
}
