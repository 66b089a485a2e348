package policy_test

import (
	"context"
	"testing"
	"time"

	"cloud.google.com/go/bigtable"
	"github.com/stretchr/testify/require"

	"github.com/cellttl/ttl"
	"github.com/cellttl/ttl/internal/testkit"
	"github.com/cellttl/ttl/policy"
)

// The emulator ignores intersection GC rules (it keeps the cells and logs
// a warning), so these tests give families simple rules and unions only.
// It does store and report intersections; TestDescribe covers how they
// are spelled.

// stored returns a cell to write raw, with its own timestamp, as a writer
// that does not use the library does.
func stored(row, column string, ts bigtable.Timestamp) testkit.Stored {
	return testkit.Stored{Row: row, Column: column, TS: ts}
}

// versions returns cells for sequence numbers from..to of one column.
func versions(row, column string, from, to int64) []testkit.Stored {
	var out []testkit.Stored
	for seq := from; seq <= to; seq++ {
		out = append(out, stored(row, column, bigtable.Timestamp(seq*1000)))
	}
	return out
}

// count returns the number of cells stored in raw.
func count(t testing.TB, raw bigtable.TableAPI) int {
	t.Helper()
	n, err := cellsIn(raw)
	require.NoError(t, err)
	return n
}

// cellsIn returns the number of cells stored in raw, or the error of the
// read: it does not fail a test, so that it can run off the test's
// goroutine.
func cellsIn(raw bigtable.TableAPI) (int, error) {
	n := 0
	err := raw.ReadRows(context.Background(), bigtable.InfiniteRange(""), func(r bigtable.Row) bool {
		for _, items := range r {
			n += len(items)
		}
		return true
	})
	return n, err
}

// policies returns each family's policy as policy.Describe spells it.
func policies(t testing.TB, admin *bigtable.AdminClient, table string) map[string]string {
	t.Helper()
	found, err := runPolicies(context.Background(), admin, table)
	require.NoError(t, err)
	out := map[string]string{}
	for family, p := range found {
		out[family] = policy.Describe(p)
	}
	return out
}

// reasons returns the one-line summaries (Loss.String) of a family's
// losses, nil for none.
func reasons(f policy.FamilyPlan) []string {
	var out []string
	for _, l := range f.Losses {
		out = append(out, l.String())
	}
	return out
}

// orNil returns losses, or nil for none: a plan's are never nil.
func orNil(losses []policy.Loss) []policy.Loss {
	if len(losses) == 0 {
		return nil
	}
	return losses
}

// tm reads an instant in RFC 3339, in UTC: a loss's From and Until.
func tm(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// A summary is what a plan says of one family, as the tests compare it:
// the columns of the table the command prints (render_plan.go), as data.
type summary struct {
	Family, Strategy, Found, Want string
	Action                        policy.Action
	Rows, Resurfaced              int
	Refused, Done                 bool
}

// summaries returns the summary of each family of a plan, in its order.
func summaries(p *policy.Plan) []summary {
	out := make([]summary, len(p.Families))
	for i, f := range p.Families {
		out[i] = summary{f.Family, f.Strategy, policy.Describe(f.Found), policy.Describe(f.Want), f.Action, f.Rows, f.Resurfaced, f.Refused, f.Done}
	}
	return out
}

// The calls the tests make, each a Tool bound for the one call: New's
// refusals come back as the call's, so that a test of bad arguments
// reads the same whichever of the two refused.

// runEnsure is New then Tool.Ensure.
func runEnsure(ctx context.Context, admin *bigtable.AdminClient, table string, data bigtable.TableAPI, families map[string]ttl.Strategy, opts policy.Options) (*policy.Plan, error) {
	tool, err := policy.New(admin, data, table, families, opts)
	if err != nil {
		return nil, err
	}
	return tool.Ensure(ctx)
}

// runCheck is New then Tool.Check.
func runCheck(ctx context.Context, admin *bigtable.AdminClient, table string, families map[string]ttl.Strategy) ([]policy.Status, error) {
	tool, err := policy.New(admin, nil, table, families, policy.Options{})
	if err != nil {
		return nil, err
	}
	return tool.Check(ctx)
}

// runEnsureSchedule is New then Tool.EnsureSchedule.
func runEnsureSchedule(ctx context.Context, admin *bigtable.AdminClient, table, schedule string, entries bigtable.TableAPI, families map[string]ttl.Strategy, opts policy.Options) (*policy.Plan, error) {
	tool, err := policy.New(admin, nil, table, families, opts)
	if err != nil {
		return nil, err
	}
	return tool.EnsureSchedule(ctx, schedule, entries)
}

// runCheckSchedule is New then Tool.CheckSchedule.
func runCheckSchedule(ctx context.Context, admin *bigtable.AdminClient, table, schedule string, families map[string]ttl.Strategy) (policy.Status, error) {
	tool, err := policy.New(admin, nil, table, families, policy.Options{})
	if err != nil {
		return policy.Status{}, err
	}
	return tool.CheckSchedule(ctx, schedule)
}

// runSet is New, without families, then Tool.Set.
func runSet(ctx context.Context, admin *bigtable.AdminClient, table, family string, p bigtable.GCPolicy, ignoreWarnings bool) error {
	tool, err := policy.New(admin, nil, table, nil, policy.Options{IgnoreWarnings: ignoreWarnings})
	if err != nil {
		return err
	}
	return tool.Set(ctx, family, p)
}

// runPolicies is New, without families, then Tool.Policies.
func runPolicies(ctx context.Context, admin *bigtable.AdminClient, table string) (map[string]bigtable.GCPolicy, error) {
	tool, err := policy.New(admin, nil, table, nil, policy.Options{})
	if err != nil {
		return nil, err
	}
	return tool.Policies(ctx)
}

// A spelledStatus is a status with its policies and kinds of cell as
// Describe and DescribeType spell them (its JSON's spelling), "" for a nil
// Finished and for the kind of a family that does not exist: what the
// tests compare.
type spelledStatus struct {
	Family, Strategy, Found, Want, Finished, Type, WantType string
	Exists, Matches                                         bool
}

// spell returns s as the tests compare it.
func spell(s policy.Status) spelledStatus {
	out := spelledStatus{Family: s.Family, Strategy: s.Strategy, Found: policy.Describe(s.Found), Want: policy.Describe(s.Want),
		WantType: policy.DescribeType(s.WantType), Exists: s.Exists, Matches: s.Matches}
	if s.Finished != nil {
		out.Finished = policy.Describe(s.Finished)
	}
	if s.Exists {
		out.Type = policy.DescribeType(s.Type)
	}
	return out
}
