package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"cloud.google.com/go/bigtable"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/policy"
)

// sweepPolicyWarnings says on stderr, as check does, each family whose GC
// policy is not the one its -family spec needs: a sweep judges what GC
// may have deleted by the policy it finds, so a spec that disagrees still
// sweeps, but its grace is not the table's. A policy that cannot be read
// is left to the round, which reads it again and fails.
func sweepPolicyWarnings(ctx context.Context, c *config, admin *bigtable.AdminClient, strategies map[string]ttl.Strategy, stderr io.Writer) {
	tool, err := policy.New(admin, nil, c.table, strategies, policy.Options{})
	if err != nil {
		return
	}
	statuses, err := tool.Check(ctx)
	if !errors.Is(err, policy.ErrFamilyMismatch) {
		return
	}
	for _, s := range statuses {
		if s.Exists && !s.Matches {
			fmt.Fprintf(stderr, "cellttl sweep: warning: table %q: %v; \"cellttl check\" says the same, \"cellttl ensure\" shows what it would change\n", c.table, s)
		}
	}
}
